"""The ``extensions`` command: parse (:mod:`.parser`), run the named command, map failures to exit codes.

Nothing is imported before the command line is parsed but the parser: ``--help``, ``--version``
and a usage error cost argparse, not the host. The command's ``run`` (named by the parser) is
imported after, and the errors it may raise with it.

Exit codes: 0 success; 1 the operation failed (an extension failed to load, a tool call did
not succeed); 2 bad usage (unknown command or option, bad name, bad JSON, a number out of range,
a ``--root`` that is not a folder); 141 stdout was closed before everything was printed
(``extensions list | head -1``: the command stops quietly, as a process ended by SIGPIPE would,
without a traceback); 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from .parser import build_parser, parse, run_function

COMPLETE_COMMAND = "__complete"
"""The first word of a completion script's call back (:mod:`.completion`), kept out of the parser."""

__all__ = ["main"]

_EXIT_INTERRUPTED = 130


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``extensions`` command line; returns the exit code."""
    words = sys.argv[1:] if argv is None else list(argv)
    if words[:1] == [COMPLETE_COMMAND]:  # a shell asking for completions at a TAB
        from .completion import complete

        return complete(words[1:])
    try:
        args = parse(words)
    except SystemExit as exc:  # --help, --version, a usage error: argparse's way out
        return exc.code if isinstance(exc.code, int) else 2
    from ..errors import ExtensionHostError, ProjectRootError, ScaffoldError, SessionIdError
    from . import render
    from .output import EXIT_FAILED, EXIT_USAGE, say

    try:
        if args.root is not None:
            from ..project.paths import find_project_root

            find_project_root(args.root)  # a root that is not a folder is a usage error, up front
        if args.extension_sdk_path is not None:
            from ..launch.node_sdk import SDK_PATH_ENV, sdk_build

            # Every host this command makes (and a host it starts in the background) reads it.
            os.environ[SDK_PATH_ENV] = str(sdk_build(args.extension_sdk_path))
        code: int = run_function(args.run)(args)
        if sys.stdout is not None:  # None: started without a stdout at all (``>&-``)
            sys.stdout.flush()  # a closed stdout shows here, not in the interpreter's last flush
        return code
    except BrokenPipeError:
        from .dev import EXIT_STDOUT_CLOSED, silence_stdout

        silence_stdout()
        return EXIT_STDOUT_CLOSED
    except (ScaffoldError, ProjectRootError, SessionIdError) as exc:
        say(render.error_line(exc), err=True)
        return EXIT_USAGE
    except ExtensionHostError as exc:
        say(render.error_line(exc), err=True)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return _EXIT_INTERRUPTED


def _parser() -> argparse.ArgumentParser:
    """Every command's parser built in full (the README's table of commands reads it)."""
    return build_parser()
