"""The model context and the offered tools in the Chat Completions format."""

from __future__ import annotations

from extension_host.agents.chat_messages import MISSING_RESULT, chat_messages, chat_tools, parse_arguments
from extension_host.session.agents import OfferedTool
from extension_host.session.model_context import ContextMessage, ToolCall


def test_a_conversation_with_a_tool_call_keeps_its_ids_and_order() -> None:
    context = [
        ContextMessage("system", "be brief"),
        ContextMessage("developer", "use tools"),
        ContextMessage("user", "count"),
        ContextMessage("assistant", "Let me count.", tool_calls=(ToolCall("count", {"path": "a"}, "c1"),)),
        ContextMessage("tool", "3 lines", tool_call_id="c1", tool_name="count", result_type="success"),
        ContextMessage("assistant", "3 lines."),
    ]
    assert chat_messages(context) == [
        {"role": "system", "content": "be brief"},
        {"role": "system", "content": "use tools"},
        {"role": "user", "content": "count"},
        {
            "role": "assistant",
            "content": "Let me count.",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "count", "arguments": '{"path": "a"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "3 lines"},
        {"role": "assistant", "content": "3 lines."},
    ]


def test_context_the_hooks_added_between_results_moves_after_the_last_result() -> None:
    calls = (ToolCall("a", {}, "c1"), ToolCall("b", {}, "c2"))
    context = [
        ContextMessage("user", "go"),
        ContextMessage("assistant", "", tool_calls=calls),
        ContextMessage("tool", "A", tool_call_id="c1"),
        ContextMessage("user", "hook context after a"),
        ContextMessage("tool", "B", tool_call_id="c2"),
    ]
    messages = chat_messages(context)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user"]
    assert messages[1]["content"] is None
    assert messages[4]["content"] == "hook context after a"


def test_a_call_that_never_got_a_result_is_answered_with_a_note() -> None:
    context = [
        ContextMessage("user", "go"),
        ContextMessage("assistant", "", tool_calls=(ToolCall("slow", {}, "c1"),)),
        ContextMessage("user", "next prompt after a cancelled turn"),
    ]
    messages = chat_messages(context)
    assert messages[2] == {"role": "tool", "tool_call_id": "c1", "content": MISSING_RESULT}
    assert messages[3]["content"] == "next prompt after a cancelled turn"


def test_attachments_are_named_after_the_prompt() -> None:
    message = ContextMessage("user", "read this", attachments=({"type": "file", "path": "/p/notes.md"},))
    assert chat_messages([message])[0]["content"] == "read this\n\n(attached: /p/notes.md)"


def test_arguments_that_were_not_json_go_back_to_the_model_as_written() -> None:
    context = [ContextMessage("assistant", "", tool_calls=(ToolCall("a", "{broken", "c1"),))]
    assert chat_messages(context)[0]["tool_calls"][0]["function"]["arguments"] == "{broken"
    assert parse_arguments("{broken") == "{broken"
    assert parse_arguments('{"n": 1}') == {"n": 1}
    assert parse_arguments("") == {}
    assert parse_arguments(None) == {}


def test_arguments_nested_too_deeply_or_with_a_number_too_long_go_back_as_text_instead_of_raising() -> None:
    """A model (told to by a file it read) can write anything: nothing it writes ends the turn."""
    for text in [
        '{"a":' + "[" * 5000 + "]" * 5000 + "}",
        '{"a":' + "[" * 101 + "]" * 101 + "}",
        '{"n":' + "9" * 5000 + "}",
    ]:
        assert parse_arguments(text) == text


def test_tools_carry_their_json_schema_and_a_tool_without_one_takes_no_arguments() -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    tools = chat_tools([OfferedTool("count", "Count lines", schema), OfferedTool("now", "The time")])
    assert tools[0] == {
        "type": "function",
        "function": {"name": "count", "description": "Count lines", "parameters": schema},
    }
    assert tools[1]["function"]["parameters"] == {"type": "object", "properties": {}}
