"""Session folders under ``<home>/sessions/``: creating, opening (with its lock), listing, removing.

Each session is a folder named by its id::

    <home>/sessions/<id>/
        session.json    who it belongs to: {"sessionId", "projectRoot", "created"}
        events.jsonl    its persisted events (see extension_host.session.log)
        files/          its workspace (``session.workspace_path`` for extensions)
        lock            held (flock) by the one host using the session; holds that host's pid

:meth:`SessionStore.fork` makes a new session holding a source session's events up to a turn
(see :mod:`extension_host.session.fork`); its record names the source (``forkedFrom``,
``forkedAtTurn``).

Sessions are the user's alone: ``sessions/``, each session's folder and ``files/`` are 0700,
``session.json``, ``events.jsonl`` and ``lock`` 0600 (see :mod:`extension_host.project.private_files`);
resuming a session an older version made tightens it.

One host per session: :meth:`SessionStore.create` and :meth:`SessionStore.open` take the lock
and a second host gets :class:`~extension_host.errors.SessionLockedError` naming the holder's
pid. The operating system drops the lock when the holder dies, ``kill -9`` included, so a crash
never leaves a session locked. Ids are checked before they touch a path (:func:`check_session_id`).

This module knows folders, ids and locks; what the events mean is the host's and the
projections' business.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from extension_protocol.nesting import loads

from ..errors import SessionError, SessionIdError, SessionLockedError, UnknownSessionError
from ..events import iso_now, make_event
from ..info import host_version
from ..project.paths import sessions_dir
from ..project.private_files import PRIVATE_FOLDER_MODE, open_private, private_folder, tighten_file, write_private
from .fork import TurnNotForkable, forked_events, turn_end
from .log import (
    EVENT_FORMAT_VERSION,
    MAX_LINE_BYTES,
    PRODUCER,
    LogReader,
    LogScan,
    SessionLog,
    encode_event,
    line_problem,
    overlong_line,
    read_line,
    scan_log,
    skip_line,
)

__all__ = [
    "EVENTS_FILE",
    "MAX_SESSION_ID_LENGTH",
    "WORKSPACE_DIR",
    "OpenSession",
    "SessionStore",
    "SessionSummary",
    "check_session_id",
    "new_session_id",
]

EVENTS_FILE: Final = "events.jsonl"
WORKSPACE_DIR: Final = "files"
MAX_SESSION_ID_LENGTH: Final = 128
"""The longest session id accepted (ids the host makes are 36 characters)."""
_METADATA_FILE: Final = "session.json"
_LOCK_FILE: Final = "lock"
_SESSION_ID: Final = re.compile(rf"[A-Za-z0-9_-]{{1,{MAX_SESSION_ID_LENGTH}}}")
_WRITE_BATCH_BYTES: Final = 1024 * 1024
"""Bytes of log lines a fork writes at a time."""
_METADATA_BYTES: Final = 64 * 1024
"""A ``session.json`` larger than this is not believed."""


def new_session_id() -> str:
    """A fresh session id (a UUID, as Copilot's)."""
    return str(uuid.uuid4())


def check_session_id(session_id: str) -> str:
    """``session_id`` if it is one (letters, digits, ``-``, ``_``; no dots, so never a path).

    Raises:
        SessionIdError: it is not.
    """
    if not isinstance(session_id, str) or not _SESSION_ID.fullmatch(session_id):
        raise SessionIdError(str(session_id))
    return session_id


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One persisted session, as ``extensions sessions list`` shows it."""

    id: str
    project: str | None
    """The project root it was started in (``None`` if its record is missing)."""
    started: str | None
    """When it was created (ISO 8601)."""
    last_event: str | None
    """The timestamp of its last persisted event."""
    turns: int
    """User messages in it."""
    events: int
    """Persisted events (whole lines) in it."""
    in_use: bool
    """Whether a host holds it now."""
    problems: tuple[str, ...] = ()
    """Lines of its log the summary needed and could not read, as
    :attr:`~extension_host.session.log.LogReader.problems` says them (skipped: the rest counts)."""

    def to_json(self) -> dict[str, Any]:
        """The summary as ``--json`` prints it."""
        return {
            "id": self.id,
            "project": self.project,
            "started": self.started,
            "lastEvent": self.last_event,
            "turns": self.turns,
            "events": self.events,
            "inUse": self.in_use,
        }


class OpenSession:
    """A session folder this process holds: its lock, its log writer, its paths."""

    def __init__(self, session_id: str, folder: Path, lock_fd: int, scan: LogScan, created: str | None) -> None:
        self.id: Final = session_id
        self.created: Final = created
        """When the session was created (ISO 8601, from its record)."""
        self.folder: Final = folder
        self.events_path: Final = folder / EVENTS_FILE
        self.workspace: Final = folder / WORKSPACE_DIR
        self.scan: Final = scan
        """What the log held when it was opened (``lines`` 0 for a new session)."""
        self._lock_fd: int | None = lock_fd
        self.log: Final = SessionLog(self.events_path)

    def close(self) -> None:
        """Flush, fsync and close the log, then let go of the lock; idempotent."""
        self.log.close()
        if self._lock_fd is not None:
            fd, self._lock_fd = self._lock_fd, None
            os.close(fd)  # closing the descriptor releases the flock


class SessionStore:
    """The sessions under one home folder."""

    def __init__(self, home: Path) -> None:
        self.home: Final = home
        self.root: Final = sessions_dir(home)

    def folder(self, session_id: str) -> Path:
        """The folder of ``session_id`` (checked; it may not exist)."""
        return self.root / check_session_id(session_id)

    def create(
        self, project_root: Path, session_id: str | None = None, origin: Mapping[str, str] | None = None
    ) -> OpenSession:
        """A new session for ``project_root`` (a fresh id unless given), locked by this process;
        ``origin`` adds to its record (a fork's source).

        Raises:
            SessionIdError: ``session_id`` is malformed.
            FileExistsError: a session of that id exists.
        """
        session_id = session_id if session_id is not None else new_session_id()
        folder = self.folder(session_id)
        private_folder(self.root, within=self.home)
        folder.mkdir(mode=PRIVATE_FOLDER_MODE)
        private_folder(folder / WORKSPACE_DIR)
        record = {**(origin or {}), "sessionId": session_id, "projectRoot": str(project_root), "created": iso_now()}
        write_private(folder / _METADATA_FILE, json.dumps(record).encode())
        lock_fd = self._lock(session_id, folder)
        return OpenSession(session_id, folder, lock_fd, LogScan(0, 0, 0, None), record["created"])

    def open(self, session_id: str, project_root: Path) -> OpenSession:
        """Resume ``session_id``: lock it and cut a torn last line so appends start whole.

        Raises:
            SessionIdError: the id is malformed.
            UnknownSessionError: no such session, or it belongs to another project.
            SessionLockedError: another host holds it.
        """
        folder = self.check(session_id, project_root)
        lock_fd = self._lock(session_id, folder)
        try:
            private_folder(folder / WORKSPACE_DIR, within=self.home)
            tighten_file(folder / _METADATA_FILE)  # an older version wrote it with the umask's mode
            events_path = folder / EVENTS_FILE
            scan = scan_log(events_path)
            if scan.torn:
                # Appending after a partial line would glue the next event to it.
                with events_path.open("r+b") as handle:
                    handle.truncate(scan.end)
            return OpenSession(session_id, folder, lock_fd, scan, _read_record(folder).get("created"))
        except BaseException:
            os.close(lock_fd)
            raise

    def check(self, session_id: str, project_root: Path) -> Path:
        """The folder of ``session_id`` if ``project_root`` may resume it (not locking it).

        Raises:
            SessionIdError, UnknownSessionError: as for :meth:`open`.
        """
        folder = self.folder(session_id)
        if not folder.is_dir():
            raise UnknownSessionError(session_id)
        project = _read_record(folder).get("projectRoot")
        if project is not None and Path(project) != Path(project_root):
            raise UnknownSessionError(
                session_id, f"it belongs to project {project}, not {project_root}; run from that project"
            )
        return folder

    def fork(self, source_id: str, turn_id: str) -> str:
        """A new session holding ``source_id``'s persisted events up to and including the response
        of turn ``turn_id`` (see :mod:`extension_host.session.fork`); returns its id. The source
        is only read (a host may hold it: what its host has written so far counts), and the fork
        is left unlocked, ready to resume. Its workspace folder starts empty.

        Raises:
            SessionIdError, UnknownSessionError: the source id is malformed or unknown.
            SessionError: the source has no such turn, or the turn has not ended.
        """
        source = self.folder(source_id)
        if not source.is_dir():
            raise UnknownSessionError(source_id)
        project = _read_record(source).get("projectRoot")
        if project is None:
            raise SessionError(source_id, f"session {source_id} cannot be forked: its session.json is missing")
        events = LogReader(source / EVENTS_FILE)
        try:
            end = turn_end(events, turn_id)
        except TurnNotForkable as exc:
            raise SessionError(source_id, f"session {source_id} cannot be forked: {exc}") from None
        opened = self.create(Path(project), origin={"forkedFrom": source_id, "forkedAtTurn": turn_id})
        try:
            context = {"cwd": project, **({"gitRoot": project} if (Path(project) / ".git").exists() else {})}
            start = make_event(
                "session.start",
                {
                    "sessionId": opened.id,
                    "version": EVENT_FORMAT_VERSION,
                    "producer": PRODUCER,
                    "copilotVersion": host_version(),
                    "startTime": opened.created or iso_now(),
                    "context": context,
                },
            )
            _write_events(opened.events_path, forked_events(events, end, start))
        except BaseException:
            opened.close()
            shutil.rmtree(opened.folder, ignore_errors=True)
            raise
        opened.close()
        return opened.id

    def events(self, session_id: str) -> LogReader:
        """A reader of ``session_id``'s persisted events.

        Raises:
            SessionIdError, UnknownSessionError: as for :meth:`open`.
        """
        folder = self.folder(session_id)
        if not folder.is_dir():
            raise UnknownSessionError(session_id)
        return LogReader(folder / EVENTS_FILE)

    def summaries(self) -> list[SessionSummary]:
        """Every persisted session, the most recently active first."""
        found = []
        for folder in self._folders():
            found.append(self._summary(folder))
        return sorted(found, key=lambda summary: summary.last_event or summary.started or "", reverse=True)

    def summary(self, session_id: str) -> SessionSummary:
        """One session's summary.

        Raises:
            SessionIdError, UnknownSessionError: as for :meth:`open`.
        """
        folder = self.folder(session_id)
        if not folder.is_dir():
            raise UnknownSessionError(session_id)
        return self._summary(folder)

    def remove(self, session_id: str) -> None:
        """Delete a session's folder: its log and its workspace.

        Raises:
            SessionIdError, UnknownSessionError: as for :meth:`open`.
            SessionLockedError: a host holds it.
        """
        folder = self.folder(session_id)
        if not folder.is_dir():
            raise UnknownSessionError(session_id)
        lock_fd = self._lock(session_id, folder)
        try:
            shutil.rmtree(folder)
        finally:
            os.close(lock_fd)

    # -- internals ------------------------------------------------------------------------

    def _folders(self) -> Iterator[Path]:
        try:
            entries = list(self.root.iterdir())
        except FileNotFoundError:
            return
        for entry in entries:
            if _SESSION_ID.fullmatch(entry.name) and entry.is_dir():
                yield entry

    def _summary(self, folder: Path) -> SessionSummary:
        record = _read_record(folder)
        events_path = folder / EVENTS_FILE
        scan = scan_log(events_path)
        last = scan.last_event["timestamp"] if scan.last_event is not None else None
        turns, problems = _count_user_messages(events_path)
        if scan.last_problem is not None and scan.last_problem not in problems:
            problems.append(scan.last_problem)
        return SessionSummary(
            id=folder.name,
            project=record.get("projectRoot"),
            started=record.get("created"),
            last_event=last,
            turns=turns,
            events=scan.lines,
            in_use=_held(folder),
            problems=tuple(problems),
        )

    def _lock(self, session_id: str, folder: Path) -> int:
        fd = open_private(folder / _LOCK_FILE, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder_pid(fd)
            os.close(fd)
            raise SessionLockedError(session_id, holder) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        return fd


def _write_events(path: Path, events: Iterator[Any]) -> None:
    """Write ``events`` as log lines in batches of about :data:`_WRITE_BATCH_BYTES`, then fsync."""
    with path.open("ab") as handle:
        batch: list[bytes] = []
        size = 0
        for event in events:
            line = encode_event(event).encode("ascii")
            batch.append(line)
            size += len(line)
            if size >= _WRITE_BATCH_BYTES:
                handle.write(b"".join(batch))
                batch, size = [], 0
        handle.write(b"".join(batch))
        handle.flush()
        os.fsync(handle.fileno())


def _read_record(folder: Path) -> dict[str, str]:
    """``session.json``'s string fields; empty when it is missing or not believable."""
    try:
        with (folder / _METADATA_FILE).open("rb") as handle:
            value = loads(handle.read(_METADATA_BYTES + 1)[:_METADATA_BYTES])
    except (OSError, ValueError):  # nested too deep included
        return {}
    if not isinstance(value, dict):
        return {}
    return {key: item for key, item in value.items() if isinstance(key, str) and isinstance(item, str)}


def _holder_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _held(folder: Path) -> bool:
    """Whether another process holds ``folder``'s lock (a test lock, let go at once)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder / _LOCK_FILE, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
    return False


def _count_user_messages(path: Path) -> tuple[int, list[str]]:
    """User messages in a log, streamed, and the problems of the lines that may be one but
    cannot be read; lines are parsed only when they may be one."""
    count = 0
    problems: list[str] = []
    marker = b'"type":"user.message"'
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return count, problems
    with handle:
        number = 0
        while line := handle.readline(MAX_LINE_BYTES + 1):
            number += 1
            if not line.endswith(b"\n"):
                if len(line) > MAX_LINE_BYTES:
                    skip_line(handle)
                    problems.append(overlong_line(number))
                continue  # else a torn last line: resuming cuts it
            if marker in line:
                event = read_line(line)
                if isinstance(event, str):
                    problems.append(line_problem(number, event))
                elif event["type"] == "user.message" and not event.get("agentId"):
                    count += 1  # a subagent's prompt is not a turn of the session
    return count, problems
