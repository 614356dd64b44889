"""A served session's canvases over the raw client protocol: a canvas the agent opens is a
``session/canvasOpened`` action and in every later snapshot; a client invokes its actions and
closes it (``invokeCanvasAction``, ``closeCanvas``), bad requests are refused in one line; and
who counts as a client that shows canvases follows initialize, subscribe, unsubscribe,
disconnect and reconnect."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from serve_client import ServeClient, connect_in_process, in_process_server, write_script

from extension_host.serve.canvas_routes import MAX_INPUT_BYTES
from extension_host.serve.errors import NOT_FOUND, SESSION_NOT_FOUND
from extension_host.serve.server import ProtocolServer
from extension_protocol.connection import RpcError
from extension_protocol.protocol import INVALID_PARAMS, INVALID_REQUEST
from helpers import Project, run

pytestmark = pytest.mark.subprocess

URI = "copilot:/canvases"

BOARD = """
    import json
    from pathlib import Path
    from sdk_extension import Canvas, CanvasAction, join_session

    LOG = Path(__file__).parent.with_name("board-calls.jsonl")  # outside its folder

    def note(**record):
        with LOG.open("a") as f:
            f.write(json.dumps(record) + "\\n")

    def opened(ctx):
        note(kind="open", instance=ctx.instance_id, input=ctx.input)
        return {"title": "Board " + ctx.instance_id, "url": "http://127.0.0.1:9/board", "status": "empty"}

    def closed(ctx):
        note(kind="close", instance=ctx.instance_id)

    def add_card(ctx):
        note(kind="action", instance=ctx.instance_id, input=ctx.input)
        return {"cards": [ctx.input["text"]]}

    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    board = Canvas("board", "Task board", "A board of cards.", open=opened, close=closed, actions=[
        CanvasAction("add_card", add_card, description="Add a card", input_schema=schema),
    ])
    join_session(canvases=[board])
