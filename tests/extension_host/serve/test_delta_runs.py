"""A state folded a run of deltas at a time is the state the reducer makes action by action, for
both protocols' reducers, and a run of N deltas to one part costs the reducer one call."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from extension_host.serve.ahp1.state import reduce_chat
from extension_host.serve.delta_runs import DeltaFold
from extension_host.serve.state import initial_state, reduce

Action = dict[str, Any]
S = "copilot:/fold"


def _seed(kind: str, turn: str, part: str, text: str) -> Action:
    base = {"session": S, "turnId": turn}
    if kind == "start":
        return {"type": "session/turnStarted", **base, "userMessage": {"text": text}}
    if kind == "part":
        return {"type": "session/responsePart", **base, "part": {"kind": "markdown", "id": part, "content": text}}
    if kind == "end":
        return {"type": "session/turnComplete", **base}
    return {"type": "session/delta", **base, "partId": part, "content": text}


def _chat(action: Action) -> Action:
    """The 1.0 chat action of a seed action here (the same fields, 1.0's names)."""
    kind = action["type"].replace("session/", "chat/")
    translated = {key: value for key, value in action.items() if key not in ("type", "session", "userMessage")}
    if "userMessage" in action:
        translated["message"] = action["userMessage"]
    return {"type": kind, **translated}


actions = st.lists(
    st.tuples(
        st.sampled_from(["delta", "delta", "delta", "delta", "part", "start", "end"]),
        st.sampled_from(["t1", "t2"]),
        st.sampled_from(["p1", "p2", "p3"]),
        st.text(max_size=5),
    ).map(lambda fields: _seed(*fields)),
    max_size=60,
)


@given(actions)
def test_the_seed_state_folded_a_run_at_a_time_is_the_state_folded_action_by_action(given: list[Action]) -> None:
    expected = initial_state(S, "p", now=0)
    fold = DeltaFold(expected, lambda state, action: reduce(state, action, now=lambda: 0), "session/delta")
    for index, action in enumerate(given):
        expected = reduce(expected, action, now=lambda: 0)
        fold.apply(action)
        if index % 7 == 0:
            assert fold.state == expected  # read in the middle of a run too
    assert fold.state == expected


@given(actions)
def test_the_1_0_chat_state_folded_a_run_at_a_time_is_the_state_folded_action_by_action(given: list[Action]) -> None:
    expected: dict[str, Any] = {"resource": "ahp-chat:/c", "title": "", "status": 1, "turns": []}
    fold = DeltaFold(expected, lambda state, action: reduce_chat(state, action, now=lambda: 0), "chat/delta")
    for action in map(_chat, given):
        expected = reduce_chat(expected, action, now=lambda: 0)
        fold.apply(action)
    assert fold.state == expected


def test_a_run_of_deltas_to_one_part_is_one_call_of_the_reducer_and_other_actions_keep_their_own() -> None:
    calls: list[Action] = []

    def counted(state: dict[str, Any], action: Action) -> dict[str, Any]:
        calls.append(action)
        return reduce(state, action, now=lambda: 0)

    fold = DeltaFold(initial_state(S, "p", now=0), counted, "session/delta")
    fold.apply(_seed("start", "t1", "", "go"))
    fold.apply(_seed("part", "t1", "p1", ""))
    for number in range(10_000):
        fold.apply(_seed("delta", "t1", "p1", f"{number} "))
    fold.apply(_seed("part", "t1", "p2", ""))
    fold.apply(_seed("delta", "t1", "p2", "b"))
    fold.apply(_seed("delta", "t1", "p2", "c"))
    assert len(calls) == 4  # turnStarted, responsePart, the run, responsePart: the last run is still open
    parts = fold.state["activeTurn"]["responseParts"]
    assert len(calls) == 5
    assert parts[0]["content"] == "".join(f"{number} " for number in range(10_000))
    assert parts[1]["content"] == "bc"
    fold.state = initial_state(S, "p", now=0)  # a state set replaces what a run had collected
    assert fold.state == initial_state(S, "p", now=0) and len(calls) == 5
