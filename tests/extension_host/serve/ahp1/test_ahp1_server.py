"""AHP 1.0 on the protocol server, driven as a raw 1.0 client would, with real extension processes
behind each session: negotiation beside the seed protocol, channels and their snapshots, a turn
with a tool call (asked, confirmed, denied), cancel, reconnect with replay, the WebSocket's
``?tkn=``. The client folds what it receives with the 1.0 reducer: it must reach the server's
own snapshot."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from serve_client import (
    AHP1_ROOT,
    ASKING_GUARD,
    COUNT_THEN_ANSWER,
    COUNTER,
    ServeClient,
    ahp1_plain,
    connect_in_process,
    on_websocket,
    served,
)

from extension_host.serve.ahp1.state import IDLE, INPUT_NEEDED, reduce_chat
from extension_host.serve.errors import SESSION_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION
from extension_host.serve.server import ProtocolServer
from extension_host.serve.transports import client_connection
from extension_protocol.connection import Connection, RpcError
from extension_protocol.framing import FrameDecoder
from extension_protocol.protocol import INVALID_PARAMS, METHOD_NOT_FOUND
from helpers import Project, run

pytestmark = pytest.mark.subprocess

S = "ahp-session:/0b6c2f0e-1111-4c1e-9a57-000000000001"


@asynccontextmanager
async def ahp1_session(
    project: Project, prompts: list[list[dict[str, Any]]]
) -> AsyncIterator[tuple[ProtocolServer, ServeClient, str]]:
    """A server with one session made by a 1.0 client, subscribed to its session and chat
    channels; the chat's URI. Both closed after."""
    server = served(project, prompts)
    client = await connect_in_process(server)
    try:
        await client.initialize_ahp1([AHP1_ROOT])
        await client.request("createSession", {"channel": S, "workingDirectories": [project.root.as_uri()]})
        session = (await client.request("subscribe", {"channel": S}))["snapshot"]["state"]
        chat = session["defaultChat"]
        await client.request("subscribe", {"channel": chat})
        yield server, client, chat
    finally:
        await client.close()
        await server.close()


def folded(snapshot: dict[str, Any], actions: list[dict[str, Any]]) -> dict[str, Any]:
    state = snapshot
    for action in actions:
        state = reduce_chat(state, action)
    return state


def test_initialize_with_a_channel_speaks_1_0_without_one_0_1_0_and_neither_fails_naming_both(
    project: Project,
) -> None:
    async def scenario() -> None:
        server = served(project, [])
        one = await connect_in_process(server, "one")
        seed = await connect_in_process(server, "seed")
        try:
            assert (await one.request("ping", {"channel": AHP1_ROOT})) is None  # before initialize too
            with pytest.raises(RpcError) as neither:
                await one.request(
                    "initialize", {"channel": AHP1_ROOT, "protocolVersions": ["2.0.0", "0.1.0"], "clientId": "one"}
                )
            assert neither.value.code == UNSUPPORTED_PROTOCOL_VERSION
            assert neither.value.data == {"supportedVersions": ["1.0.0"]}
            with pytest.raises(RpcError) as channelless:
                await seed.request("initialize", {"protocolVersions": ["1.0.0"], "clientId": "seed"})
            assert channelless.value.code == INVALID_PARAMS and "channel" in channelless.value.message
            result = await one.initialize_ahp1([AHP1_ROOT])
            assert result["protocolVersion"] == "1.0.0" and result["serverSeq"] == 0
            assert result["serverInfo"]["name"] == "extension-host"
            [root] = result["snapshots"]
            assert root["resource"] == AHP1_ROOT and root["state"]["agents"][0]["provider"] == "scripted"
            assert (await seed.initialize())["protocolVersion"] == "0.1.0"
            # Each version has its own methods.
            with pytest.raises(RpcError) as seed_ping:
                await seed.request("ping", {})
            assert seed_ping.value.code == METHOD_NOT_FOUND
            with pytest.raises(RpcError) as one_completions:
                await one.request("completions", {"channel": AHP1_ROOT})
            assert one_completions.value.code == METHOD_NOT_FOUND
            # One session, seen by both in their own shapes.
            await one.request("createSession", {"channel": S, "workingDirectories": [project.root.as_uri()]})
            added = await one.wait_for(lambda: [p for m, p in one.notifications if m == "root/sessionAdded"])
            assert added[0]["channel"] == AHP1_ROOT and added[0]["summary"]["resource"] == S
            assert added[0]["summary"]["status"] == IDLE
            await seed.wait_for(lambda: [p for m, p in seed.notifications if m == "notify/sessionAdded"])
            assert not [m for m, _ in one.notifications if m.startswith("notify/")]
            assert [
                item["resource"] for item in (await one.request("listSessions", {"channel": AHP1_ROOT}))["items"]
            ] == [S]
            assert [item["resource"] for item in (await seed.request("listSessions", {}))["items"]] == [S]
            await seed.request("disposeSession", {"session": S})
            await one.wait_for(lambda: [p for m, p in one.notifications if m == "root/sessionRemoved"])
        finally:
            await one.close()
            await seed.close()
            await server.close()

    run(scenario())


