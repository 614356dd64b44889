"""The session's event log: the envelope every event has, the history, and who hears of it.

Events look as in the Copilot session-events schema: ``{id, timestamp, parentId, type, data}``
plus ``agentId`` when a sub-agent emitted it and ``ephemeral`` when the event is not persisted.
A sub-agent's events are those emitted while its :class:`AgentScope` is current
(:data:`CURRENT_AGENT`, a context variable: the child session's run and every task it starts);
those of :data:`PARENT_CALL_EVENT_TYPES` also name the parent's tool call in their data.
``parentId`` links each event to the previous persistent one. Which types are ephemeral is
:data:`EPHEMERAL_EVENT_TYPES`, from the table of event types (:mod:`extension_host.event_types`):
:meth:`EventLog.emit` marks them by type. Every
non-ephemeral event is handed to the log's sink (the session's file, see
:mod:`extension_host.session.log`) before any listener hears of it. Listeners are plain
callables; one that raises is reported on stderr and never stops the others. This module does
not know extensions or the wire.

The history is bounded twice: by count (:data:`HISTORY_LIMIT` events) and by size
(:data:`HISTORY_BYTES`: an event's size is its line's length in the session's file when the sink
gives one, else an estimate of the memory its strings and containers take). Listeners
always get an event whole, when it is emitted; what the history *keeps* of an event larger than
:data:`HISTORY_EVENT_BYTES` is a copy whose long strings are cut, each ending with a marker such
as ``…[truncated: 20971520 characters]``. A tool that returns 20 MiB therefore costs the host
20 MiB for as long as the call is in flight, not for as long as the history remembers it.
"""

from __future__ import annotations

import itertools
import sys
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final

from extension_protocol.protocol import Event

from .event_types import EPHEMERAL_EVENT_TYPES

__all__ = [
    "CURRENT_AGENT",
    "EPHEMERAL_EVENT_TYPES",
    "HISTORY_BYTES",
    "HISTORY_EVENT_BYTES",
    "HISTORY_LIMIT",
    "PARENT_CALL_EVENT_TYPES",
    "SESSION_MODE",
    "TRUNCATION_MARKER",
    "AgentScope",
    "EventListener",
    "EventLog",
    "EventSink",
    "agent_scope",
    "cut_strings",
    "iso_now",
    "make_event",
    "unique_ids",
]

SESSION_MODE: Final = "interactive"
"""The session's mode as Copilot CLI names it (in ``session.resume``'s answer and
``session.idle``): this host has no plan or autopilot mode."""


@dataclass(frozen=True, slots=True)
class AgentScope:
    """The sub-agent whose child session is running: its events carry ``agentId``, its hooks
    get the child's session id and the agent's fields."""

    agent_id: str
    """The child session's id."""
    agent_type: str
    """The custom agent's name."""
    parent_id: str
    """The session (or child session) that started it."""
    tool_call_id: str
    """The parent's tool call that started it."""
    depth: int = 1
    """1 for a child of the session, 2 for a child of a child, and so on."""


PARENT_CALL_EVENT_TYPES: Final = frozenset(
    {
        "assistant.turn_start",
        "assistant.turn_end",
        "assistant.message",
        "assistant.message_delta",
        "tool.execution_start",
        "tool.execution_complete",
        "hook.start",
        "hook.end",
    }
)
"""The events whose ``data`` names, inside a sub-agent's child session, the parent's tool call
that started it (``parentToolCallId``), as Copilot CLI's do."""

CURRENT_AGENT: Final[ContextVar[AgentScope | None]] = ContextVar("extension_host_current_agent", default=None)
"""The sub-agent running in this context, if any (see :class:`AgentScope`)."""


@contextmanager
def agent_scope(scope: AgentScope | None) -> Iterator[None]:
    """Make ``scope`` the current sub-agent (``None``: the session's own agent) inside the block."""
    token = CURRENT_AGENT.set(scope)
    try:
        yield
    finally:
        CURRENT_AGENT.reset(token)


