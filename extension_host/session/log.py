"""A session's ``events.jsonl``: appending whole lines in batches, and reading them back.

One event per line, compact JSON in ASCII (every control character and non-ASCII character is
escaped, so a line never holds a raw newline), each line ending in ``\\n``.

Flush policy (group commit). :meth:`SessionLog.append` encodes the event and queues its line;
the queued lines go to the file together (one ``write`` per :data:`FLUSH_BYTES`) when the first
of these comes:

- the end of the current turn of the event loop (the first queued line schedules the flush
  with ``call_soon``, so whatever the loop runs in this turn joins the same write), but no
  sooner than :data:`FLUSH_INTERVAL` after the previous write: a steady stream of events (tool
  calls one after another) is written every few milliseconds, a lone event at once;
- :data:`FLUSH_EVENTS` lines or :data:`FLUSH_BYTES` are queued;
- :meth:`SessionLog.flush` or :meth:`SessionLog.close` is called (the host does on stop and
  when it ends a session); without a running event loop every append is written at once.

Encoding at the append spreads the cost over the calls that emit the events (encoding a whole
batch at the write made one call in twenty wait for all of them), and the line's length is the
event's size for the in-memory history too (:class:`~extension_host.events.EventLog`), which
so need not estimate it. A queued line never keeps a payload alive.

What is fsynced when: the file is fsynced on :meth:`SessionLog.close` only. A write hands the
lines to the operating system, so a crash or ``kill -9`` of the host loses at most the events
of its last :data:`FLUSH_INTERVAL` (and of the loop turn it died in); a power cut may lose what
the system had not written to disk yet.

Reading (:class:`LogReader`) streams line by line and never holds more than one line: a line
that is not a whole event (the torn last line of a crashed host, a line longer than
:data:`MAX_LINE_BYTES`, one nested deeper than :data:`~extension_protocol.nesting.MAX_DEPTH`
levels, anything that is not JSON) is skipped and described in :attr:`LogReader.problems`; no
line, whatever it holds, makes a reader raise. :func:`scan_log` finds the last event and the count without parsing
every line, and the end of the last whole line, so a resumed session cuts a torn tail before
appending.

This module knows files and the envelope, not what the events mean, nor folders or locks
(:mod:`extension_host.session.store`).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from extension_protocol.json_codec import orjson_dumps, standard_dumps
from extension_protocol.nesting import MAX_DEPTH, TooDeep, check_depth, loads
from extension_protocol.protocol import Event

from ..events import cut_strings
from ..project.private_files import open_private

__all__ = [
    "EVENT_FORMAT_VERSION",
    "FLUSH_BYTES",
    "FLUSH_EVENTS",
    "FLUSH_INTERVAL",
    "MAX_LINE_BYTES",
    "PRODUCER",
    "LogReader",
    "LogScan",
    "SessionLog",
    "encode_event",
    "line_problem",
    "overlong_line",
    "parse_line",
    "read_line",
    "scan_log",
    "skip_line",
]

EVENT_FORMAT_VERSION: Final = 1
"""``session.start``'s ``version``: the event format of the log."""
PRODUCER: Final = "extension-host"
"""``session.start``'s ``producer``."""
FLUSH_EVENTS: Final = 1_000
"""Queued events that make a write at once, before the loop turn ends or the interval passes."""
FLUSH_BYTES: Final = 1024 * 1024
"""Queued bytes that make a write at once; also the size of each write of a batch."""
FLUSH_INTERVAL: Final = 0.005
"""Seconds between two writes at least, while events keep coming (bounds what a crash loses)."""
MAX_LINE_BYTES: Final = 16 * 1024 * 1024
"""The longest line written or read. An event whose line would be longer is written with every
string longer than a sixteenth of this cut (as the in-memory history cuts); a longer line in a
file is skipped on read."""

_CHUNK: Final = 1024 * 1024
"""Bytes read at a time when scanning a log."""
_NOT_AN_EVENT: Final = "is not an event"


_ENCODER: Final = json.JSONEncoder(separators=(",", ":"), default=str, allow_nan=False)
"""One encoder for every line: ``json.dumps`` with options builds a new one per call."""


def _encode(value: Any) -> str:
    """Compact ASCII JSON, anything JSON cannot hold as its ``str`` (see
    :mod:`~extension_protocol.json_codec`: orjson's when it writes only ASCII)."""
    fast = orjson_dumps(value)
    if fast is not None and fast.isascii():
        return fast.decode("ascii")
    return standard_dumps(_ENCODER.encode, value)


