"""The MCP server's stdin and stdout as asyncio pipes, for the SDK's ``stdio_server``.

The SDK's own stdio transport reads and writes through worker threads (several hops per
message); handing it line streams over asyncio's pipe transports instead keeps each message on
the event loop, which is what lets a call through the bridge cost no more than one to a plain
MCP SDK server. As the SDK does for its own streams, :func:`claimed_stdio` moves the protocol to
private descriptors while it serves and points fd 0 at the null device and fd 1 at stderr, so
nothing else in the process (a stray ``print``, a child that inherits them) can read the
client's messages or write onto the protocol stream; both are put back on exit. When stdin or
stdout is not a pipe, socket or terminal (a file), it yields ``None`` and the caller falls back
on the SDK's threads. It knows descriptors and asyncio; not MCP messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import sys
from collections.abc import AsyncIterator
from typing import Any, Final

__all__ = ["MAX_LINE_BYTES", "LineReader", "LineWriter", "claimed_stdio"]

MAX_LINE_BYTES: Final = 64 * 1024 * 1024
"""The longest message line read from the client; a longer one ends the session (as the host's
own 64 MiB message limit does for extensions)."""


class LineReader:
    """``async for line in reader``: the client's lines, as text, until end of input."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> str:
        try:
            line = await self._reader.readline()
        except ValueError:  # over MAX_LINE_BYTES: no way to find the next message's start
            raise StopAsyncIteration from None
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class LineWriter:
    """``await write(text)``, ``await flush()``: what the SDK's writer calls, onto the pipe."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()  # waits only while the client is not reading


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
        writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
        yield LineReader(reader), LineWriter(writer)
    finally:
        for transport in transports:
            transport.close()
        _flush_stdout()  # what was printed while serving goes to stderr, not after the protocol
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        for fd in (saved_in, saved_out, devnull):
            os.close(fd)
