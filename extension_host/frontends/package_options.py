"""The options of ``install``, ``uninstall``, ``update`` and ``link``; what they do is
:mod:`.package_commands` (imported only when one of them runs).

Imports argparse alone: :mod:`.parser` builds these for the command a command line names.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_install_command", "add_link_command", "add_uninstall_command", "add_update_command"]


def _command(commands: Any, name: str) -> argparse.ArgumentParser:
    from .parser import COMMANDS

    summary = COMMANDS[name].summary
    parser: argparse.ArgumentParser = commands.add_parser(name, help=summary, description=summary)
    return parser


def _scope(parser: argparse.ArgumentParser, default: str) -> None:
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument(
        "--user",
        action="store_true",
        help="the user's extension folder, for every project" + (" (the default)" if default == "user" else ""),
    )
    scope.add_argument(
        "--project",
        action="store_true",
        help="this project's .github/extensions (subject to trusting the project)",
    )


def _json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def add_install_command(commands: Any) -> None:
    sub = _command(commands, "install")
    sub.add_argument(
        "source",
        metavar="SOURCE",
        help="a git URL (https://, ssh://, file://, git+...) or repository path, a folder, a wheel, "
        "a local Python project, or a distribution name (pip:NAME to be explicit)",
    )
    _scope(sub, "user")
    sub.add_argument(
        "--ref", metavar="REF", help="the branch, tag or commit of a repository (default: its default branch)"
    )
    sub.add_argument("--subdir", metavar="PATH", help="install from this folder of the repository or folder")
    sub.add_argument("--name", metavar="NAME", help="install the extension under this name (one extension only)")
    sub.add_argument("--yes", "-y", action="store_true", help="install from a repository without asking")
    _json(sub)
    sub.set_defaults(run="package_commands:install_command")


def add_uninstall_command(commands: Any) -> None:
    sub = _command(commands, "uninstall")
    sub.add_argument("name", metavar="NAME", help="extension name or id (project:NAME, user:NAME, package:NAME)")
    _scope(sub, "")
    sub.add_argument("--force", action="store_true", help="also remove a folder that 'extensions install' did not make")
    _json(sub)
    sub.set_defaults(run="package_commands:uninstall_command")


def add_update_command(commands: Any) -> None:
    sub = _command(commands, "update")
    sub.add_argument("name", metavar="NAME", nargs="?", help="extension name or id (default: every installed one)")
    _scope(sub, "")
    sub.add_argument("--ref", metavar="REF", help="move a repository's extension to this branch, tag or commit")
    _json(sub)
    sub.set_defaults(run="package_commands:update_command")


def add_link_command(commands: Any) -> None:
    sub = _command(commands, "link")
    sub.add_argument("path", metavar="PATH", help="the extension's folder (used in place: edits take effect)")
    _scope(sub, "user")
    sub.add_argument("--name", metavar="NAME", help="the name to use (default: the folder's name)")
    _json(sub)
    sub.set_defaults(run="package_commands:link_command")
