"""The MCP server's stdin and stdout as asyncio pipes, for the SDK's ``stdio_server``.

The SDK's own stdio transport reads and writes through worker threads (several hops per
message); handing it line streams over asyncio's pipe transports instead keeps each message on
the event loop, which is what lets a call through the bridge cost no more than one to a plain
MCP SDK server. As the SDK does for its own streams, :func:`claimed_stdio` moves the protocol to
private descriptors while it serves and points fd 0 at the null device and fd 1 at stderr, so
nothing else in the process (a stray ``print``, a child that inherits them) can read the
client's messages or write onto the protocol stream; both are put back on exit. When stdin or
stdout is not a pipe, socket or terminal (a file), it yields ``None`` and the caller falls back
on the SDK's threads.

It refuses one kind of line itself: one nested deeper than
:data:`~extension_protocol.nesting.MAX_DEPTH` levels, which the SDK would drop without a word
(its parser gives up on deep nesting) while the client waits for an answer forever. Such a line
is answered here with ``PARSE_ERROR``, with the request's id when it comes before anything
nested (``{"jsonrpc": "2.0", "id": 7, "method": ...}``), else ``null``, and never reaches the
SDK; the next line is read as usual. It knows descriptors, asyncio and the JSON-RPC envelope;
not MCP messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import stat
import sys
from collections.abc import AsyncIterator
from typing import Any, Final

from extension_protocol.nesting import MAX_DEPTH, TooDeep, loads
from extension_protocol.protocol import PARSE_ERROR

__all__ = ["MAX_LINE_BYTES", "LineReader", "LineWriter", "claimed_stdio", "too_deep_answer"]

MAX_LINE_BYTES: Final = 64 * 1024 * 1024
"""The longest message line read from the client; a longer one ends the session (as the host's
own 64 MiB message limit does for extensions)."""
_ID_SEARCH_BYTES: Final = 4096
"""How far into a refused line its id is looked for."""
_STRING: Final = rb'"(?:[^"\\]|\\.)*"'
_PLAIN_MEMBER: Final = rb"\s*" + _STRING + rb"\s*:\s*(?:" + _STRING + rb"|[-+.\w]+)\s*,"
"""A member whose value is a string, a number or a literal, and the comma after it."""
_LEADING_ID: Final = re.compile(rb"\s*\{(?:" + _PLAIN_MEMBER + rb')*?\s*"id"\s*:\s*(-?\d+|' + _STRING + rb")\s*[,}]")


class LineWriter:
    """``await write(text)``, ``await flush()``: what the SDK's writer calls, onto the pipe."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()  # waits only while the client is not reading


class LineReader:
    """``async for line in reader``: the client's lines, as text, until end of input; a line
    nested too deeply is answered on ``writer`` instead (:func:`too_deep_answer`)."""

    def __init__(self, reader: asyncio.StreamReader, writer: LineWriter) -> None:
        self._reader = reader
        self._writer = writer

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> str:
        while True:
            try:
                line = await self._reader.readline()
            except ValueError:  # over MAX_LINE_BYTES: no way to find the next message's start
                raise StopAsyncIteration from None
            if not line:
                raise StopAsyncIteration
            answer = too_deep_answer(line)
            if answer is None:
                return line.decode("utf-8", errors="replace")
            # Whole lines, like the SDK's: the two writers' lines never interleave.
            await self._writer.write(answer)
            await self._writer.flush()


def too_deep_answer(line: bytes) -> str | None:
    """The error line that answers ``line`` when it nests deeper than
    :data:`~extension_protocol.nesting.MAX_DEPTH` levels; ``None`` for any other line."""
    if line.count(b"{") + line.count(b"[") <= MAX_DEPTH:
        return None  # every level opens with a bracket: most lines are settled here
    try:
        loads(line)
    except TooDeep as exc:
        message = f"the message is {exc} (arrays and objects); it was not read"
    except ValueError:
        return None  # not JSON: the SDK's to refuse
    else:
        return None
    error = {"code": PARSE_ERROR, "message": message}
    return json.dumps({"jsonrpc": "2.0", "id": _leading_id(line), "error": error}) + "\n"


def _leading_id(line: bytes) -> int | str | None:
    """The id of a request whose ``"id"`` comes before anything nested, read without parsing it."""
    found = _LEADING_ID.match(line, 0, _ID_SEARCH_BYTES)
    if found is None:
        return None
    try:
        value = json.loads(found.group(1))
    except ValueError:
        return None
    return value if isinstance(value, (int, str)) else None


def _flush_stdout() -> None:
    if sys.stdout is not None:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()


def _pipe_like(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


@contextlib.asynccontextmanager
async def claimed_stdio() -> AsyncIterator[tuple[LineReader, LineWriter] | None]:
    """Serve on fds 0 and 1 through asyncio (see the module); ``None`` when they are not pipes."""
    if not (_pipe_like(0) and _pipe_like(1)):
        yield None
        return
    loop = asyncio.get_running_loop()
    _flush_stdout()  # what was printed before serving goes where it was meant to
    wire_in, wire_out = os.dup(0), os.dup(1)  # non-inheritable: extensions never get them
    saved_in, saved_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    transports: list[Any] = []
    try:
        os.dup2(devnull, 0)
        os.dup2(2, 1)
        reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0)
        )
        transports.append(read_transport)
        write_transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", buffering=0)
        )
        transports.append(write_transport)
        lines_out = LineWriter(asyncio.StreamWriter(write_transport, protocol, None, loop))
        yield LineReader(reader, lines_out), lines_out
    finally:
        for transport in transports:
            transport.close()
        _flush_stdout()  # what was printed while serving goes to stderr, not after the protocol
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        for fd in (saved_in, saved_out, devnull):
            os.close(fd)