def test_a_session_shows_as_a_session_channel_with_one_chat_and_unknown_channels_are_named(project: Project) -> None:
    async def scenario() -> None:
        async with ahp1_session(project, []) as (_server, client, chat):
            session = (await client.request("subscribe", {"channel": S}))["snapshot"]
            state = session["state"]
            assert (state["lifecycle"], state["defaultChat"], state["provider"]) == ("ready", chat, "scripted")
            assert [summary["resource"] for summary in state["chats"]] == [chat]
            assert state["workingDirectories"] == [project.root.as_uri()]
            snapshot = (await client.request("subscribe", {"channel": chat}))["snapshot"]
            assert snapshot["state"]["turns"] == [] and snapshot["state"]["status"] == IDLE
            with pytest.raises(RpcError) as unknown:
                await client.request("subscribe", {"channel": "ahp-chat:/nothing"})
            assert unknown.value.code == SESSION_NOT_FOUND and "ahp-chat:/nothing" in unknown.value.message
            with pytest.raises(RpcError) as second_chat:
                await client.request("createChat", {"channel": S, "chat": "ahp-chat:/two"})
            assert second_chat.value.code == INVALID_PARAMS and "one chat" in second_chat.value.message
            with pytest.raises(RpcError) as auth:
                await client.request(
                    "authenticate", {"channel": AHP1_ROOT, "resource": "https://api.github.com", "token": "x"}
                )
            assert auth.value.code == INVALID_PARAMS and "no protected resource" in auth.value.message

    run(scenario())


def test_a_turn_with_a_tool_call_reaches_the_chat_as_1_0_actions_that_fold_into_its_snapshot(project: Project) -> None:
    project.add_extension("counter", COUNTER)

    async def scenario() -> None:
        async with ahp1_session(project, COUNT_THEN_ANSWER) as (_server, client, chat):
            before = (await client.request("subscribe", {"channel": chat}))["snapshot"]["state"]
            seen = len(client.envelopes)
            seq = client.dispatch_ahp1(chat, {"type": "chat/turnStarted", "turnId": "t1", "message": {"text": "count"}})
            await client.wait_for_action("chat/turnComplete", turnId="t1")
            kinds = [action["type"] for action in client.on_channel(chat)]
            assert kinds[0] == "chat/turnStarted" and kinds[-1] == "chat/turnComplete"
            assert {"chat/toolCallStart", "chat/toolCallReady", "chat/toolCallComplete"} <= set(kinds)
            [started] = [e for e in client.envelopes if e["action"]["type"] == "chat/turnStarted"]
            assert started["origin"] == {"clientId": "client-1", "clientSeq": seq}
            assert started["action"]["message"] == {"text": "count", "origin": {"kind": "user"}}
            after = (await client.request("subscribe", {"channel": chat}))["snapshot"]["state"]
            mine = folded(before, [e["action"] for e in client.envelopes[seen:] if e["channel"] == chat])
            assert mine["turns"] == after["turns"]
            [turn] = after["turns"]
            assert turn["state"] == "complete" and turn["message"]["text"] == "count"
            call = next(part["toolCall"] for part in turn["responseParts"] if part["kind"] == "toolCall")
            assert (call["status"], call["toolName"], call["confirmed"]) == ("completed", "count", "not-needed")
            assert call["content"][0]["text"] == "3"
            # The session channel heard the chat's status go and come back.
            statuses = [a["changes"]["status"] for a in client.on_channel(S, "session/chatUpdated")]
            assert statuses[-1] == IDLE and len(statuses) >= 2
            sequence = [e["serverSeq"] for e in client.envelopes]
            assert sequence == sorted(sequence) and len(set(sequence)) == len(sequence)

    run(scenario())


