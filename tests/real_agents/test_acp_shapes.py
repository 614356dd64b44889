"""How two ACP agents' runs are reduced to shapes and compared: values never count, any other
difference does unless the reviewed table names it with exactly those values, and an entry of the
table that no longer differs is reported too."""

from __future__ import annotations

import json
from typing import Any

from real_agents.acp_shapes import INTENDED, Difference, Transcript, shapes, unexplained
from real_agents.runner import AgentRun


def received(message: dict[str, Any]) -> str:
    return json.dumps({"received": {"jsonrpc": "2.0", **message}})


def sent(message: dict[str, Any]) -> str:
    return json.dumps({"sent": {"jsonrpc": "2.0", **message}})


def update(session: str, **fields: Any) -> str:
    return received({"method": "session/update", "params": {"sessionId": session, "update": fields}})


def transcript(session: str, text: str, stop: str = "end_turn", tool_kind: str = "other") -> Transcript:
    """A run of initialize, new, one prompt with a tool call, restart, initialize, load."""
    init = {"protocolVersion": 1, "agentCapabilities": {"loadSession": True}, "agentInfo": {"name": text}}
    lines = [
        sent({"id": 0, "method": "initialize", "params": {}}),
        received({"id": 0, "result": init}),
        json.dumps({"step": 0, "do": "initialize", "result": init}),
        sent({"id": 1, "method": "session/new", "params": {}}),
        received({"id": 1, "result": {"sessionId": session}}),
        json.dumps({"step": 1, "do": "new", "result": {"sessionId": session}}),
        sent({"id": 2, "method": "session/prompt", "params": {}}),
        update(session, sessionUpdate="tool_call", toolCallId=text, title=text, kind=tool_kind, status="pending"),
        update(session, sessionUpdate="tool_call_update", toolCallId=text, status="completed"),
        update(session, sessionUpdate="agent_message_chunk", content={"type": "text", "text": text}),
        received({"id": 2, "result": {"stopReason": stop}}),
        json.dumps({"step": 2, "do": "prompt", "result": {"stopReason": stop}}),
        json.dumps({"step": 3, "do": "restart", "result": {}}),
        sent({"id": 0, "method": "initialize", "params": {}}),
        received({"id": 0, "result": init}),
        json.dumps({"step": 4, "do": "initialize", "result": init}),
        sent({"id": 1, "method": "session/load", "params": {}}),
        update(session, sessionUpdate="user_message_chunk", content={"type": "text", "text": text}),
        received({"id": 1, "result": {}}),
        json.dumps({"step": 5, "do": "load", "result": {}}),
        json.dumps({"done": True, "ok": True}),
    ]
    return Transcript.parse(AgentRun(["node"], 0, False, "\n".join(lines), "", [], []))


def test_runs_that_differ_only_in_values_have_the_same_shapes() -> None:
    one = shapes(transcript("s-1", "first"), prompts=[2], load=5)
    other = shapes(transcript("s-2", "second"), prompts=[2], load=5)
    assert one == other
    assert one["prompt2.kinds"] == ["agent_message_chunk", "tool_call", "tool_call_update"]
    assert one["load.kinds"] == ["user_message_chunk"]
    assert unexplained(one, other, ()) == []


def test_the_updates_of_a_step_after_a_restart_are_found_though_request_ids_start_again() -> None:
    run = transcript("s-1", "first")
    assert [u["sessionUpdate"] for u in run.updates(5)] == ["user_message_chunk"]
    assert [u["sessionUpdate"] for u in run.updates(2)] == ["tool_call", "tool_call_update", "agent_message_chunk"]


def test_a_difference_outside_the_table_is_reported_with_both_values() -> None:
    copilot = shapes(transcript("s-1", "a"), prompts=[2], load=5)
    ours = shapes(transcript("s-1", "a", stop="refusal"), prompts=[2], load=5)
    assert unexplained(copilot, ours, ()) == ["prompt2.stopReason: copilot 'end_turn', extensions 'refusal'"]


def test_a_difference_the_table_names_with_its_values_is_accepted_and_any_other_value_is_not() -> None:
    copilot = shapes(transcript("s-1", "a"), prompts=[2], load=5)
    ours = shapes(transcript("s-1", "a", stop="refusal"), prompts=[2], load=5)
    named = Difference("prompt2.stopReason", "end_turn", "refusal", "a reason")
    assert unexplained(copilot, ours, (named,)) == []
    stale = Difference("prompt2.stopReason", "end_turn", "max_tokens", "a reason")
    (problem,) = unexplained(copilot, ours, (stale,))
    assert "the table says 'end_turn', 'max_tokens'" in problem


def test_a_table_entry_that_no_longer_differs_is_reported() -> None:
    same = shapes(transcript("s-1", "a"), prompts=[2], load=5)
    (problem,) = unexplained(same, same, (Difference("prompt2.stopReason", "end_turn", "cancelled", "r"),))
    assert "no longer differs" in problem


def test_every_intended_difference_gives_its_reason() -> None:
    assert all(difference.reason.strip() for difference in INTENDED)
    assert len({difference.path for difference in INTENDED}) == len(INTENDED)


def test_what_a_cancelled_prompt_sent_before_the_cancel_landed_is_not_compared() -> None:
    cancelled = shapes(transcript("s-1", "a", stop="cancelled"), prompts=[2], load=5)
    assert cancelled["prompt2.stopReason"] == "cancelled" and "prompt2.kinds" not in cancelled
