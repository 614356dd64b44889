"""The MCP bridge in memory: the SDK's client and the bridge over memory streams, a host with a
built-in tool and no extension processes. Log levels, a slow client's queue, and list changes
that change nothing."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import ClientSession
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.shared.memory import create_client_server_memory_streams

from extension_host import ExtensionHost, Timeouts
from extension_host.bridges.mcp.server import MAX_QUEUED_NOTIFICATIONS, McpBridge
from helpers import Project, run
from sdk_extension import tool

STEP_TIMEOUT = 30.0


@tool(description="Add two integers")
def add(a: int, b: int) -> str:
    return str(a + b)


class Heard:
    """What the client was sent besides answers."""

    def __init__(self) -> None:
        self.logs: list[types.LoggingMessageNotificationParams] = []
        self.notifications: list[str] = []
        self.changed = anyio.Event()

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)
        self.changed.set()

    async def on_message(self, message: Any) -> None:
        method = getattr(message, "method", None)  # a notification; an exception has none
        if isinstance(method, str):
            self.notifications.append(method)
            self.changed.set()

    async def until(self, condition: Callable[[], bool]) -> None:
        with anyio.fail_after(STEP_TIMEOUT):
            while not condition():
                self.changed = anyio.Event()
                await self.changed.wait()


@asynccontextmanager
async def bridged(project: Project, heard: Heard) -> AsyncIterator[tuple[ExtensionHost, ClientSession, Heard]]:
    bridge = McpBridge(
        lambda on_send: project.host(
            builtin_tools=[add],
            on_send=on_send,
            watch=False,
            persist=False,
            session_hooks=False,
            timeouts=Timeouts(stop_grace=1.0),
        )
    )
    await bridge.host.start()
    try:
        async with (
            create_client_server_memory_streams() as (client_streams, server_streams),
            anyio.create_task_group() as group,
        ):
            group.start_soon(bridge.serve, *server_streams)
            async with ClientSession(
                *client_streams, logging_callback=heard.on_log, message_handler=heard.on_message
            ) as session:
                with anyio.fail_after(STEP_TIMEOUT):
                    await session.initialize()
                yield bridge.host, session, heard
            group.cancel_scope.cancel()
    finally:
        await bridge.host.stop()


def scenario(
    project: Project, body: Callable[[ExtensionHost, ClientSession, Heard], Awaitable[None]], heard: Heard | None = None
) -> None:
    async def go() -> None:
        async with bridged(project, heard or Heard()) as (host, session, heard_here):
            await body(host, session, heard_here)

    run(go())


def info(host: ExtensionHost, message: str, level: str = "info") -> None:
    host.events.emit(f"session.{level}", {f"{level}Type": "notification", "message": message})


def test_a_built_in_tool_is_offered_and_called_like_an_extensions(project: Project) -> None:
    async def body(host: ExtensionHost, session: ClientSession, heard: Heard) -> None:
        (listed,) = (await session.list_tools()).tools
        assert (listed.name, listed.description) == ("add", "Add two integers")
        result = await session.call_tool("add", {"a": 2, "b": 3})
        assert (result.is_error, [c.text for c in result.content if isinstance(c, types.TextContent)]) == (False, ["5"])
        bad = await session.call_tool("add", {"a": "two"})
        assert bad.is_error
        text = bad.content[0]
        assert isinstance(text, types.TextContent) and text.text.startswith("add of builtin failed: ")

    scenario(project, body)


def test_log_entries_below_the_clients_level_are_not_sent(project: Project) -> None:
    async def body(host: ExtensionHost, session: ClientSession, heard: Heard) -> None:
        # Deprecated by the spec's 2026-07-28 revision; clients of the handshake era still send it.
        with pytest.warns(MCPDeprecationWarning):
            await session.set_logging_level("warning")
        info(host, "routine")
        info(host, "careful", "warning")
        info(host, "broken", "error")
        await heard.until(lambda: len(heard.logs) >= 2)
        assert [(entry.level, entry.data, entry.logger) for entry in heard.logs] == [
            ("warning", "careful", "extension-host"),
            ("error", "broken", "extension-host"),
        ]

    scenario(project, body)


def test_a_slow_clients_queue_drops_log_entries_and_says_how_many(project: Project) -> None:
    total = MAX_QUEUED_NOTIFICATIONS + 10

    def dropped() -> int:
        said = re.fullmatch(r"(\d+) log messages were dropped", str(heard.logs[0].data)) if heard.logs else None
        return int(said.group(1)) if said else 0

    async def body(host: ExtensionHost, session: ClientSession, heard_here: Heard) -> None:
        # All at once: the bridge's sender gets no turn until they have been queued.
        for number in range(total):
            info(host, f"line {number}")
        await heard.until(lambda: dropped() > 0 and len(heard.logs) - 1 == total - dropped())
        # At least the 10 over the bound (a list change queued at start may hold a place too).
        assert 10 <= dropped() <= 11
        assert heard.logs[0].level == "warning"
        assert [entry.data for entry in heard.logs[1:]] == [f"line {n}" for n in range(total - dropped())]

    heard = Heard()
    scenario(project, body, heard)


def test_a_tools_update_that_changes_nothing_is_not_announced(project: Project) -> None:
    async def body(host: ExtensionHost, session: ClientSession, heard: Heard) -> None:
        host.events.emit("session.tools_updated", {"added": [], "removed": []}, ephemeral=True)
        info(host, "after the update")  # sent after whatever the update caused
        await heard.until(lambda: bool(heard.logs))
        assert "notifications/tools/list_changed" not in heard.notifications

    scenario(project, body)
