"""The session's event log: the envelope every event has, the history, and who hears of it.

Events look as in the Copilot session-events schema: ``{id, timestamp, parentId, type, data}``
plus ``ephemeral`` when the event is not persisted. ``parentId`` links each event to the
previous persistent one. Listeners are plain callables; one that raises is reported on stderr
and never stops the others. This module does not know extensions or the wire.
"""

from __future__ import annotations

import itertools
import sys
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, Final

from sdk_extension.protocol import Event

__all__ = ["HISTORY_LIMIT", "EventListener", "EventLog", "iso_now", "make_event", "unique_ids"]

HISTORY_LIMIT: Final = 1_000
"""Events kept in memory; the host forgets the oldest beyond this.

Every kept event is a few objects the garbage collector tracks, and until the ring is full each
tool call adds some: a ring of 10,000 fed a young-generation collection every ~140 calls and a
full collection (40–90 ms) every few thousand. At 1,000 the ring fills within the first few
hundred calls and then holds steady. Subscribe with ``on_event`` to keep more."""

EventListener = Callable[[Event], None]


def unique_ids() -> Iterator[str]:
    """UUID-shaped ids that are unique across processes and cheap to make.

    A random prefix (from one ``uuid4``) per generator, then a counter: one ``uuid4`` for many ids
    instead of one per event (tool calls make several events each).
    """
    prefix = str(uuid.uuid4())[:24]
    return (f"{prefix}{n:012x}" for n in itertools.count())


_event_ids = unique_ids()
_second: list[Any] = [None, ""]


def iso_now() -> str:
    """The current UTC time as ISO 8601 with milliseconds (``2026-11-25T21:58:29.123+00:00``).

    Several events are stamped per tool call; formatting the date part once per second keeps
    that cheap.
    """
    now = time.time()
    whole = int(now)
    if _second[0] != whole:
        _second[0], _second[1] = whole, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
    return f"{_second[1]}.{int((now - whole) * 1000):03d}+00:00"


def make_event(
    event_type: str, data: dict[str, Any], *, parent_id: str | None = None, ephemeral: bool = False
) -> Event:
    """Build one event envelope with a fresh id and the current time."""
    event: Event = {
        "id": next(_event_ids),
        "timestamp": iso_now(),
        "parentId": parent_id,
        "type": event_type,
        "data": data,
    }
    if ephemeral:
        event["ephemeral"] = True
    return event


class EventLog:
    """Ordered session events with listeners."""

    def __init__(self, history_limit: int = HISTORY_LIMIT) -> None:
        self._history: deque[Event] = deque(maxlen=history_limit)
        self._listeners: list[EventListener] = []
        self._last_persistent: str | None = None

    def emit(self, event_type: str, data: dict[str, Any], *, ephemeral: bool = False) -> Event:
        """Record an event, tell every listener, and return it."""
        event = make_event(event_type, data, parent_id=self._last_persistent, ephemeral=ephemeral)
        if not ephemeral:
            self._last_persistent = event["id"]
        self._history.append(event)
        for listener in tuple(self._listeners):
            try:
                listener(event)
            except Exception as exc:
                print(f"event listener {listener!r} failed on {event_type}: {exc}", file=sys.stderr)
        return event

    def subscribe(self, listener: EventListener) -> Callable[[], None]:
        """Call ``listener(event)`` for every later event; returns a function that stops it."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def history(self, event_type: str | None = None) -> list[Event]:
        """Recorded events, oldest first, optionally only one type."""
        if event_type is None:
            return list(self._history)
        return [event for event in self._history if event["type"] == event_type]
