"""The two ends of a pipe on the running loop: the read end in small reads (:class:`PipeReader`),
the write end as an :class:`asyncio.StreamWriter` (:func:`open_pipe_writer`).

Owns one thing: moving bytes between a pipe's file descriptor and the loop, and closing the
descriptor when the pipe ends. It knows nothing of frames or messages.

Why not ``loop.connect_read_pipe``: its transport asks for 256 KiB per read, and CPython
allocates a buffer of the requested size for every read. Above the C allocator's mmap
threshold (128 KiB by default) each such buffer is a fresh ``mmap``/``munmap`` pair, and in a
process with threads the ``munmap`` interrupts every core the process ran on. That costs tens
of microseconds per read: more than everything else in the round trip of a small message.
Reads of :data:`READ_SIZE` stay on the heap.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import Final

__all__ = ["READ_SIZE", "PipeReader", "open_pipe_writer"]

READ_SIZE: Final = 64 * 1024
"""Bytes asked of the pipe per read: a full pipe buffer, and below the mmap threshold."""
_DRAIN_READS: Final = 16
"""The most reads :meth:`PipeReader.drain` makes: a writer that is gone left at most a pipe
buffer; one that is not may write forever."""


class PipeReader:
    """Read the pipe ``fd`` on the running loop; the reader owns ``fd``.

    The bytes go to one consumer: :attr:`stream` (an :class:`asyncio.StreamReader`), or the
    callbacks given to :meth:`deliver_to`, which get each read as it arrives without a task
    having to wake up for it. Bytes read before the consumer is chosen are kept for it. The
    consumer sees end-of-file when the writer closes its end, and the read's exception when
    the pipe fails; either way the descriptor is closed. :meth:`close` stops early.
    """

    def __init__(self, fd: int) -> None:
        self._loop = asyncio.get_running_loop()
        self._fd = fd
        self._stream: asyncio.StreamReader | None = None
        self._on_data: Callable[[bytes], None] | None = None
        self._on_end: Callable[[Exception | None], None] | None = None
        self._early: list[bytes] = []
        self._end: tuple[Exception | None] | None = None
        os.set_blocking(fd, False)
        self._loop.add_reader(fd, self._on_readable)

    @property
    def stream(self) -> asyncio.StreamReader:
        """The bytes as a stream reader (unless :meth:`deliver_to` took them)."""
        if self._stream is None:
            stream = self._stream = asyncio.StreamReader()

            def end(error: Exception | None) -> None:
                if error is not None:
                    stream.set_exception(error)
                stream.feed_eof()

            self.deliver_to(stream.feed_data, end)
        return self._stream

    def deliver_to(self, on_data: Callable[[bytes], None], on_end: Callable[[Exception | None], None]) -> None:
        """Call ``on_data(chunk)`` for each read, then ``on_end(None)`` at end of file or
        ``on_end(error)`` when the pipe fails; what was read already is delivered at once.

        Raises:
            RuntimeError: the bytes already go elsewhere (:attr:`stream` or an earlier call).
        """
        if self._on_data is not None:
            raise RuntimeError("this pipe's bytes already go to another consumer")
        self._on_data, self._on_end = on_data, on_end
        early, self._early = self._early, []
        for chunk in early:
            on_data(chunk)
        if self._end is not None:
            on_end(self._end[0])

    def _on_readable(self) -> None:
        self._read_once()

    def _read_once(self) -> bool:
        """One read, delivered; whether it read bytes (so there may be more right away)."""
        try:
            data = os.read(self._fd, READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError as exc:
            self._finish(exc)
            return False
        if not data:
            self._finish(None)
            return False
        if self._on_data is not None:
            self._on_data(data)
        else:
            self._early.append(data)
        return True

    def _finish(self, error: Exception | None) -> None:
        self._release()
        if self._end is None:
            self._end = (error,)
            if self._on_end is not None:
                self._on_end(error)

    def drain(self, max_reads: int = _DRAIN_READS) -> None:
        """Deliver what the pipe holds now, without waiting for more (at most ``max_reads``
        reads): what a writer that has just exited wrote last, before its end is read."""
        for _ in range(max_reads):
            if self._fd < 0 or not self._read_once():
                return

    @property
    def closed(self) -> bool:
        """Whether the descriptor is closed (end of file, failure or :meth:`close`)."""
        return self._fd < 0

    def close(self) -> None:
        """Stop reading and close the descriptor; the consumer sees end-of-file. Idempotent."""
        self._finish(None)

    def _release(self) -> None:
        if self._fd < 0:
            return
        fd, self._fd = self._fd, -1
        if not self._loop.is_closed():
            self._loop.remove_reader(fd)
        os.close(fd)


async def open_pipe_writer(fd: int) -> asyncio.StreamWriter:
    """The write end of the pipe ``fd`` as a stream writer on the running loop; it owns ``fd``.

    ``write`` queues bytes without blocking, ``drain`` waits while the pipe is full (and raises
    once the reader is gone), and ``close`` closes the descriptor once what is queued is written
    (the reader then sees end of file); ``wait_closed`` is not available (see below), and
    nothing needs it. Unlike the reading side, asyncio's write-pipe transport is used as it
    is: writing allocates no buffer of a size of its own choosing.

    Why this recipe: asyncio offers a stream writer only for sockets and subprocess pipes it
    made itself. For any other descriptor, ``connect_write_pipe`` gives a transport, and the
    protocol a :class:`~asyncio.StreamWriter` needs for ``drain`` (pause and resume on a full
    pipe, the error of a pipe that broke) is ``asyncio.streams.FlowControlMixin``, which is not
    in ``asyncio.__all__``; it is what ``asyncio.subprocess`` itself uses for a child's stdin, and
    it has been there since Python 3.4. The mixin alone does not implement the close
    waiter that ``wait_closed`` asks for (the subprocess protocol adds one). The writer has no
    reader (``None``): nothing comes back on this pipe.
    """
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(fd, "wb", buffering=0)
    )
    return asyncio.StreamWriter(transport, protocol, None, loop)