class RecordingWriter:
    """A stream writer that keeps each write's bytes (the server's side of a client connection)."""

    def __init__(self, writer: Any) -> None:
        self._writer = writer
        self.writes: list[bytes] = []
        self.transport = writer.transport

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))
        self._writer.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._writer, name)


def test_what_one_seed_action_makes_in_1_0_reaches_the_client_in_one_write(project: Project) -> None:
    """A turn's end, the chat's status, the session's activity and the summary's change arrive
    together, as do the turn's start and its status: one wake-up of the client each."""
    project.add_extension("counter", COUNTER)
    recorded: list[RecordingWriter] = []

    def recording(reader: Any, writer: Any) -> Connection:
        recorded.append(RecordingWriter(writer))
        return client_connection(reader, recorded[-1])

    async def scenario() -> list[list[str]]:
        server = served(project, COUNT_THEN_ANSWER)
        client = await connect_in_process(server, server_side=recording)
        try:
            await client.initialize_ahp1([AHP1_ROOT])
            await client.request("createSession", {"channel": S, "workingDirectories": [project.root.as_uri()]})
            chat = (await client.request("subscribe", {"channel": S}))["snapshot"]["state"]["defaultChat"]
            await client.request("subscribe", {"channel": chat})
            client.dispatch_ahp1(chat, {"type": "chat/turnStarted", "turnId": "t1", "message": {"text": "count"}})
            await client.wait_for_action("chat/turnComplete", turnId="t1")
            await client.wait_for(lambda: client.on_channel(S, "session/activityChanged"))
        finally:
            await client.close()
            await server.close()
        return [[_kind(m) for m in FrameDecoder().feed(write)] for write in recorded[0].writes]

    writes = run(scenario())
    ending = next(kinds for kinds in writes if "chat/turnComplete" in kinds)
    at = ending.index("chat/turnComplete")
    assert ending[at:] == [
        "chat/turnComplete",
        "session/chatUpdated",
        "session/activityChanged",
        "root/sessionSummaryChanged",
    ]
    starting = next(kinds for kinds in writes if "chat/turnStarted" in kinds)
    at = starting.index("chat/turnStarted")
    assert starting[at : at + 2] == ["chat/turnStarted", "session/chatUpdated"]
    assert "root/sessionSummaryChanged" in starting[at:]


def _kind(message: dict[str, Any]) -> str:
    params = message.get("params") or {}
    return str(params["action"]["type"]) if message.get("method") == "action" else str(message.get("method"))


