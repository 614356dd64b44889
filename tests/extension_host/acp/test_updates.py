"""Host events → ACP updates: each update fits the protocol's schema (the SDK's models), a streamed
message is not sent twice, and a subagent shows only its tool calls."""

from __future__ import annotations

from typing import Any

from acp.schema import SessionNotification

from extension_host.acp.updates import MAPPED_EVENTS, UPDATES, UpdateMapper
from extension_host.event_types import EVENT_TYPES


def _event(kind: str, agent: str | None = None, **data: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"type": kind, "data": data}
    if agent:
        event["agentId"] = agent
    return event


TURN = [
    _event("user.message", content="hi", messageId="u1"),
    _event("session.title_changed", title="hi"),
    _event("assistant.reasoning_delta", reasoningId="r", deltaContent="thinking"),
    _event("assistant.reasoning", reasoningId="r", content="thinking"),
    _event("assistant.message_delta", messageId="m1", deltaContent="Let "),
    _event("assistant.message_delta", messageId="m1", deltaContent="me."),
    _event("assistant.message", messageId="m1", content="Let me.", toolRequests=[{"toolCallId": "c1", "name": "t"}]),
    _event("tool.execution_start", toolCallId="c1", toolName="t", arguments={}),
    _event("tool.execution_complete", toolCallId="c1", success=True, result={"content": "x" * 70_000}),
    _event("subagent.started", "a1", agentName="helper"),
    _event(
        "assistant.message", "a1", messageId="m2", content="secret", toolRequests=[{"toolCallId": "c2", "name": "u"}]
    ),
    _event("tool.execution_complete", "a1", toolCallId="c2", success=False, error={"message": "no"}),
    _event("commands.changed", commands=[{"name": "go", "description": "Go."}]),
    _event("session.idle"),
]


def test_every_update_of_a_turn_fits_the_schema_and_nothing_is_said_twice() -> None:
    mapper = UpdateMapper()
    updates = [update for event in TURN for update in mapper.map(event)]
    for update in updates:
        SessionNotification.model_validate({"sessionId": "s", "update": update})
    kinds = [update["sessionUpdate"] for update in updates]
    assert kinds == [
        "session_info_update",
        "agent_thought_chunk",
        "agent_message_chunk",
        "agent_message_chunk",
        "tool_call",
        "tool_call_update",
        "tool_call_update",
        "tool_call",
        "tool_call_update",
        "available_commands_update",
    ]
    assert updates[7]["title"] == "u (helper)"
    assert updates[8]["status"] == "failed"
    assert updates[8]["content"][0]["content"]["text"] == "no"
    assert updates[6]["content"][0]["content"]["text"].endswith("…[truncated: 4464 characters]")


def test_a_replay_shows_the_users_prompts_and_live_only_those_an_extension_sent() -> None:
    prompt = _event("user.message", content="hi", messageId="u1")
    sent = _event("user.message", content="from an extension", messageId="u2", source="project:x")
    assert UpdateMapper().map(prompt) == []
    assert UpdateMapper().map(sent)[0]["content"]["text"] == "from an extension"
    assert UpdateMapper(replaying=True).map(prompt)[0]["sessionUpdate"] == "user_message_chunk"


def test_the_table_names_every_kind_the_mapper_makes() -> None:
    mapper = UpdateMapper(replaying=True)
    for event in TURN:
        for update in mapper.map(event):
            assert update["sessionUpdate"] in UPDATES[event["type"]]


def test_an_event_the_session_does_not_hand_to_the_mapper_would_make_no_update() -> None:
    """The session skips every event type outside MAPPED_EVENTS: the mapper, given one with any
    data a tool call's events carry, makes nothing of it and remembers nothing."""
    data: dict[str, Any] = {
        "content": "x",
        "toolCallId": "c1",
        "messageId": "m1",
        "title": "t",
        "commands": [{"name": "go"}],
    }
    mapper = UpdateMapper(replaying=True)
    mapper.map(_event("assistant.message", messageId="m0", toolRequests=[{"toolCallId": "c1", "name": "t"}]))
    skipped = sorted(set(EVENT_TYPES) - MAPPED_EVENTS)
    assert "session.idle" in skipped
    for kind in skipped:
        assert mapper.map(_event(kind, **data)) == [], kind
        assert mapper.map(_event(kind, "a1", **data)) == [], kind
    assert mapper.tool_title("c1") == "t"
    assert MAPPED_EVENTS.issubset(EVENT_TYPES)
