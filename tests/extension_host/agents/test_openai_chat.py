"""The Chat Completions agent against a real HTTP endpoint on loopback (tests/chat_server.py)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from typing import Any

import pytest

from chat_server import Answer, ChatServer, Hold, Reply, Status
from extension_host.agents import AgentSetupError, ModelEndpointError, OpenAIChatAgent
from extension_host.agents.openai_chat import MAX_RETRIES
from extension_host.session.agents import AgentReply, AgentRequest, OfferedTool, agent_select_model, agent_with_model
from extension_host.session.model_context import ContextMessage, ToolCall
from helpers import run

COUNT = OfferedTool("count", "Count lines", {"type": "object", "properties": {"path": {"type": "string"}}})


def request(step: int = 0, tools: tuple[OfferedTool, ...] = (COUNT,), deltas: list[str] | None = None) -> AgentRequest:
    on_delta = deltas.append if deltas is not None else None
    return AgentRequest([ContextMessage("user", "count README")], tools, "prompt-1", step, "message-1", on_delta)


def agent_for(server: ChatServer, **options: Any) -> OpenAIChatAgent:
    options.setdefault("retry_delay", 0.01)
    return OpenAIChatAgent(options.pop("model", "test-model"), base_url=server.base_url, environ={}, **options)


def endpoint_error(server: ChatServer, tools: tuple[OfferedTool, ...] = (COUNT,), **options: Any) -> ModelEndpointError:
    """The error the agent's request ends with."""
    try:
        run(respond(agent_for(server, **options), request(tools=tools)))
    except ModelEndpointError as exc:
        return exc
    raise AssertionError("the request did not fail")


async def respond(agent: OpenAIChatAgent, *requests: AgentRequest) -> list[AgentReply]:
    try:
        return [await agent.respond(each) for each in requests]
    finally:
        await agent.close()


def test_a_streamed_answer_hands_each_piece_to_on_delta_and_returns_the_whole_text() -> None:
    deltas: list[str] = []
    with ChatServer([Answer("Hello there", pieces=["Hel", "lo ", "there"], usage=(40, 3))]) as server:
        (reply,) = run(respond(agent_for(server), request(deltas=deltas)))
    assert deltas == ["Hel", "lo ", "there"]
    assert reply.text == "Hello there"
    assert reply.model == "test-model"
    assert reply.usage is not None
    assert (reply.usage["inputTokens"], reply.usage["outputTokens"], reply.usage["finishReason"]) == (40, 3, "stop")
    sent = server.requests[0]
    assert sent["stream"] is True
    assert sent["stream_options"] == {"include_usage": True}
    assert sent["messages"] == [{"role": "user", "content": "count README"}]
    assert sent["tools"][0]["function"]["name"] == "count"


@pytest.mark.parametrize("stream", [True, False])
def test_a_tool_call_comes_back_with_its_parsed_arguments(stream: bool) -> None:
    with ChatServer([Answer("Counting.", [("count", {"path": "README.md"})])]) as server:
        (reply,) = run(respond(agent_for(server, stream=stream), request()))
    assert reply.text == "Counting."
    assert reply.tool_calls == (ToolCall("count", {"path": "README.md"}),)
    assert server.requests[0].get("stream", False) is stream


def test_no_tools_are_sent_when_none_are_offered() -> None:
    with ChatServer([Answer("hi")]) as server:
        run(respond(agent_for(server), request(tools=())))
    assert "tools" not in server.requests[0]


@pytest.mark.parametrize("status", [429, 500, 502, 503])
def test_a_rate_limit_or_server_error_is_tried_again(status: int) -> None:
    script: list[Reply] = [Status(status), Status(status, headers=(("retry-after", "0"),)), Answer("at last")]
    notices: list[str] = []
    with ChatServer(script) as server:
        (reply,) = run(respond(agent_for(server, on_retry=notices.append), request()))
    assert reply.text == "at last"
    assert len(server.requests) == 3
    assert notices == [
        f"the model endpoint answered {status}; trying again in 0.01 s (retry 1 of {MAX_RETRIES})",
        f"the model endpoint answered {status}; trying again in 0 s (retry 2 of {MAX_RETRIES})",
    ]


def test_retries_are_bounded_and_the_error_says_how_many_were_made() -> None:
    with ChatServer([Status(429)] * (MAX_RETRIES + 2)) as server, pytest.raises(ModelEndpointError) as raised:
        run(respond(agent_for(server), request()))
    assert len(server.requests) == MAX_RETRIES + 1
    assert str(raised.value) == (
        f"the model endpoint {server.base_url} is rate limiting (429: scripted error), "
        f"still after {MAX_RETRIES} retries; try again later"
    )
    assert raised.value.status == 429


def test_a_client_error_is_not_tried_again() -> None:
    with ChatServer([Status(400, {"error": {"message": "bad temperature"}}), Answer("never")]) as server:
        error = endpoint_error(server, tools=())
    assert str(error).endswith("refused the request (400: bad temperature)")
    assert len(server.requests) == 1


def test_a_wrong_url_is_one_line_naming_it_and_what_to_check() -> None:
    with ChatServer([]) as server:
        url = server.base_url
    agent = OpenAIChatAgent("m", base_url=url, environ={})  # the server is gone: nothing listens there
    with pytest.raises(ModelEndpointError) as raised:
        run(respond(agent, request()))
    message = str(raised.value)
    assert message.startswith(f"cannot reach the model endpoint {url} (")
    assert message.endswith("check --base-url or OPENAI_BASE_URL, and that the server is running")
    assert "\n" not in message


