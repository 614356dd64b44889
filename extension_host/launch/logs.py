"""Extension log files: keeping them bounded (rotation by size) and reading the current run.

An extension's stderr is its log file, opened for appending by the host and handed to the
child, which writes to it directly. The host cannot rotate a file under a running writer
without losing lines, so a log is rotated when its extension (re)starts: if it has reached
:data:`LOG_MAX_BYTES`, ``x.log`` becomes ``x.log.1``, ``x.log.1`` becomes ``x.log.2`` and so
on, keeping :data:`LOG_BACKUPS` old files. Between starts a log grows by what one run writes.

Each run begins with a start line written by :mod:`extension_host.launch.process`
(``=== <time> starting <id>: <command>``); :func:`current_run_tail` reads from the last one.
A log holds what extensions print, secrets included: :func:`open_log` keeps it for its user
only (mode 0600, in a 0700 folder; see :mod:`extension_host.project.private_files`).
This module knows files, not processes or extensions.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import BinaryIO, Final

from ..project.private_files import open_private, private_folder

__all__ = ["LOG_BACKUPS", "LOG_MAX_BYTES", "current_run_tail", "open_log", "rotate_log"]

LOG_MAX_BYTES: Final = 4 * 1024 * 1024
"""A log this big (or bigger) is rotated when its extension next starts."""
LOG_BACKUPS: Final = 3
"""Rotated logs kept per extension (``.log.1`` is the newest); older ones are deleted."""

_TAIL_BYTES: Final = 64 * 1024
"""How much of the end of a log is read for its tail."""
_RUN_START: Final = re.compile(r"^=== \S+ starting \S+")


def rotate_log(path: Path, max_bytes: int = LOG_MAX_BYTES, backups: int = LOG_BACKUPS) -> bool:
    """Rotate ``path`` if it has reached ``max_bytes``; True if it did.

    Call it before the file is opened for a new run. A log that cannot be rotated (a read-only
    folder, a race with another host) is left as it is: logging must never stop a start.
    """
    try:
        if path.stat().st_size < max_bytes:
            return False
        if backups <= 0:
            path.unlink()
            return True
        for number in range(backups - 1, 0, -1):
            older = path.with_name(f"{path.name}.{number}")
            if older.exists():
                os.replace(older, path.with_name(f"{path.name}.{number + 1}"))
        os.replace(path, path.with_name(f"{path.name}.1"))
    except OSError:
        return False
    return True


def open_log(path: Path) -> BinaryIO:
    """``path`` opened for appending, readable by its user only: its folder is made private
    (0700) if need be, the file created 0600 or made so.

    Raises:
        OSError: it cannot be opened (``ELOOP`` for a symbolic link).
    """
    private_folder(path.parent)
    return os.fdopen(open_private(path, os.O_WRONLY | os.O_APPEND), "ab")


def current_run_tail(path: Path, max_lines: int = 20) -> list[str]:
    """The last non-blank lines of a log written since its last start line (the current or most
    recent run), start line included; ``[]`` if the log cannot be read."""
    try:
        with open(path, "rb") as log:
            end = log.seek(0, os.SEEK_END)
            log.seek(max(0, end - _TAIL_BYTES))
            text = log.read().decode("utf-8", "replace")
    except OSError:
        return []
    lines = [line for line in text.splitlines() if line.strip()]
    for index in range(len(lines) - 1, -1, -1):
        if _RUN_START.match(lines[index]):
            lines = lines[index:]
            break
    return lines[-max_lines:]
