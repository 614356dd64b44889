"""The floor: what a round trip, 8 calls in flight, a start and an idle process cost with nothing on top.

The floor child is a bare asyncio process (no SDK imported) speaking the same
``Content-Length`` framing as extensions, answering every request with its params at once. It
is what the host is compared against: the cost of the pipe, the wake-ups and the interpreter,
which no host design can avoid. Both ends read pipes in 64 KiB reads, as the host and the SDK
do: asyncio's own pipe transport reads 256 KiB at a time, which costs more per read than the
rest of a round trip (``extension_protocol.pipes`` says why), and no design has to pay that.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

from extension_protocol.framing import encode_message, frame, read_message
from extension_protocol.protocol import SESSION_UPDATED_START

from .procs import child, memory_mib
from .stats import in_flight, timed_calls

FLOOR_CHILD = """
import asyncio, json, os, sys

SKIPPED = @SKIPPED@

async def main():
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    stdin = sys.stdin.fileno()
    os.set_blocking(stdin, False)

    def readable():  # 64 KiB reads, as the SDK does (see extension_protocol.pipes)
        data = os.read(stdin, 65536)
        if data:
            reader.feed_data(data)
        else:
            reader.feed_eof()
            loop.remove_reader(stdin)

    loop.add_reader(stdin, readable)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout.buffer)
    concurrent = "--tasks" in sys.argv
    cli_shape = "--cli-shape" in sys.argv
    running = set()
    ids = iter(range(1, 1 << 62))

    def send(value):
        body = json.dumps(value).encode()
        transport.write(b"Content-Length: %d\\r\\n\\r\\n%s" % (len(body), body))

    def reply(message):
        if not cli_shape:
            send({"jsonrpc": "2.0", "id": message["id"], "result": message["params"]})
        elif message.get("method") == "session.event":  # a tool call: answered by a request
            event = message["params"]["event"]
            result = {"textResultForLlm": event["data"]["arguments"]["text"], "resultType": "success"}
            params = {"sessionId": "floor", "requestId": event["data"]["requestId"], "result": result}
            method = "session.tools.handlePendingToolCall"
            send({"jsonrpc": "2.0", "id": next(ids), "method": method, "params": params})

    async def reply_in_task(message):
        reply(message)

    while True:
        try:
            header = await reader.readuntil(b"\\r\\n\\r\\n")
        except asyncio.IncompleteReadError:
            return
        body = await reader.readexactly(int(header.split(b":")[1]))
        if cli_shape and body.startswith(SKIPPED):
            continue  # a notice nothing here reads, dropped unread as the SDK does
        message = json.loads(body)
        if concurrent:
            task = loop.create_task(reply_in_task(message))
            running.add(task)
            task.add_done_callback(running.discard)
        else:
            reply(message)