def encode_event(event: Event) -> str:
    """One log line for ``event`` (ASCII, ending in ``\\n``), at most :data:`MAX_LINE_BYTES` long
    and nested at most :data:`~extension_protocol.nesting.MAX_DEPTH` levels: what a reader reads."""
    try:
        line = _encode(event) + "\n"
    except (ValueError, TypeError, RecursionError) as exc:
        # Data no JSON can hold (a cycle, say): the envelope stays, so the chain survives.
        return _encode({**event, "data": {"unencodable": str(exc)[:200]}}) + "\n"
    try:
        check_depth(event, line)
    except TooDeep:
        # Only what lies too deep is marked; the data is the envelope's second level.
        event = {**event, "data": cut_strings(event["data"], MAX_LINE_BYTES, MAX_DEPTH - 1)}
        line = _encode(event) + "\n"
    if len(line) <= MAX_LINE_BYTES:
        return line
    cut: dict[str, Any] = {**event, "data": cut_strings(event["data"], MAX_LINE_BYTES // 16)}
    line = _encode(cut) + "\n"
    if len(line) <= MAX_LINE_BYTES:
        return line
    # Too many strings even cut: the envelope stays, so the chain and the type survive.
    cut["data"] = {"truncated": True}
    return _encode(cut) + "\n"


class SessionLog:
    """Appends events to one ``events.jsonl`` in batches (see the module for the policy).

    ``append`` is an :data:`~extension_host.events.EventSink`: it never raises. A failed write
    (a full disk, say) is reported once on stderr and in :attr:`failure`; later batches are
    still tried.
    """

    def __init__(self, path: Path) -> None:
        self.path: Final = path
        self._fd: int | None = open_private(path, os.O_WRONLY | os.O_APPEND)
        self._pending: list[str] = []
        self._pending_bytes = 0
        self._scheduled = False
        self._last_write = float("-inf")
        self._broken_line = False
        """A failed write may have left part of a line: the next write ends it first."""
        self.failure: str | None = None
        """The first write error, if any."""
        self.written = 0
        """Lines written so far by this writer."""

    def append(self, event: Event) -> int | None:
        """Encode ``event`` and queue its line, which reaches the file as the module's flush
        policy says; returns the line's length (``None`` once closed: nothing is written)."""
        if self._fd is None:
            return None
        line = encode_event(event)
        self._pending.append(line)
        self._pending_bytes += len(line)
        if len(self._pending) >= FLUSH_EVENTS or self._pending_bytes >= FLUSH_BYTES:
            self.flush()
        elif not self._scheduled:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self.flush()
                return len(line)
            self._scheduled = True
            wait = self._last_write + FLUSH_INTERVAL - time.monotonic()
            if wait > 0:
                loop.call_later(wait, self._flush_scheduled)
            else:
                loop.call_soon(self._flush_scheduled)
        return len(line)

    def _flush_scheduled(self) -> None:
        self._scheduled = False
        self.flush()

    def flush(self) -> None:
        """Write every queued line now, in one write."""
        if not self._pending or self._fd is None:
            return
        self._last_write = time.monotonic()
        pending, self._pending = self._pending, []
        self._pending_bytes = 0
        chunk: list[str] = []
        chunk_bytes = 0
        for line in pending:
            chunk.append(line)
            chunk_bytes += len(line)
            if chunk_bytes >= FLUSH_BYTES:
                self._write(chunk)
                chunk, chunk_bytes = [], 0
        if chunk:
            self._write(chunk)

    def _write(self, lines: list[str]) -> None:
        """Write whole lines in one write (more if the system takes part of it)."""
        fd = self._fd
        if fd is None:
            return
        text = "".join(lines)
        if self._broken_line:
            # The part-line becomes one damaged line, skipped on read; these stay whole.
            text = "\n" + text
        view = memoryview(text.encode("ascii"))  # the encoder escapes all but ASCII
        try:
            while view:
                view = view[os.write(fd, view) :]
            self._broken_line = False
        except OSError as exc:
            self._broken_line = True
            if self.failure is None:
                self.failure = (
                    f"cannot write {self.path}: {exc.strerror or exc}; the session's events are not being "
                    "saved until it can be (free some space, or fix the folder's permissions)"
                )
                print(self.failure, file=sys.stderr)
            return
        self.written += len(lines)

    def close(self) -> None:
        """Write what is queued, fsync and close; idempotent."""
        if self._fd is None:
            return
        self.flush()
        fd, self._fd = self._fd, None
        try:
            os.fsync(fd)
        except OSError:
            pass  # some file systems cannot fsync; the data was written all the same
        finally:
            os.close(fd)


@dataclass(frozen=True, slots=True)
class LogScan:
    """What :func:`scan_log` learnt of a log without parsing all of it."""

    lines: int
    """Whole lines (events, unless some are damaged)."""
    size: int
    """The file's size in bytes."""
    end: int
    """Where the last whole line ends: a torn tail starts here (``end < size``)."""
    last_event: Event | None
    """The last whole line's event, ``None`` when the log is empty or that line is damaged."""
    last_problem: str | None = None
    """What is wrong with the last whole line when it is damaged, as :attr:`LogReader.problems`
    says it."""

    @property
    def torn(self) -> bool:
        """Whether the file ends in a partial line (the host died while writing it)."""
        return self.end < self.size


def scan_log(path: Path) -> LogScan:
    """Count the whole lines of ``path`` and read its last event, reading in chunks (a log of
    any size costs :data:`MAX_LINE_BYTES` of memory at most). A missing file is an empty log."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return LogScan(0, 0, 0, None)
    with handle:
        lines = 0
        offset = 0
        last_end = 0  # offset just after the last newline
        previous_end = 0  # offset just after the newline before that one
        while chunk := handle.read(_CHUNK):
            count = chunk.count(b"\n")
            if count:
                lines += count
                last = chunk.rfind(b"\n")
                before = chunk.rfind(b"\n", 0, last) if count > 1 else -1
                previous_end = offset + before + 1 if before >= 0 else last_end
                last_end = offset + last + 1
            offset += len(chunk)
        if not lines:
            return LogScan(lines, offset, last_end, None)
        if last_end - previous_end > MAX_LINE_BYTES:
            return LogScan(lines, offset, last_end, None, overlong_line(lines))
        handle.seek(previous_end)
        event = read_line(handle.read(last_end - previous_end))
        if isinstance(event, str):
            return LogScan(lines, offset, last_end, None, line_problem(lines, event))
        return LogScan(lines, offset, last_end, event)


class LogReader:
    """The events of one log, oldest first, streamed; damaged lines are skipped and described.

    ::

        reader = LogReader(path)
        for event in reader:
            ...
        reader.problems  # e.g. ["line 12 is cut short (the host stopped while writing it); skipped"]

    Iterating again reads the file again from the start. ``end`` stops at a byte offset (the
    end of what was written when a replay began).
    """

    def __init__(self, path: Path, end: int | None = None) -> None:
        self.path: Final = path
        self._end = end
        self.problems: list[str] = []
        """One line per damaged line met by the last iteration."""

    def __iter__(self) -> Iterator[Event]:
        self.problems = []
        try:
            handle = self.path.open("rb")
        except FileNotFoundError:
            return
        with handle:
            number = 0
            position = 0
            end = self._end
            while end is None or position < end:
                limit = MAX_LINE_BYTES + 1 if end is None else min(MAX_LINE_BYTES + 1, end - position)
                line = handle.readline(limit)
                if not line:
                    return
                number += 1
                position += len(line)
                if not line.endswith(b"\n"):
                    if len(line) > MAX_LINE_BYTES:
                        position += skip_line(handle)
                        self.problems.append(overlong_line(number))
                        continue
                    if end is None or position >= end:
                        self.problems.append(line_problem(number, "is cut short (the host stopped while writing it)"))
                        return
                event = read_line(line)
                if isinstance(event, str):
                    self.problems.append(line_problem(number, event))
                    continue
                yield event


def skip_line(handle: Any) -> int:
    """Read past the rest of an overlong line of an open log; returns the bytes skipped."""
    skipped = 0
    while chunk := handle.readline(_CHUNK):
        skipped += len(chunk)
        if chunk.endswith(b"\n"):
            break
    return skipped


def parse_line(line: bytes) -> Event | None:
    """The event on one line of a log, or ``None`` when it is not one (bad JSON, nested too
    deep, a missing field)."""
    event = read_line(line)
    return None if isinstance(event, str) else event


def read_line(line: bytes) -> Event | str:
    """The event on one line of a log, or what is wrong with the line (``is not an event``)."""
    try:
        value = loads(line)
    except TooDeep as exc:
        return f"is {exc}"
    except ValueError:
        return _NOT_AN_EVENT
    if (
        not isinstance(value, dict)
        or not isinstance(value.get("id"), str)
        or not isinstance(value.get("type"), str)
        or not isinstance(value.get("timestamp"), str)
        or not isinstance(value.get("data"), dict)
    ):
        return _NOT_AN_EVENT
    event: Event = value  # type: ignore[assignment]
    return event


def line_problem(number: int, what: str) -> str:
    """One of :attr:`LogReader.problems`: ``line 12 is not an event; skipped``."""
    return f"line {number} {what}; skipped"


def overlong_line(number: int) -> str:
    """The problem of line ``number`` when it is longer than :data:`MAX_LINE_BYTES`."""
    return line_problem(number, f"is longer than {MAX_LINE_BYTES} bytes")