"""

OPEN_B1 = {"name": "open_canvas", "arguments": {"canvasId": "board", "instanceId": "b1", "input": {"lane": "todo"}}}
OPEN_SCRIPT: list[list[dict[str, Any]]] = [[{"text": "Opening.", "toolCalls": [OPEN_B1]}, {"text": "Done."}]]


def calls(project: Project) -> list[dict[str, Any]]:
    log = project.root / ".github" / "extensions" / "board-calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


async def until(predicate: Callable[[], Any], timeout: float = 20) -> None:
    """Wait until ``predicate()`` holds (bounded): for what the server does on a disconnect."""
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


async def refused(client: ServeClient, method: str, params: dict[str, Any]) -> RpcError:
    with pytest.raises(RpcError) as caught:
        await client.request(method, params)
    assert "\n" not in caught.value.message
    return caught.value


async def canvas_client(server: ProtocolServer, client_id: str, shows: bool = True) -> ServeClient:
    client = await connect_in_process(server, client_id)
    params: dict[str, Any] = {"protocolVersions": ["0.1.0"], "clientId": client_id}
    if shows:
        params["capabilities"] = {"canvases": True}
    await client.request("initialize", params)
    return client


@asynccontextmanager
async def opening_the_board(project: Project, shows: bool = True) -> AsyncIterator[tuple[ProtocolServer, ServeClient]]:
    """A server with session :data:`URI` of a project with the board extension, and a client
    (showing canvases, or not) subscribed to it that has just started the turn opening board
    ``b1``; both closed after."""
    project.add_extension("board", BOARD)
    server = in_process_server(write_script(project.home / "script.json", OPEN_SCRIPT), project.home)
    client = await canvas_client(server, "page" if shows else "script", shows=shows)
    try:
        await client.create_session(URI, project.root)
        await client.request("subscribe", {"resource": URI})
        client.start_turn(URI, "t1", "open the board")
        yield server, client
    finally:
        await client.close()
        await server.close()


def test_an_opened_canvas_is_an_action_and_in_snapshots_and_a_client_invokes_and_closes_it(project: Project) -> None:
    async def scenario() -> None:
        async with opening_the_board(project) as (server, shows):
            other = await canvas_client(server, "script", shows=False)
            try:
                await seen_opened_and_acted_on(project, shows, other)
            finally:
                await other.close()

    run(scenario(), timeout=90)


async def seen_opened_and_acted_on(project: Project, shows: ServeClient, other: ServeClient) -> None:
    opened = await shows.wait_for_action("session/canvasOpened")
    await shows.wait_for_action("session/turnComplete", turnId="t1")
    canvas = opened["canvas"]
    assert opened["session"] == URI and "turnId" not in opened
    assert canvas == {
        "instanceId": "b1",
        "extensionId": "project:board",
        "canvasId": "board",
        "title": "Board b1",
        "status": "empty",
        "url": "http://127.0.0.1:9/board",
        "input": {"lane": "todo"},
        "displayName": "Task board",
        "actions": [
            {
                "name": "add_card",
                "description": "Add a card",
                "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
            }
        ],
    }

    snapshot = (await other.request("subscribe", {"resource": URI}))["snapshot"]
    assert snapshot["state"]["openCanvases"] == [canvas]

    answer = await other.request(
        "invokeCanvasAction",
        {"session": URI, "instanceId": "b1", "actionName": "add_card", "input": {"text": "write docs"}},
    )
    assert answer == {"result": {"cards": ["write docs"]}}
    assert {"kind": "action", "instance": "b1", "input": {"text": "write docs"}} in calls(project)

    assert await other.request("closeCanvas", {"session": URI, "instanceId": "b1"}) == {}
    for client in (shows, other):
        closed = await client.wait_for_action("session/canvasClosed")
        assert closed == {"type": "session/canvasClosed", "session": URI, "instanceId": "b1"}
    assert calls(project)[-1] == {"kind": "close", "instance": "b1"}
    again = (await other.request("subscribe", {"resource": URI}))["snapshot"]
    assert "openCanvases" not in again["state"]
    gone = await refused(other, "closeCanvas", {"session": URI, "instanceId": "b1"})
    assert gone.code == NOT_FOUND and "'b1'" in gone.message and "(open: none)" in gone.message


def test_bad_canvas_requests_are_refused_in_one_line_naming_what_is_wrong(project: Project) -> None:
    async def scenario() -> None:
        async with opening_the_board(project) as (server, client):
            await client.wait_for_action("session/turnComplete", turnId="t1")
            invoke = {"session": URI, "instanceId": "b1", "actionName": "add_card"}

            unknown = await refused(client, "invokeCanvasAction", {**invoke, "instanceId": "nope"})
            assert unknown.code == NOT_FOUND
            expected = f"invokeCanvasAction: no canvas instance 'nope' is open in session {URI} (open: 'b1')"
            assert unknown.message == expected
            wrong = await refused(client, "invokeCanvasAction", {**invoke, "input": "text"})
            assert wrong.code == INVALID_PARAMS and wrong.message.startswith("invokeCanvasAction: input")
            number = await refused(client, "closeCanvas", {"session": URI, "instanceId": 7})
            assert number.code == INVALID_PARAMS and "instanceId" in number.message
            long_id = await refused(client, "closeCanvas", {"session": URI, "instanceId": "x" * 257})
            assert long_id.code == INVALID_PARAMS and "instanceId" in long_id.message
            huge = await refused(client, "invokeCanvasAction", {**invoke, "input": {"text": "x" * MAX_INPUT_BYTES}})
            assert huge.code == INVALID_PARAMS and f"over the limit of {MAX_INPUT_BYTES}" in huge.message
            action = await refused(client, "invokeCanvasAction", {**invoke, "actionName": "remove_card"})
            assert action.code == INVALID_REQUEST and 'Unknown action "remove_card"' in action.message
            session = await refused(client, "closeCanvas", {"session": "copilot:/none", "instanceId": "b1"})
            assert session.code == SESSION_NOT_FOUND
            assert [call["kind"] for call in calls(project)] == ["open"]  # nothing bad reached the extension
            assert server.sessions[URI].host.canvases.open_instances[0].instance_id == "b1"

    run(scenario(), timeout=90)


def test_a_client_shows_canvases_while_subscribed_and_keeps_its_capability_when_it_reconnects(
    project: Project,
) -> None:
    script = write_script(project.home / "script.json", [])

    async def scenario() -> None:
        server = in_process_server(script, project.home)
        first = await canvas_client(server, "page")
        clients = [first]
        try:
            await first.create_session(URI, project.root)
            canvases = server.sessions[URI].host.canvases
            assert not canvases.can_show  # initialized, not subscribed
            await first.request("subscribe", {"resource": URI})
            assert canvases.can_show

            second = await canvas_client(server, "second")
            clients.append(second)
            await second.request("subscribe", {"resource": URI})
            first.connection.notify("unsubscribe", {"resource": URI})
            await first.request("listSessions", {})  # the notification before it has been handled
            assert canvases.can_show  # the second still shows them
            await second.close()
            await until(lambda: not canvases.can_show)

            # The page's connection dropped: it reconnects without initialize, and still shows them.
            await first.close()
            back = await connect_in_process(server, "page")
            clients.append(back)
            await back.request("reconnect", {"clientId": "page", "lastSeenServerSeq": 0, "subscriptions": [URI]})
            assert canvases.can_show
            await back.close()
            await until(lambda: not canvases.can_show)

            # A reconnect that says it no longer shows them is believed, and remembered.
            said = await connect_in_process(server, "page")
            clients.append(said)
            reconnect = {"clientId": "page", "lastSeenServerSeq": 0, "subscriptions": [URI]}
            await said.request("reconnect", {**reconnect, "capabilities": {"canvases": False}})
            assert not canvases.can_show
            await said.request("reconnect", reconnect)
            assert not canvases.can_show

            # A client that never said it shows canvases does not count when it reconnects.
            stranger = await connect_in_process(server, "stranger")
            clients.append(stranger)
            await stranger.request("reconnect", {**reconnect, "clientId": "stranger"})
            assert not canvases.can_show
        finally:
            for client in clients:
                await client.close()
            await server.close()

    run(scenario(), timeout=60)


def test_without_a_client_that_shows_canvases_open_canvas_answers_in_one_line(project: Project) -> None:
    async def scenario() -> None:
        async with opening_the_board(project, shows=False) as (_server, client):
            complete = await client.wait_for_action("session/toolCallComplete", turnId="t1")
            text = complete["result"]["content"][0]["text"]
            assert not complete["result"]["success"]
            assert text.startswith("No canvas can be shown here") and "\n" not in text
            await client.wait_for_action("session/turnComplete", turnId="t1")
            assert not client.actions("session/canvasOpened") and calls(project) == []

    run(scenario(), timeout=60)
