"""The read end of a pipe as an :class:`asyncio.StreamReader`, fed in small reads.

Owns one thing: moving bytes from a pipe's file descriptor into a stream reader on the running
loop, and closing the descriptor when the pipe ends. It knows nothing of frames or messages.

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
from typing import Final

__all__ = ["READ_SIZE", "PipeReader"]

READ_SIZE: Final = 64 * 1024
"""Bytes asked of the pipe per read: a full pipe buffer, and below the mmap threshold."""


class PipeReader:
    """Feed :attr:`stream` from the pipe ``fd`` on the running loop; the reader owns ``fd``.

    The stream sees end-of-file when the writer closes its end, and the read's exception when
    the pipe fails; either way the descriptor is closed. :meth:`close` stops early.
    """

    def __init__(self, fd: int) -> None:
        self.stream: Final = asyncio.StreamReader()
        self._loop = asyncio.get_running_loop()
        self._fd = fd
        os.set_blocking(fd, False)
        self._loop.add_reader(fd, self._on_readable)

    def _on_readable(self) -> None:
        try:
            data = os.read(self._fd, READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self.stream.set_exception(exc)
            self.close()
            return
        if data:
            self.stream.feed_data(data)
        else:
            self.stream.feed_eof()
            self.close()

    @property
    def closed(self) -> bool:
        """Whether the descriptor is closed (end of file, failure or :meth:`close`)."""
        return self._fd < 0

    def close(self) -> None:
        """Stop reading and close the descriptor; the stream sees end-of-file. Idempotent."""
        if self._fd < 0:
            return
        fd, self._fd = self._fd, -1
        if not self._loop.is_closed():
            self._loop.remove_reader(fd)
        os.close(fd)
        self.stream.feed_eof()
