"""ACP's framing: one JSON-RPC message per line on stdin and stdout, for a :class:`Connection`.

The Agent Client Protocol frames each message as one line of JSON (newline-delimited JSON).
The project's :class:`~extension_protocol.connection.Connection` takes this framing in place of
its ``Content-Length`` frames: :class:`LineDecoder` parses each line read once, into the message
the connection dispatches, and :func:`line` writes each message it sends as its encoded body
and a newline (the encoder never writes a raw newline inside a message).

A line is checked before the connection sees it, because one bad line must not end the session
(the next line is a message of its own): a line that is not JSON, not an object, nested deeper
than :data:`~extension_protocol.nesting.MAX_DEPTH` or longer than :data:`MAX_LINE_BYTES` is
answered with one ``PARSE_ERROR`` (its id when one can be read before the trouble, else
``null``) and skipped; the rest of an overlong line is dropped as it arrives, never held.

:func:`claimed_stdio` moves the protocol to private descriptors while it is served and points
fd 0 at the null device and fd 1 at stderr, so that nothing else in the process (a stray
``print``, a child that inherits them) reads the client's messages or writes on its stream.
This module knows bytes and lines; not ACP's methods.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any, Final

from extension_protocol.nesting import MAX_DEPTH, TooDeep, loads
from extension_protocol.protocol import PARSE_ERROR

__all__ = ["MAX_LINE_BYTES", "LineDecoder", "claimed_stdio", "error_line", "line"]

MAX_LINE_BYTES: Final = 16 * 1024 * 1024
"""The longest line read from the client: a prompt of several million characters fits."""
_LEADING_ID: Final = re.compile(rb'\s*\{\s*(?:"jsonrpc"\s*:\s*"[^"]*"\s*,\s*)?"id"\s*:\s*(-?\d{1,15}|"[^"\\]{0,200}")')
"""An id at the start of a line (``{"jsonrpc": "2.0", "id": 7, ...``): a refused request's, if readable."""

Refuse = Callable[[bytes], None]
"""Writes one whole line (an error answer) to the client, ahead of nothing."""


def error_line(request_id: Any, code: int, message: str) -> bytes:
    """A JSON-RPC error answer as one line."""
    error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return json.dumps(error).encode() + b"\n"


def _leading_id(line: bytes) -> Any:
    found = _LEADING_ID.match(line[:512])
    if found is None:
        return None
    raw = found.group(1)
    return raw[1:-1].decode("utf-8", "replace") if raw.startswith(b'"') else int(raw)


class LineDecoder:
    """The :class:`~extension_protocol.connection.MessageDecoder` of a line stream: each whole
    line read becomes its message, parsed once; ``refuse`` writes the answer to a refused line
    (see the module). It never raises: no line ends the connection."""

    def __init__(self, refuse: Refuse, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self._refuse = refuse
        self._max = max_line_bytes
        self._partial = bytearray()
        self._dropping = False
        """In the middle of a line that was too long: its bytes are dropped up to its end."""
        self.skip: tuple[bytes, ...] = ()
        """Lines that begin with one of these are dropped unread."""

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        """The messages of the lines ``chunk`` completed (see the module)."""
        lines = chunk.split(b"\n")
        rest = lines.pop()  # after the last newline: the start of a line still to come
        messages: list[dict[str, Any]] = []
        for line in lines:
            if self._partial:
                self._partial += line
                line = bytes(self._partial)
                self._partial.clear()
            if self._dropping:
                self._dropping = False
                continue
            message = self._message(line)
            if message is not None:
                messages.append(message)
        if not self._dropping:
            self._partial += rest
            if len(self._partial) > self._max:
                self._refuse(
                    error_line(_leading_id(bytes(self._partial)), PARSE_ERROR, f"line longer than {self._max} bytes")
                )
                self._partial.clear()
                self._dropping = True
        return messages

    def end(self) -> None:
        """The stream ended: a last line without its newline is not a message."""

    def _message(self, line: bytes) -> dict[str, Any] | None:
        line = line.strip()
        if not line or (self.skip and line.startswith(self.skip)):
            return None
        if len(line) > self._max:
            self._refuse(error_line(_leading_id(line), PARSE_ERROR, f"line longer than {self._max} bytes"))
            return None
        try:
            value = loads(line, MAX_DEPTH)
        except TooDeep as exc:
            self._refuse(error_line(_leading_id(line), PARSE_ERROR, f"message is {exc}"))
            return None
        except (ValueError, RecursionError) as exc:
            self._refuse(error_line(_leading_id(line), PARSE_ERROR, f"not valid JSON: {_first_line(exc)}"))
            return None
        if not isinstance(value, dict):
            self._refuse(error_line(None, PARSE_ERROR, "a message is one JSON object per line"))
            return None
        return value


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__


def line(body: bytes) -> bytes:
    """The :data:`~extension_protocol.connection.Framer` of a line stream: ``body`` (compact JSON,
    which holds no raw line break) and a newline."""
    return body + b"\n"


@contextlib.contextmanager
def claimed_stdio() -> Iterator[tuple[int, int]]:
    """The descriptors of the client's stream (in, out) while fd 0 reads the null device and
    fd 1 writes to stderr; both are put back on exit. The caller owns the two it is given."""
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)  # not inheritable: extensions never get them
    saved_in, saved_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(devnull, 0)
        os.dup2(2, 1)
        yield wire_in, wire_out
    finally:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()  # what was printed while serving goes to stderr
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        for fd in (saved_in, saved_out, devnull):
            os.close(fd)
