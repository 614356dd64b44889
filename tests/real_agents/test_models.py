"""The scripted model APIs over real HTTP: a turn is chosen by the conversation a request carries,
and a subagent's conversation, told by a marker in its system prompt, by its own script."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest

from real_agents.models import (
    LAST_WORDS,
    SIDE_ANSWER,
    AnthropicModel,
    Call,
    ChatCompletionsModel,
    GeminiModel,
    Say,
    ScriptedModel,
    Turn,
)

TOOL = {"name": "probe"}


def anthropic(system: str, answers: int, tools: bool) -> tuple[str, dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for _ in range(answers):
        messages += [{"role": "assistant", "content": "x"}, {"role": "user", "content": "more"}]
    body = {"model": "m", "system": [{"type": "text", "text": system}], "messages": messages}
    return "/v1/messages", {**body, "tools": [{**TOOL, "input_schema": {}}]} if tools else body


def gemini(system: str, answers: int, tools: bool) -> tuple[str, dict[str, Any]]:
    contents: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": "go"}]}]
    for _ in range(answers):
        contents += [{"role": "model", "parts": [{"text": "x"}]}, {"role": "user", "parts": [{"text": "more"}]}]
    body = {"systemInstruction": {"role": "user", "parts": [{"text": system}]}, "contents": contents}
    return "/v1beta/models/m:generateContent", {**body, "tools": [{"functionDeclarations": [TOOL]}]} if tools else body


def chat(system: str, answers: int, tools: bool) -> tuple[str, dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": "go"}]
    for _ in range(answers):
        messages += [{"role": "assistant", "content": "x"}, {"role": "user", "content": "more"}]
    body = {"model": "m", "messages": messages}
    return "/v1/chat/completions", {**body, "tools": [{"type": "function", "function": TOOL}]} if tools else body


def anthropic_answer(reply: dict[str, Any]) -> str:
    (block,) = reply["content"]
    return str(block["name"] if block["type"] == "tool_use" else block["text"])


def gemini_answer(reply: dict[str, Any]) -> str:
    (part,) = reply["candidates"][0]["content"]["parts"]
    return str(part["functionCall"]["name"] if "functionCall" in part else part["text"])


def chat_answer(reply: dict[str, Any]) -> str:
    message = reply["choices"][0]["message"]
    calls = message.get("tool_calls")
    return str(calls[0]["function"]["name"] if calls else message["content"])


Body = Callable[[str, int, bool], tuple[str, dict[str, Any]]]
Answer = Callable[[dict[str, Any]], str]
APIS: dict[str, tuple[type[ScriptedModel], Body, Answer]] = {
    "anthropic": (AnthropicModel, anthropic, anthropic_answer),
    "gemini": (GeminiModel, gemini, gemini_answer),
    "chat-completions": (ChatCompletionsModel, chat, chat_answer),
}


class Client:
    """Requests to one scripted model, in one API's shape."""

    def __init__(self, model: ScriptedModel, body: Body, answer: Answer) -> None:
        self.model, self.body, self.answer = model, body, answer

    def ask(self, system: str, answers: int = 0, tools: bool = True) -> str:
        path, body = self.body(system, answers, tools)
        request = urllib.request.Request(
            self.model.origin + path, json.dumps(body).encode(), {"content-type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return self.answer(json.loads(response.read()))


def client(api: str, script: list[Turn], agents: dict[str, list[Turn]] | None = None) -> tuple[ScriptedModel, Client]:
    model_api, body, answer = APIS[api]
    model = model_api(script, agents) if agents is not None else model_api(script)
    return model, Client(model, body, answer)


PARENT: list[Turn] = [Call("task"), Say("parent done")]
CHILD: list[Turn] = [Call("child_tool"), Say("child answer")]


@pytest.mark.parametrize("api", APIS)
def test_a_request_holding_a_subagents_marker_is_answered_from_its_script_counted_in_its_conversation(
    api: str,
) -> None:
    model, ask = client(api, PARENT, {"MARK-CHILD": CHILD, "MARK-OTHER": [Say("other")]})
    with model:
        assert ask.ask("You are the main agent.") == "task"
        assert ask.ask("You are MARK-CHILD, a reviewer.") == "child_tool"
        assert ask.ask("You are MARK-CHILD, a reviewer.", answers=1) == "child answer"
        assert ask.ask("You are MARK-CHILD, a reviewer.", answers=2) == LAST_WORDS
        assert ask.ask("MARK-OTHER") == "other"
        assert ask.ask("You are the main agent.", answers=1) == "parent done"
    assert len(model.conversation_requests()) == 2
    assert len(model.conversation_requests("MARK-CHILD")) == 3
    assert len(model.conversation_requests("MARK-OTHER")) == 1


@pytest.mark.parametrize("api", APIS)
def test_a_childs_request_is_a_turn_even_when_it_offers_no_tools_and_a_parents_is_a_side_request(api: str) -> None:
    model, ask = client(api, PARENT, {"MARK-CHILD": [Say("child answer")]})
    with model:
        assert ask.ask("MARK-CHILD", tools=False) == "child answer"
        assert ask.ask("main", tools=False) == SIDE_ANSWER
    assert model.conversation_requests() == []
    assert len(model.conversation_requests("MARK-CHILD")) == 1


@pytest.mark.parametrize("api", APIS)
def test_without_agents_every_request_is_answered_from_the_one_script_by_its_answers(api: str) -> None:
    model, ask = client(api, PARENT)
    with model:
        assert ask.ask("MARK-CHILD") == "task"
        assert ask.ask("anything", answers=1) == "parent done"
        assert ask.ask("main", tools=False) == SIDE_ANSWER
    assert len(model.conversation_requests()) == 2


def test_a_childs_before_runs_once_for_its_turn_and_not_for_the_parents_turn_of_the_same_number() -> None:
    ran: list[str] = []
    model, ask = client(
        "chat-completions",
        [Say("parent", before=lambda: ran.append("parent"))],
        {"MARK": [Say("child", before=lambda: ran.append("child"))]},
    )
    with model:
        for _ in range(2):
            ask.ask("MARK")
            ask.ask("main")
    assert ran == ["child", "parent"]
