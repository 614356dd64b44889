"""The command runs in flight to one extension, in memory: sent to the owner, answered once, never
left hanging."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from extension_host.runtime.pending_commands import PendingCommands
from extension_protocol import protocol as p
from extension_protocol.connection import Connection, RpcError
from helpers import MessageSink, run


class Extension(MessageSink):
    """The extension's end: the command.execute events the host sent it."""

    async def executed(self, count: int = 1) -> list[dict[str, Any]]:
        events = [message["params"]["event"] for message in await self.messages(count)]
        assert all(event["type"] == "command.execute" and event["ephemeral"] for event in events)
        return [event["data"] for event in events]


def setup() -> tuple[PendingCommands, Connection, Extension, list[str]]:
    extension = Extension()
    completed: list[str] = []
    connection = Connection(asyncio.StreamReader(), extension.writer)
    return PendingCommands("project:ext", "session-1", completed.append), connection, extension, completed


def test_a_run_is_sent_as_command_execute_and_settled_once_by_its_answer() -> None:
    async def scenario() -> None:
        runs, connection, extension, completed = setup()
        pending = asyncio.ensure_future(runs.run(connection, "deploy", "prod --fast", 30))
        (data,) = await extension.executed()
        assert data["commandName"] == "deploy"
        assert (data["command"], data["args"]) == ("/deploy prod --fast", "prod --fast")
        answer = {"sessionId": "session-1", "requestId": data["requestId"]}
        assert runs.answer(answer) == {"success": True}
        result = await pending
        assert (result.status, result.error, result.owner, result.request_id) == (
            "ok",
            None,
            "project:ext",
            data["requestId"],
        )
        assert completed == [data["requestId"]]
        with pytest.raises(RpcError, match="no pending command") as caught:
            runs.answer(answer)
        assert caught.value.code == p.INVALID_PARAMS

    run(scenario())


def test_a_malformed_answer_ends_its_run_at_once_and_is_refused() -> None:
    async def scenario() -> None:
        runs, connection, extension, _ = setup()
        pending = asyncio.ensure_future(runs.run(connection, "deploy", "", 30))
        (data,) = await extension.executed()
        assert data["command"] == "/deploy"
        with pytest.raises(RpcError, match="error: Input should be a valid string"):
            runs.answer({"sessionId": "session-1", "requestId": data["requestId"], "error": ["x"]})
        result = await pending
        assert result.status == "error"
        assert result.error is not None and "malformed answer for command '/deploy'" in result.error

    run(scenario())


def test_runs_time_out_end_with_their_extension_and_oversize_arguments_are_never_sent() -> None:
    async def scenario() -> None:
        runs, connection, extension, completed = setup()
        slow = await runs.run(connection, "slow", "", 0.05)
        assert slow.status == "timeout"
        assert slow.error == "command '/slow' of project:ext did not finish within 0.05 s"
        pending = asyncio.ensure_future(runs.run(connection, "deploy", "", 30))
        await extension.executed(2)
        runs.end_all("extension project:ext failed: exited with code 1")
        gone = await pending
        assert gone.status == "unavailable"
        assert gone.error == "command '/deploy' could not finish: extension project:ext failed: exited with code 1"
        huge = await runs.run(connection, "deploy", "x" * (64 * 1024 + 1), 30)
        assert huge.status == "invalid"
        assert huge.error is not None and "over the limit of 65536" in huge.error
        assert len(completed) == 2  # the refused run was never sent, so nothing to dismiss

    run(scenario())
