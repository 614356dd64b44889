"""What the MCP bridge tells a client, in memory: schemas, call answers, prompts, log entries."""

from __future__ import annotations

from extension_host.bridges.mcp.shapes import (
    MAX_PROMPT_MESSAGES,
    CallAnswer,
    LogEntry,
    PromptText,
    call_answer,
    command_prompt,
    input_schema,
    log_entry,
    prompt_messages,
    tools_signature,
    unknown_tool_answer,
)
from extension_host.calls.command_registry import CommandInfo, CommandResult
from extension_host.errors import UnknownToolError
from extension_host.info import ToolInfo
from extension_host.outcomes import ToolCallResult
from extension_protocol.results import ToolResult


def outcome(text: str, kind: str = "success", **fields: object) -> ToolCallResult:
    return ToolCallResult(ToolResult(text, kind), **fields)  # type: ignore[arg-type]


def test_a_tool_without_an_object_schema_takes_any_object() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    assert input_schema(ToolInfo("t", "d", schema, "project:x")) == schema
    assert input_schema(ToolInfo("t", "d", None, "project:x")) == {"type": "object", "properties": {}}


def test_a_success_is_the_tools_text_followed_by_what_the_hooks_added_that_it_does_not_carry() -> None:
    """The post hooks' guidance is in the result's text already; the rest follows as a block."""
    assert call_answer("t", "project:x", outcome("42")) == CallAnswer(("42",), False)
    added = outcome("42", additional_context="audit: t logged", context_message="audit: t logged")
    assert call_answer("t", "project:x", added) == CallAnswer(("42", "audit: t logged"), False)
    in_text = outcome("42\n\nguidance", additional_context="guidance")
    assert call_answer("t", "project:x", in_text) == CallAnswer(("42\n\nguidance",), False)


def test_a_denial_names_the_hook_that_decided_and_its_reason() -> None:
    denied = outcome("The call to t was denied: no secrets", "denied", decision="deny", decided_by="project:guard")
    assert call_answer("t", "project:x", denied) == CallAnswer(
        ("denied by project:guard before t ran: The call to t was denied: no secrets",), True
    )


def test_failures_and_timeouts_name_the_tool_and_its_extension() -> None:
    assert call_answer("t", "project:x", outcome("boom", "failure")) == CallAnswer(
        ("t of project:x failed: boom",), True
    )
    assert call_answer("t", "project:x", outcome("no answer in 5 s", "timeout")).texts == (
        "t of project:x timed out: no answer in 5 s",
    )
    assert call_answer("t", None, outcome("nope", "rejected")).texts == ("t of the host was rejected: nope",)


def test_a_call_of_an_unknown_tool_says_so_and_how_to_recover() -> None:
    answer = unknown_tool_answer(UnknownToolError("gone", ["a", "b"]))
    assert answer == CallAnswer(("no tool named 'gone'; available: a, b; list the tools again (tools/list)",), True)


def test_the_tool_signature_changes_with_a_name_a_description_or_a_schema() -> None:
    one = ToolInfo("t", "d", {"type": "object"}, "project:x")
    assert tools_signature([one]) == tools_signature([ToolInfo("t", "d", {"type": "object"}, "project:y")])
    assert tools_signature([one]) != tools_signature([ToolInfo("t", "d2", {"type": "object"}, "project:x")])
    assert tools_signature([one]) != tools_signature([ToolInfo("t", "d", {"type": "object", "a": 1}, "project:x")])
    assert tools_signature([one]) != tools_signature([one, ToolInfo("u", "d", None, "project:x")])


def test_a_slash_command_is_a_prompt_with_one_optional_argument() -> None:
    prompt = command_prompt(CommandInfo("deploy", "Deploy the project", "project:ops"))
    assert prompt == {
        "name": "deploy",
        "description": "Deploy the project",
        "arguments": [{"name": "args", "description": "what follows /deploy (its argument string)", "required": False}],
    }
    assert command_prompt(CommandInfo("x", "", "project:ops"))["description"] == "/x of project:ops"


def test_a_prompts_messages_are_what_the_command_said_then_its_error() -> None:
    ok = CommandResult("deploy", "ok", owner="project:ops")
    said = [PromptText("deploying"), PromptText("Summarise the deploy", sent=True)]
    assert prompt_messages(ok, said) == ["deploying", "Summarise the deploy"]
    assert prompt_messages(ok, []) == ["/deploy ran (project:ops said nothing)"]
    failed = CommandResult("deploy", "error", "no target", owner="project:ops")
    assert prompt_messages(failed, said) == ["deploying", "Summarise the deploy", "/deploy failed: no target"]


def test_a_prompt_keeps_a_bounded_number_of_messages() -> None:
    ok = CommandResult("chatty", "ok", owner="project:ops")
    messages = prompt_messages(ok, [PromptText(str(n)) for n in range(MAX_PROMPT_MESSAGES + 5)])
    assert len(messages) == MAX_PROMPT_MESSAGES + 1
    assert messages[-1] == "(5 more messages of /chatty were left out)"


def test_timeline_messages_are_log_entries_of_their_extension_and_nothing_else_is() -> None:
    info = {"type": "session.info", "data": {"infoType": "notification", "message": "ready", "extensionId": "user:a"}}
    assert log_entry(info) == LogEntry("info", "user:a", "ready")
    warning = {"type": "session.warning", "data": {"warningType": "hook", "message": "slow"}}
    assert log_entry(warning) == LogEntry("warning", "extension-host", "slow")
    assert log_entry({"type": "session.error", "data": {"errorType": "x", "message": "bad"}}) == LogEntry(
        "error", "extension-host", "bad"
    )
    assert log_entry({"type": "tool.execution_start", "data": {}}) is None