HISTORY_LIMIT: Final = 1_000
"""Events kept in memory; the host forgets the oldest beyond this.

Every kept event is a few objects the garbage collector tracks, and until the ring is full each
tool call adds some: a ring of 10,000 fed a young-generation collection every ~140 calls and a
full collection (40–90 ms) every few thousand. At 1,000 the ring fills within the first few
hundred calls and then holds steady. Subscribe with ``on_event`` to keep more."""
HISTORY_BYTES: Final = 16 * 1024 * 1024
"""The history's size budget (estimated memory of the kept events); the oldest go beyond it.
The newest event is always kept, cut as below."""
HISTORY_EVENT_BYTES: Final = 64 * 1024
"""An event estimated larger than this is kept with every string longer than an eighth of it
(8 KiB by default) cut to that length plus :data:`TRUNCATION_MARKER`."""
TRUNCATION_MARKER: Final = "…[truncated: {} characters]"
"""Ends a string the history cut; ``{}`` is the number of characters left out."""

_CONTAINER_BYTES: Final = 64
"""What a dict or list costs before its items (CPython: 56–64 bytes empty), a number etc. too."""
_sizeof: Final = sys.getsizeof
_MAX_DEPTH: Final = 100
"""Deeper values are not walked: they count as one container and the kept copy drops them.
The wire refuses far shallower nesting; this only keeps the walk itself safe."""

EventListener = Callable[[Event], None]
EventSink = Callable[[Event], "int | None"]
"""Takes each non-ephemeral event, before the listeners, and returns the length of what it wrote
(the history's size of the event), or ``None`` if it wrote nothing; it must not raise (the
session's file records its own failures)."""


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
    event_type: str,
    data: dict[str, Any],
    *,
    parent_id: str | None = None,
    ephemeral: bool = False,
    agent_id: str | None = None,
) -> Event:
    """Build one event envelope with a fresh id and the current time."""
    event: Event = {
        "id": next(_event_ids),
        "timestamp": iso_now(),
        "parentId": parent_id,
        "type": event_type,
        "data": data,
    }
    if agent_id is not None:
        event["agentId"] = agent_id
    if ephemeral:
        event["ephemeral"] = True
    return event


