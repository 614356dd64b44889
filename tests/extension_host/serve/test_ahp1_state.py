"""The AHP 1.0 chat reducer, checked against scenarios of the specification's reducer test cases
(``types/test-cases/reducers/``, the chat reducer's): the same initial state, actions and
expected state, with the clock at 9999 ms as there, and a missing key equal to ``null``."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from extension_host.serve.ahp1_state import IDLE, IN_PROGRESS, IS_READ, iso, reduce_chat, reduce_session

S = "copilot:/test-session"
HELLO = {"text": "Hello", "origin": {"kind": "user"}}


def chat(status: int, modified: str = "1970-01-01T00:00:02.000Z", **extra: Any) -> dict[str, Any]:
    return {"turns": [], "resource": S, "title": "Test Session", "status": status, "modifiedAt": modified, **extra}


def active(**turn: Any) -> dict[str, Any]:
    return {"id": "turn-1", "message": HELLO, "responseParts": [], "usage": None} | turn


def finished(parts: list[dict[str, Any]]) -> dict[str, Any]:
    turn = {"id": "turn-1", "message": HELLO, "responseParts": parts, "usage": None, "state": "complete", "error": None}
    return chat(IDLE, "1970-01-01T00:00:09.999Z", turns=[turn], activeTurn=None)


CASES: list[tuple[str, dict[str, Any], list[dict[str, Any]], dict[str, Any]]] = [
    (
        "005 turnStarted opens the active turn and makes the chat in progress",
        chat(IDLE, "1970-01-01T00:00:01.000Z"),
        [{"type": "chat/turnStarted", "turnId": "turn-1", "message": HELLO}],
        chat(IN_PROGRESS, "1970-01-01T00:00:09.999Z", activeTurn=active()),
    ),
    (
        "014 turnComplete finalizes the turn with its streamed text",
        chat(IN_PROGRESS, activeTurn=active()),
        [
            {
                "type": "chat/responsePart",
                "turnId": "turn-1",
                "part": {"kind": "markdown", "id": "md-1", "content": ""},
            },
            {"type": "chat/delta", "turnId": "turn-1", "partId": "md-1", "content": "Response text"},
            {"type": "chat/turnComplete", "turnId": "turn-1"},
        ],
        finished([{"kind": "markdown", "id": "md-1", "content": "Response text"}]),
    ),
    (
        "017 turnComplete force-cancels a tool call still streaming",
        chat(IN_PROGRESS, activeTurn=active()),
        [
            {
                "type": "chat/toolCallStart",
                "turnId": "turn-1",
                "toolCallId": "tc-1",
                "toolName": "bash",
                "displayName": "Run Command",
            },
            {"type": "chat/turnComplete", "turnId": "turn-1"},
        ],
        finished(
            [
                {
                    "kind": "toolCall",
                    "toolCall": {
                        "status": "cancelled",
                        "toolCallId": "tc-1",
                        "toolName": "bash",
                        "displayName": "Run Command",
                        "contributor": None,
                        "_meta": None,
                        "invocationMessage": "",
                        "toolInput": None,
                        "reason": "skipped",
                    },
                }
            ]
        ),
    ),
    (
        "019 a tool call's full lifecycle: start, delta, ready, confirmed, complete",
        chat(IN_PROGRESS, activeTurn=active(startedAt="1970-01-01T00:00:01.000Z")),
        [
            {
                "type": "chat/toolCallStart",
                "turnId": "turn-1",
                "toolCallId": "tc-1",
                "toolName": "bash",
                "displayName": "Run Command",
                "intention": "List the files in the current directory",
            },
            {
                "type": "chat/toolCallDelta",
                "turnId": "turn-1",
                "toolCallId": "tc-1",
                "content": "ls -la",
                "invocationMessage": "Listing files",
            },
            {
                "type": "chat/toolCallReady",
                "turnId": "turn-1",
                "toolCallId": "tc-1",
                "invocationMessage": "Run: ls -la",
                "toolInput": "ls -la",
            },
            {
                "type": "chat/toolCallConfirmed",
                "turnId": "turn-1",
                "toolCallId": "tc-1",
                "approved": True,
                "confirmed": "user-action",
            },
            {
                "type": "chat/toolCallComplete",
                "turnId": "turn-1",
                "toolCallId": "tc-1",
                "result": {"success": True, "pastTenseMessage": "Ran command"},
            },
        ],
        chat(
            IN_PROGRESS,
            activeTurn=active(
                startedAt="1970-01-01T00:00:01.000Z",
                responseParts=[
                    {
                        "kind": "toolCall",
                        "toolCall": {
                            "status": "completed",
                            "toolCallId": "tc-1",
                            "toolName": "bash",
                            "displayName": "Run Command",
                            "intention": "List the files in the current directory",
                            "contributor": None,
                            "_meta": None,
                            "invocationMessage": "Run: ls -la",
                            "toolInput": "ls -la",
                            "confirmed": "user-action",
                            "success": True,
                            "pastTenseMessage": "Ran command",
                        },
                    }
                ],
            ),
        ),
    ),
]


def nulls_dropped(value: Any) -> Any:
    """``value`` with every ``null`` member left out: a missing key equals ``null``."""
    if isinstance(value, dict):
        return {key: nulls_dropped(inner) for key, inner in value.items() if inner is not None}
    if isinstance(value, list):
        return [nulls_dropped(inner) for inner in value]
    return value


@pytest.mark.parametrize(("initial", "actions", "expected"), [case[1:] for case in CASES], ids=[c[0] for c in CASES])
def test_the_chat_reducer_reaches_the_specifications_expected_state(
    initial: dict[str, Any], actions: list[dict[str, Any]], expected: dict[str, Any]
) -> None:
    state = initial
    before = copy.deepcopy(initial)
    for action in actions:
        state = reduce_chat(state, action, now=lambda: 9999)
    assert nulls_dropped(state) == nulls_dropped(expected)
    assert initial == before  # the reducer never changes the state it is given


def test_a_new_turn_clears_the_read_flag_and_keeps_the_others() -> None:
    state = reduce_chat(chat(IDLE | IS_READ | 64), {"type": "chat/turnStarted", "turnId": "t", "message": HELLO})
    assert state["status"] == IN_PROGRESS | 64


def test_an_action_for_another_turn_or_an_unknown_one_leaves_the_state_as_it_was() -> None:
    state = chat(IN_PROGRESS, activeTurn=active())
    assert reduce_chat(state, {"type": "chat/delta", "turnId": "turn-9", "partId": "x", "content": "y"}) is state
    assert reduce_chat(state, {"type": "chat/somethingNew"}) is state
    assert reduce_session(state, {"type": "session/somethingNew"}) is state


@given(st.integers(min_value=0, max_value=2**41))
def test_timestamps_are_iso_8601_with_milliseconds_in_utc(ms: int) -> None:
    text = iso(ms)
    assert text.endswith("Z") and len(text.split(".")[1]) == 4 and int(text.split(".")[1][:3]) == ms % 1000
