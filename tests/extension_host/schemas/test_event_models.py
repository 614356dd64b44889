"""The session-event models: every event type the host emits has one, and the check names what
is wrong with an event."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

import extension_host
from extension_host.event_types import EPHEMERAL_EVENT_TYPES, EVENT_TYPES
from extension_host.events import EventLog, make_event
from extension_host.schemas.event_models import EVENT_DATA, check_event, event_adapter

SOURCE = Path(extension_host.__file__).parent
EMITTED_TYPE = re.compile(r"""(?:emit|make_event)\(\s*["']([a-z_]+\.[a-z_.]+)["']""")


def event(event_type: str, data: dict[str, Any], **envelope: Any) -> dict[str, Any]:
    return {
        "id": "e1",
        "timestamp": "2026-11-26T06:00:00.000+00:00",
        "parentId": None,
        "type": event_type,
        "data": data,
        **envelope,
    }


def test_every_event_type_named_in_the_host_source_has_a_model() -> None:
    """Each literal event type passed to emit or make_event anywhere in the host is in the table."""
    named = {
        match
        for path in SOURCE.rglob("*.py")
        if "schemas" not in path.parts
        for match in EMITTED_TYPE.findall(path.read_text(encoding="utf-8"))
    }
    assert named, "the pattern no longer finds the emit sites"
    assert named - set(EVENT_TYPES) == set()


def test_the_timeline_levels_a_log_can_take_all_have_models() -> None:
    """session.log picks the event type from its level: each of them is modelled."""
    assert {"session.info", "session.warning", "session.error"} <= set(EVENT_TYPES)


def test_an_event_the_log_emits_passes_the_check() -> None:
    """A real envelope from the event log, with the data of its type, is valid."""
    log = EventLog()
    emitted = log.emit("session.info", {"infoType": "notification", "message": "ready", "extensionId": "project:a"})
    assert check_event(emitted) is None


def test_a_missing_required_field_is_named_with_the_event_type() -> None:
    """The SDK requires warningType: a warning without it is refused, naming the field."""
    problem = check_event(event("session.warning", {"message": "careful"}))
    assert problem == "event session.warning: data.warningType: Field required"


def test_a_key_the_sdk_does_not_define_is_refused() -> None:
    """Data shapes are closed, as in the SDK's schema: a misspelt key is an error, not ignored."""
    problem = check_event(event("tool.execution_start", {"toolCallId": "c1", "toolName": "t", "argumnts": {}}))
    assert problem is not None and "data.argumnts" in problem and "Extra inputs are not permitted" in problem


def test_a_wrong_type_is_refused_without_coercion() -> None:
    """Strict: a number where the SDK says string is an error, not quietly turned into one."""
    problem = check_event(event("assistant.message", {"messageId": 7, "content": "hi"}))
    assert problem is not None and problem.startswith("event assistant.message: data.messageId:")


def test_an_event_type_without_a_model_fails_saying_where_to_add_it() -> None:
    """A new event type must get a model before it passes; the message says where and how."""
    problem = check_event(event("session.brand_new", {}))
    assert problem is not None
    assert "'session.brand_new' has no schema" in problem
    assert "extension_host/event_types.py" in problem and "extension_host/schemas/event_models.py" in problem
    assert "python -m extension_host.schemas" in problem


def test_an_always_ephemeral_event_cannot_be_marked_persistent() -> None:
    """session.idle is always ephemeral in the SDK: it must say so; false or absent is refused."""
    assert check_event(event("session.idle", {}, ephemeral=True)) is None
    assert check_event(event("session.idle", {})) == "event session.idle: ephemeral: Field required"
    problem = check_event(event("session.idle", {}, ephemeral=False))
    assert problem is not None and problem.startswith("event session.idle: ephemeral:")


def test_the_envelope_is_closed_and_takes_agent_id() -> None:
    """agentId is part of the envelope; anything else beside data is refused."""
    assert check_event(event("session.idle", {}, ephemeral=True, agentId="sub-1")) is None
    problem = check_event(event("session.idle", {}, ephemeral=True, extra=1))
    assert problem is not None and "extra" in problem


@pytest.mark.parametrize("value", [None, [], "session.idle"])
def test_something_that_is_not_an_object_is_not_an_event(value: Any) -> None:
    """The check never raises: a non-object is reported as such."""
    assert check_event(value) == f"an event must be an object, not {type(value).__name__}"


def test_the_hosts_own_additions_pass_alongside_the_sdk_fields() -> None:
    """hook.end as the runner emits it: the SDK's fields plus the host's hook name and calls
    (each implementation's outcome, decision and duration)."""
    data = {
        "hookInvocationId": "h1",
        "hookType": "preToolUse",
        "success": False,
        "output": {"call_1": "Denied by preToolUse hook: hook on_pre_tool_use of project:guard failed"},
        "error": {"message": "timed out after 30 s", "source": "project:guard"},
        "hook": "on_pre_tool_use",
        "calls": [
            {
                "extensionId": "project:guard",
                "outcome": "timeout",
                "decision": "deny",
                "durationMs": 30000.0,
                "error": {"message": "timed out after 30 s"},
            }
        ],
    }
    assert check_event(event("hook.end", data)) is None


def test_every_modelled_event_type_has_an_example_that_passes() -> None:
    """An example of each type, shaped as the SDK's generated types say, passes: no model is
    impossible to satisfy, and the session runtime's events have the shapes their models expect."""
    samples = [
        make_event("session.info", {"infoType": "notification", "message": "ready", "url": "https://x"}),
        make_event("session.warning", {"warningType": "extension", "message": "slow", "extensionId": "user:a"}),
        make_event("session.idle", {"aborted": False}, ephemeral=True),
        make_event("session.tools_updated", {"added": ["t"], "removed": []}, ephemeral=True),
        make_event(
            "session.extensions_loaded",
            {
                "extensions": [{"id": "project:a", "name": "a", "source": "project", "status": "failed"}],
                "changes": [{"extension": "project:a", "action": "started"}],
            },
            ephemeral=True,
        ),
        make_event("tool.execution_start", {"toolCallId": "c1", "toolName": "t", "arguments": {"a": 1}}),
        make_event(
            "tool.execution_complete",
            {
                "toolCallId": "c1",
                "toolName": "t",
                "success": False,
                "result": {"content": "no", "resultType": "denied"},
                "error": {"message": "denied by project:guard"},
            },
        ),
        make_event(
            "external_tool.requested",
            {"requestId": "r0", "sessionId": "s", "toolCallId": "c1", "toolName": "t", "arguments": None},
            ephemeral=True,
        ),
        make_event("hook.start", {"hookInvocationId": "h1", "hookType": "preToolUse", "input": {"toolName": "t"}}),
        make_event("hook.end", {"hookInvocationId": "h1", "hookType": "preToolUse", "success": True, "output": None}),
        make_event("command.queued", {"requestId": "r4", "command": "/hi"}, ephemeral=True),
        make_event(
            "session.start",
            {
                "sessionId": "s",
                "version": 1,
                "producer": "extension-host",
                "copilotVersion": "0.1.0",
                "startTime": "2026-11-26T06:00:00Z",
                "context": {"cwd": "/p"},
            },
        ),
        make_event("session.resume", {"eventCount": 12, "resumeTime": "2026-11-26T06:00:00Z"}),
        make_event(
            "session.shutdown",
            {
                "shutdownType": "routine",
                "sessionStartTime": 1.7e12,
                "totalApiDurationMs": 0,
                "modelMetrics": {},
                "codeChanges": {"filesModified": [], "linesAdded": 0, "linesRemoved": 0},
            },
        ),
        make_event(
            "user.message", {"content": "hi", "attachments": [{"type": "file", "path": "a.txt"}], "source": "project:a"}
        ),
        make_event("assistant.turn_start", {"turnId": "t1"}),
        make_event(
            "assistant.message",
            {
                "messageId": "m1",
                "content": "done",
                "toolRequests": [{"toolCallId": "c1", "name": "t", "arguments": {}}],
            },
        ),
        make_event("assistant.message_delta", {"messageId": "m1", "deltaContent": "do"}, ephemeral=True),
        make_event("assistant.usage", {"model": "scripted", "inputTokens": 3}, ephemeral=True),
        make_event("assistant.turn_end", {"turnId": "t1"}),
        make_event("session.error", {"errorType": "tool", "message": "aborted"}),
        make_event("system.message", {"role": "developer", "content": "be brief"}),
        make_event("system.notification", {"content": "ctx", "kind": {"type": "unclassified"}}),
        make_event("pending_messages.modified", {}, ephemeral=True),
        make_event(
            "permission.requested",
            {
                "requestId": "r1",
                "permissionRequest": {"kind": "custom-tool", "toolName": "t", "toolDescription": "d", "args": {}},
            },
        ),
        make_event(
            "permission.completed",
            {"requestId": "r1", "result": {"kind": "denied-interactively-by-user", "feedback": "not now"}},
        ),
        make_event(
            "command.execute", {"requestId": "r2", "commandName": "hi", "command": "/hi x", "args": "x"}, ephemeral=True
        ),
        make_event("command.completed", {"requestId": "r2"}, ephemeral=True),
        make_event("commands.changed", {"commands": [{"name": "hi", "description": "say hi"}]}, ephemeral=True),
        make_event("external_tool.completed", {"requestId": "r3"}),
        make_event("tool.execution_progress", {"toolCallId": "c1", "progressMessage": "half"}, ephemeral=True),
        make_event("tool.execution_partial_result", {"toolCallId": "c1", "partialOutput": "ab"}, ephemeral=True),
        make_event("tool.user_requested", {"toolCallId": "c2", "toolName": "t", "arguments": {"a": 1}}),
        make_event("assistant.message_start", {"messageId": "m2"}, ephemeral=True),
        make_event("assistant.reasoning", {"reasoningId": "r1", "content": "think"}),
        make_event("assistant.reasoning_delta", {"reasoningId": "r1", "deltaContent": "th"}, ephemeral=True),
        make_event("assistant.intent", {"intent": "reading files"}, ephemeral=True),
        make_event("assistant.idle", {}, ephemeral=True),
        make_event("abort", {"reason": "user_initiated"}),
        make_event(
            "subagent.started",
            {
                "toolCallId": "c3",
                "agentName": "reviewer",
                "agentDisplayName": "Reviewer",
                "agentDescription": "Reviews code",
                "remoteSessionId": "child-1",
                "agentType": "reviewer",
                "executionMode": "sync",
            },
            agent_id="child-1",
        ),
        make_event(
            "subagent.selected",
            {"agentName": "reviewer", "agentDisplayName": "Reviewer", "tools": ["view"]},
            agent_id="child-1",
        ),
        make_event(
            "subagent.completed",
            {"toolCallId": "c3", "agentName": "reviewer", "agentDisplayName": "Reviewer", "totalToolCalls": 1},
            agent_id="child-1",
        ),
        make_event(
            "subagent.failed",
            {"toolCallId": "c4", "agentName": "reviewer", "agentDisplayName": "Reviewer", "error": "the model failed"},
            agent_id="child-2",
        ),
        make_event("session.title_changed", {"title": "Fix the tests"}, ephemeral=True),
        make_event("session.model_change", {"newModel": "scripted", "source": "sdk"}),
        make_event(
            "session.usage_info",
            {"currentTokens": 1200, "messagesLength": 4, "tokenLimit": 128000, "isInitial": True},
            ephemeral=True,
        ),
        make_event(
            "session.custom_notification",
            {"source": "project:a", "name": "build", "payload": {"ok": True}, "subject": {"branch": "main"}},
            ephemeral=True,
        ),
        make_event("capabilities.changed", {"ui": {"elicitation": True}}, ephemeral=True),
        make_event(
            "session.canvas.opened",
            {"instanceId": "b1", "canvasId": "board", "extensionId": "project:board", "url": "http://127.0.0.1:9/"},
            ephemeral=True,
        ),
        make_event(
            "session.canvas.closed",
            {"instanceId": "b1", "canvasId": "board", "extensionId": "project:board"},
            ephemeral=True,
        ),
        make_event("assistant.streaming_delta", {"totalResponseSizeBytes": 512}, ephemeral=True),
        make_event(
            "assistant.tool_call_delta",
            {"toolCallId": "c1", "inputDelta": '{"pa', "toolName": "view", "toolType": "function"},
            ephemeral=True,
        ),
        make_event("hook.progress", {"message": "scanning", "temporary": True}, ephemeral=True),
        make_event(
            "user_input.requested",
            {"requestId": "q1", "question": "Which branch?", "choices": ["main", "dev"], "allowFreeform": False},
            ephemeral=True,
        ),
        make_event("user_input.completed", {"requestId": "q1", "answer": "main", "wasFreeform": False}, ephemeral=True),
        make_event(
            "elicitation.requested",
            {
                "requestId": "f1",
                "message": "Your name?",
                "mode": "form",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
            },
            ephemeral=True,
        ),
        make_event(
            "elicitation.completed", {"requestId": "f1", "action": "accept", "content": {"name": "Ada"}}, ephemeral=True
        ),
    ]
    assert [check_event(sample) for sample in samples] == [None] * len(samples)
    assert {sample["type"] for sample in samples} == set(EVENT_TYPES)


def test_every_data_shape_says_what_its_event_is_about() -> None:
    """Each event's description in the schema comes from its data shape's docstring."""
    assert [name for name, data in EVENT_DATA.items() if not (data.__doc__ or "").strip()] == []


def test_every_event_type_of_the_table_has_a_data_shape_and_every_shape_a_row() -> None:
    """The table of event types and the shapes keyed by it cover the same types."""
    assert sorted(EVENT_TYPES.keys() - EVENT_DATA.keys()) == []
    assert sorted(EVENT_DATA.keys() - EVENT_TYPES.keys()) == []


@pytest.mark.slow
def test_one_union_validates_any_event_by_its_type() -> None:
    """The discriminated union the events schema comes from takes every modelled type."""
    adapter = event_adapter()
    adapter.validate_python(event("session.idle", {}, ephemeral=True))
    for event_type in sorted(EVENT_TYPES):
        with pytest.raises(ValueError, match="data"):
            adapter.validate_python(event(event_type, {"notAKeyOfAnyShape": 1}))


@pytest.mark.parametrize("event_type", sorted(EVENT_TYPES))
def test_the_schema_requires_ephemeral_true_exactly_of_the_types_the_table_marks_ephemeral(event_type: str) -> None:
    """An event without ``ephemeral`` is refused for its missing flag only if its type is ephemeral."""
    try:
        event_adapter().validate_python(event(event_type, {}))
        missing = []
    except ValidationError as exc:
        missing = [error["loc"] for error in exc.errors() if error["type"] == "missing"]
    assert ((event_type, "ephemeral") in missing) == (event_type in EPHEMERAL_EVENT_TYPES)