class EventLog:
    """Ordered session events with listeners, and a history bounded by count and by size.

    Args:
        history_limit: events kept at most.
        history_bytes: estimated bytes the kept events may take together.
        history_event_bytes: events estimated larger than this are kept cut (see the module).
    """

    def __init__(
        self,
        history_limit: int = HISTORY_LIMIT,
        history_bytes: int = HISTORY_BYTES,
        history_event_bytes: int = HISTORY_EVENT_BYTES,
    ) -> None:
        if history_limit < 1 or history_bytes < 1 or history_event_bytes < 1:
            raise ValueError("the event history's limits must be positive")
        # Sizes in a deque of their own: ints are not tracked by the garbage collector, pairs
        # would be (see HISTORY_LIMIT for why that matters).
        self._history: deque[Event] = deque()
        self._sizes: deque[int] = deque()
        self._kept_bytes = 0
        self._limit = history_limit
        self._budget = history_bytes
        self._event_bytes = history_event_bytes
        self._listeners: list[EventListener] = []
        self._last_persistent: str | None = None
        self._sink: EventSink | None = None

    def emit(
        self, event_type: str, data: dict[str, Any], *, ephemeral: bool = False, agent_id: str | None = None
    ) -> Event:
        """Record an event (cut if large), persist it unless ephemeral, tell every listener
        (whole), and return it (whole). Types in :data:`EPHEMERAL_EVENT_TYPES` are ephemeral
        whatever ``ephemeral`` says; ``agent_id`` is the current sub-agent's unless given."""
        ephemeral = ephemeral or event_type in EPHEMERAL_EVENT_TYPES
        if agent_id is None and (scope := CURRENT_AGENT.get()) is not None:
            agent_id = scope.agent_id
            if event_type in PARENT_CALL_EVENT_TYPES:
                data = {**data, "parentToolCallId": scope.tool_call_id}
        event = make_event(event_type, data, parent_id=self._last_persistent, ephemeral=ephemeral, agent_id=agent_id)
        size = None
        if not ephemeral:
            self._last_persistent = event["id"]
            if self._sink is not None:
                size = self._sink(event)
        self._keep(event, size)
        for listener in tuple(self._listeners):
            try:
                listener(event)
            except Exception as exc:
                print(f"event listener {listener!r} failed on {event_type}: {exc}", file=sys.stderr)
        return event

    def _keep(self, event: Event, size: int | None) -> None:
        """Keep ``event`` (cut if large) in the history; ``size``: its size if known (its
        line's length in the session log), else it is estimated."""
        if size is None:
            size = _estimate(event["data"], 0)
        if size > self._event_bytes:
            kept: Event = {**event, "data": _cut(event["data"], self._event_bytes // 8, 0)}
            event, size = kept, _estimate(kept["data"], 0)
        history, sizes = self._history, self._sizes
        history.append(event)
        sizes.append(size)
        total = self._kept_bytes + size
        if len(history) > self._limit:  # one over at most: events come one at a time
            history.popleft()
            total -= sizes.popleft()
        while total > self._budget and len(history) > 1:
            history.popleft()
            total -= sizes.popleft()
        self._kept_bytes = total

    def begin(self, sink: EventSink | None, last_event_id: str | None = None) -> None:
        """Start a session's stretch of events: forget the history, chain the next persistent
        event on ``last_event_id`` (a resumed session's last one; ``None`` for a new session)
        and hand every persistent event to ``sink`` from now on (``None``: none is kept)."""
        self._history.clear()
        self._sizes.clear()
        self._kept_bytes = 0
        self._last_persistent = last_event_id
        self._sink = sink

    @property
    def last_event_id(self) -> str | None:
        """The id of the last persistent event (the next one's ``parentId``)."""
        return self._last_persistent

    def subscribe(self, listener: EventListener) -> Callable[[], None]:
        """Call ``listener(event)`` for every later event; returns a function that stops it."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    @property
    def history_bytes(self) -> int:
        """The estimated size of the kept events, in bytes."""
        return self._kept_bytes

    def history(self, event_type: str | None = None) -> list[Event]:
        """Recorded events, oldest first, optionally only one type; large ones as kept (cut)."""
        if event_type is None:
            return list(self._history)
        return [event for event in self._history if event["type"] == event_type]


def _estimate(value: Any, depth: int) -> int:
    """Roughly the bytes ``value`` holds: strings as CPython stores them (``sys.getsizeof`` is
    O(1) for a string), a fixed cost per container and scalar. No string is read, and strings
    and scalars inside a container are counted without a call: this runs for every event."""
    if isinstance(value, str):
        return _sizeof(value)
    if depth >= _MAX_DEPTH or not isinstance(value, (dict, list, tuple)):
        return _CONTAINER_BYTES
    total = _CONTAINER_BYTES
    items: Any = value
    if isinstance(value, dict):
        for key in value:
            total += _sizeof(key) if type(key) is str else _CONTAINER_BYTES
        items = value.values()
    for item in items:
        kind = type(item)
        if kind is str:
            total += _sizeof(item)
        elif kind is int or kind is bool or kind is float or item is None:
            total += _CONTAINER_BYTES
        else:
            total += _estimate(item, depth + 1)
    return total


def cut_strings(value: Any, keep: int, max_depth: int = _MAX_DEPTH) -> Any:
    """A copy of ``value`` with every string longer than ``keep`` characters cut to ``keep`` and
    ended with :data:`TRUNCATION_MARKER` (what the history keeps of a large event), and every
    array or object nested more than ``max_depth`` levels inside it replaced by a marker."""
    return _cut(value, keep, 0, max_depth)


def _cut(value: Any, keep: int, depth: int, max_depth: int = _MAX_DEPTH) -> Any:
    """A copy of ``value`` with every string longer than ``keep`` characters cut to ``keep`` and
    marked; what is too deep to walk is replaced by a marker."""
    if isinstance(value, str):
        if len(value) <= keep:
            return value
        return value[:keep] + TRUNCATION_MARKER.format(len(value) - keep)
    if isinstance(value, (dict, list, tuple)) and depth >= max_depth:
        return "…[truncated: nested too deep]"
    if isinstance(value, dict):
        # Keys stay whole: two keys cut alike would merge.
        return {key: _cut(item, keep, depth + 1, max_depth) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_cut(item, keep, depth + 1, max_depth) for item in value]
    return value
