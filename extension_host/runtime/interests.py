"""Which session event types one extension is sent: what its join asked for, and its handles.

An :class:`Interests` starts from the ``eventTypes`` of the extension's ``session.resume`` (all
types when it gives none, plus ``permission.requested`` when it handles permissions), and grows
and shrinks with ``session.eventLog.registerInterest`` and ``releaseInterest``: each
registration returns a handle, and releasing the last handle of a type the join did not ask for
stops that type. Handles are bounded (:data:`MAX_INTEREST_HANDLES`). It knows event types and
handles; not the connection the events go out on, nor the extension's status.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from ..events import unique_ids

__all__ = ["ALL_EVENTS", "MAX_INTEREST_HANDLES", "Interests", "TooManyInterests"]

MAX_INTEREST_HANDLES: Final = 1024
"""``registerInterest`` handles one extension may hold at once (each release gives one back)."""

ALL_EVENTS: Final = "*"
"""The interest in every event type (a join that names none)."""


class TooManyInterests(Exception):
    """A registration past :data:`MAX_INTEREST_HANDLES`; release a handle first."""


class Interests:
    """The event types one extension wants; none until it joins."""

    def __init__(self) -> None:
        self._types: set[str] = set()
        self._joined: frozenset[str] = frozenset()
        """The event types the join asked for: releasing a handle never drops them."""
        self._handles: dict[str, str] = {}
        self._handle_ids = unique_ids()

    def join(self, event_types: Iterable[str] | None, permission_handler: bool) -> None:
        """Start from what the join asked for (``None``: every type); a permission handler
        is also sent the requests it answers."""
        self._types = set(event_types) if event_types is not None else {ALL_EVENTS}
        if permission_handler:
            self._types.add("permission.requested")
        self._joined = frozenset(self._types)

    def wants(self, event_type: str) -> bool:
        """Whether an event of ``event_type`` goes to this extension."""
        return event_type in self._types or ALL_EVENTS in self._types

    def register(self, event_type: str) -> str:
        """Add ``event_type`` and return the handle that releases it.

        Raises:
            TooManyInterests: :data:`MAX_INTEREST_HANDLES` handles are held already.
        """
        if len(self._handles) >= MAX_INTEREST_HANDLES:
            raise TooManyInterests(f"holds {MAX_INTEREST_HANDLES} interests, the most it may")
        self._types.add(event_type)
        handle = next(self._handle_ids)
        self._handles[handle] = event_type
        return handle

    def release(self, handle: str) -> None:
        """Give back ``handle``; its type stops unless the join or another handle still wants it.
        An unknown handle is ignored (released already)."""
        event_type = self._handles.pop(handle, None)
        still_wanted = event_type in self._joined or event_type in self._handles.values()
        if event_type is not None and not still_wanted:
            self._types.discard(event_type)
