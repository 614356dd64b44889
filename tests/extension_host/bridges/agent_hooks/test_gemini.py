"""Gemini CLI's table: each row fed Gemini CLI's documented payload, both ways."""

from __future__ import annotations

import pytest
from agent_hooks import AgentTable, output

from extension_host.bridges.agent_hooks.adapter import EXIT_BLOCK, HookReply
from extension_host.bridges.agent_hooks.gemini import GEMINI
from helpers import Project

COMMON = {
    "session_id": "s-1",
    "transcript_path": "/home/user/.gemini/tmp/s-1/chat.json",
    "cwd": "/home/user/project",
    "timestamp": "2026-11-26T07:30:00.000Z",
}


TABLE = AgentTable(GEMINI, COMMON)
payload = TABLE.payload
hook = TABLE.hook


BEFORE = payload("BeforeTool", tool_name="run_shell_command", tool_input={"command": "rm -rf build"})


def test_before_tool_sends_geminis_tool_name_and_input(project: Project) -> None:
    asked, _ = hook(project, "BeforeTool", BEFORE, {})
    assert asked == {"hook": "preToolUse", "toolName": "run_shell_command", "toolArgs": {"command": "rm -rf build"}}


def test_before_tool_deny_is_a_deny_decision_with_its_reason(project: Project) -> None:
    _, reply = hook(project, "BeforeTool", BEFORE, {"decision": "deny", "reason": "no rm -rf", "decidedBy": "guard"})
    assert output(reply) == {"decision": "deny", "reason": "no rm -rf"}


def test_before_tool_ask_stops_the_call_saying_who_asked_and_why(project: Project) -> None:
    # Headless Gemini CLI would wait for ever on an ask, and the payload does not say whether it is headless.
    _, reply = hook(project, "BeforeTool", BEFORE, {"decision": "ask", "reason": "deploy?", "decidedBy": "guard"})
    got = output(reply)
    assert got["decision"] == "deny"
    assert got["reason"].startswith("deploy? (guard asked for confirmation; ")
    assert "cannot tell whether this Gemini CLI run can ask anyone" in got["reason"]


def test_before_tool_allow_is_an_allow_decision(project: Project) -> None:
    _, reply = hook(project, "BeforeTool", BEFORE, {"decision": "allow", "decidedBy": "guard"})
    assert output(reply) == {"decision": "allow"}


def test_before_tool_rewrite_is_hook_specific_tool_input(project: Project) -> None:
    _, reply = hook(project, "BeforeTool", BEFORE, {"modifiedArgs": {"command": "rm -r build"}})
    assert output(reply) == {
        "hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": {"command": "rm -r build"}}
    }


def test_before_tool_with_no_opinion_prints_nothing(project: Project) -> None:
    _, reply = hook(project, "BeforeTool", BEFORE, {})
    assert reply == HookReply("", "", 0)


def test_after_tool_sends_the_llm_content_as_the_result(project: Project) -> None:
    stdin = payload(
        "AfterTool",
        tool_name="read_file",
        tool_input={"absolute_path": "/a.txt"},
        tool_response={"llmContent": "hello", "returnDisplay": "Read a.txt"},
    )
    asked, reply = hook(project, "AfterTool", stdin, {"additionalContext": "a.txt is generated"})
    assert asked["hook"] == "postToolUse"
    assert asked["toolResult"] == {"textResultForLlm": "hello"}
    assert asked["toolArgs"] == {"absolute_path": "/a.txt"}
    assert output(reply) == {
        "hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": "a.txt is generated"}
    }


FAILED = payload(
    "AfterTool",
    tool_name="run_shell_command",
    tool_input={"command": "false"},
    tool_response={
        "llmContent": "Exit Code: 1",
        "returnDisplay": "",
        "error": {"type": "shell_execute_error", "message": "Command exited with code 1"},
    },
)