def test_a_tool_call_a_hook_asks_about_waits_for_the_clients_confirmation_and_a_denial_cancels_it(
    project: Project,
) -> None:
    project.add_extension("counter", COUNTER)
    project.add_extension("guard", ASKING_GUARD)

    async def scenario() -> None:
        async with ahp1_session(project, COUNT_THEN_ANSWER * 2) as (_server, client, chat):
            client.dispatch_ahp1(chat, {"type": "chat/turnStarted", "turnId": "t1", "message": {"text": "count"}})
            ready = await client.wait_for_action("chat/toolCallReady", turnId="t1", confirmationTitle="it counts")
            assert "confirmed" not in ready and ready["confirmationTitle"] == "it counts"
            state = (await client.request("subscribe", {"channel": chat}))["snapshot"]["state"]
            assert state["status"] == INPUT_NEEDED
            call = {"turnId": "t1", "toolCallId": ready["toolCallId"]}
            with pytest.raises(RpcError) as wrong:
                action = {"type": "chat/toolCallConfirmed", "turnId": "t1", "toolCallId": "nope", "approved": True}
                await client.request("dispatchAction", {"channel": chat, "clientSeq": 99, "action": action})
            assert wrong.value.code == INVALID_PARAMS and "nope" in wrong.value.message
            client.dispatch_ahp1(chat, {"type": "chat/toolCallConfirmed", **call, "approved": True})
            await client.wait_for_action("chat/turnComplete", turnId="t1")
            [confirmed] = client.on_channel(chat, "chat/toolCallConfirmed")
            assert confirmed["approved"] is True and confirmed["confirmed"] == "user-action"
            client.dispatch_ahp1(chat, {"type": "chat/turnStarted", "turnId": "t2", "message": {"text": "again"}})
            ready = await client.wait_for_action("chat/toolCallReady", turnId="t2", confirmationTitle="it counts")
            action = {"type": "chat/toolCallConfirmed", "turnId": "t2", "toolCallId": ready["toolCallId"]}
            client.dispatch_ahp1(chat, {**action, "approved": False, "reason": "denied"})
            await client.wait_for_action("chat/turnComplete", turnId="t2")
            turn = (await client.request("subscribe", {"channel": chat}))["snapshot"]["state"]["turns"][-1]
            denied = next(part["toolCall"] for part in turn["responseParts"] if part["kind"] == "toolCall")
            assert (denied["status"], denied["reason"]) == ("cancelled", "denied")

    run(scenario())


def test_a_cancelled_turn_ends_at_once_and_the_chat_takes_the_next(project: Project) -> None:
    project.add_extension("counter", COUNTER)
    project.add_extension("guard", ASKING_GUARD)

    async def scenario() -> None:
        async with ahp1_session(project, COUNT_THEN_ANSWER * 2) as (server, client, chat):
            client.dispatch_ahp1(chat, {"type": "chat/turnStarted", "turnId": "t1", "message": {"text": "count"}})
            await client.wait_for_action("chat/toolCallReady", turnId="t1", confirmationTitle="it counts")
            client.dispatch_ahp1(chat, {"type": "chat/turnCancelled", "turnId": "t1"})
            await client.wait_for_action("chat/turnCancelled", turnId="t1")
            state = (await client.request("subscribe", {"channel": chat}))["snapshot"]["state"]
            assert state["turns"][-1]["state"] == "cancelled" and state["status"] == IDLE
            await server.sessions[S].host.wait_idle(30)
            client.dispatch_ahp1(chat, {"type": "chat/turnStarted", "turnId": "t2", "message": {"text": "again"}})
            await client.wait_for_action("chat/toolCallReady", turnId="t2")

    run(scenario())


def test_a_dropped_1_0_client_reconnects_and_gets_what_it_missed_on_its_channels_replayed(project: Project) -> None:
    project.add_extension("counter", COUNTER)

    async def scenario() -> None:
        async with ahp1_session(project, COUNT_THEN_ANSWER) as (server, client, chat):
            last = max(e["serverSeq"] for e in client.envelopes) if client.envelopes else 0
            await client.close()
            other = await connect_in_process(server, "other")
            try:
                await other.initialize_ahp1()
                other.dispatch_ahp1(chat, {"type": "chat/turnStarted", "turnId": "t1", "message": {"text": "count"}})
                await asyncio.sleep(0)
                back = await connect_in_process(server, "client-1")
                try:
                    await other.request("subscribe", {"channel": chat})
                    await other.wait_for_action("chat/turnComplete", turnId="t1")
                    params = {
                        "channel": AHP1_ROOT,
                        "clientId": "client-1",
                        "lastSeenServerSeq": last,
                        "subscriptions": [chat, "ahp-chat:/gone"],
                    }
                    replay = await back.request("reconnect", params)
                    assert replay["type"] == "replay" and replay["missing"] == ["ahp-chat:/gone"]
                    assert {e["channel"] for e in replay["actions"]} == {chat}
                    kinds = [e["action"]["type"] for e in replay["actions"]]
                    assert kinds[0] == "chat/turnStarted" and kinds[-1] == "chat/turnComplete"
                    far = await back.request("reconnect", {**params, "lastSeenServerSeq": 10**9})
                    assert far["type"] == "snapshot" and [s["resource"] for s in far["snapshots"]] == [chat]
                finally:
                    await back.close()
            finally:
                await other.close()

    run(scenario())


