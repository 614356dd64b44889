"""``extensions export copilot NAME [--force] [--json]``: make another agent run an extension.

Finds the extension as the other commands do (the project's, else the user's; ``project:NAME``
and ``user:NAME`` too), asks :mod:`extension_host.bridges.copilot` for the launcher and prints
what it did. It never starts a host or an extension. Failures (an unknown extension, a
JavaScript one, a hand-written ``extension.mjs`` without ``--force``) exit 1 with one line.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..bridges.copilot import COPILOT_SWITCHES, PYTHON_ENV, CopilotExport, export_copilot
from ..project.paths import find_project_root, user_home
from .output import EXIT_OK, EXIT_USAGE, print_json, say
from .trust_commands import find_extension

__all__ = ["add_export_command"]


def add_export_command(commands: Any) -> None:
    """Add ``export`` and its targets to the ``extensions`` parser's subcommands."""
    text = "write what another agent needs to run an extension (copilot: GitHub Copilot CLI)"
    parser = commands.add_parser("export", help=text, description=text)
    parser.set_defaults(run=lambda args: _usage(parser))
    targets = parser.add_subparsers(dest="target", metavar="AGENT")

    sub = targets.add_parser(
        "copilot",
        help="write extension.mjs beside a Python extension, so that GitHub Copilot CLI runs it",
        description=(
            "Write extension.mjs beside the Python extension NAME: GitHub Copilot CLI runs it with "
            f"Node.js, and it starts the extension with this Python ({sys.executable}; "
            f"${PYTHON_ENV} overrides it where Copilot runs)."
        ),
    )
    sub.add_argument("name", help="extension name or id (project:NAME, user:NAME)")
    sub.add_argument("--force", action="store_true", help="overwrite a hand-written extension.mjs")
    sub.add_argument("--json", action="store_true", help="print the result as JSON")
    sub.set_defaults(run=_copilot)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return EXIT_USAGE


def _copilot(args: argparse.Namespace) -> int:
    root = find_project_root(args.root)
    spec = find_extension(root, user_home(args.home), args.name)
    done = export_copilot(spec, sys.executable, force=args.force)
    if args.json:
        print_json(done.to_json())
    else:
        say(_describe(done, spec.source))
    return EXIT_OK


def _describe(done: CopilotExport, source: str) -> str:
    verb = {"created": "wrote", "updated": "updated", "unchanged": "already up to date:", "replaced": "replaced"}
    lines = [
        f"{verb[done.action]} {done.path}",
        f"GitHub Copilot CLI now runs {done.extension} with {done.python} (${PYTHON_ENV} overrides it)",
        f"note: {COPILOT_SWITCHES}",
    ]
    if source == "user":
        # Copilot looks for user extensions in its own folder, not in this host's.
        lines.append(
            f"Copilot CLI finds user extensions in ~/.copilot/extensions/: link this folder there "
            f"(ln -s {done.path.parent} ~/.copilot/extensions/)"
        )
    return "\n".join(lines)