def test_after_tool_with_an_error_runs_the_failed_tool_hooks_and_gives_their_guidance(project: Project) -> None:
    asked, reply = hook(project, "AfterTool", FAILED, {"additionalContext": "use true"})
    assert (asked["hook"], asked["toolName"], asked["error"]) == (
        "postToolUseFailure",
        "run_shell_command",
        "Command exited with code 1",
    )
    assert "toolResult" not in asked
    assert output(reply) == {"hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": "use true"}}
    _, reply = hook(project, "AfterTool", FAILED, {})
    assert reply == HookReply("", "", 0)


AFTER_AGENT = payload("AfterAgent", prompt="fix it", prompt_response="Done.", stop_hook_active=False)


def test_after_agent_sends_whether_a_stop_hook_is_active_and_the_transcript(project: Project) -> None:
    asked, _ = hook(project, "AfterAgent", AFTER_AGENT, {})
    assert asked == {"hook": "agentStop", "stopHookActive": False, "transcriptPath": COMMON["transcript_path"]}


def test_after_agent_block_makes_gemini_go_on_with_the_reason(project: Project) -> None:
    _, reply = hook(project, "AfterAgent", AFTER_AGENT, {"decision": "block", "reason": "now run the tests"})
    assert output(reply) == {"decision": "block", "reason": "now run the tests"}
    _, reply = hook(project, "AfterAgent", AFTER_AGENT, {})
    assert reply == HookReply("", "", 0)


def test_after_tool_rewrite_is_a_deny_whose_reason_is_the_new_result(project: Project) -> None:
    # Gemini CLI never reads hookSpecificOutput.tool_output; a deny's reason is what the model gets instead.
    stdin = payload("AfterTool", tool_name="read_file", tool_input={}, tool_response={"llmContent": "password=1"})
    _, reply = hook(project, "AfterTool", stdin, {"modifiedResult": "[redacted]"})
    assert output(reply) == {"decision": "deny", "reason": "[redacted]"}
    _, reply = hook(project, "AfterTool", stdin, {"modifiedResult": "[redacted]", "additionalContext": "a note"})
    assert output(reply) == {"decision": "deny", "reason": "[redacted]\n\na note"}


def test_before_agent_rejection_denies_the_turn(project: Project) -> None:
    asked, reply = hook(
        project, "BeforeAgent", payload("BeforeAgent", prompt="my secret"), {"decision": "deny", "reason": "no"}
    )
    assert asked == {"hook": "userPromptSubmitted", "prompt": "my secret"}
    assert output(reply) == {"decision": "deny", "reason": "no"}


def test_before_agent_context_is_additional_context(project: Project) -> None:
    _, reply = hook(project, "BeforeAgent", payload("BeforeAgent", prompt="go"), {"additionalContext": "use make"})
    assert output(reply) == {"hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": "use make"}}


@pytest.mark.parametrize(("source", "ours"), [("startup", "startup"), ("resume", "resume"), ("clear", "new")])
def test_session_start_maps_its_source_and_answers_with_context(project: Project, source: str, ours: str) -> None:
    asked, reply = hook(project, "SessionStart", payload("SessionStart", source=source), {"additionalContext": "hi"})
    assert asked == {"hook": "sessionStart", "source": ours}
    assert output(reply) == {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "hi"}}


@pytest.mark.parametrize(
    ("reason", "ours"),
    [
        ("exit", "complete"),
        ("other", "complete"),
        ("clear", "user_exit"),
        ("logout", "user_exit"),
        ("prompt_input_exit", "user_exit"),
    ],
)
def test_session_end_maps_its_reason_and_shows_the_summary(project: Project, reason: str, ours: str) -> None:
    asked, reply = hook(project, "SessionEnd", payload("SessionEnd", reason=reason), {"sessionSummary": "done"})
    assert asked == {"hook": "sessionEnd", "reason": ours}
    assert output(reply) == {"systemMessage": "done"}


@pytest.mark.parametrize("event", ["BeforeTool", "BeforeAgent"])
def test_a_guard_payload_that_is_not_json_blocks_with_exit_2(project: Project, event: str) -> None:
    asked, reply = hook(project, event, b"{not json", {})
    assert asked == {}
    assert reply.exit_code == EXIT_BLOCK
    assert reply.stdout == ""  # Gemini CLI reads stdout as JSON only
    assert f"Gemini CLI {event} payload on stdin is not JSON" in reply.stderr
