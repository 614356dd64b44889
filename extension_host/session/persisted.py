"""The persisted session of one host: which session it is, its log, its lifecycle events, replay.

:class:`PersistedSession` opens a new session or resumes one by id (through
:class:`~extension_host.session.store.SessionStore`), makes the event log hand every persistent
event to the session's file, and emits ``session.start`` (new), ``session.resume`` (resumed, with
a ``session.warning`` when the log's last line was torn by a crash) and ``session.shutdown``
(ended), with the data of the published SDK's session-events types. :meth:`PersistedSession.renew`
ends the current session and starts the next (``/clear``). :meth:`PersistedSession.replay` reads
the durable history back, streamed from disk; :meth:`PersistedSession.subscribe` replays it to a
listener and then hands it live events, with no gap and no duplicate.

Without a store (``persist=False``) nothing is written: the session has an id and events, the
replay is the in-memory history's persistent events, and there is no workspace folder.

It knows the event log and the store; extensions, hooks and turns are the host's.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from extension_protocol.protocol import Event

from ..events import EventListener, EventLog, iso_now
from .log import EVENT_FORMAT_VERSION, PRODUCER, LogReader
from .store import OpenSession, SessionStore, check_session_id, new_session_id

__all__ = ["EVENT_FORMAT_VERSION", "PRODUCER", "PersistedSession"]

_WARNING_TYPE: Final = "session_log"
"""``warningType`` of the warnings about the session's own log."""


