"""Unit tests for extension_protocol.pipes: a real pipe read into a StreamReader or callbacks in bounded reads."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable

import pytest

from extension_protocol.pipes import READ_SIZE, PipeReader, open_pipe_writer


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def test_bytes_written_to_the_pipe_reach_the_stream_in_order_and_end_with_eof() -> None:
    async def main() -> bytes:
        read_fd, write_fd = os.pipe()
        reader = PipeReader(read_fd)
        payload = bytes(range(256)) * 1000  # 256,000 bytes: several reads
        writer = asyncio.get_running_loop().run_in_executor(None, _write_all_and_close, write_fd, payload)
        async with asyncio.timeout(10):
            received = await reader.stream.read()
            await writer
        assert received == payload
        assert reader.closed and not _is_open(read_fd)
        return received

    asyncio.run(main())


def _failing_read(fd: int, size: int) -> bytes:
    raise OSError(5, "Input/output error")


def _write_all_and_close(fd: int, data: bytes) -> None:
    with os.fdopen(fd, "wb") as pipe:
        pipe.write(data)


def test_no_single_read_asks_for_more_than_the_read_size(monkeypatch: pytest.MonkeyPatch) -> None:
    sizes: list[int] = []
    real_read = os.read

    def recording_read(fd: int, size: int) -> bytes:
        sizes.append(size)
        return real_read(fd, size)

    async def main() -> None:
        read_fd, write_fd = os.pipe()
        reader = PipeReader(read_fd)
        monkeypatch.setattr(os, "read", recording_read)
        os.write(write_fd, b"x" * 1000)
        os.close(write_fd)
        async with asyncio.timeout(10):
            assert await reader.stream.read() == b"x" * 1000

    asyncio.run(main())
    assert sizes and all(size == READ_SIZE for size in sizes)
    assert READ_SIZE < 128 * 1024  # below the allocator's mmap threshold: the point of the module


def test_close_ends_the_stream_releases_the_descriptor_and_can_be_repeated() -> None:
    async def main() -> None:
        read_fd, write_fd = os.pipe()
        reader = PipeReader(read_fd)
        os.write(write_fd, b"partial")
        reader.close()
        reader.close()
        assert reader.closed and not _is_open(read_fd)
        async with asyncio.timeout(5):
            # Nothing was read yet: the stream ends without the unread bytes.
            assert await reader.stream.read() == b""
        os.close(write_fd)

    asyncio.run(main())


def test_a_failing_read_reaches_the_reader_as_its_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    async def main() -> None:
        read_fd, write_fd = os.pipe()
        reader = PipeReader(read_fd)
        monkeypatch.setattr(os, "read", _failing_read)
        os.write(write_fd, b"x")
        async with asyncio.timeout(5):
            with pytest.raises(OSError, match="Input/output error"):
                await reader.stream.read(10)
        monkeypatch.undo()
        assert reader.closed
        os.close(write_fd)

    asyncio.run(main())


# -- deliver_to: the bytes as callbacks -------------------------------------------------------


class Collector:
    """Records what deliver_to hands over; ``ended`` is set at the end."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.ends: list[Exception | None] = []
        self.ended = asyncio.Event()

    def on_data(self, data: bytes) -> None:
        self.chunks.append(data)

    def on_end(self, error: Exception | None) -> None:
        self.ends.append(error)
        self.ended.set()


def test_deliver_to_gets_bytes_read_before_and_after_it_then_one_end() -> None:
    async def main() -> None:
        read_fd, write_fd = os.pipe()
        reader = PipeReader(read_fd)
        os.write(write_fd, b"early ")
        await asyncio.sleep(0.05)  # read before anyone took the bytes: kept for the consumer
        collector = Collector()
        reader.deliver_to(collector.on_data, collector.on_end)
        assert b"".join(collector.chunks) == b"early "
        payload = bytes(range(256)) * 1000
        writer = asyncio.get_running_loop().run_in_executor(None, _write_all_and_close, write_fd, payload)
        async with asyncio.timeout(10):
            await collector.ended.wait()
            await writer
        assert b"".join(collector.chunks) == b"early " + payload
        assert all(len(chunk) <= READ_SIZE for chunk in collector.chunks)
        reader.close()
        assert collector.ends == [None]
        assert reader.closed and not _is_open(read_fd)

    asyncio.run(main())


