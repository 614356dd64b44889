"""The model context projection in memory: which events become which messages, and in what order."""

from __future__ import annotations

from typing import Any

from extension_host.events import EventLog
from extension_host.session.model_context import ContextMessage, ModelContext, ToolCall


def event(event_type: str, /, **data: Any) -> dict[str, Any]:
    return {"id": "x", "timestamp": "t", "parentId": None, "type": event_type, "data": data}


CONVERSATION = [
    event("system.message", role="system", content="You are terse."),
    event("session.info", infoType="notification", message="timeline only"),
    event("user.message", content="count TODOs", transformedContent="count TODOs [checked]", messageId="m1"),
    event("system.notification", content="the repo is big", kind={"type": "unclassified"}),
    event(
        "assistant.message",
        messageId="a1",
        content="",
        toolRequests=[{"toolCallId": "c1", "name": "grep", "arguments": {"pattern": "TODO"}}],
    ),
    event("tool.execution_start", toolCallId="c1", toolName="grep", arguments={"pattern": "TODO"}),
    event(
        "tool.execution_complete",
        toolCallId="c1",
        toolName="grep",
        success=True,
        result={"content": "3 hits", "resultType": "success"},
    ),
    event("system.message", role="developer", content="Prefer tables.", name="style"),
    event("assistant.message", messageId="a2", content="There are 3."),
]


def test_a_conversation_becomes_system_messages_first_then_the_chat_in_order() -> None:
    context = ModelContext.from_events(CONVERSATION)
    assert context.messages == [
        ContextMessage("system", "You are terse."),
        ContextMessage("developer", "Prefer tables.", name="style"),
        ContextMessage("user", "count TODOs [checked]"),
        ContextMessage("user", "the repo is big"),
        ContextMessage("assistant", "", tool_calls=(ToolCall("grep", {"pattern": "TODO"}, "c1"),)),
        ContextMessage("tool", "3 hits", tool_call_id="c1", tool_name="grep", result_type="success"),
        ContextMessage("assistant", "There are 3."),
    ]


def test_a_system_message_with_the_same_role_and_name_is_replaced_in_place() -> None:
    context = ModelContext.from_events(
        [
            event("system.message", role="system", content="v1"),
            event("system.message", role="developer", content="d", name="a"),
            event("system.message", role="system", content="v2"),
            event("system.message", role="developer", content="other", name="b"),
        ]
    )
    assert [(m.role, m.content, m.name) for m in context.messages] == [
        ("system", "v2", None),
        ("developer", "d", "a"),
        ("developer", "other", "b"),
    ]


def test_an_instruction_discovered_notification_never_reaches_the_model() -> None:
    context = ModelContext.from_events(
        [
            event("system.notification", content="Discovered AGENTS.md", kind={"type": "instruction_discovered"}),
            event("system.notification", content="shell finished", kind={"type": "shell_completed"}),
        ]
    )
    assert context.messages == [ContextMessage("user", "shell finished")]


def test_a_later_result_of_the_same_tool_call_replaces_the_earlier_one_in_place() -> None:
    def complete(content: str, result_type: str) -> dict[str, Any]:
        return event(
            "tool.execution_complete",
            toolCallId="c1",
            toolName="t",
            success=result_type == "success",
            result={"content": content, "resultType": result_type},
        )

    ask = event("assistant.message", content="", toolRequests=[{"toolCallId": "c1", "name": "t"}])
    context = ModelContext.from_events(
        [ask, complete("boom", "failure"), event("user.message", content="later"), complete("ok", "success")]
    )
    assert [(m.role, m.content, m.result_type) for m in context.messages] == [
        ("assistant", "", None),
        ("tool", "ok", "success"),
        ("user", "later", None),
    ]


def test_the_result_of_a_call_no_assistant_asked_for_is_not_the_models() -> None:
    direct = event(
        "tool.execution_complete", toolCallId="call_7", toolName="t", success=True, result={"content": "x" * 100}
    )
    assert len(ModelContext.from_events([direct])) == 0


def test_malformed_and_unrelated_events_leave_the_context_unchanged() -> None:
    context = ModelContext.from_events(
        [
            {"type": "user.message", "data": "not a mapping"},
            event("user.message", content=3),
            event("system.message", role="tool", content="x"),
            event("assistant.message", content="", toolRequests=[{"name": 5}]),
            event("tool.execution_complete", toolCallId=None),
            event("hook.start", hook="on_pre_tool_use"),
            {"type": "pending_messages.modified"},
        ]
    )
    assert len(context) == 0


def test_a_context_fed_live_equals_one_rebuilt_from_the_same_events() -> None:
    log = EventLog()
    live = ModelContext()
    log.subscribe(live.apply)
    for item in CONVERSATION:
        log.emit(item["type"], item["data"])
    rebuilt = ModelContext.from_events(log.history())
    assert live == rebuilt and live.messages == ModelContext.from_events(CONVERSATION).messages


def test_reset_replaces_the_context_in_place_with_the_given_events() -> None:
    context = ModelContext.from_events([event("user.message", content="old session")])
    same = context
    context.reset(CONVERSATION)
    assert same is context and context == ModelContext.from_events(CONVERSATION)
    context.reset()
    assert context.messages == []
