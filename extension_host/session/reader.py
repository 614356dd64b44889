"""Reading the session's events by cursor: ``session.eventLog.read`` and ``session.eventLog.tail``.

:class:`SessionEventReader` answers the published SDK's event-log reads (``EventLogReadRequest``
→ ``EventsReadResult``) from the current session:

- **Forward** (the default) pages from the cursor toward newer events. With persistence the
  events come from ``events.jsonl``, streamed from the cursor's byte offset (pending writes are
  flushed first, so a read sees every event emitted before it; the file is read in a worker
  thread, never whole). Without persistence (``persist=False``) they come from the in-memory
  history (:class:`~extension_host.events.EventLog`), so a cursor whose event the history has
  forgotten is ``expired``. Either way a forward page holds persistent events only, and
  ephemeral ones only as they happen: when the cursor is at the tail and ``waitMs`` is set, the
  read waits (up to :data:`MAX_WAIT_MS`) for the event log to hand it a new event matching the
  filters (ephemeral ones too unless ``includeEphemeral: false``), woken by the event log
  itself, never by polling. :meth:`SessionEventReader.close` (the host, as it stops) ends every
  wait at once.
- **Backward** pages from the newest persisted event toward older ones; each page is
  oldest-to-newest. It never waits.

A page holds at most ``max`` events and :data:`PAGE_BYTES` of event JSON (one larger event is
returned alone, so paging always moves on); one read looks at :data:`SCAN_BYTES` of the log at
most, so a ``types`` filter that matches little returns an empty page with ``hasMore`` rather
than reading a whole huge log. ``hasMore`` is true when more events lie in the read's direction.

Cursors are opaque to extensions: the position (a byte offset, or an event id without
persistence), the direction and the session id, signed with a key of this host process. A
cursor that does not verify is refused (``INVALID_PARAMS`` naming ``cursor``); one of an earlier
session of this host (before ``/clear``) or past the log's end is ``expired`` and the read starts
over at the current session's oldest readable event, as the SDK describes.

This module reads the session's file and the event log; it neither writes nor knows extensions.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from extension_protocol.connection import RpcError
from extension_protocol.protocol import INVALID_PARAMS, RPC_EVENT_LOG_READ, Event

from ..events import EventLog
from ..runtime.session_rpc_shapes import EventLogReadRequest, EventsReadResult
from .log import MAX_LINE_BYTES, encode_event, parse_line, skip_line
from .persisted import PersistedSession

__all__ = [
    "DEFAULT_EVENTS",
    "MAX_EVENTS",
    "MAX_WAITING_READS",
    "MAX_WAIT_MS",
    "PAGE_BYTES",
    "SCAN_BYTES",
    "SessionEventReader",
]

DEFAULT_EVENTS: Final = 200
"""Events per page when the read gives no ``max``."""
MAX_EVENTS: Final = 1_000
"""The largest ``max`` (the SDK's bound)."""
PAGE_BYTES: Final = 1024 * 1024
"""A page's soft budget of event JSON: it stops before the event that would pass it (the SDK's
1 MiB); a single larger event is returned alone."""
SCAN_BYTES: Final = 16 * 1024 * 1024
"""The most of the log one read looks at (events the filters leave out count too)."""
MAX_WAIT_MS: Final = 30_000
"""The longest ``waitMs`` honoured; longer waits are cut to this (the SDK's cap)."""
MAX_WAITING_READS: Final = 64
"""Reads waiting for events at once, across the host's extensions; one more is refused."""

_CHUNK: Final = 64 * 1024
"""Bytes read at a time when paging backward."""


@dataclass(frozen=True, slots=True)
class _Filter:
    types: frozenset[str] | None
    primary_only: bool
    agent_ids: frozenset[str] | None
    include_ephemeral: bool

    def __call__(self, event: Event) -> bool:
        if event.get("ephemeral") and not self.include_ephemeral:
            return False
        if self.types is not None and event["type"] not in self.types:
            return False
        if self.agent_ids is not None:
            data = event.get("data")
            owner = event.get("agentId") or (data.get("agentId") if isinstance(data, dict) else None)
            return owner in self.agent_ids
        if self.primary_only:
            return not event.get("agentId") or event["type"].startswith("subagent.")
        return True


@dataclass(slots=True)
class _Page:
    events: list[Event]
    position: int | str
    """Where the next read in this direction starts: a byte offset, or an event id in memory."""
    has_more: bool


class SessionEventReader:
    """Answers event-log reads from ``session``'s file (or ``events``' history without one).

    Args:
        session: the host's persisted session (its id and file change on ``/clear``).
        events: the host's event log: the history without persistence, and the live events.
    """

    def __init__(self, session: PersistedSession, events: EventLog) -> None:
        self._session = session
        self._events = events
        self._key = os.urandom(16)
        self._waits: set[_LiveEvents] = set()
        self._closed = False

    def close(self) -> None:
        """End every waiting read now (with what it has), and wait no more: the host is
        stopping, and a read left waiting would hold its extension's stop back."""
        self._closed = True
        for live in self._waits:
            live.arrived.set()

    # -- the methods -----------------------------------------------------------------------

    def events(self) -> list[Event]:
        """Every persisted event of the current session, oldest first (``session.getMessages``)."""
        return list(self._session.replay())

    def tail(self) -> str:
        """A cursor at the current end of the session's persistent events."""
        path = self._flushed_path()
        if path is not None:
            return self._cursor("f", _size(path))
        durable = [event for event in self._events.history() if not event.get("ephemeral")]
        return self._cursor("f", durable[-1]["id"] if durable else "")

    async def read(self, request: EventLogReadRequest) -> EventsReadResult:
        """One page of events, as ``request`` asks (validated against its shape already).

        Raises:
            RpcError: ``INVALID_PARAMS`` for a cursor this host did not give, or too many reads
                waiting at once.
        """
        limit = request.get("max", DEFAULT_EVENTS)
        types = request.get("types", "*")
        agent_ids = request.get("agentIds")
        accept = _Filter(
            None if types == "*" else frozenset(types),
            request.get("agentScope", "all") == "primary",
            frozenset(agent_ids) if agent_ids else None,
            request.get("includeEphemeral", True),
        )
        direction, position, expired = self._decode(request.get("cursor"))
        backward = request.get("direction", direction) == "backward"
        wait_ms = request.get("waitMs", 0)
        page: _Page
        path = self._flushed_path()
        if path is not None:
            end = _size(path)
            if not isinstance(position, int) or position > end:
                expired = expired or position is not None
                position = end if backward else 0
            if backward:
                page = await asyncio.to_thread(_read_backward, path, position, limit, accept)
            else:
                page = await self._forward_file(path, position, end, limit, accept, wait_ms)
        else:
            history = self._events.history()
            ids = [event["id"] for event in history]
            if not isinstance(position, str) or (position and position not in ids):
                expired = expired or position is not None
                position = ""
            if backward:
                page = _history_backward(history, ids, position, limit, accept)
            else:
                page = await self._forward_history(history, ids, position, limit, accept, wait_ms)
        return {
            "events": page.events,
            "cursor": self._cursor("b" if backward else "f", page.position),
            "hasMore": page.has_more,
            "cursorStatus": "expired" if expired else "ok",
        }

    # -- forward ---------------------------------------------------------------------------

    async def _forward_file(self, path: Path, start: int, end: int, limit: int, accept: _Filter, wait_ms: int) -> _Page:
        live = _LiveEvents(self._events, accept) if wait_ms > 0 else None
        try:
            page = await asyncio.to_thread(_read_forward, path, start, end, limit, accept)
            if live is None or page.events or page.has_more:
                return self._with_more(page)
            await self._wait(live, wait_ms)
        finally:
            if live is not None:
                live.close()
        # Nothing can be emitted between here and the return: the events live holds are exactly
        # those emitted since `end`, and the flushed file ends after the last persistent one.
        new_end = _size(self._flushed_path() or path)
        if live.fits(limit):
            return _Page(live.events, new_end, False)
        return await self._forward_file(path, end, new_end, limit, accept, 0)  # too many: from the file

    def _with_more(self, page: _Page) -> _Page:
        if not page.has_more:
            path = self._flushed_path()
            page.has_more = path is not None and isinstance(page.position, int) and _size(path) > page.position
        return page

    async def _forward_history(
        self, history: list[Event], ids: list[str], start: str, limit: int, accept: _Filter, wait_ms: int
    ) -> _Page:
        index = ids.index(start) + 1 if start else 0
        events: list[Event] = []
        budget = PAGE_BYTES
        position: str = start
        for event in history[index:]:
            if not event.get("ephemeral") and accept(event):
                size = len(encode_event(event))
                if len(events) == limit or (events and size > budget):
                    return _Page(events, position, True)
                events.append(event)
                budget -= size
            position = event["id"]
        if events or wait_ms <= 0:
            return _Page(events, position, False)
        live = _LiveEvents(self._events, accept)
        try:
            await self._wait(live, wait_ms)
        finally:
            live.close()
        latest = self._events.history()
        if live.fits(limit):
            return _Page(live.events, latest[-1]["id"] if latest else position, False)
        return await self._forward_history(latest, [event["id"] for event in latest], position, limit, accept, 0)

    async def _wait(self, live: _LiveEvents, wait_ms: int) -> None:
        if self._closed:
            return
        if len(self._waits) >= MAX_WAITING_READS:
            raise RpcError(
                INVALID_PARAMS,
                f"{RPC_EVENT_LOG_READ}: waitMs: {MAX_WAITING_READS} reads are already waiting for events on "
                "this host; read again without waitMs, or once one of them has returned",
                {"field": "waitMs"},
            )
        self._waits.add(live)
        try:
            await asyncio.wait_for(live.arrived.wait(), min(wait_ms, MAX_WAIT_MS) / 1000)
        except TimeoutError:
            pass  # no new event: an empty page, the cursor unchanged
        finally:
            self._waits.discard(live)

    # -- cursors ---------------------------------------------------------------------------

    def _flushed_path(self) -> Path | None:
        path = self._session.events_path
        if path is not None:
            self._session.flush()
        return path

    def _cursor(self, direction: str, position: int | str) -> str:
        payload = json.dumps([direction, self._session.id, position], separators=(",", ":")).encode()
        body = base64.urlsafe_b64encode(payload).decode().rstrip("=")
        return f"{body}.{self._sign(body)}"

    def _sign(self, body: str) -> str:
        return hmac.new(self._key, body.encode(), hashlib.sha256).hexdigest()[:24]

    def _decode(self, cursor: str | None) -> tuple[str, int | str | None, bool]:
        """``(direction, position, expired)`` of ``cursor``: no cursor is forward from nowhere
        in particular (``None``: the start, or the end for a backward read); a cursor of an
        earlier session is expired, its position gone.

        Raises:
            RpcError: the cursor is not one this host gave.
        """
        if cursor is None:
            return "forward", None, False
        body, _, signature = cursor.partition(".")
        value: Any = None
        if hmac.compare_digest(signature, self._sign(body)):
            try:
                value = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
            except ValueError:
                value = None
        if not (isinstance(value, list) and len(value) == 3 and value[0] in ("f", "b")):
            raise RpcError(
                INVALID_PARAMS,
                f"{RPC_EVENT_LOG_READ}: cursor: not a cursor this host gave (cursors come from "
                "session.eventLog.read or session.eventLog.tail of the same host); omit it to read from the start of "
                "the session",
                {"field": "cursor"},
            )
        direction = "backward" if value[0] == "b" else "forward"
        if value[1] != self._session.id:
            return direction, None, True
        position = value[2]
        return direction, position if isinstance(position, (int, str)) else None, False


class _LiveEvents:
    """The events the log emits from now on that a read's filter accepts, and a wake-up."""

    def __init__(self, events: EventLog, accept: _Filter) -> None:
        self.events: list[Event] = []
        self.arrived = asyncio.Event()
        self._accept = accept
        self.close: Callable[[], None] = events.subscribe(self._hear)

    def _hear(self, event: Event) -> None:
        if self._accept(event):
            self.events.append(event)
            self.arrived.set()

    def fits(self, limit: int) -> bool:
        """Whether every event heard fits one page."""
        if len(self.events) > limit:
            return False
        sizes = [len(encode_event(event)) for event in self.events]
        return len(sizes) <= 1 or sum(sizes) <= PAGE_BYTES


def _size(path: Path) -> int:
    try:
        return os.path.getsize(path)
    except FileNotFoundError:
        return 0


def _read_forward(path: Path, start: int, end: int, limit: int, accept: _Filter) -> _Page:
    """Events of ``path`` from byte ``start`` toward ``end`` (both line boundaries); runs in a
    worker thread."""
    events: list[Event] = []
    budget = PAGE_BYTES
    position = start
    with path.open("rb") as handle:
        handle.seek(start)
        while position < end and position - start < SCAN_BYTES:
            line = handle.readline(min(MAX_LINE_BYTES + 1, end - position))
            if not line.endswith(b"\n"):
                if not line or position + len(line) >= end:
                    return _Page(events, position, False)  # a part-line a failed write left: never whole
                position += len(line) + skip_line(handle)  # longer than the log's limit, as its reader skips
                continue
            event = parse_line(line)
            if event is not None and accept(event):
                if len(events) == limit or (events and len(line) > budget):
                    return _Page(events, position, True)
                events.append(event)
                budget -= len(line)
            position += len(line)
    return _Page(events, position, position < end)


def _read_backward(path: Path, end: int, limit: int, accept: _Filter) -> _Page:
    """Events of ``path`` before byte ``end``, gathered newest first and returned oldest first;
    the page's position is where its oldest line starts. Runs in a worker thread."""
    found: list[Event] = []
    budget = PAGE_BYTES
    position = end
    with path.open("rb") as handle:
        for start, line in _lines_backward(handle, end):
            event = parse_line(line) if line is not None else None
            if line is not None and event is not None and accept(event):
                if len(found) == limit or (found and len(line) > budget):
                    break
                found.append(event)
                budget -= len(line)
            position = start
            if end - position >= SCAN_BYTES:
                break
    found.reverse()
    return _Page(found, position, position > 0)


def _lines_backward(handle: Any, end: int) -> Iterator[tuple[int, bytes | None]]:
    """``(start, line)`` for each line before byte ``end``, newest first; ``line`` is ``None``
    for one longer than the log's line limit (never held whole)."""
    buffer = b""  # the file's bytes from `position` on, up to `line_end` unless overlong
    position = line_end = end  # line_end: where the line being gathered ends
    overlong = False
    while line_end > 0:
        reaches_end = position + len(buffer) == line_end
        cut = buffer.rfind(b"\n", 0, len(buffer) - 1 if reaches_end else len(buffer))
        if cut >= 0:
            line_start = position + cut + 1
            yield line_start, None if overlong else buffer[cut + 1 :]
            buffer, line_end, overlong = buffer[: cut + 1], line_start, False
            continue
        if position == 0:
            yield 0, None if overlong else buffer
            return
        if line_end - position > MAX_LINE_BYTES:
            buffer, overlong = b"", True  # forget what was read of it, keep looking for its start
        size = min(_CHUNK, position)
        position -= size
        handle.seek(position)
        buffer = handle.read(size) + buffer


def _history_backward(history: list[Event], ids: list[str], before: str, limit: int, accept: _Filter) -> _Page:
    """The durable events of the in-memory history before the event ``before`` (``""``: the
    newest), newest gathered first, returned oldest first."""
    oldest = ids.index(before) if before else len(history)
    found: list[Event] = []
    budget = PAGE_BYTES
    for index in range(oldest - 1, -1, -1):
        event = history[index]
        if not event.get("ephemeral") and accept(event):
            size = len(encode_event(event))
            if len(found) == limit or (found and size > budget):
                break
            found.append(event)
            budget -= size
        oldest = index
    found.reverse()
    return _Page(found, ids[oldest] if oldest < len(ids) else before, oldest > 0)
