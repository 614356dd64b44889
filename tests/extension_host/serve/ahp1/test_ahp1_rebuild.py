"""A 1.0 view made from a session's seed state equals the view that translated the session's
actions live, for each way a tool call and a turn can end, and in the middle of a turn
(chat URIs and timestamps aside)."""

from __future__ import annotations

from typing import Any

import pytest
from serve_client import ahp1_plain

from extension_host.serve.ahp1.actions import ChatView
from extension_host.serve.ahp1.rebuild import requests_in, view_of
from extension_host.serve.state import initial_state, reduce

S = "copilot:/rebuilt"
Action = dict[str, Any]


def _base(turn: str) -> dict[str, Any]:
    return {"session": S, "turnId": turn}


def started(turn: str, text: str = "go") -> Action:
    return {"type": "session/turnStarted", **_base(turn), "userMessage": {"text": text}}


def streamed(turn: str, part: str, *texts: str) -> list[Action]:
    opened = {"type": "session/responsePart", **_base(turn), "part": {"kind": "markdown", "id": part, "content": ""}}
    return [opened, *({"type": "session/delta", **_base(turn), "partId": part, "content": text} for text in texts)]


def call_started(turn: str, call: str) -> Action:
    shown = {"toolCallId": call, "toolName": "count", "displayName": "count"}
    return {"type": "session/toolCallStart", **_base(turn), **shown}


def asked(turn: str, call: str, request: str) -> Action:
    wanted = {"requestId": request, "permissionKind": "custom", "toolCallId": call, "toolName": "count"}
    return {"type": "session/permissionRequest", **_base(turn), "request": {**wanted, "toolInput": '{"text": "a b"}'}}


def resolved(turn: str, request: str, approved: bool) -> Action:
    return {"type": "session/permissionResolved", **_base(turn), "requestId": request, "approved": approved}


def ready(turn: str, call: str, confirmed: str = "not-needed") -> Action:
    running = {"invocationMessage": "Running count", "toolInput": '{"text": "a b"}', "confirmed": confirmed}
    return {"type": "session/toolCallReady", **_base(turn), "toolCallId": call, **running}


def completed(turn: str, call: str, meta: Any = None) -> Action:
    result: dict[str, Any] = {
        "success": True,
        "pastTenseMessage": "Ran count",
        "content": [{"type": "text", "text": "2"}],
    }
    if meta is not None:
        result["_meta"] = meta
    return {"type": "session/toolCallComplete", **_base(turn), "toolCallId": call, "result": result}


def ended(turn: str, how: str = "session/turnComplete") -> Action:
    if how == "session/error":
        return {"type": how, **_base(turn), "error": {"errorType": "agent", "message": "it broke"}}
    return {"type": how, **_base(turn)}


