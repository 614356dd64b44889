"""A 1.0 chat's window of finished turns: the cursor to the turns before it, and which older
turns one ``fetchTurns`` loads into it.

A served chat's state holds its last finished turns (a bound the server gives its
:class:`~extension_host.serve.ahp1.actions.ChatView`) and, when older ones exist,
``turnsNextCursor``: :func:`cursor_of` the oldest turn it holds, meaning "the turns before this
one". The cursor names a turn, not a position, so one a client was given stays good however
many turns end after it.

``chat/turnsLoaded`` goes to every subscriber of the chat and into the server's state, so what it
loads must keep every one of those windows a single run of turns. A client never drops turns it
was shown, so each holds at least the turns it was last shown, which reach back at least as far
as the server's window (the server drops the oldest when a turn ends past the bound).
:func:`page` therefore loads up to ``limit`` turns before the cursor's turn (or before the
window, whichever is older) and every turn from there up to the server's window; each
receiver's reducer skips those it already has.

This module is pure: turn ids in, positions out. Where the turns come from (the session's
history) and how they become 1.0 turns is :mod:`extension_host.serve.ahp1.server`'s and
:mod:`extension_host.serve.ahp1.rebuild`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

__all__ = ["CURSOR_PREFIX", "MAX_CURSOR_CHARS", "Page", "cursor_of", "page", "turn_of"]

CURSOR_PREFIX: Final = "before:"
MAX_CURSOR_CHARS: Final = 512
"""The longest cursor a client may give (a turn id is at most 256 characters)."""


def cursor_of(turn_id: str) -> str:
    """The cursor to the turns before turn ``turn_id``."""
    return CURSOR_PREFIX + turn_id


def turn_of(cursor: str) -> str | None:
    """The turn id a cursor of :func:`cursor_of` names, or ``None`` for any other string."""
    if not cursor.startswith(CURSOR_PREFIX) or len(cursor) == len(CURSOR_PREFIX):
        return None
    return cursor[len(CURSOR_PREFIX) :]


@dataclass(frozen=True)
class Page:
    """Older turns to load: ``history[start:stop]``, and the cursor to what is before them
    (``None``: nothing is)."""

    start: int
    stop: int
    next_cursor: str | None


def page(history: Sequence[str], window: Sequence[str], before: str, limit: int) -> Page:
    """What a ``fetchTurns`` before turn ``before`` loads, as positions in ``history`` (the
    session's finished turn ids, oldest first) for a chat whose state holds ``window`` (turn ids,
    oldest first; the newest of ``history``): up to ``limit`` turns before ``before`` (or before
    the window, if that is older), and every turn from there up to the window.

    Raises:
        KeyError: ``before`` is no finished turn of ``history``.
    """
    positions = {turn: index for index, turn in enumerate(history)}
    asked = positions[before]
    stop = max(0, len(history) - len(window))
    if window:
        stop = positions.get(window[0], stop)
    start = max(0, min(asked, stop) - limit)
    return Page(start, stop, cursor_of(history[start]) if start > 0 else None)