async def _seed_turns_seen_by_1_0(project: Project, *, joins_late: bool) -> list[Any]:
    """A 0.1.0 client runs two turns on a new server (a call approved, then one denied); a 1.0
    client initialized before they start, or only once the second waits on its permission. What
    the 1.0 client sees of the session and its chat there, and at the end."""
    server = served(project, COUNT_THEN_ANSWER * 2)
    seed = await connect_in_process(server, "seed")
    one = await connect_in_process(server, "one")
    seen: list[Any] = []

    async def look() -> None:
        session = (await one.request("subscribe", {"channel": S}))["snapshot"]["state"]
        chat = (await one.request("subscribe", {"channel": session["defaultChat"]}))["snapshot"]["state"]
        seen.append(ahp1_plain({"session": session, "chat": chat}, session["defaultChat"]))

    async def answer(turn: str, approved: bool) -> None:
        request = (await seed.wait_for_action("session/permissionRequest", turnId=turn))["request"]
        if len(seen) == 0 and turn == "t2":
            if joins_late:
                await one.initialize_ahp1()
                assert len(server.ahp1.views) == 1
            await look()
        resolution = {"session": S, "turnId": turn, "requestId": request["requestId"]}
        seed.dispatch({"type": "session/permissionResolved", **resolution, "approved": approved})
        await seed.wait_for_action("session/turnComplete", turnId=turn)

    try:
        await seed.initialize()
        if not joins_late:
            await one.initialize_ahp1()
        await seed.create_session(S, project.root)
        await seed.request("subscribe", {"resource": S})
        assert server.ahp1.active is not joins_late and len(server.ahp1.views) == (0 if joins_late else 1)
        seed.start_turn(S, "t1", "count")
        await answer("t1", True)
        await server.sessions[S].host.wait_idle(30)
        seed.start_turn(S, "t2", "again")
        await answer("t2", False)
        await look()
        return seen
    finally:
        await one.close()
        await seed.close()
        await server.close()


def test_a_1_0_client_joining_after_seed_turns_and_mid_turn_sees_what_one_there_from_the_start_sees(
    project: Project,
) -> None:
    project.add_extension("counter", COUNTER)
    project.add_extension("guard", ASKING_GUARD)

    async def scenario() -> None:
        early = await _seed_turns_seen_by_1_0(project, joins_late=False)
        late = await _seed_turns_seen_by_1_0(project, joins_late=True)
        assert late == early
        waiting, done = early
        assert waiting["chat"]["status"] == INPUT_NEEDED and len(waiting["chat"]["turns"]) == 1
        calls = [
            next(part["toolCall"] for part in turn["responseParts"] if part["kind"] == "toolCall")
            for turn in done["chat"]["turns"]
        ]
        assert [(call["status"], call.get("reason")) for call in calls] == [
            ("completed", None),
            ("cancelled", "denied"),
        ]
        assert calls[1]["toolInput"] and calls[1]["invocationMessage"] == "Run count"

    run(scenario())


def test_the_websocket_takes_the_1_0_token_parameter_and_still_refuses_without_a_token(project: Project) -> None:
    async def scenario() -> None:
        import websockets

        async with on_websocket(served(project, []), "s3cret-token") as url:
            tkn = url.replace("?token=", "?tkn=")
            async with websockets.connect(tkn) as socket:
                hello = {"channel": AHP1_ROOT, "protocolVersions": ["1.0.0"], "clientId": "w"}
                await socket.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}))
                answer = json.loads(await asyncio.wait_for(socket.recv(), 30))
                assert answer["result"]["protocolVersion"] == "1.0.0"
            bare = url.split("?")[0].replace("ws://", "http://")
            with pytest.raises(urllib.error.HTTPError) as refused:
                await asyncio.to_thread(urllib.request.urlopen, bare + "?tkn=wrong", None, 30)
            refused.value.close()
            assert refused.value.code == 401

    run(scenario())