def test_a_refused_key_names_the_variable() -> None:
    with ChatServer([Status(401, {"error": {"message": "Incorrect API key provided"}})]) as server:
        error = endpoint_error(server)
    assert str(error) == (
        f"the model endpoint {server.base_url} refused the API key (401: Incorrect API key provided); "
        "set OPENAI_API_KEY to a key it accepts"
    )


def test_a_model_without_tool_calling_is_named() -> None:
    ollama = Status(400, {"error": "registry.ollama.ai/library/gemma:2b does not support tools"})
    with ChatServer([ollama]) as server, pytest.raises(ModelEndpointError) as raised:
        run(respond(agent_for(server, model="gemma:2b"), request()))
    assert str(raised.value) == (
        f"model 'gemma:2b' at {server.base_url} does not support tool calling "
        "(400: registry.ollama.ai/library/gemma:2b does not support tools); choose a model that does (--model)"
    )


def test_an_unknown_model_says_to_check_the_model_and_the_base_url() -> None:
    with ChatServer([Status(404, {"error": {"message": "model 'nope' not found"}})]) as server:
        error = endpoint_error(server, tools=(), model="nope")
    assert str(error) == (
        f"{server.base_url} has no model 'nope', or is not a Chat Completions endpoint (404: model 'nope' not found); "
        "check --model, and that the base URL ends with the API's version, such as /v1"
    )


def test_prepare_chooses_the_endpoints_only_model() -> None:
    async def scenario(server: ChatServer) -> OpenAIChatAgent:
        agent = OpenAIChatAgent(base_url=server.base_url, environ={})
        await agent.prepare()
        await agent.close()
        return agent

    with ChatServer([], models=["only-one"]) as server:
        agent = run(scenario(server))
    assert agent.model == "only-one"
    assert agent.models() == [{"id": "only-one", "name": "only-one", "capabilities": {}}]


def test_prepare_without_a_model_lists_what_the_endpoint_offers() -> None:
    async def scenario(server: ChatServer) -> None:
        agent = OpenAIChatAgent(base_url=server.base_url, environ={})
        try:
            await agent.prepare()
        finally:
            await agent.close()

    with ChatServer([], models=["a", "b"]) as server, pytest.raises(AgentSetupError) as raised:
        run(scenario(server))
    assert (
        str(raised.value)
        == f"no model chosen for {server.base_url}: pass --model or set OPENAI_MODEL (it offers: a, b)"
    )


def test_select_model_names_the_new_model_in_later_requests_and_refuses_one_not_offered() -> None:
    async def scenario(server: ChatServer) -> None:
        agent = agent_for(server, model="a")
        await agent.prepare()
        assert agent_select_model(agent, "b")
        with pytest.raises(ValueError, match=r"model 'c' is not offered by"):
            agent.select_model("c")
        await respond(agent, request(tools=()))

    with ChatServer([Answer("from b")], models=["a", "b"]) as server:
        run(scenario(server))
    assert server.requests[0]["model"] == "b"


def test_with_model_is_a_copy_naming_another_model_while_the_original_keeps_its_own() -> None:
    async def scenario(server: ChatServer) -> None:
        agent = agent_for(server, model="a")
        await agent.prepare()
        assert isinstance(agent_with_model(agent, "b"), OpenAIChatAgent)
        child = agent.with_model("b")
        assert child is not agent
        with pytest.raises(ValueError, match=r"model 'c' is not offered by"):
            agent.with_model("c")
        await respond(child, request(tools=()))
        await respond(agent, request(tools=()))

    with ChatServer([Answer("from b"), Answer("from a")], models=["a", "b"]) as server:
        run(scenario(server))
    assert [sent["model"] for sent in server.requests] == ["b", "a"]


def test_usage_sums_every_call_as_the_sdks_metrics() -> None:
    with ChatServer([Answer("", [("count", {})], usage=(10, 2)), Answer("done", usage=(30, 5))]) as server:
        agent = agent_for(server)
        run(respond(agent, request(0), request(1)))
    metrics = agent.usage()
    assert metrics["totalUserRequests"] == 1
    assert metrics["currentModel"] == "test-model"
    assert metrics["modelMetrics"]["test-model"]["requests"] == {"count": 2, "cost": 0}
    usage = metrics["modelMetrics"]["test-model"]["usage"]
    assert (usage["inputTokens"], usage["outputTokens"]) == (40, 7)
    assert (metrics["lastCallInputTokens"], metrics["lastCallOutputTokens"]) == (30, 5)


def test_a_cancelled_step_closes_its_request() -> None:
    released = threading.Event()
    hold = Hold(released)

    async def scenario(server: ChatServer) -> None:
        agent = agent_for(server)
        step = asyncio.ensure_future(agent.respond(request()))
        await asyncio.to_thread(hold.arrived.wait, 10)
        step.cancel()
        with pytest.raises(asyncio.CancelledError):
            await step
        await agent.close()

    with ChatServer([hold]) as server:
        run(scenario(server))
        released.set()


def test_without_the_openai_package_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(AgentSetupError) as raised:
        OpenAIChatAgent("m", base_url="http://127.0.0.1:1/v1", environ={})
    assert str(raised.value) == (
        "the OpenAI-compatible agent needs the openai package: pip install 'extension-host[openai]'"
    )


@pytest.mark.subprocess
def test_the_host_and_the_cli_never_import_the_openai_package() -> None:
    code = (
        "import sys, extension_host, extension_host.agents, extension_host.frontends.cli; "
        "print('openai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "False"
