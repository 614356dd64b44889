"""The ACP agent with the official Python SDK's client, in this process: a turn with an extension's
tool, a hook's deny, an ``ask`` the client answers, cancel, load, slash commands; every message the
agent sends checked against the SDK's schema."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from acp import RequestError, text_block

from acp_client import RecordingClient, in_process, updates_of
from extension_host.acp.server import AcpOptions, AcpServer
from extension_host.session.agents import AgentReply, ScriptedAgent
from extension_host.session.model_context import ToolCall
from helpers import Project, run

pytestmark = pytest.mark.subprocess

WORDS = """
import time
from sdk_extension import command, join_session, tool

@tool(name="count_words", description="Count the words of a text.")
def count_words(text: str) -> str:
    if text == "slow":
        time.sleep(30)
    return f"{len(text.split())} words"

@command
def shout(context):
    \"\"\"Shout the arguments.\"\"\"
    session.log(context.args.upper())

def pre(input, invocation):
    if "secret" in str(input.tool_args):
        return {"permission_decision": "ask", "permission_decision_reason": "it mentions a secret"}
    if "bad" in str(input.tool_args):
        return {"permission_decision": "deny", "permission_decision_reason": "bad words"}

session = join_session(tools=[count_words], commands=[shout], hooks={"on_pre_tool_use": pre})
"""


def _count(text: str, then: str = "Done.") -> list[AgentReply]:
    return [AgentReply("", (ToolCall("count_words", {"text": text}),)), AgentReply(then)]


def _server(project: Project, *prompts: list[AgentReply]) -> AcpServer:
    async def make() -> ScriptedAgent:
        return ScriptedAgent(list(prompts))

    return AcpServer(AcpOptions(make, project.home, fork_server=False, watch=False))


async def _session(sdk: Any, project: Project) -> str:
    await sdk.initialize(protocol_version=1)
    return str((await sdk.new_session(cwd=str(project.root), mcp_servers=[])).session_id)


@pytest.fixture
def words(project: Project, monkeypatch: pytest.MonkeyPatch) -> Project:
    project.add_extension("words", WORDS)
    monkeypatch.setenv("EXTENSION_HOST_TRUST_PROJECT", "1")
    return project


def test_a_turn_streams_the_reply_and_the_tool_call_from_pending_to_completed_with_its_result(words: Project) -> None:
    client = RecordingClient()

    async def scenario() -> tuple[Any, Any]:
        async with in_process(_server(words, _count("a b c", "Three words.")), client) as sdk:
            initialized = await sdk.initialize(protocol_version=1)
            session_id = await _session(sdk, words)
            return initialized, await sdk.prompt(session_id=session_id, prompt=[text_block("count a b c")])

    initialized, answer = run(scenario())
    assert answer.stop_reason == "end_turn"
    assert initialized.agent_capabilities.load_session is True
    assert initialized.auth_methods == []
    (announced,) = updates_of(client, "available_commands_update")
    assert [command["name"] for command in announced["availableCommands"]] == ["shout"]
    (started,) = updates_of(client, "tool_call")
    assert started | {"toolCallId": "id"} == {
        "sessionUpdate": "tool_call",
        "toolCallId": "id",
        "title": "count_words",
        "kind": "other",
        "status": "pending",
        "rawInput": {"text": "a b c"},
    }
    running, completed = updates_of(client, "tool_call_update")
    assert running["status"] == "in_progress"
    assert completed["toolCallId"] == started["toolCallId"]
    assert completed["status"] == "completed"
    assert completed["content"] == [{"type": "content", "content": {"type": "text", "text": "3 words"}}]
    assert [u["content"]["text"] for u in updates_of(client, "agent_message_chunk")] == ["Three words."]
    assert client.schema_errors == []


def test_a_hooks_deny_fails_the_tool_call_with_the_hooks_reason(words: Project) -> None:
    client = RecordingClient()

    async def scenario() -> Any:
        async with in_process(_server(words, _count("bad")), client) as sdk:
            return await sdk.prompt(session_id=await _session(sdk, words), prompt=[text_block("go")])

    assert run(scenario()).stop_reason == "end_turn"
    completed = updates_of(client, "tool_call_update")[-1]
    assert completed["status"] == "failed"
    assert completed["content"][0]["content"]["text"] == "Denied by preToolUse hook: bad words"
    assert client.permissions == []
    assert client.schema_errors == []


@pytest.mark.parametrize(("answer", "status", "text"), [("allow_once", "completed", "2 words"), ("reject_once", "failed", None)])
def test_a_hooks_ask_is_a_permission_request_the_clients_answer_decides(
    words: Project, answer: str, status: str, text: str | None
) -> None:
    client = RecordingClient(answer=answer)

    async def scenario() -> Any:
        async with in_process(_server(words, _count("my secret")), client) as sdk:
            return await sdk.prompt(session_id=await _session(sdk, words), prompt=[text_block("go")])

    assert run(scenario()).stop_reason == "end_turn"
    (asked,) = client.permissions
    assert asked["options"] == ["allow_once", "reject_once"]
    assert asked["toolCall"]["title"] == "count_words"
    assert asked["toolCall"]["rawInput"] == {"text": "my secret"}
    assert asked["toolCall"]["content"][0]["content"]["text"] == "it mentions a secret"
    completed = updates_of(client, "tool_call_update")[-1]
    assert completed["status"] == status
    if text is not None:
        assert completed["content"][0]["content"]["text"] == text
    assert client.schema_errors == []


def test_cancel_during_a_tool_call_ends_the_prompt_with_stop_reason_cancelled(words: Project) -> None:
    client = RecordingClient()

    async def scenario() -> Any:
        async with in_process(_server(words, _count("slow")), client) as sdk:
            session_id = await _session(sdk, words)
            prompt = asyncio.ensure_future(sdk.prompt(session_id=session_id, prompt=[text_block("go")]))
            async with asyncio.timeout(20):
                while not any(u.get("status") == "in_progress" for u in client.updates):
                    await asyncio.sleep(0.01)
            await sdk.cancel(session_id=session_id)
            async with asyncio.timeout(20):
                return await prompt

    assert run(scenario()).stop_reason == "cancelled"
    assert updates_of(client, "tool_call_update")[-1]["status"] == "failed"
    assert client.schema_errors == []


def test_loading_a_persisted_session_replays_its_history_as_updates(words: Project) -> None:
    first, second = RecordingClient(), RecordingClient()

    async def scenario() -> str:
        async with in_process(_server(words, _count("a b c", "Three.")), first) as sdk:
            session_id = await _session(sdk, words)
            await sdk.prompt(session_id=session_id, prompt=[text_block("count a b c")])
        async with in_process(_server(words), second) as sdk:
            await sdk.initialize(protocol_version=1)
            await sdk.load_session(cwd=str(words.root), session_id=session_id, mcp_servers=[])
            with pytest.raises(RequestError, match="open already"):
                await sdk.load_session(cwd=str(words.root), session_id=session_id, mcp_servers=[])
        return session_id

    run(scenario())
    kinds = [update["sessionUpdate"] for update in second.updates]
    assert kinds[:5] == ["user_message_chunk", "tool_call", "tool_call_update", "tool_call_update", "agent_message_chunk"]
    assert second.updates[0]["content"]["text"] == "count a b c"
    assert second.updates[3]["content"][0]["content"]["text"] == "3 words"
    assert second.updates[4]["content"]["text"] == "Three."
    assert second.schema_errors == []


def test_a_slash_command_in_the_prompt_runs_the_extensions_command(words: Project) -> None:
    client = RecordingClient()

    async def scenario() -> Any:
        async with in_process(_server(words), client) as sdk:
            return await sdk.prompt(session_id=await _session(sdk, words), prompt=[text_block("/shout hello")])

    assert run(scenario()).stop_reason == "end_turn"
    assert updates_of(client, "agent_message_chunk")[-1]["content"]["text"] == "/shout: done"


def test_requests_before_initialize_and_for_unknown_sessions_are_one_error_naming_the_fault(words: Project) -> None:
    client = RecordingClient()

    async def scenario() -> list[str]:
        errors = []
        async with in_process(_server(words), client) as sdk:
            with pytest.raises(RequestError) as early:
                await sdk.new_session(cwd=str(words.root), mcp_servers=[])
            errors.append(str(early.value))
            await sdk.initialize(protocol_version=1)
            with pytest.raises(RequestError) as unknown:
                await sdk.prompt(session_id="no-such-session", prompt=[text_block("hi")])
            errors.append(str(unknown.value))
            with pytest.raises(RequestError) as nowhere:
                await sdk.new_session(cwd=str(words.root / "missing"), mcp_servers=[])
            errors.append(str(nowhere.value))
        return errors

    early, unknown, nowhere = run(scenario())
    assert "call initialize first" in early
    assert "no session no-such-session here" in unknown
    assert "is not a folder" in nowhere
