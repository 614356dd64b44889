"""How one server holds many sessions: how many it hosts at once, and keeping their long-lived
objects out of the garbage collector's walks.

**The limit.** A server given none (``ServerOptions(max_sessions=None)``, ``extensions serve``
without ``--max-sessions``) takes :func:`derived_max_sessions` once, when it is made: the memory
available then (``MemAvailable`` of ``/proc/meminfo``; where there is none, free physical pages
times the page size) divided by :data:`SESSION_MEMORY_BUDGET`, and no more than the process's
open-file limit (soft ``RLIMIT_NOFILE``) leaves room for, :data:`SESSION_FILE_BUDGET` each after
:data:`FILE_RESERVE`; always within :data:`MIN_DERIVED_SESSIONS`..:data:`MAX_DERIVED_SESSIONS`
(the least of them when neither can be read). :func:`checked_max_sessions` is the one check of a
limit that is given.

**The collector.** Python's full collections walk every container object of the process; with a
hundred sessions' hosts that is ~100,000 objects, and each walk pauses every session's events for
tens of milliseconds. A :class:`Collector` that freezes moves what the process holds into the
collector's permanent generation (``gc.freeze``) after each session starts, so full collections
walk only what is newer; after a session stops it thaws that, collects the stopped session's
cycles at once (one full collection) and freezes what is left. A server does this only when
asked (``ServerOptions.freeze_sessions``): ``extensions serve`` is a process of its own; an
application that embeds the server keeps its own collector policy.

This module owns the numbers and the collector calls; the server refuses the session past the
limit and says when sessions start and stop. Nothing here watches memory or files while sessions
run, nor counts what a session really uses.
"""

from __future__ import annotations

import gc
import os
import resource
from pathlib import Path
from typing import Final

__all__ = [
    "FILE_RESERVE",
    "MAX_DERIVED_SESSIONS",
    "MEMINFO",
    "MIN_DERIVED_SESSIONS",
    "SESSION_FILE_BUDGET",
    "SESSION_MEMORY_BUDGET",
    "Collector",
    "available_memory",
    "checked_max_sessions",
    "derived_max_sessions",
    "open_file_limit",
    "sessions_for",
]

SESSION_MEMORY_BUDGET: Final = 64 * 1024 * 1024
"""Bytes of available memory the derived limit sets aside for each session: its host's state and
its extension processes, with room for extensions heavier than an echo (the bench measures a
session with one echo extension at about 6 MiB of PSS)."""
SESSION_FILE_BUDGET: Final = 8
"""Open files the derived limit sets aside for each session (one with one extension holds 5: the
extension's three pipes and the session's log)."""
FILE_RESERVE: Final = 64
"""Open files the derived limit keeps for the server itself: clients, sockets, its own logs."""
MIN_DERIVED_SESSIONS: Final = 32
"""The derived limit is never below this, however little memory is available."""
MAX_DERIVED_SESSIONS: Final = 1024
"""The derived limit is never above this, however much memory is available."""
MEMINFO = Path("/proc/meminfo")
"""Where the available memory is read (Linux)."""


def available_memory(meminfo: Path) -> int | None:
    """Bytes of memory available now: ``MemAvailable`` of ``meminfo``, else free physical pages
    times the page size; ``None`` when neither can be read."""
    try:
        lines = meminfo.read_text(encoding="ascii", errors="replace").splitlines()
    except OSError:
        lines = []
    for line in lines:
        name, _, rest = line.partition(":")
        value = rest.split()
        if name == "MemAvailable" and value and value[0].isdigit():
            return int(value[0]) * 1024  # the kernel's "kB" is KiB
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):  # a name this system does not know, or no answer
        return None


def open_file_limit() -> int | None:
    """The process's soft limit of open files; ``None`` when it has none."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def sessions_for(available: int | None, open_files: int | None) -> int:
    """The derived limit for ``available`` bytes of memory and ``open_files`` (``None``: unknown,
    or no limit): see the module's docstring."""
    bounds = [MAX_DERIVED_SESSIONS]
    if available is not None:
        bounds.append(available // SESSION_MEMORY_BUDGET)
    if open_files is not None:
        bounds.append((open_files - FILE_RESERVE) // SESSION_FILE_BUDGET)
    if available is None and open_files is None:
        return MIN_DERIVED_SESSIONS
    return max(MIN_DERIVED_SESSIONS, min(bounds))


def derived_max_sessions() -> int:
    """The limit of a server given none, for this machine and process now."""
    return sessions_for(available_memory(MEMINFO), open_file_limit())


def checked_max_sessions(value: object, option: str) -> int:
    """``value`` (a number, or a command line's text) as a limit of sessions: a whole number of
    at least 1.

    Raises:
        ValueError: naming ``option`` (the setting as its caller spells it) and the value.
    """
    number = value
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 10:
        number = int(value)  # nothing with a sign, a space or a point
    if isinstance(number, int) and not isinstance(number, bool) and number >= 1:
        return number
    raise ValueError(f"{option} must be a whole number of at least 1, not {value!r}")


class Collector:
    """What a server does with the garbage collector around its sessions' starts and stops:
    nothing, unless ``freeze`` (see the module's docstring)."""

    def __init__(self, freeze: bool) -> None:
        self.freeze: Final = freeze
        self._pending = False

    def started(self) -> None:
        """After a session started: what the process holds now is no longer walked by the
        collector (and a failed start's cycles are collected first)."""
        if self.freeze and self._pending:
            self.stopped()
        elif self.freeze:
            gc.freeze()

    def stopped(self) -> None:
        """After a session stopped and was let go: its cycles are collected now, and what is
        left is frozen again."""
        if self.freeze:
            self._pending = False
            gc.unfreeze()
            gc.collect()
            gc.freeze()

    def failed(self) -> None:
        """After a session that failed to start was stopped, while its failure still holds it:
        its cycles are collected when the next session starts (or stops)."""
        self._pending = True