asyncio.run(main())
""".replace("@SKIPPED@", repr(SESSION_UPDATED_START))
"""A bare asyncio child with the framing. With ``--tasks`` each request is answered from its own
task, as the SDK does, so that with 8 calls in flight it is concurrent in the same way. With
``--cli-shape`` it takes a tool call as Copilot CLI sends one (:func:`floor_cli_calls`)."""

_NOTICE: Final = frame(
    SESSION_UPDATED_START
    + b'"sessionId":"floor","metadata":{"startTime":"2026-01-01T00:00:00.000Z",'
    + b'"modifiedTime":"2026-01-01T00:00:00.000Z"}}}'
)
_NOTICES_PER_CALL: Final = 3
"""``session.updated`` notices per call: one per persisted event the host makes for it, to every
extension; the SDK drops them unread."""


def _request(request_id: int) -> bytes:
    return encode_message({"jsonrpc": "2.0", "id": request_id, "method": "echo", "params": {"text": "hi"}})


async def floor_calls(count: int) -> list[float]:
    """Seconds of each of ``count`` sequential round trips to a fresh floor child."""
    async with child("-c", FLOOR_CHILD) as (process, stdout):
        assert process.stdin
        stdin = process.stdin
        ids = itertools.count()

        async def call() -> None:
            stdin.write(_request(next(ids)))
            if await read_message(stdout) is None:
                raise RuntimeError("the floor child closed its stdout")

        return await timed_calls(call, count)


def _tool_call(number: int) -> bytes:
    event = {
        "id": f"event-{number}",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "parentId": f"event-{number - 1}",
        "type": "external_tool.requested",
        "data": {
            "requestId": f"request-{number}",
            "sessionId": "floor",
            "toolCallId": f"call-{number}",
            "toolName": "echo",
            "arguments": {"text": "hi"},
            "workingDirectory": "/tmp",
        },
    }
    return encode_message(
        {"jsonrpc": "2.0", "method": "session.event", "params": {"sessionId": "floor", "event": event}}
    )


class _CliShapedCalls:
    """The host's side of tool calls in Copilot CLI's shape: each answer to the child's
    ``handlePendingToolCall`` queues the call's ``session.updated`` notices, which go with the
    next thing written (as the host's notices do)."""

    def __init__(self, stdin: asyncio.StreamWriter) -> None:
        self._stdin = stdin
        self._held = b""
        self._numbers = itertools.count(1)

    def call(self) -> str:
        """Send the next tool call; returns its request id."""
        number = next(self._numbers)
        self._write(_tool_call(number))
        return f"request-{number}"

    def answer(self, request: dict[str, Any]) -> str:
        """Answer the child's ``handlePendingToolCall``; returns the request id it carries."""
        self._write(encode_message({"jsonrpc": "2.0", "id": request["id"], "result": {"success": True}}))
        self._held = _NOTICE * _NOTICES_PER_CALL
        return str(request["params"]["requestId"])

    def _write(self, data: bytes) -> None:
        self._stdin.write(self._held + data if self._held else data)
        self._held = b""


async def _calls_per_second(
    call: Callable[[], Awaitable[None]], warmup: int, count: int, width: int, reader: asyncio.Future[None]
) -> float:
    """Calls per second of ``count`` calls, ``width`` in flight, after ``warmup`` of them; the
    task reading the child's answers is cancelled after, whatever happened."""
    try:
        await in_flight(call, warmup, width)
        return count / await in_flight(call, count, width)
    finally:
        reader.cancel()


async def floor_cli_calls(count: int) -> list[float]:
    """Seconds of each of ``count`` sequential tool calls shaped as Copilot CLI makes them, to a
    fresh floor child: an ``external_tool.requested`` event, the child's
    ``handlePendingToolCall`` request with the result, its answer, and the ``session.updated``
    notices. Three messages where the floor has two: what the protocol costs by itself, under
    any host."""
    async with child("-c", FLOOR_CHILD, "--cli-shape") as (process, stdout):
        assert process.stdin
        calls = _CliShapedCalls(process.stdin)

        async def call() -> None:
            calls.call()
            request = await read_message(stdout)
            if request is None:
                raise RuntimeError("the floor child closed its stdout")
            calls.answer(request)

        return await timed_calls(call, count)


async def floor_cli_in_flight(warmup: int, count: int, width: int) -> float:
    """Calls per second in Copilot CLI's shape (:func:`floor_cli_calls`) with ``width`` in flight,
    to a fresh floor child answering each from its own task."""
    async with child("-c", FLOOR_CHILD, "--tasks", "--cli-shape") as (process, stdout):
        assert process.stdin
        calls = _CliShapedCalls(process.stdin)
        loop = asyncio.get_running_loop()
        pending: dict[str, asyncio.Future[None]] = {}

        async def read_requests() -> None:
            while (request := await read_message(stdout)) is not None:
                pending.pop(calls.answer(request)).set_result(None)
            for future in pending.values():
                future.set_exception(RuntimeError("the floor child closed its stdout"))

        reader = asyncio.ensure_future(read_requests())

        async def call() -> None:
            pending[calls.call()] = future = loop.create_future()
            await future

        return await _calls_per_second(call, warmup, count, width, reader)


async def floor_in_flight(warmup: int, calls: int, width: int) -> float:
    """Calls per second to a fresh floor child (``--tasks``) with ``width`` calls in flight.

    The parent does what a host must: one reader task resolving futures by request id.
    """
    async with child("-c", FLOOR_CHILD, "--tasks") as (process, stdout):
        assert process.stdin
        stdin = process.stdin
        loop = asyncio.get_running_loop()
        pending: dict[int, asyncio.Future[Any]] = {}

        async def read_replies() -> None:
            while (message := await read_message(stdout)) is not None:
                pending.pop(message["id"]).set_result(message)
            for future in pending.values():
                future.set_exception(RuntimeError("the floor child closed its stdout"))

        reader = asyncio.ensure_future(read_replies())
        ids = itertools.count()

        async def call() -> None:
            request_id = next(ids)
            pending[request_id] = future = loop.create_future()
            stdin.write(_request(request_id))
            await future

        return await _calls_per_second(call, warmup, calls, width, reader)


async def floor_start() -> float:
    """Seconds from spawning a floor child to its first reply."""
    started = time.perf_counter()
    async with child("-c", FLOOR_CHILD) as (process, stdout):
        assert process.stdin
        process.stdin.write(_request(0))
        await read_message(stdout)
        return time.perf_counter() - started


async def floor_memory(idle: float) -> dict[str, float]:
    """PSS/RSS (MiB) of a floor child that answered once and then idled ``idle`` seconds."""
    async with child("-c", FLOOR_CHILD) as (process, stdout):
        assert process.stdin
        process.stdin.write(_request(0))
        await read_message(stdout)
        await asyncio.sleep(idle)
        return memory_mib(process.pid)
