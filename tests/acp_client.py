"""An ACP client for tests: the official ACP Python SDK's client side (``acp``), on ``extensions acp``.

:class:`RecordingClient` keeps every ``session/update`` it is sent and answers
``session/request_permission`` with the option a test chose (``answer``: an option id, or
``None`` for ``cancelled``). Every message the agent sends is checked against the SDK's schema
(its pydantic models of the protocol's JSON Schema): :func:`schema_checker` collects what fails,
and a test asserts there is nothing. :func:`in_process` connects the client to an
:class:`~extension_host.acp.server.AcpServer` in this process over two pipes, as stdio would;
:func:`spawned` starts ``extensions acp`` in a process of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from acp import Client, connect_to_agent, spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SessionNotification,
)
from pydantic import BaseModel, ValidationError

from extension_host.acp.server import AcpServer, pipe_connection
from extension_host.launch.interpreter import python_command
from extension_protocol.pipes import open_pipe_writer

__all__ = ["RecordingClient", "in_process", "spawned", "updates_of"]

_CHECKED: dict[str, type[BaseModel]] = {
    "session/update": SessionNotification,
    "session/request_permission": RequestPermissionRequest,
}


@dataclass
class RecordingClient:
    """The client's side of the protocol, recording (see the module)."""

    answer: str | None = "allow_once"
    updates: list[dict[str, Any]] = field(default_factory=list)
    permissions: list[dict[str, Any]] = field(default_factory=list)
    schema_errors: list[str] = field(default_factory=list)
    asked: asyncio.Event = field(default_factory=asyncio.Event)

    async def request_permission(
        self, options: list[PermissionOption], session_id: str, tool_call: Any, **_: Any
    ) -> RequestPermissionResponse:
        self.permissions.append(
            {
                "toolCall": tool_call.model_dump(by_alias=True, exclude_none=True),
                "options": [o.option_id for o in options],
            }
        )
        self.asked.set()
        if self.answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=self.answer))

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update.model_dump(by_alias=True, exclude_none=True))

    def on_connect(self, _connection: Any) -> None:
        pass

    def schema_checker(self, event: StreamEvent) -> None:
        """An observer of the SDK's connection: what the agent sends must fit the schema."""
        if event.direction is not StreamDirection.INCOMING:
            return
        model = _CHECKED.get(event.message.get("method", ""))
        if model is None:
            return
        try:
            model.model_validate(event.message.get("params"))
        except ValidationError as exc:
            self.schema_errors.append(f"{event.message}: {exc}")


def _as_client(client: RecordingClient) -> Client:
    """The SDK's router calls only the methods a client has; its protocol class lists them all."""
    return cast(Client, client)


def updates_of(client: RecordingClient, kind: str) -> list[dict[str, Any]]:
    """The updates of one ``sessionUpdate`` kind, in order."""
    return [update for update in client.updates if update["sessionUpdate"] == kind]


@contextlib.asynccontextmanager
async def in_process(server: AcpServer, client: RecordingClient) -> AsyncIterator[ClientSideConnection]:
    """The SDK's client connected to ``server`` over two pipes; the server ends with the block."""
    to_server, from_client = os.pipe()
    to_client, from_server = os.pipe()
    connection = await pipe_connection(to_server, from_server)
    serving = asyncio.ensure_future(server.serve(connection))
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(to_client, "rb", buffering=0)
    )
    writer = await open_pipe_writer(from_client)
    sdk = connect_to_agent(_as_client(client), writer, reader, observers=[client.schema_checker])
    try:
        yield sdk
    finally:
        writer.close()
        async with asyncio.timeout(30):
            await asyncio.gather(serving, return_exceptions=True)
        await sdk.close()
        transport.close()


@contextlib.asynccontextmanager
async def spawned(
    client: RecordingClient, home: Path, args: Sequence[str], env: dict[str, str]
) -> AsyncIterator[tuple[ClientSideConnection, asyncio.subprocess.Process]]:
    """``extensions --home HOME acp ARGS`` in a process of its own, driven by the SDK's client."""
    command = python_command("-m", "extension_host", "--home", str(home), "acp", *args)
    async with spawn_agent_process(_as_client(client), *command, env=env, observers=[client.schema_checker]) as (
        sdk,
        process,
    ):
        yield sdk, process
