"""The tool calls in flight to one extension, in memory: sent, answered once, never left hanging."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from extension_host.events import EventLog
from extension_host.runtime.pending_tools import PendingCalls
from extension_protocol import protocol as p
from extension_protocol.connection import Connection, RpcError
from helpers import MessageSink, run


class Extension(MessageSink):
    """The extension's end: what the host sent it, as messages."""

    async def requested(self, count: int = 1) -> list[dict[str, Any]]:
        """The ``external_tool.requested`` data of the first ``count`` calls (bounded wait)."""
        return [message["params"]["event"]["data"] for message in await self.messages(count)]


def calls_and_extension(
    tool_timeout: float = 30, events: EventLog | None = None, **connection: Any
) -> tuple[PendingCalls, Connection, Extension]:
    extension = Extension()
    host_end = Connection(asyncio.StreamReader(), extension.writer, **connection)
    calls = PendingCalls("project:ext", "session-1", tool_timeout, events or EventLog(), "/projects/example")
    return calls, host_end, extension


def test_a_call_is_sent_as_an_event_and_settled_by_the_answer_with_its_request_id() -> None:
    async def scenario() -> None:
        events = EventLog()
        calls, connection, extension = calls_and_extension(events=events)
        call = asyncio.ensure_future(calls.call(connection, "add", {"a": 1}, "call-1"))
        (data,) = await extension.requested()
        assert (data["toolName"], data["arguments"], data["toolCallId"]) == ("add", {"a": 1}, "call-1")
        assert (data["sessionId"], data["workingDirectory"]) == ("session-1", "/projects/example")
        answer = {"requestId": data["requestId"], "result": {"textResultForLlm": "2", "resultType": "success"}}
        assert calls.answer(answer) == {"success": True}
        result = await call
        assert (result.text_result_for_llm, result.result_type) == ("2", "success")
        # As in Copilot CLI, both are persisted events of the session (not ephemeral).
        requested, completed = events.history()
        assert (requested["type"], requested["data"]) == ("external_tool.requested", data)
        assert (completed["type"], completed["data"]) == ("external_tool.completed", {"requestId": data["requestId"]})
        assert "ephemeral" not in requested and "ephemeral" not in completed
        with pytest.raises(RpcError, match="no pending tool call") as caught:
            calls.answer(answer)  # answered once; a second answer finds nothing
        assert caught.value.code == p.INVALID_PARAMS

    run(scenario())


def test_a_malformed_answer_fails_that_call_and_is_refused() -> None:
    async def scenario() -> None:
        calls, connection, extension = calls_and_extension()
        call = asyncio.ensure_future(calls.call(connection, "add", {}, "call-1"))
        (data,) = await extension.requested()
        with pytest.raises(RpcError, match="invalid result for tool 'add'"):
            calls.answer({"requestId": data["requestId"], "result": {"resultType": "nonsense"}})
        result = await call
        assert result.result_type == "failure"
        assert "project:ext returned an invalid result" in result.text_result_for_llm

    run(scenario())


def test_a_call_nobody_answers_times_out_and_end_all_fails_the_rest_at_once() -> None:
    async def scenario() -> None:
        calls, connection, extension = calls_and_extension(tool_timeout=0.05)
        slow = await calls.call(connection, "slow", {}, "call-1")
        assert slow.result_type == "timeout"
        assert slow.text_result_for_llm == "tool 'slow' of project:ext did not answer within 0.05 s"

        calls = PendingCalls("project:ext", "session-1", 30, EventLog(), "/projects/example")
        waiting = [asyncio.ensure_future(calls.call(connection, f"t{n}", {}, f"c{n}")) for n in range(3)]
        await extension.requested(4)
        calls.end_all("extension project:ext failed: boom")
        results = await asyncio.gather(*waiting)
        assert [r.text_result_for_llm for r in results] == [
            f"tool 't{n}' could not finish: extension project:ext failed: boom" for n in range(3)
        ]

    run(scenario())


def test_arguments_larger_than_the_extension_accepts_fail_only_that_call() -> None:
    async def scenario() -> None:
        calls, connection, extension = calls_and_extension(max_outbound_bytes=1024)
        big = await calls.call(connection, "store", {"blob": "x" * 2048}, "call-1")
        assert big.result_type == "failure"
        assert big.text_result_for_llm.startswith("tool 'store' of project:ext was not called: its arguments")
        small = asyncio.ensure_future(calls.call(connection, "store", {"blob": "x"}, "call-2"))
        (data,) = await extension.requested()
        calls.answer({"requestId": data["requestId"], "result": "stored"})
        assert (await small).text_result_for_llm == "stored"

    run(scenario())


def test_a_withdrawn_call_is_announced_as_completed_and_its_late_answer_is_refused_saying_why() -> None:
    async def scenario() -> None:
        events = EventLog()
        calls, connection, extension = calls_and_extension(events=events)
        call = asyncio.ensure_future(calls.call(connection, "nap", {}, "call-1"))
        (data,) = await extension.requested()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        # The session's event, which the runtime forwards to every extension that wants it.
        (completed,) = events.history("external_tool.completed")
        assert completed["data"] == {"requestId": data["requestId"]}
        answer = {"requestId": data["requestId"], "result": {"textResultForLlm": "late", "resultType": "success"}}
        with pytest.raises(RpcError, match="was cancelled \\(its turn was cancelled\\); its result is not needed"):
            calls.answer(answer)

    run(scenario())
