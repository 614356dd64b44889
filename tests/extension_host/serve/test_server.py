"""The protocol server driven as a client would, in this process over a socket pair, with real
extension processes behind each session: version negotiation, sessions side by side, a turn
with a tool call, hooks, a permission a client resolves, reconnecting, fetchTurns, bad input."""

from __future__ import annotations

import gc
import os
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from serve_client import (
    ASKING_GUARD,
    COUNT_THEN_ANSWER,
    COUNTER,
    FakeSession,
    ServeClient,
    connect_in_process,
    in_process_server,
    served,
    write_script,
)

from extension_host.project.trust import TRUST_ENV
from extension_host.serve import capacity
from extension_host.serve.capacity import SESSION_MEMORY_BUDGET, open_file_limit, sessions_for
from extension_host.serve.errors import (
    PERMISSION_DENIED,
    PROVIDER_NOT_FOUND,
    SESSION_ALREADY_EXISTS,
    SESSION_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from extension_host.serve.served_session import HostOptions
from extension_host.serve.server import MAX_ACTION_DEPTH, ProtocolServer, ServerOptions
from extension_host.serve.transports import client_connection
from extension_protocol import connection as connection_module
from extension_protocol.connection import Connection, RpcError
from extension_protocol.protocol import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND
from helpers import Project, recording_program, run

pytestmark = pytest.mark.subprocess


@asynccontextmanager
async def served_session(
    project: Project, prompts: list[list[dict[str, Any]]], uri: str = "copilot:/one"
) -> AsyncIterator[tuple[ProtocolServer, ServeClient]]:
    """A server with one session ``uri`` and a client subscribed to it; both closed after."""
    server = served(project, prompts)
    client = await connect_in_process(server)
    try:
        await client.initialize()
        await client.create_session(uri, project.root)
        await client.request("subscribe", {"resource": uri})
        yield server, client
    finally:
        await client.close()
        await server.close()


def test_initialize_picks_the_first_version_the_server_speaks_and_reports_the_sequence(project: Project) -> None:
    async def scenario() -> None:
        server = served(project, [])
        client = await connect_in_process(server)
        try:
            result = await client.request("initialize", {"protocolVersions": ["9.0.0", "0.1.0"], "clientId": "c"})
            assert result == {
                "protocolVersion": "0.1.0",
                "serverSeq": 0,
                "snapshots": [],
                "defaultDirectory": None,
            } or (result["protocolVersion"], result["serverSeq"], result["snapshots"]) == ("0.1.0", 0, [])
        finally:
            await client.close()
            await server.close()

    run(scenario())


def test_initialize_with_no_version_the_server_speaks_fails_with_unsupported_protocol_version(project: Project) -> None:
    async def scenario() -> None:
        server = served(project, [])
        client = await connect_in_process(server)
        try:
            with pytest.raises(RpcError) as caught:
                await client.request("initialize", {"protocolVersions": ["2.0.0"], "clientId": "c"})
            assert caught.value.code == UNSUPPORTED_PROTOCOL_VERSION
            assert "0.1.0" in caught.value.message and "2.0.0" in caught.value.message
            # The connection goes on: the client may offer another version.
            assert (await client.initialize())["protocolVersion"] == "0.1.0"
        finally:
            await client.close()
            await server.close()

    run(scenario())


def test_commands_before_initialize_are_refused_and_unknown_methods_are_method_not_found(project: Project) -> None:
    async def scenario() -> None:
        server = served(project, [])
        client = await connect_in_process(server)
        try:
            with pytest.raises(RpcError) as early:
                await client.request("listSessions", {})
            assert early.value.code == INVALID_REQUEST and "initialize" in early.value.message
            await client.initialize()
            with pytest.raises(RpcError) as unknown:
                await client.request("noSuchCommand", {})
            assert unknown.value.code == METHOD_NOT_FOUND
            with pytest.raises(RpcError) as bad:
                await client.request("createSession", {"session": 42})
            assert bad.value.code == INVALID_PARAMS and "session" in bad.value.message
            with pytest.raises(RpcError) as missing:
                await client.request("fetchTurns", {"session": "copilot:/nope"})
            assert missing.value.code == SESSION_NOT_FOUND and "copilot:/nope" in missing.value.message
            with pytest.raises(RpcError) as provider:
                await client.create_session("copilot:/x", project.root, provider="nobody")
            assert provider.value.code == PROVIDER_NOT_FOUND and "scripted" in provider.value.message
            with pytest.raises(RpcError) as action:
                await client.request(
                    "dispatchAction",
                    {
                        "clientSeq": 1,
                        "action": {
                            "type": "session/turnStarted",
                            "session": "copilot:/nope",
                            "turnId": "t",
                            "userMessage": {"text": "hi"},
                        },
                    },
                )
            assert action.value.code == SESSION_NOT_FOUND
            assert (await client.request("listSessions", {})) == {"items": []}
        finally:
            await client.close()
            await server.close()

    run(scenario())


def test_a_turn_with_a_tool_call_reaches_the_client_as_actions_and_ends_in_the_snapshot(project: Project) -> None:
    project.add_extension("counter", COUNTER)

    async def scenario() -> None:
        async with served_session(project, COUNT_THEN_ANSWER) as (_server, client):
            client.start_turn("copilot:/one", "turn-1", "How many words?")
            await client.wait_for_action("session/turnComplete", turnId="turn-1")
            kinds = [action["type"] for action in client.actions()]
            assert kinds == [
                "session/turnStarted",
                "session/responsePart",
                "session/toolCallStart",
                "session/toolCallReady",
                "session/toolCallComplete",
                "session/responsePart",
                "session/turnComplete",
            ]
            started = client.envelopes[0]
            assert started["origin"] == {"clientId": "client-1", "clientSeq": 1}
            seqs = [envelope["serverSeq"] for envelope in client.envelopes]
            assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
            [complete] = client.actions("session/toolCallComplete")
            assert complete["result"]["success"] is True
            assert complete["result"]["content"] == [{"type": "text", "text": "3"}]
            snapshot = (await client.request("subscribe", {"resource": "copilot:/one"}))["snapshot"]
            [turn] = snapshot["state"]["turns"]
            assert turn["id"] == "turn-1" and turn["state"] == "complete"
            assert turn["userMessage"] == {"text": "How many words?"}
            parts = turn["responseParts"]
            assert [part["kind"] for part in parts] == ["markdown", "toolCall", "markdown"]
            assert parts[1]["toolCall"]["status"] == "completed"
            assert parts[2]["content"] == "Three words."
            assert snapshot["state"]["summary"]["status"] == "idle"

    run(scenario())


class CountingWriter:
    """A stream writer that records what each write to the client carried."""

    def __init__(self, writer: Any) -> None:
        self._writer = writer
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(data)
        self._writer.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._writer, name)


