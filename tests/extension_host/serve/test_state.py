"""The session reducer, checked against the scenarios of the agent host protocol's reducer test
cases (``types/test-cases/reducers/``, the session reducer's): the same initial state, actions
and expected state, with the clock at 9999 as there, and a missing key equal to ``null``."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from extension_host.serve.state import initial_state, reduce

S = "copilot:/test-session"


def summary(status: str, modified: int = 2000, **extra: Any) -> dict[str, Any]:
    return {
        "resource": S,
        "provider": "copilot",
        "title": "Test Session",
        "status": status,
        "createdAt": 1000,
        "modifiedAt": modified,
        **extra,
    }


def idle() -> dict[str, Any]:
    return {"summary": summary("idle", 1000), "lifecycle": "ready", "turns": []}


def active(*parts: dict[str, Any], status: str = "in-progress", **turn: Any) -> dict[str, Any]:
    return {
        "summary": summary(status),
        "lifecycle": "ready",
        "turns": [],
        "activeTurn": {"id": "turn-1", "userMessage": {"text": "Hello"}, "responseParts": list(parts), "usage": None}
        | turn,
    }


def start_call() -> dict[str, Any]:
    return {
        "type": "session/toolCallStart",
        "session": S,
        "turnId": "turn-1",
        "toolCallId": "tc-1",
        "toolName": "bash",
        "displayName": "Run Command",
    }


def call(status: str, **fields: Any) -> dict[str, Any]:
    return {
        "kind": "toolCall",
        "toolCall": {"status": status, "toolCallId": "tc-1", "toolName": "bash", "displayName": "Run Command"} | fields,
    }


def finished(state: str, parts: list[dict[str, Any]], error: Any = None, status: str = "idle") -> dict[str, Any]:
    turn = {"id": "turn-1", "userMessage": {"text": "Hello"}, "responseParts": parts, "usage": None, "state": state}
    return {"summary": summary(status, 9999), "lifecycle": "ready", "turns": [turn | {"error": error}]}


def markdown(content: str) -> dict[str, Any]:
    return {"kind": "markdown", "id": "md-1", "content": content}


def part(content: str) -> dict[str, Any]:
    return {"type": "session/responsePart", "session": S, "turnId": "turn-1", "part": markdown(content)}


def delta(content: str, turn: str = "turn-1") -> dict[str, Any]:
    return {"type": "session/delta", "session": S, "turnId": turn, "partId": "md-1", "content": content}


CASES: list[tuple[str, dict[str, Any], list[dict[str, Any]], dict[str, Any]]] = [
    (
        "turnStarted opens the active turn and makes the session in progress",
        idle(),
        [{"type": "session/turnStarted", "session": S, "turnId": "turn-1", "userMessage": {"text": "Hello"}}],
        {**active(), "summary": summary("in-progress", 9999)},
    ),
    (
        "delta appends to its markdown part",
        active(),
        [part(""), delta("Hello "), delta("world")],
        active(markdown("Hello world")),
    ),
    ("a delta for another turn changes nothing", active(markdown("a")), [delta("b", "turn-2")], active(markdown("a"))),
    ("a delta without an active turn changes nothing", idle(), [delta("b")], idle()),
    ("responsePart adds a part", active(), [part("hi")], active(markdown("hi"))),
    (
        "turnComplete finishes the turn",
        active(markdown("done")),
        [{"type": "session/turnComplete", "session": S, "turnId": "turn-1"}],
        finished("complete", [markdown("done")]),
    ),
    (
        "turnCancelled finishes the turn as cancelled",
        active(),
        [{"type": "session/turnCancelled", "session": S, "turnId": "turn-1"}],
        finished("cancelled", []),
    ),
    (
        "error finishes the turn with the error and the session in error",
        active(),
        [
            {
                "type": "session/error",
                "session": S,
                "turnId": "turn-1",
                "error": {"errorType": "runtime", "message": "x"},
            }
        ],
        finished("error", [], {"errorType": "runtime", "message": "x"}, status="error"),
    ),
    (
        "turnComplete cancels a tool call still in progress as skipped",
        active(),
        [start_call(), {"type": "session/turnComplete", "session": S, "turnId": "turn-1"}],
        finished("complete", [call("cancelled", invocationMessage="", toolInput=None, reason="skipped")]),
    ),
    (
        "turnComplete for another turn changes nothing",
        active(),
        [{"type": "session/turnComplete", "session": S, "turnId": "turn-2"}],
        active(),
    ),
    (
        "a tool call ready and confirmed runs, then completes with its result",
        active(),
        [
            start_call(),
            {
                "type": "session/toolCallReady",
                "session": S,
                "turnId": "turn-1",
                "toolCallId": "tc-1",
                "invocationMessage": "Run: ls",
                "toolInput": "ls",
            },
            {
                "type": "session/toolCallConfirmed",
                "session": S,
                "turnId": "turn-1",
                "toolCallId": "tc-1",
                "approved": True,
                "confirmed": "user-action",
            },
            {
                "type": "session/toolCallComplete",
                "session": S,
                "turnId": "turn-1",
                "toolCallId": "tc-1",
                "result": {"success": True, "pastTenseMessage": "Ran command"},
            },
        ],
        active(
            call(
                "completed",
                invocationMessage="Run: ls",
                toolInput="ls",
                confirmed="user-action",
                success=True,
                pastTenseMessage="Ran command",
            )
        ),
    ),
    (
        "a tool call ready with confirmation not needed runs at once",
        active(),
        [
            start_call(),
            {
                "type": "session/toolCallReady",
                "session": S,
                "turnId": "turn-1",
                "toolCallId": "tc-1",
                "invocationMessage": "Run",
                "confirmed": "not-needed",
            },
        ],
        active(call("running", invocationMessage="Run", toolInput=None, confirmed="not-needed")),
    ),
    (
        "a denied tool call is cancelled with the reason",
        active(),
        [
            start_call(),
            {
                "type": "session/toolCallReady",
                "session": S,
                "turnId": "turn-1",
                "toolCallId": "tc-1",
                "invocationMessage": "Run: rm",
            },
            {
                "type": "session/toolCallConfirmed",
                "session": S,
                "turnId": "turn-1",
                "toolCallId": "tc-1",
                "approved": False,
                "reason": "denied",
            },
        ],
        active(call("cancelled", invocationMessage="Run: rm", toolInput=None, reason="denied")),
    ),
    (
        "a call completed while waiting for confirmation counts as not needing it",
        active(),
        [
            start_call(),
            {
                "type": "session/toolCallReady",
                "session": S,
                "turnId": "turn-1",
                "toolCallId": "tc-1",
                "invocationMessage": "Run",
            },
            {
                "type": "session/toolCallComplete",
                "session": S,
                "turnId": "turn-1",
                "toolCallId": "tc-1",
                "result": {"success": True, "pastTenseMessage": "Done"},
            },
        ],
        active(
            call(
                "completed",
                invocationMessage="Run",
                toolInput=None,
                confirmed="not-needed",
                success=True,
                pastTenseMessage="Done",
            )
        ),
    ),
    (
        "tool call actions for an unknown call change nothing",
        active(),
        [
            {
                "type": "session/toolCallComplete",
                "session": S,
                "turnId": "turn-1",
                "toolCallId": "nope",
                "result": {"success": True},
            }
        ],
        active(),
    ),
    (
        "modelChanged sets the model",
        idle(),
        [{"type": "session/modelChanged", "session": S, "model": "gpt-4"}],
        {**idle(), "summary": summary("idle", 9999, model="gpt-4")},
    ),
    (
        "titleChanged sets the title",
        idle(),
        [{"type": "session/titleChanged", "session": S, "title": "New"}],
        {**idle(), "summary": summary("idle", 9999) | {"title": "New"}},
    ),
    (
        "usage lands on the active turn",
        active(),
        [{"type": "session/usage", "session": S, "turnId": "turn-1", "usage": {"inputTokens": 3}}],
        active(usage={"inputTokens": 3}),
    ),
    (
        "a permission request for a call waits for input, and its approval runs the call",
        active(),
        [
            start_call(),
            {
                "type": "session/permissionRequest",
                "session": S,
                "turnId": "turn-1",
                "request": {"requestId": "p1", "permissionKind": "hook", "toolCallId": "tc-1"},
            },
            {
                "type": "session/permissionResolved",
                "session": S,
                "turnId": "turn-1",
                "requestId": "p1",
                "approved": True,
            },
        ],
        active(call("running", confirmed="user-action")),
    ),
]


def without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [without_nulls(item) for item in value]
    return value


@pytest.mark.parametrize(("initial", "actions", "expected"), [case[1:] for case in CASES], ids=[c[0] for c in CASES])
def test_the_reducer_matches_the_protocols_scenario(
    initial: dict[str, Any], actions: list[dict[str, Any]], expected: dict[str, Any]
) -> None:
    before = copy.deepcopy(initial)
    state = initial
    for action in actions:
        state = reduce(state, action, now=lambda: 9999)
    assert without_nulls(state) == without_nulls(expected)
    assert initial == before  # reducing never changes the state it was given


def test_a_pending_permission_makes_the_session_need_input_until_it_is_resolved() -> None:
    state = reduce(active(), start_call(), now=lambda: 9999)
    asked = {"requestId": "p1", "permissionKind": "hook", "toolCallId": "tc-1"}
    state = reduce(state, {"type": "session/permissionRequest", "session": S, "turnId": "turn-1", "request": asked})
    assert state["summary"]["status"] == "input-needed"
    assert state["activeTurn"]["pendingPermissions"] == {"p1": asked}
    resolved = {"type": "session/permissionResolved", "session": S, "turnId": "turn-1", "requestId": "p1"}
    state = reduce(state, {**resolved, "approved": False})
    assert state["summary"]["status"] == "in-progress" and "pendingPermissions" not in state["activeTurn"]
    assert state["activeTurn"]["responseParts"][0]["toolCall"]["status"] == "cancelled"


def test_a_new_session_is_ready_and_idle_with_no_turns() -> None:
    state = initial_state(S, "scripted", model="m", now=5)
    assert state == {
        "summary": {
            "resource": S,
            "provider": "scripted",
            "title": "",
            "status": "idle",
            "createdAt": 5,
            "modifiedAt": 5,
            "model": "m",
        },
        "lifecycle": "ready",
        "turns": [],
    }
    assert reduce(state, {"type": "session/unknownThing"}) is state


def test_open_canvases_are_the_sessions_kept_in_order_a_reopen_replaces_in_place_and_a_close_removes() -> None:
    def opened(instance: str, title: str) -> dict[str, Any]:
        return {"type": "session/canvasOpened", "session": S, "canvas": {"instanceId": instance, "title": title}}

    state = reduce(idle(), opened("a", "A"))
    state = reduce(active(), opened("a", "A"))  # in a turn or not, the session's
    state = reduce(state, opened("b", "B"))
    state = reduce(state, opened("a", "A again"))
    assert state["openCanvases"] == [{"instanceId": "a", "title": "A again"}, {"instanceId": "b", "title": "B"}]
    assert state["activeTurn"]["responseParts"] == []
    closed = {"type": "session/canvasClosed", "session": S}
    assert reduce(state, {**closed, "instanceId": "nope"}) is state
    state = reduce(state, {**closed, "instanceId": "a"})
    assert state["openCanvases"] == [{"instanceId": "b", "title": "B"}]
    assert "openCanvases" not in reduce(state, {**closed, "instanceId": "b"})
