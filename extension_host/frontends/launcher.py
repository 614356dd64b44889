"""The ``extensions`` console script: a hook call takes the short road, everything else the CLI.

An agent runs ``extensions hook AGENT EVENT`` on every tool call, so that exact command line
goes straight to :func:`.hook_command.run_hook`, which imports the hook adapter and no more
(the whole CLI, and with it the host, is several hundred milliseconds of imports). Any other
command line, including a hook call with global options before it, is :func:`.cli.main`'s
(``extensions --version`` alone is answered here too: it needs no parser).
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Sequence

__all__ = ["main"]

_HOOK_AGENTS = ("claude", "gemini")  # .hook_command.AGENT_NAMES, without importing it


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``extensions`` command line; returns the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:  # nothing to parse: not even argparse
        from .. import __version__

        print(f"extensions {__version__}")
        return 0
    if len(args) == 3 and args[0] == "hook" and args[1] in _HOOK_AGENTS and not args[2].startswith("-"):
        from .hook_command import run_hook

        return run_hook(args[1], args[2])
    from .cli import main as cli_main

    code = cli_main(args)
    # Everything the command made stays until the process ends: kept out of the collector's
    # reach, the interpreter's last collection at exit does not walk it (with the host's
    # modules loaded, that walk was most of a one-shot command's exit).
    gc.freeze()
    return code