def test_a_turns_progress_actions_make_no_write_of_their_own_and_go_with_its_end(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Held until something must go (the notice delay made longer than the test): the whole
    turn reaches the client in one write, in order."""
    project.add_extension("counter", COUNTER)
    monkeypatch.setattr(connection_module, "PROGRESS_DELAY", 3600.0)
    monkeypatch.setattr(connection_module, "NOTICE_DELAY", 3600.0)
    writers: list[CountingWriter] = []

    def counted(reader: Any, writer: Any) -> Connection:
        writers.append(CountingWriter(writer))
        return client_connection(reader, writers[-1])

    async def scenario() -> None:
        server = served(project, COUNT_THEN_ANSWER)
        client = await connect_in_process(server, server_side=counted)
        try:
            await client.initialize()
            await client.create_session("copilot:/one", project.root)
            await client.request("subscribe", {"resource": "copilot:/one"})
            before = len(writers[0].writes)
            client.start_turn("copilot:/one", "turn-1", "How many words?")
            await client.wait_for_action("session/turnComplete", turnId="turn-1")
            turn_writes = writers[0].writes[before:]
            assert len(turn_writes) == 1
            assert turn_writes[0].count(b'"method":"action"') == 7
            assert [action["type"] for action in client.actions()][-1] == "session/turnComplete"
        finally:
            await client.close()
            await server.close()

    run(scenario())


def test_a_client_resolves_the_permission_a_hook_asks_for(project: Project) -> None:
    project.add_extension("counter", COUNTER)
    project.add_extension("guard", ASKING_GUARD)

    async def scenario() -> None:
        async with served_session(project, COUNT_THEN_ANSWER) as (_server, client):
            client.start_turn("copilot:/one", "turn-1", "count please")
            asked = await client.wait_for_action("session/permissionRequest")
            request = asked["request"]
            assert request["permissionKind"] == "hook" and request["toolName"] == "count"
            assert request["message"] == "it counts"
            snapshot = (await client.request("subscribe", {"resource": "copilot:/one"}))["snapshot"]
            assert snapshot["state"]["summary"]["status"] == "input-needed"
            client.dispatch(
                {
                    "type": "session/permissionResolved",
                    "session": "copilot:/one",
                    "turnId": "turn-1",
                    "requestId": request["requestId"],
                    "approved": True,
                }
            )
            await client.wait_for_action("session/turnComplete", turnId="turn-1")
            resolved = client.actions("session/permissionResolved")
            assert len(resolved) == 1 and resolved[0]["approved"] is True  # the client's own, once
            again = {**resolved[0], "approved": False}
            with pytest.raises(RpcError) as answered:
                await client.request("dispatchAction", {"clientSeq": 9, "action": again})
            assert answered.value.code == INVALID_PARAMS and request["requestId"] in answered.value.message
            [complete] = client.actions("session/toolCallComplete")
            assert complete["result"]["success"] is True

    run(scenario())


def test_a_denied_permission_reaches_the_agent_and_cancels_the_call(project: Project) -> None:
    project.add_extension("counter", COUNTER)
    project.add_extension("guard", ASKING_GUARD)

    async def scenario() -> None:
        async with served_session(project, COUNT_THEN_ANSWER) as (server, client):
            client.start_turn("copilot:/one", "turn-1", "count please")
            request = (await client.wait_for_action("session/permissionRequest"))["request"]
            client.dispatch(
                {
                    "type": "session/permissionResolved",
                    "session": "copilot:/one",
                    "turnId": "turn-1",
                    "requestId": request["requestId"],
                    "approved": False,
                    "feedback": "not now",
                }
            )
            await client.wait_for_action("session/turnComplete", turnId="turn-1")
            state = server.sessions["copilot:/one"].state
            call = state["turns"][0]["responseParts"][1]["toolCall"]
            assert call["status"] == "cancelled" and call["reason"] == "denied"
            agent = server.sessions["copilot:/one"].agent
            tool_result = agent.requests[1].messages[-1]  # type: ignore[attr-defined]
            assert "not now" in tool_result.content

    run(scenario())


def test_two_sessions_run_side_by_side_and_two_clients_see_the_same_sequence(project: Project) -> None:
    project.add_extension("counter", COUNTER)
    other = project.root.parent / "other"
    (other / ".git").mkdir(parents=True)

    async def scenario() -> None:
        server = served(project, COUNT_THEN_ANSWER)
        first = await connect_in_process(server, "first")
        second = await connect_in_process(server, "second")
        try:
            await first.initialize()
            await second.initialize()
            await first.create_session("copilot:/a", project.root)
            await first.create_session("copilot:/b", other)
            await second.wait_for(lambda: len(second.notifications) == 2)
            assert [method for method, _ in second.notifications] == ["notify/sessionAdded"] * 2
            for client in (first, second):
                for uri in ("copilot:/a", "copilot:/b"):
                    await client.request("subscribe", {"resource": uri})
            first.start_turn("copilot:/a", "a-1", "count in a")
            first.start_turn("copilot:/b", "b-1", "count in b")
            for client in (first, second):
                await client.wait_for_action("session/turnComplete", turnId="a-1")
                await client.wait_for_action("session/turnComplete", turnId="b-1")
            assert first.envelopes == second.envelopes
            a_calls = [a for a in first.actions("session/toolCallComplete") if a["session"] == "copilot:/a"]
            b_calls = [a for a in first.actions("session/toolCallComplete") if a["session"] == "copilot:/b"]
            assert len(a_calls) == len(b_calls) == 1  # copilot:/b has no counter: its call failed
            assert a_calls[0]["result"]["success"] is True and b_calls[0]["result"]["success"] is False
            listed = await second.request("listSessions", {})
            assert sorted(item["resource"] for item in listed["items"]) == ["copilot:/a", "copilot:/b"]
            with pytest.raises(RpcError) as again:
                await second.create_session("copilot:/a", project.root)
            assert again.value.code == SESSION_ALREADY_EXISTS
            await second.request("disposeSession", {"session": "copilot:/b"})
            await first.wait_for(lambda: ("notify/sessionRemoved", {"session": "copilot:/b"}) in first.notifications)
            listed = await first.request("listSessions", {})
            assert [item["resource"] for item in listed["items"]] == ["copilot:/a"]
        finally:
            await first.close()
            await second.close()
            await server.close()

    run(scenario(), timeout=120)


def test_a_dropped_client_reconnects_and_gets_what_it_missed_replayed(project: Project) -> None:
    async def scenario() -> None:
        prompts = [[{"text": "one"}], [{"text": "two"}], [{"text": "three"}]]
        async with served_session(project, prompts) as (server, client):
            watcher = await connect_in_process(server, "watcher")
            try:
                await watcher.initialize(["copilot:/one"])
                client.start_turn("copilot:/one", "t1", "first")
                await client.wait_for_action("session/turnComplete", turnId="t1")
                last_seen = client.envelopes[-1]["serverSeq"]
                await client.close()
                watcher.start_turn("copilot:/one", "t2", "second")
                await watcher.wait_for_action("session/turnComplete", turnId="t2")
                again = await connect_in_process(server, "client-1")
                result = await again.request(
                    "reconnect",
                    {
                        "clientId": "client-1",
                        "lastSeenServerSeq": last_seen,
                        "subscriptions": ["copilot:/one", "copilot:/gone"],
                    },
                )
                assert result["type"] == "replay" and result["missing"] == ["copilot:/gone"]
                missed = [e for e in watcher.envelopes if e["serverSeq"] > last_seen]
                assert result["actions"] == missed and missed
                # And it is live again: the next turn reaches it.
                watcher.start_turn("copilot:/one", "t3", "third")
                await again.wait_for_action("session/turnComplete", turnId="t3")
                await again.close()
            finally:
                await watcher.close()

    run(scenario())


def test_a_client_further_behind_than_the_replay_buffer_gets_a_snapshot(project: Project) -> None:
    async def scenario() -> None:
        async with served_session(project, [[{"text": "one"}]]) as (server, client):
            client.start_turn("copilot:/one", "t1", "first")
            await client.wait_for_action("session/turnComplete", turnId="t1")
            server.log._buffer.popleft()  # the oldest envelope is gone from the buffer
            again = await connect_in_process(server, "client-1")
            result = await again.request(
                "reconnect", {"clientId": "client-1", "lastSeenServerSeq": 0, "subscriptions": ["copilot:/one"]}
            )
            assert result["type"] == "snapshot"
            [snapshot] = result["snapshots"]
            assert snapshot["resource"] == "copilot:/one" and snapshot["fromSeq"] == server.log.server_seq
            assert [turn["id"] for turn in snapshot["state"]["turns"]] == ["t1"]
            await again.close()

    run(scenario())


def test_fetch_turns_pages_back_from_the_latest_oldest_first(project: Project) -> None:
    async def scenario() -> None:
        prompts = [[{"text": f"answer {n}"}] for n in range(5)]
        async with served_session(project, prompts) as (_server, client):
            for n in range(5):
                client.start_turn("copilot:/one", f"t{n}", f"question {n}")
                await client.wait_for_action("session/turnComplete", turnId=f"t{n}")
            page = await client.request("fetchTurns", {"session": "copilot:/one", "limit": 2})
            assert [turn["id"] for turn in page["turns"]] == ["t3", "t4"] and page["hasMore"] is True
            assert page["turns"][0]["responseParts"][0]["content"] == "answer 3"
            page = await client.request("fetchTurns", {"session": "copilot:/one", "before": "t3", "limit": 2})
            assert [turn["id"] for turn in page["turns"]] == ["t1", "t2"] and page["hasMore"] is True
            page = await client.request("fetchTurns", {"session": "copilot:/one", "before": "t1", "limit": 2})
            assert [turn["id"] for turn in page["turns"]] == ["t0"] and page["hasMore"] is False
            with pytest.raises(RpcError) as bad:
                await client.request("fetchTurns", {"session": "copilot:/one", "before": "nope"})
            assert bad.value.code == INVALID_PARAMS and "nope" in bad.value.message

    run(scenario())


def test_a_prompt_the_agent_cannot_answer_ends_its_turn_with_an_error(project: Project) -> None:
    async def scenario() -> None:
        async with served_session(project, []) as (server, client):  # an empty script
            client.start_turn("copilot:/one", "t1", "anyone?")
            error = await client.wait_for_action("session/error", turnId="t1")
            assert error["error"]["errorType"] == "agent"
            state = server.sessions["copilot:/one"].state
            assert state["summary"]["status"] == "error" and state["turns"][0]["state"] == "error"

    run(scenario())


def test_model_changed_reaches_the_agent_and_the_summary(project: Project) -> None:
    async def scenario() -> None:
        async with served_session(project, []) as (server, client):
            client.dispatch({"type": "session/modelChanged", "session": "copilot:/one", "model": {"id": "bigger"}})
            await client.wait_for_action("session/modelChanged")
            session = server.sessions["copilot:/one"]
            assert session.agent.model == "bigger"  # type: ignore[attr-defined]
            assert session.state["summary"]["model"] == {"id": "bigger"}

    run(scenario())


def test_an_unknown_action_or_session_in_a_notification_leaves_the_connection_and_sessions_working(
    project: Project,
) -> None:
    async def scenario() -> None:
        async with served_session(project, [[{"text": "still here"}]]) as (_server, client):
            client.dispatch({"type": "session/somethingElse", "session": "copilot:/one"})
            client.start_turn("copilot:/nope", "x", "hello?")
            client.connection.notify("dispatchAction", "garbage")
            client.start_turn("copilot:/one", "t1", "hello")
            await client.wait_for_action("session/turnComplete", turnId="t1")
            assert {action["session"] for action in client.actions()} == {"copilot:/one"}

    run(scenario())


def test_sessions_share_one_fork_server(project: Project) -> None:
    project.add_extension("counter", COUNTER)

    async def scenario() -> None:
        server = served(project, [])
        client = await connect_in_process(server)
        try:
            await client.initialize()
            await client.create_session("copilot:/a", project.root)
            await client.create_session("copilot:/b", project.root)
            hosts = [session.host for session in server.sessions.values()]
            forks = {id(host._fork_server) for host in hosts}
            assert len(forks) == 1 and None not in {host._fork_server for host in hosts}
            assert all(info.status == "running" for host in hosts for info in host.extensions)
        finally:
            await client.close()
            await server.close()

    run(scenario())


def test_a_server_refuses_the_session_past_its_limit_naming_the_setting_and_takes_one_again_after_a_dispose(
    project: Project,
) -> None:
    async def scenario() -> None:
        script = write_script(project.home / "script.json", [])
        server = in_process_server(script, project.home, fork_server=False, max_sessions=2)
        client = await connect_in_process(server)
        try:
            await client.initialize()
            await client.create_session("copilot:/a", project.root)
            await client.create_session("copilot:/b", project.root)
            with pytest.raises(RpcError) as refused:
                await client.create_session("copilot:/c", project.root)
            assert refused.value.code == INVALID_REQUEST
            assert "at most 2 sessions" in refused.value.message
            assert "--max-sessions" in refused.value.message and "ServerOptions.max_sessions" in refused.value.message
            assert sorted(server.sessions) == ["copilot:/a", "copilot:/b"]
            await client.request("disposeSession", {"session": "copilot:/a"})
            await client.create_session("copilot:/c", project.root)
            assert sorted(server.sessions) == ["copilot:/b", "copilot:/c"]
        finally:
            await client.close()
            await server.close()

    run(scenario())


def test_a_server_given_no_limit_derives_it_from_the_memory_available_when_it_is_made(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    meminfo = project.home / "meminfo"
    meminfo.parent.mkdir(parents=True, exist_ok=True)
    meminfo.write_text(f"MemTotal: 99999999 kB\nMemAvailable: {45 * SESSION_MEMORY_BUDGET // 1024} kB\n")
    monkeypatch.setattr(capacity, "MEMINFO", meminfo)
    expected = sessions_for(45 * SESSION_MEMORY_BUDGET, open_file_limit())
    assert ProtocolServer(ServerOptions(hosts=HostOptions(project.home, fork_server=False))).max_sessions == expected
    given = ServerOptions(hosts=HostOptions(project.home, fork_server=False), max_sessions=3)
    assert ProtocolServer(given).max_sessions == 3


@pytest.mark.parametrize("value", [0, -2, True, 1.5])
def test_server_options_refuse_a_limit_that_is_not_a_whole_number_of_at_least_one(value: Any) -> None:
    with pytest.raises(ValueError, match=r"^ServerOptions\.max_sessions must be a whole number of at least 1"):
        ServerOptions(max_sessions=value)


def test_a_server_that_freezes_sessions_collects_a_disposed_sessions_host_at_once(project: Project) -> None:
    async def scenario() -> tuple[bool, bool]:
        script = write_script(project.home / "script.json", [])
        server = in_process_server(script, project.home, fork_server=False, freeze_sessions=True)
        client = await connect_in_process(server)
        try:
            await client.initialize()
            await client.create_session("copilot:/a", project.root)
            frozen = gc.get_freeze_count() > 0
            host = weakref.ref(server.sessions["copilot:/a"].host)
            await client.request("disposeSession", {"session": "copilot:/a"})
            return frozen, host() is None
        finally:
            await client.close()
            await server.close()
            gc.unfreeze()

    assert run(scenario()) == (True, True)


REJECTING_PROMPT_GUARD = """
    from sdk_extension import join_session

    def guard(input, invocation):
        if "secret" in input.prompt:
            raise ValueError("no secrets in prompts")

    join_session(hooks={"on_user_prompt_submitted": guard})
"""


def test_a_prompt_a_hook_rejects_starts_the_clients_turn_and_ends_it_with_the_hooks_reason(project: Project) -> None:
    project.add_extension("guard", REJECTING_PROMPT_GUARD)

    async def scenario() -> None:
        async with served_session(project, [[{"text": "fine"}]]) as (_server, client):
            client.start_turn("copilot:/one", "t1", "the secret is 42")
            error = await client.wait_for_action("session/error", turnId="t1")
            assert "no secrets in prompts" in error["error"]["message"]
            assert client.envelopes[0]["origin"] == {"clientId": "client-1", "clientSeq": 1}
            # The session is usable again: the next prompt runs.
            client.start_turn("copilot:/one", "t2", "hello")
            await client.wait_for_action("session/turnComplete", turnId="t2")

    run(scenario())


def test_a_cancelled_turn_ends_at_once_and_what_its_run_still_says_is_not_shown(project: Project) -> None:
    project.add_extension("counter", COUNTER)
    project.add_extension("guard", ASKING_GUARD)

    async def scenario() -> None:
        async with served_session(project, COUNT_THEN_ANSWER * 2) as (server, client):
            session = server.sessions["copilot:/one"]
            client.start_turn("copilot:/one", "t1", "count please")
            request = (await client.wait_for_action("session/permissionRequest"))["request"]
            with pytest.raises(RpcError) as other:
                cancel_other = {"type": "session/turnCancelled", "session": "copilot:/one", "turnId": "t9"}
                await client.request("dispatchAction", {"clientSeq": 5, "action": cancel_other})
            assert other.value.code == INVALID_PARAMS and "t9" in other.value.message
            client.dispatch({"type": "session/turnCancelled", "session": "copilot:/one", "turnId": "t1"})
            await client.wait_for_action("session/turnCancelled", turnId="t1")
            assert session.state["turns"][-1]["state"] == "cancelled"
            assert session.state["summary"]["status"] == "idle"
            seen = len(client.envelopes)
            # The run unwinds (its permission request is completed as cancelled, the call
            # rejected, the session idle again); none of it reaches the client.
            await session.host.wait_idle(30)
            assert request["requestId"] not in session.host.pending_permissions
            assert len(client.envelopes) == seen
            # The session takes the next prompt.
            client.start_turn("copilot:/one", "t2", "count again")
            await client.wait_for_action("session/permissionRequest", turnId="t2")

    run(scenario())


DEPLOYER = """
    from sdk_extension import command, join_session

    @command(description="Deploy the app")
    def deploy(context):
        return None

    join_session(commands=[deploy])
"""


def test_completions_and_resource_commands_are_answered_for_the_sessions_working_directory(
    project: Project,
) -> None:
    project.add_extension("deployer", DEPLOYER)
    (project.root / "notes.txt").write_text("hello", encoding="utf-8")
    outside = project.root.parent / "secret.txt"
    outside.write_text("no", encoding="utf-8")

    async def scenario() -> None:
        async with served_session(project, []) as (_server, client):
            slash = await client.request(
                "completions", {"kind": "userMessage", "session": "copilot:/one", "text": "/dep", "offset": 4}
            )
            assert [item["insertText"] for item in slash["items"]] == ["/deploy"]
            at = await client.request(
                "completions", {"kind": "userMessage", "session": "copilot:/one", "text": "see @not", "offset": 8}
            )
            assert [item["insertText"] for item in at["items"]] == ["@notes.txt"]
            read = await client.request("resourceRead", {"uri": (project.root / "notes.txt").as_uri()})
            assert read["data"] == "hello" and read["encoding"] == "utf-8"
            with pytest.raises(RpcError) as denied:
                await client.request("resourceRead", {"uri": outside.as_uri()})
            assert denied.value.code == PERMISSION_DENIED
            assert denied.value.data == {"request": {"uri": outside.as_uri(), "read": True}}
            with pytest.raises(RpcError) as unknown:
                await client.request(
                    "completions", {"kind": "userMessage", "session": "copilot:/x", "text": "", "offset": 0}
                )
            assert unknown.value.code == SESSION_NOT_FOUND

    run(scenario())


def test_completions_in_a_session_of_an_untrusted_project_walk_its_files_and_never_start_git(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TRUST_ENV)
    (project.root / "notes.txt").write_text("hello", encoding="utf-8")
    marker = project.home / "git-ran"
    recording_program(project.home / "bin" / "git", marker, "exit 0")
    monkeypatch.setenv("PATH", f"{project.home / 'bin'}:{os.environ['PATH']}")

    async def scenario() -> None:
        async with served_session(project, []) as (_server, client):
            at = await client.request(
                "completions", {"kind": "userMessage", "session": "copilot:/one", "text": "@not", "offset": 4}
            )
            assert [item["insertText"] for item in at["items"]] == ["@notes.txt"]

    run(scenario())
    assert not marker.exists()


def test_no_resource_command_replaces_the_working_directory_of_a_session_or_another_sessions(
    project: Project,
) -> None:
    (project.root / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    (project.root / "notes.txt").write_text("hello", encoding="utf-8")
    nested = project.root / "packages" / "app"
    nested.mkdir(parents=True)
    (nested / "main.py").write_text("print()", encoding="utf-8")

    async def scenario() -> None:
        async with served_session(project, []) as (_server, client):
            await client.create_session("copilot:/nested", nested)
            notes = (project.root / "notes.txt").as_uri()
            for destination in (project.root.as_uri(), nested.as_uri(), (project.root / "packages").as_uri()):
                with pytest.raises(RpcError) as refused:
                    await client.request(
                        "resourceMove", {"source": notes, "destination": destination, "recursive": True}
                    )
                assert refused.value.code == PERMISSION_DENIED, destination
                assert "which is never replaced" in refused.value.message

    run(scenario())
    assert (project.root / ".git" / "HEAD").read_text(encoding="utf-8") == "ref: refs/heads/main\n"
    assert (project.root / "notes.txt").exists() and (nested / "main.py").exists()


def test_a_session_forked_at_a_turn_holds_the_turns_up_to_it_and_goes_on_by_itself(project: Project) -> None:
    async def scenario() -> None:
        prompts = [[{"text": f"answer {n}"}] for n in range(3)]
        async with served_session(project, prompts) as (server, client):
            for turn in ("t1", "t2"):
                client.start_turn("copilot:/one", turn, f"question {turn}")
                await client.wait_for_action("session/turnComplete", turnId=turn)
            fork = {"session": "copilot:/one", "turnId": "t1"}
            await client.create_session("copilot:/fork", project.root, fork=fork)
            snapshot = (await client.request("subscribe", {"resource": "copilot:/fork"}))["snapshot"]
            [turn] = snapshot["state"]["turns"]
            assert turn["id"] == "t1" and turn["responseParts"][0]["content"] == "answer 0"
            forked = server.sessions["copilot:/fork"]
            assert forked.session_id != server.sessions["copilot:/one"].session_id
            assert [m.content for m in forked.host.model_context.messages] == ["question t1", "answer 0"]
            client.start_turn("copilot:/fork", "f1", "in the fork")
            await client.wait_for_action("session/turnComplete", turnId="f1")
            page = await client.request("fetchTurns", {"session": "copilot:/fork"})
            assert [t["id"] for t in page["turns"]] == ["t1", "f1"]
            page = await client.request("fetchTurns", {"session": "copilot:/one"})
            assert [t["id"] for t in page["turns"]] == ["t1", "t2"]
            with pytest.raises(RpcError) as unknown:
                await client.create_session(
                    "copilot:/bad", project.root, fork={"session": "copilot:/one", "turnId": "nope"}
                )
            assert unknown.value.code == INVALID_PARAMS and "nope" in unknown.value.message
            assert "copilot:/bad" not in server.sessions

    run(scenario())


def test_the_openai_provider_without_a_key_is_refused_saying_why(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "EXTENSION_HOST_MODEL"):
        monkeypatch.delenv(name, raising=False)

    async def scenario() -> None:
        server = served(project, [])
        client = await connect_in_process(server)
        try:
            await client.initialize()
            with pytest.raises(RpcError) as refused:
                await client.create_session("copilot:/ai", project.root, provider="openai", model={"id": "gpt-x"})
            assert refused.value.code == PROVIDER_NOT_FOUND and "openai" in refused.value.message
            assert "\n" not in refused.value.message
        finally:
            await client.close()
            await server.close()

    run(scenario())


LONG_OUTPUT = """
    from sdk_extension import join_session, tool

    @tool(description="Print a long file")
    def long_file() -> str:
        return "".join(f"line {n}\\n" for n in range(5000))

    join_session(tools=[long_file])
"""


def test_a_long_tool_result_is_offered_whole_by_reference_and_resource_read_returns_it(project: Project) -> None:
    project.add_extension("printer", LONG_OUTPUT)
    whole = "".join(f"line {n}\n" for n in range(5000))
    script: list[list[dict[str, Any]]] = [
        [{"text": "Reading.", "toolCalls": [{"name": "long_file", "arguments": {}}]}, {"text": "Read."}]
    ]

    async def scenario() -> None:
        async with served_session(project, script) as (_server, client):
            client.start_turn("copilot:/one", "turn-1", "Show me the file")
            await client.wait_for_action("session/turnComplete", turnId="turn-1")
            [complete] = client.actions("session/toolCallComplete")
            cut, reference = complete["result"]["content"]
            assert cut["type"] == "text" and "…[truncated:" in cut["text"]
            assert reference["type"] == "resource" and reference["sizeHint"] == len(whole)
            read = await client.request("resourceRead", {"uri": reference["uri"]})
            assert (read["data"], read["contentType"]) == (whole, "text/plain")
            turns = await client.request("fetchTurns", {"session": "copilot:/one"})
            [turn] = turns["turns"]
            [call] = [part["toolCall"] for part in turn["responseParts"] if part["kind"] == "toolCall"]
            assert call["content"][1]["uri"] == reference["uri"]

    run(scenario())


def titled(title: str, **extra: Any) -> dict[str, Any]:
    """A made-up action of the fake session."""
    return {"type": "session/titleChanged", "session": FakeSession.uri, "title": title, **extra}


def test_a_notification_one_client_cannot_be_sent_drops_that_client_alone_and_the_others_get_it(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    """One client's connection cannot carry an action (here it takes 4 KiB at most): that client
    is dropped, saying why on the server's stderr, and nothing else happens: the other client gets
    that action and the next, in order, and the server publishes on."""

    async def scenario() -> None:
        server = ProtocolServer(ServerOptions(hosts=HostOptions(project.home, fork_server=False)))
        small = await connect_in_process(
            server, "small", server_side=lambda reader, writer: Connection(reader, writer, max_outbound_bytes=4096)
        )
        other = await connect_in_process(server, "other")
        try:
            for client in (small, other):
                await client.initialize()
            for served in server.clients:
                served.subscriptions.add(FakeSession.uri)
            large = "x" * 8192
            server.publish(FakeSession(), titled(large), None)  # type: ignore[arg-type]
            server.publish(FakeSession(), titled("short"), None)  # type: ignore[arg-type]
            await other.wait_for(lambda: len(other.envelopes) == 2)
            assert [envelope["action"]["title"] for envelope in other.envelopes] == [large, "short"]
            await small.wait_closed()
            assert small.envelopes == []
            assert [served.client_id for served in server.clients] == ["other"]
        finally:
            await small.close()
            await other.close()
            await server.close()

    run(scenario())
    [line] = [line for line in capsys.readouterr().err.splitlines() if "dropped client" in line]
    assert line.startswith("extensions serve: dropped client small: the action notification could not be sent: ")
    assert "over the limit of 4096 bytes per message" in line


async def two_actions(client: ServeClient) -> list[dict[str, Any]]:
    """The first two actions ``client`` gets (bounded)."""
    await client.wait_for(lambda: len(client.envelopes) >= 2)
    return [envelope["action"] for envelope in client.envelopes[:2]]


def test_an_action_nested_deeper_than_a_client_reads_reaches_every_client_with_only_the_depth_marked(
    project: Project,
) -> None:
    """A client reads 100 levels in all, and an action travels inside an envelope inside a message:
    what lies deeper is marked before the action is numbered, so both clients read it and the next,
    instead of losing their connection to a message they must refuse."""
    deep: Any = "bottom"
    for _ in range(150):
        deep = [deep]

    async def scenario() -> None:
        server = ProtocolServer(ServerOptions(hosts=HostOptions(project.home, fork_server=False)))
        clients = [await connect_in_process(server, name) for name in ("one", "two")]
        try:
            for client in clients:
                await client.initialize()
            for served in server.clients:
                served.subscriptions.add(FakeSession.uri)
            server.publish(FakeSession(), titled("deep", extra=deep), None)  # type: ignore[arg-type]
            server.publish(FakeSession(), titled("next"), None)  # type: ignore[arg-type]
            for client in clients:
                first, second = await two_actions(client)
                assert (first["title"], second["title"]) == ("deep", "next")
                levels, value = 0, first["extra"]
                while isinstance(value, list):
                    levels, value = levels + 1, value[0]
                assert value == "…[truncated: nested too deep]"
                assert levels == MAX_ACTION_DEPTH - 1  # the action itself is the first level
                assert not client.closed
        finally:
            for client in clients:
                await client.close()
            await server.close()

    run(scenario())


def test_a_session_created_with_custom_agents_delegates_and_the_client_sees_the_childs_tool_calls_in_the_turn(
    project: Project,
) -> None:
    """The scripted agent answers the child's run too: prompt 1 is the parent's ``task`` call,
    prompt 2 the child's steps, whose last answer the parent's next step also reads."""
    project.add_extension("counter", COUNTER)
    task = {"name": "c", "description": "count", "prompt": "count one two", "agent_type": "counter-agent"}
    prompts: list[list[dict[str, Any]]] = [
        [{"text": "", "toolCalls": [{"name": "task", "arguments": task}]}, {"text": "unused"}],
        [{"text": "", "toolCalls": [{"name": "count", "arguments": {"text": "one two"}}]}, {"text": "Two words."}],
    ]
    agents = [{"name": "counter-agent", "prompt": "You count.", "tools": ["count"], "description": "Counts words"}]

    async def scenario() -> None:
        server = served(project, prompts)
        client = await connect_in_process(server)
        try:
            await client.initialize()
            with pytest.raises(RpcError) as bad:
                await client.create_session("copilot:/bad", project.root, customAgents=[{"name": "x y", "prompt": "p"}])
            assert bad.value.code == INVALID_PARAMS and "customAgents[0].name" in bad.value.message
            await client.create_session("copilot:/one", project.root, customAgents=agents)
            await client.request("subscribe", {"resource": "copilot:/one"})
            client.start_turn("copilot:/one", "turn-1", "Delegate the count")
            await client.wait_for_action("session/turnComplete", turnId="turn-1")
            kinds = [action["type"] for action in client.actions()]
            assert kinds.count("session/turnStarted") == kinds.count("session/turnComplete") == 1
            starts = client.actions("session/toolCallStart")
            assert [(a["toolName"], a["displayName"]) for a in starts] == [
                ("task", "task"),
                ("count", "count (counter-agent)"),
            ]
            child, parent = client.actions("session/toolCallComplete")
            assert child["toolCallId"] == starts[1]["toolCallId"]
            assert child["result"]["content"] == [{"type": "text", "text": "2"}]
            assert parent["result"]["content"] == [{"type": "text", "text": "Two words."}]
            markdown = [a for a in client.actions("session/responsePart") if a["part"]["kind"] == "markdown"]
            assert len(markdown) == 1  # the parent's answer; the child's is the task call's result
            host = server.sessions["copilot:/one"].host
            assert list(host.custom_agents) == ["counter-agent"]
            started = [e for e in host.events.history() if e["type"] == "subagent.started"]
            assert len(started) == 1 and started[0]["data"]["agentName"] == "counter-agent"
        finally:
            await client.close()
            await server.close()

    run(scenario())
