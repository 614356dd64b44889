"""What the host says about a Python extension that could not start: where its syntax error is,
or which module it misses and how to install it.

The SDK's launcher leaves one line in the log when a syntax error or an import error stops an
extension file (:mod:`extension_protocol.startup_errors`); :func:`last_startup_error` finds it
in a run's log lines, :func:`describe_startup_error` turns it into the extension's error:

- ``SyntaxError: expected ':' at extension.py:2:9``, then the source line
  and a caret under the column, each on a line of its own (front ends show them under the note);
- ``ModuleNotFoundError: No module named 'yaml'``, then a line with the command that installs it
  into the host's Python (``pip install -r`` the extension's ``requirements.txt`` when it has
  one: the package may be named otherwise than the module), or the manifest's ``requires`` that
  gives it an environment of its own; for an extension that has one, ``requires`` alone.

A file is shown relative to the extension's folder (the extension is named beside it) or else
to the project, when it is inside them. This module reads no file but
checks whether a ``requirements.txt`` exists; the lines it builds are made safe by the front
ends, as every text of an extension is.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from extension_protocol.startup_errors import STARTUP_ERROR_PREFIX, StartupError, read_startup_error

__all__ = ["REQUIREMENTS_FILE", "describe_startup_error", "last_startup_error"]

MANIFEST_FILE: Final = "extension.toml"
"""Where an extension lists its requirements (:mod:`extension_host.project.manifest`)."""

REQUIREMENTS_FILE: Final = "requirements.txt"
"""An extension's own list of what it needs, in its folder; the install hint names it when it exists."""
_EXCERPT_INDENT: Final = "    "


def last_startup_error(lines: Iterable[str]) -> StartupError | None:
    """The last startup error said in ``lines`` (a run's log), if any."""
    found = None
    for line in lines:
        if line.startswith(STARTUP_ERROR_PREFIX):
            found = read_startup_error(line) or found
    return found


def describe_startup_error(
    error: StartupError, project_root: Path, entry: Path, *, own_environment: bool = False
) -> str:
    """The error of an extension (entry file ``entry``; ``own_environment``: it runs in one
    built from its ``requires``) stopped by ``error``: a first line that names it, then the
    source line and its caret, or the install hint."""
    if error.module is not None and error.exception == "ModuleNotFoundError":
        hint = _requires_hint(error.module) if own_environment else _install_hint(error.module, project_root, entry)
        return f"{error.exception}: {error.message}\n{hint}"
    if error.line is None:
        return f"{error.exception}: {error.message}"
    where = _shown_path(error.file, entry.parent, project_root) if error.file else entry.name
    column = f":{error.column}" if error.column is not None else ""
    first = f"{error.exception}: {error.message} at {where}:{error.line}{column}"
    if not error.text or not error.text.strip():
        return first
    return "\n".join([first, *_excerpt(error.text, error.column, error.end_column)])


def _excerpt(text: str, column: int | None, end_column: int | None) -> list[str]:
    """The source line without its indentation, and a caret under ``column`` (as Python prints it)."""
    code = text.lstrip(" \f")
    lines = [_EXCERPT_INDENT + code.replace("\t", " ")]
    if column is None:
        return lines
    start = column - 1 - (len(text) - len(code))
    if not 0 <= start <= len(code):
        return lines
    width = max(1, min(end_column - column, len(code) - start)) if end_column and end_column > column else 1
    return [*lines, _EXCERPT_INDENT + " " * start + "^" * width]


def _install_hint(module: str, project_root: Path, entry: Path) -> str:
    python = sys.executable or "python3"  # the interpreter every Python extension runs under
    requirements = entry.parent / REQUIREMENTS_FILE
    if requirements.is_file():
        shown = _shown_path(str(requirements), project_root)
        return f"install the extension's requirements into the host's Python: {python} -m pip install -r {shown}"
    package = module.partition(".")[0]
    return (
        f"install it into the host's Python: {python} -m pip install {package} "
        f"(or list it under requires in the extension's {MANIFEST_FILE}: it gets an environment of its own)"
    )


def _requires_hint(module: str) -> str:
    package = module.partition(".")[0]
    return (
        f"add the package that provides {package!r} to the requires of the extension's manifest: "
        "its environment holds only what requires lists"
    )


def _shown_path(path: str, *folders: Path) -> str:
    """``path`` relative to the first of ``folders`` it is in (as is, when in none)."""
    for folder in folders:
        try:
            relative = os.path.relpath(path, folder)
        except ValueError:
            continue
        if not relative.startswith(os.pardir):
            return relative
    return path