SCENARIOS: dict[str, list[Action]] = {
    "a streamed answer": [started("t1"), *streamed("t1", "m1", "Hel", "lo"), ended("t1")],
    "a call without asking, with hook decisions": [
        started("t1"),
        call_started("t1", "c1"),
        ready("t1", "c1"),
        completed("t1", "c1", {"hookDecisions": [{"extension": "guard", "decision": "allow"}]}),
        *streamed("t1", "m1", "Two."),
        {"type": "session/usage", **_base("t1"), "usage": {"inputTokens": 3, "outputTokens": 1}},
        ended("t1"),
    ],
    "a call approved when a hook asked": [
        started("t1"),
        call_started("t1", "c1"),
        ready("t1", "c1"),
        asked("t1", "c1", "r1"),
        resolved("t1", "r1", True),
        completed("t1", "c1"),
        ended("t1"),
    ],
    "a call approved before it was ready": [
        started("t1"),
        call_started("t1", "c1"),
        asked("t1", "c1", "r1"),
        resolved("t1", "r1", True),
        ready("t1", "c1", "user-action"),
        completed("t1", "c1"),
        ended("t1"),
    ],
    "a call denied when a hook asked": [
        started("t1"),
        call_started("t1", "c1"),
        ready("t1", "c1"),
        asked("t1", "c1", "r1"),
        resolved("t1", "r1", False),
        completed("t1", "c1"),
        ended("t1"),
    ],
    "a call denied before it was ready": [
        started("t1"),
        call_started("t1", "c1"),
        asked("t1", "c1", "r1"),
        resolved("t1", "r1", False),
        ready("t1", "c1", "user-action"),
        completed("t1", "c1"),
        ended("t1"),
    ],
    "a ready call cancelled while a hook asks": [
        started("t1"),
        call_started("t1", "c1"),
        ready("t1", "c1"),
        asked("t1", "c1", "r1"),
        ended("t1", "session/turnCancelled"),
    ],
    "a ready call ended while a hook asked": [
        started("t1"),
        call_started("t1", "c1"),
        ready("t1", "c1"),
        asked("t1", "c1", "r1"),
        completed("t1", "c1"),
        ended("t1"),
    ],
    "a call cancelled while it waits": [
        started("t1"),
        call_started("t1", "c1"),
        asked("t1", "c1", "r1"),
        ended("t1", "session/turnCancelled"),
    ],
    "a call approved, cancelled before it ran": [
        started("t1"),
        call_started("t1", "c1"),
        asked("t1", "c1", "r1"),
        resolved("t1", "r1", True),
        ended("t1", "session/turnCancelled"),
    ],
    "calls cut short streaming and running, by an error": [
        started("t1"),
        call_started("t1", "c1"),
        call_started("t1", "c2"),
        ready("t1", "c2"),
        ended("t1", "session/error"),
    ],
    "a call ended while its request waited": [
        started("t1"),
        call_started("t1", "c1"),
        asked("t1", "c1", "r1"),
        completed("t1", "c1"),
        ended("t1"),
    ],
    "a titled session, mid-turn, waiting on a request": [
        started("t1", "first"),
        *streamed("t1", "m1", "One."),
        ended("t1"),
        {"type": "session/titleChanged", "session": S, "title": "Counting"},
        started("t2", "second"),
        *streamed("t2", "m2", "Let me ", "count."),
        call_started("t2", "c1"),
        asked("t2", "c1", "r1"),
    ],
    "mid-turn, a call approved and running": [
        started("t1"),
        call_started("t1", "c1"),
        ready("t1", "c1"),
        asked("t1", "c1", "r1"),
        resolved("t1", "r1", True),
        *streamed("t1", "m1", "still ", "going"),
    ],
    "mid-turn, a ready call a hook asks about": [
        started("t1"),
        call_started("t1", "c1"),
        ready("t1", "c1"),
        asked("t1", "c1", "r1"),
    ],
}


def _seen(view: ChatView) -> dict[str, Any]:
    """What a 1.0 client sees of ``view``, and the requests a confirmation of it would answer."""
    active = view.chat_state.get("activeTurn") or {"responseParts": []}
    waiting = {
        part["toolCall"]["toolCallId"]
        for part in active["responseParts"]
        if part.get("kind") == "toolCall" and part["toolCall"]["status"] == "pending-confirmation"
    }
    return {
        "session": ahp1_plain(view.session_state, view.chat),
        "chat": ahp1_plain(view.chat_state, view.chat),
        "requests": {call: request for call, request in view.requests.items() if call in waiting},
    }


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_a_view_made_from_the_seed_state_is_the_view_that_translated_the_actions_live(name: str) -> None:
    summary = {**initial_state(S, "scripted", now=1000)["summary"], "workingDirectory": "file:///p"}
    live = ChatView(S, summary)
    state = {**initial_state(S, "scripted", now=1000), "summary": summary}
    for action in SCENARIOS[name]:
        live.translate(action)
        state = reduce(state, action)
    envelopes = [{"serverSeq": number, "action": action} for number, action in enumerate(SCENARIOS[name], 1)]
    rebuilt = view_of(state["summary"], state, requests_in(envelopes))
    assert _seen(rebuilt) == _seen(live)


def test_a_call_denied_when_its_request_has_left_the_replay_buffer_shows_the_input_the_call_shows() -> None:
    actions = SCENARIOS["a call denied when a hook asked"]
    live = ChatView(S, initial_state(S, "scripted", now=1000)["summary"])
    state = initial_state(S, "scripted", now=1000)
    for action in actions:
        live.translate(action)
        state = reduce(state, action)
    rebuilt = view_of(state["summary"], state, {})
    assert _seen(rebuilt) == _seen(live)  # the request's input is the call's here
    call = rebuilt.chat_state["turns"][0]["responseParts"][0]["toolCall"]
    assert (call["status"], call["reason"], call["invocationMessage"]) == ("cancelled", "denied", "Run count")
