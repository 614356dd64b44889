"""Turns of a host whose agent is the Chat Completions agent, with a real extension's tool and
hook, against a loopback endpoint."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chat_server import Answer, ChatServer, Reply, Status
from extension_host import TurnAbortedError
from extension_host.agents import OpenAIChatAgent
from extension_protocol.protocol import Event
from helpers import Project, run

pytestmark = pytest.mark.subprocess

WORDS = """
import json
from sdk_extension import join_session, tool

@tool(name="count_words", description="Count the words of a text.")
def count_words(text: str) -> str:
    return f"{len(text.split())} words"

@tool(description="The session's usage metrics and models, as session.rpc answers them")
def metrics() -> str:
    return json.dumps(
        {"usage": session.rpc("session.usage.getMetrics"), "models": session.rpc("session.model.list")}
    )

def pre(input, invocation):
    if input.tool_name == "count_words":
        return {"additional_context": "words are split on spaces"}

session = join_session(tools=[count_words, metrics], hooks={"on_pre_tool_use": pre})
"""


def test_a_turn_streams_calls_the_extensions_tool_through_its_hook_and_reports_usage(project: Project) -> None:
    project.add_extension("words", WORDS)
    script = [
        Answer("Let me count.", [("count_words", {"text": "a b c"})], usage=(50, 9)),
        Answer("Three words.", pieces=["Three ", "words."], usage=(80, 4)),
    ]

    async def scenario(server: ChatServer) -> None:
        agent = OpenAIChatAgent("test-model", base_url=server.base_url, environ={})
        events: list[Event] = []
        async with project.host(agent=agent) as host:
            host.on_event(events.append)
            reply = await host.send_and_wait("how many words are in 'a b c'?", timeout=30)
            assert reply is not None
            assert reply["data"]["content"] == "Three words."
            answered = json.loads((await host.call_tool("metrics", {})).text_result_for_llm)
            metrics, models = answered["usage"], answered["models"]["models"]
            persisted = [event["type"] for event in host.replay()]
        await agent.close()

        messages = [e for e in events if e["type"] == "assistant.message"]
        for message in messages:
            deltas = [
                e
                for e in events
                if e["type"] == "assistant.message_delta" and e["data"]["messageId"] == message["data"]["messageId"]
            ]
            assert "".join(d["data"]["deltaContent"] for d in deltas) == message["data"]["content"]
            assert all(d["ephemeral"] for d in deltas)
        assert [e["data"]["deltaContent"] for e in events if e["type"] == "assistant.message_delta"][-2:] == [
            "Three ",
            "words.",
        ]
        usages = [e["data"] for e in events if e["type"] == "assistant.usage"]
        assert [(u["model"], u["inputTokens"], u["outputTokens"]) for u in usages] == [
            ("test-model", 50, 9),
            ("test-model", 80, 4),
        ]
        (complete,) = [
            e["data"]
            for e in events
            if e["type"] == "tool.execution_complete" and e["data"]["toolName"] == "count_words"
        ]
        assert complete["result"]["content"] == "3 words"
        assert [e["data"]["hook"] for e in events if e["type"] == "hook.end"][:1] == ["on_pre_tool_use"]
        assert "assistant.message_delta" not in persisted and "assistant.usage" not in persisted

        (call_id,) = [r["toolCallId"] for r in messages[0]["data"]["toolRequests"]]
        second = server.requests[1]["messages"]
        assert second[-3]["tool_calls"][0]["id"] == call_id
        assert second[-2] == {"role": "tool", "tool_call_id": call_id, "content": "3 words"}
        assert second[-1] == {"role": "user", "content": "words are split on spaces"}
        offered = {tool["function"]["name"]: tool["function"] for tool in server.requests[0]["tools"]}
        assert offered["count_words"]["parameters"]["properties"]["text"]["type"] == "string"

        assert metrics["totalUserRequests"] == 1
        usage = metrics["modelMetrics"]["test-model"]["usage"]
        assert (usage["inputTokens"], usage["outputTokens"]) == (130, 13)
        assert metrics["lastCallInputTokens"] == 80
        assert models == [{"id": "test-model", "name": "test-model", "capabilities": {}}]

    with ChatServer(script) as server:
        run(scenario(server))


def test_an_endpoint_failure_ends_the_run_with_one_line_and_the_session_goes_on(project: Project) -> None:
    script: list[Reply] = [Status(401, {"error": {"message": "invalid key"}}), Answer("fine now")]

    async def scenario(server: ChatServer) -> list[dict[str, Any]]:
        agent = OpenAIChatAgent("test-model", base_url=server.base_url, environ={})
        async with project.host(agent=agent) as host:
            with pytest.raises(TurnAbortedError) as raised:
                await host.send_and_wait("hello", timeout=30)
            assert str(raised.value) == (
                f"the agent failed: the model endpoint {server.base_url} refused the API key (401: invalid key); "
                "set OPENAI_API_KEY to a key it accepts"
            )
            reply = await host.send_and_wait("hello again", timeout=30)
            assert reply is not None and reply["data"]["content"] == "fine now"
            errors = [e["data"] for e in host.events.history("session.error")]
        await agent.close()
        return errors

    with ChatServer(script) as server:
        (error,) = run(scenario(server))
    assert error["errorType"] == "agent"
    assert "\n" not in error["message"]