def test_deliver_to_reports_a_failing_read_once_and_closes_the_descriptor(monkeypatch: pytest.MonkeyPatch) -> None:
    async def main() -> None:
        read_fd, write_fd = os.pipe()
        reader = PipeReader(read_fd)
        collector = Collector()
        reader.deliver_to(collector.on_data, collector.on_end)
        monkeypatch.setattr(os, "read", _failing_read)
        os.write(write_fd, b"x")
        async with asyncio.timeout(5):
            await collector.ended.wait()
        monkeypatch.undo()
        reader.close()
        assert [str(error) for error in collector.ends] == ["[Errno 5] Input/output error"]
        assert collector.chunks == [] and reader.closed
        os.close(write_fd)

    asyncio.run(main())


def _with_reader(check: Callable[[PipeReader], None]) -> None:
    """Run ``check`` on a PipeReader of a fresh pipe, on a running loop; close both ends after."""

    async def main() -> None:
        read_fd, write_fd = os.pipe()
        reader = PipeReader(read_fd)
        try:
            check(reader)
        finally:
            reader.close()
            os.close(write_fd)

    asyncio.run(main())


def test_the_bytes_go_to_one_consumer_only() -> None:
    def check(reader: PipeReader) -> None:
        assert reader.stream is reader.stream
        with pytest.raises(RuntimeError, match="another consumer"):
            reader.deliver_to(lambda data: None, lambda error: None)

    _with_reader(check)


def test_close_before_deliver_to_ends_it_at_once() -> None:
    def check(reader: PipeReader) -> None:
        reader.close()
        collector = Collector()
        reader.deliver_to(collector.on_data, collector.on_end)
        assert collector.ends == [None] and collector.chunks == []

    _with_reader(check)


def test_drain_delivers_what_the_pipe_holds_now_without_waiting_for_the_loop() -> None:
    async def main() -> None:
        read_fd, write_fd = os.pipe()
        reader = PipeReader(read_fd)
        collector = Collector()
        reader.deliver_to(collector.on_data, collector.on_end)
        os.write(write_fd, b"last words")
        reader.drain()  # no turn of the loop in between: only drain() can have read them
        assert b"".join(collector.chunks) == b"last words" and collector.ends == []
        reader.drain()  # nothing more, the writer still open: returns at once
        os.close(write_fd)
        reader.drain()
        assert collector.ends == [None] and reader.closed

    asyncio.run(main())


def test_a_pipe_writer_delivers_bytes_in_order_and_closing_it_ends_the_pipe() -> None:
    async def main() -> bytes:
        read_fd, write_fd = os.pipe()
        reader = PipeReader(read_fd)
        writer = await open_pipe_writer(write_fd)
        for part in (b"first ", b"second ", b"third"):
            writer.write(part)
        await writer.drain()
        writer.close()
        async with asyncio.timeout(10):
            received = await reader.stream.read()  # to its end: the write end was closed
        assert not _is_open(write_fd)
        return received

    assert asyncio.run(main()) == b"first second third"


def test_a_pipe_writer_drain_waits_while_the_pipe_is_full_and_resumes_as_it_is_read() -> None:
    async def main() -> None:
        read_fd, write_fd = os.pipe()
        writer = await open_pipe_writer(write_fd)
        payload = b"y" * (4 * 1024 * 1024)  # far more than a pipe buffer holds
        writer.write(payload)
        draining = asyncio.ensure_future(writer.drain())
        done, _ = await asyncio.wait([draining], timeout=0.2)
        assert not done, "drain returned while nobody read the full pipe"
        received = asyncio.get_running_loop().run_in_executor(None, _read_to_the_end, read_fd)
        async with asyncio.timeout(10):
            await draining
            writer.close()
            assert await received == payload

    asyncio.run(main())


def test_a_pipe_writer_whose_reader_is_gone_fails_its_drain() -> None:
    async def main() -> None:
        read_fd, write_fd = os.pipe()
        writer = await open_pipe_writer(write_fd)
        os.close(read_fd)
        writer.write(b"nobody reads this")
        with pytest.raises((BrokenPipeError, ConnectionResetError)):
            async with asyncio.timeout(10):
                await writer.drain()
        writer.close()

    asyncio.run(main())


def _read_to_the_end(fd: int) -> bytes:
    with os.fdopen(fd, "rb") as pipe:
        return pipe.read()
