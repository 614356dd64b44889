"""The SDK client's side of slash commands and session.rpc, against a fake host in memory: the
commands declared at the join, each command.execute answered by handlePendingCommand (done,
failed, unknown), and rpc calls with their errors."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from extension_protocol import protocol as p
from extension_protocol.connection import Connection, RpcError
from helpers import PipeWriter, run
from sdk_extension import Command, CommandContext, Session, SessionRpcError
from sdk_extension.session import _Client


class Host:
    """The host's end: answers the join and records each handlePendingCommand."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.resumed: list[Any] = []
        self.answers: asyncio.Queue[Any] = asyncio.Queue()
        connection.on_request(p.METHOD_CONNECT, lambda params: {"protocolVersion": p.PROTOCOL_VERSION})
        connection.on_request(p.METHOD_SESSION_RESUME, self._resume)
        connection.on_request(p.METHOD_HANDLE_PENDING_COMMAND, self._answer)
        connection.on_request("session.extensions.list", lambda params: {"extensions": [], "asked": params})
        connection.on_request("session.model.list", self._refuse)

    def _resume(self, params: Any) -> Any:
        self.resumed.append(params)
        return {"sessionId": "s"}

    def _answer(self, params: Any) -> Any:
        self.answers.put_nowait(params)
        return {"success": True}

    def _refuse(self, params: Any) -> Any:
        raise RpcError(p.NOT_SUPPORTED, "session.model.list is not supported by this host: no agent", {"x": 1})

    async def execute(self, name: str, args: str = "") -> Any:
        data = {"requestId": f"r-{name}", "commandName": name, "command": f"/{name} {args}".strip(), "args": args}
        event = {"id": "e", "type": "command.execute", "data": data, "ephemeral": True}
        self.connection.notify(p.METHOD_SESSION_EVENT, {"sessionId": "s", "event": event})
        async with asyncio.timeout(5):
            return await self.answers.get()


@asynccontextmanager
async def joined(commands: list[Command]) -> AsyncIterator[tuple[Host, Session]]:
    to_client, to_host = asyncio.StreamReader(), asyncio.StreamReader()
    host_connection = Connection(to_host, PipeWriter(to_client))
    host = Host(host_connection)
    serving = asyncio.ensure_future(host_connection.serve())
    client = _Client("s", [], {}, Connection(to_client, PipeWriter(to_host)), commands=commands)
    session = await client.join(5)
    client.released.set()
    try:
        yield host, session
    finally:
        host_connection.close()
        client.connection.close()
        async with asyncio.timeout(5):
            await asyncio.gather(serving, return_exceptions=True)


def test_commands_are_declared_at_the_join_and_each_run_is_answered_once() -> None:
    seen: list[CommandContext] = []

    async def deploy(context: CommandContext) -> None:
        seen.append(context)

    def fail(context: CommandContext) -> None:
        raise RuntimeError("no target " + context.args)

    async def scenario() -> None:
        async with joined([Command("deploy", "Deploy it", deploy), Command("fail", "Fails", fail)]) as (host, _):
            (resume,) = host.resumed
            assert resume["commands"] == [
                {"name": "deploy", "description": "Deploy it"},
                {"name": "fail", "description": "Fails"},
            ]
            assert await host.execute("deploy", "prod") == {"sessionId": "s", "requestId": "r-deploy"}
            assert seen == [CommandContext("s", "deploy", "/deploy prod", "prod")]
            failed = await host.execute("fail", "x")
            assert failed == {"sessionId": "s", "requestId": "r-fail", "error": "no target x"}
            unknown = await host.execute("other")
            assert unknown["error"] == "Unknown command: other"

    run(scenario())


def test_rpc_adds_the_session_id_and_turns_a_refusal_into_a_session_rpc_error() -> None:
    async def scenario() -> None:
        async with joined([]) as (host, session):
            (resume,) = host.resumed
            assert "commands" not in resume
            answer = await session.rpc_async("session.extensions.list", {"x": 1})
            assert answer == {"extensions": [], "asked": {"x": 1, "sessionId": "s"}}
            with pytest.raises(SessionRpcError) as caught:
                await session.rpc_async("session.model.list")
            assert (caught.value.method, caught.value.code, caught.value.data) == (
                "session.model.list",
                p.NOT_SUPPORTED,
                {"x": 1},
            )
            assert str(caught.value) == "session.model.list is not supported by this host: no agent"
            with pytest.raises(SessionRpcError) as unknown:
                await session.rpc_async("session.nothing")
            assert unknown.value.code == p.METHOD_NOT_FOUND
            assert str(unknown.value) == "method not found: session.nothing"

    run(scenario())