class PersistedSession:
    """The current session of one host.

    Args:
        events: the host's event log.
        store: where sessions are kept; ``None`` keeps nothing on disk.
        project_root: the project the session belongs to.
        resume: the id of a persisted session to resume; ``None`` starts a new one.
        version: the host's version, for ``session.start``'s ``copilotVersion``.

    Raises:
        SessionIdError, UnknownSessionError: ``resume`` is malformed, unknown or another
            project's (checked here, before anything starts).
        ValueError: ``resume`` without a store.
    """

    def __init__(
        self, events: EventLog, store: SessionStore | None, project_root: Path, resume: str | None, version: str
    ) -> None:
        if resume is not None:
            check_session_id(resume)
            if store is None:
                raise ValueError("resuming a session needs persistence; do not pass persist=False with session=")
            store.check(resume, project_root)
        self._events = events
        self._store = store
        self._project_root = project_root
        self._version = version
        self._resume = resume
        self.id: str = resume if resume is not None else new_session_id()
        """The current session's id."""
        self._open: OpenSession | None = None
        self._started_ms = 0
        self.start_time = ""
        """When the current session started (ISO 8601; a resumed one: when it was created)."""

    @property
    def resumed(self) -> bool:
        """Whether this host resumed a persisted session (rather than starting a new one)."""
        return self._resume is not None

    @property
    def workspace(self) -> Path | None:
        """The session's ``files/`` folder (``None`` without persistence)."""
        return self._open.workspace if self._open is not None else None

    @property
    def events_path(self) -> Path | None:
        """The session's ``events.jsonl`` (``None`` without persistence)."""
        return self._open.events_path if self._open is not None else None

    def begin(self) -> None:
        """Open (or create) the session, lock it, and emit ``session.start`` or ``session.resume``.

        Raises:
            SessionLockedError: another host holds the session.
        """
        started_ms = int(time.time() * 1000)
        self.start_time = iso_now()
        if self._store is None:
            self._started_ms = started_ms
            self._events.begin(None)
            self._emit_start()
            return
        if self._resume is None:
            self._open = self._store.create(self._project_root, self.id)
            self._started_ms = _milliseconds(self._open.created) or started_ms
            self._events.begin(self._open.log.append)
            self._emit_start()
            return
        self._open = opened = self._store.open(self._resume, self._project_root)
        self._started_ms = _milliseconds(opened.created) or started_ms
        if opened.created is not None and _milliseconds(opened.created) is not None:
            self.start_time = opened.created
        scan = opened.scan
        last = scan.last_event
        problems: list[str] = []
        if last is None and scan.lines:
            # The last whole line is damaged: find the last good event the slow way.
            reader = LogReader(opened.events_path)
            for event in reader:
                last = event
            problems = reader.problems
        self._events.begin(opened.log.append, last["id"] if last is not None else None)
        self._events.emit(
            "session.resume",
            {
                "resumeTime": iso_now(),
                "eventCount": scan.lines,
                "eventsFileSizeBytes": scan.end,
                "context": self._context(),
            },
        )
        if scan.torn:
            problems.insert(
                0, f"its last line was cut short ({scan.size - scan.end} bytes, a crash while writing); skipped"
            )
        for problem in problems:
            self._events.emit(
                "session.warning",
                {
                    "warningType": _WARNING_TYPE,
                    "message": f"session {self.id}: events.jsonl: {problem}, the rest was resumed",
                },
            )

    def end(self, shutdown_type: str = "routine", error: str | None = None) -> None:
        """Emit ``session.shutdown`` and close the session's file (flushed, fsynced, unlocked);
        idempotent."""
        if self._started_ms == 0:
            return
        data: dict[str, Any] = {
            "shutdownType": shutdown_type,
            "codeChanges": {"filesModified": [], "linesAdded": 0, "linesRemoved": 0},
            "modelMetrics": {},
            "sessionStartTime": self._started_ms,
            "totalApiDurationMs": 0,
        }
        if error is not None:
            data["errorReason"] = error
        self._events.emit("session.shutdown", data)
        self._started_ms = 0
        if self._open is not None:
            self._open.close()  # later events (none, normally) reach a closed log: dropped
            self._open = None

    def renew(self) -> str:
        """End the current session and begin a new one (a new id and ``session.start``);
        returns the new id."""
        self.end()
        self._resume = None
        self.id = new_session_id()
        self.begin()
        return self.id

    def flush(self) -> None:
        """Write what the session's file has queued."""
        if self._open is not None:
            self._open.log.flush()

    def replay(self) -> Iterator[Event]:
        """The session's persistent events so far, oldest first, streamed from its file (the
        in-memory history's without persistence). Damaged lines are skipped."""
        if self._open is None:
            return iter([event for event in self._events.history() if not event.get("ephemeral")])
        self._open.log.flush()
        return iter(LogReader(self._open.events_path, end=os.path.getsize(self._open.events_path)))

    def subscribe(self, listener: EventListener) -> Callable[[], None]:
        """Replay the durable history to ``listener``, then hand it every later event.

        Events emitted while the replay runs (by the listener itself, say) are held and
        delivered after it, so nothing is missed or seen twice.
        """
        history = self.replay()
        held: list[Event] = []
        live = False

        def relay(event: Event) -> None:
            if live:
                listener(event)
            else:
                held.append(event)

        unsubscribe = self._events.subscribe(relay)
        for event in history:
            listener(event)
        while held:
            listener(held.pop(0))
        live = True
        return unsubscribe

    def _emit_start(self) -> None:
        self._events.emit(
            "session.start",
            {
                "sessionId": self.id,
                "version": EVENT_FORMAT_VERSION,
                "producer": PRODUCER,
                "copilotVersion": self._version,
                "startTime": self.start_time,
                "context": self._context(),
            },
        )

    def _context(self) -> dict[str, Any]:
        context: dict[str, Any] = {"cwd": str(self._project_root)}
        if (self._project_root / ".git").exists():
            context["gitRoot"] = str(self._project_root)
        return context


def _milliseconds(timestamp: str | None) -> int | None:
    """Unix milliseconds of an ISO 8601 timestamp, ``None`` if there is none or it is not one."""
    if timestamp is None:
        return None
    try:
        return round(datetime.fromisoformat(timestamp).timestamp() * 1000)
    except ValueError:
        return None
