"""Claude Code's table: each row fed Claude Code's documented payload, both ways."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_hooks import AgentTable, output

from extension_host.bridges.agent_hooks.adapter import EXIT_BLOCK, HookReply, run_agent_hook
from extension_host.bridges.agent_hooks.claude import CLAUDE
from extension_host.bridges.agent_hooks.deadline import HookDeadline
from helpers import Project

COMMON = {
    "session_id": "abc123",
    "transcript_path": "/home/user/.claude/projects/p/abc123.jsonl",
    "cwd": "/home/user/project",
    "permission_mode": "default",
}


TABLE = AgentTable(CLAUDE, COMMON)
payload = TABLE.payload
hook = TABLE.hook


PRE = payload("PreToolUse", tool_name="Bash", tool_input={"command": "rm -rf build"}, tool_use_id="toolu_01")


def test_pre_tool_use_sends_claudes_tool_name_and_input(project: Project) -> None:
    asked, _ = hook(project, "PreToolUse", PRE, {})
    assert asked == {"hook": "preToolUse", "toolName": "Bash", "toolArgs": {"command": "rm -rf build"}}


@pytest.mark.parametrize("event", ["PreToolUse", "PostToolUse", "PostToolUseFailure"])
def test_a_tool_call_inside_a_subagent_sends_the_childs_id_and_agent_type(project: Project, event: str) -> None:
    inside = payload(
        event,
        tool_name="Bash",
        tool_input={"command": "cat .env"},
        tool_response="x",
        error="exit 1",
        agent_id="a43a262c30d8af895",
        agent_type="helper",
    )
    asked, _ = hook(project, event, inside, {})
    assert (asked["toolName"], asked["agentId"], asked["agentType"]) == ("Bash", "a43a262c30d8af895", "helper")


def test_the_main_threads_agent_type_alone_is_not_a_subagent(project: Project) -> None:
    main = payload("PreToolUse", tool_name="Bash", tool_input={"command": "ls"}, agent_type="reviewer")
    asked, _ = hook(project, "PreToolUse", main, {})
    assert "agentId" not in asked and "agentType" not in asked


def test_pre_tool_use_deny_is_a_permission_decision_with_its_reason(project: Project) -> None:
    _, reply = hook(project, "PreToolUse", PRE, {"decision": "deny", "reason": "no rm -rf", "decidedBy": "guard"})
    assert output(reply) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "no rm -rf",
        }
    }


@pytest.mark.parametrize("decision", ["allow", "ask"])
def test_pre_tool_use_allow_and_ask_are_passed_on(project: Project, decision: str) -> None:
    _, reply = hook(project, "PreToolUse", PRE, {"decision": decision, "reason": "why", "decidedBy": "guard"})
    assert output(reply)["hookSpecificOutput"]["permissionDecision"] == decision


def test_pre_tool_use_rewrite_alone_is_updated_input_with_no_decision(project: Project) -> None:
    # Claude Code applies updatedInput without a decision and its own permission rules judge it.
    _, reply = hook(project, "PreToolUse", PRE, {"modifiedArgs": {"command": "rm -r build"}})
    assert output(reply) == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "rm -r build"}}
    }


def test_pre_tool_use_rewrite_goes_with_an_allow(project: Project) -> None:
    _, reply = hook(project, "PreToolUse", PRE, {"decision": "allow", "modifiedArgs": {"command": "ls"}})
    specific = output(reply)["hookSpecificOutput"]
    assert (specific["permissionDecision"], specific["updatedInput"]) == ("allow", {"command": "ls"})


def test_pre_tool_use_with_no_opinion_prints_nothing(project: Project) -> None:
    _, reply = hook(project, "PreToolUse", PRE, {})
    assert reply == HookReply("", "", 0)


def test_post_tool_use_sends_the_tool_response_as_text(project: Project) -> None:
    stdin = payload(
        "PostToolUse",
        tool_name="Write",
        tool_input={"file_path": "/a.txt", "content": "x"},
        tool_response={"filePath": "/a.txt", "success": True},
        tool_use_id="toolu_01",
    )
    asked, reply = hook(project, "PostToolUse", stdin, {"additionalContext": "wrote a.txt"})
    assert asked["hook"] == "postToolUse"
    assert asked["toolName"] == "Write"
    assert json.loads(asked["toolResult"]["textResultForLlm"]) == {"filePath": "/a.txt", "success": True}
    assert output(reply) == {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "wrote a.txt"}}


FAILED_BASH = payload(
    "PostToolUseFailure",
    tool_name="Bash",
    tool_input={"command": "make"},
    tool_use_id="toolu_01",
    error="Exit code 2\nmake: *** No targets.  Stop.",
    is_interrupt=False,
    duration_ms=12,
)


def test_post_tool_use_failure_sends_the_tool_and_its_error(project: Project) -> None:
    asked, _ = hook(project, "PostToolUseFailure", FAILED_BASH, {})
    assert asked == {
        "hook": "postToolUseFailure",
        "toolName": "Bash",
        "toolArgs": {"command": "make"},
        "error": "Exit code 2\nmake: *** No targets.  Stop.",
    }


def test_post_tool_use_failure_context_is_additional_context(project: Project) -> None:
    _, reply = hook(project, "PostToolUseFailure", FAILED_BASH, {"additionalContext": "run make build"})
    assert output(reply) == {
        "hookSpecificOutput": {"hookEventName": "PostToolUseFailure", "additionalContext": "run make build"}
    }


def test_post_tool_use_failure_with_no_guidance_prints_nothing(project: Project) -> None:
    _, reply = hook(project, "PostToolUseFailure", FAILED_BASH, {})
    assert reply == HookReply("", "", 0)


STOP = payload("Stop", stop_hook_active=False, last_assistant_message="Done.")


def test_stop_sends_whether_a_stop_hook_is_active_and_the_transcript(project: Project) -> None:
    asked, _ = hook(project, "Stop", payload("Stop", stop_hook_active=True), {})
    assert asked == {"hook": "agentStop", "stopHookActive": True, "transcriptPath": COMMON["transcript_path"]}


def test_stop_block_is_claudes_block_with_the_reason(project: Project) -> None:
    _, reply = hook(project, "Stop", STOP, {"decision": "block", "reason": "now run the tests"})
    assert output(reply) == {"decision": "block", "reason": "now run the tests"}


def test_stop_with_no_block_lets_claude_stop(project: Project) -> None:
    _, reply = hook(project, "Stop", STOP, {})
    assert reply == HookReply("", "", 0)


def post(tool: str, response: Any) -> bytes:
    return payload("PostToolUse", tool_name=tool, tool_input={}, tool_response=response)


def replaced(reply: HookReply) -> Any:
    assert not reply.stderr, reply
    return output(reply)["hookSpecificOutput"]["updatedToolOutput"]


def test_post_tool_use_rewrite_of_a_string_result_is_the_new_text(project: Project) -> None:
    _, reply = hook(project, "PostToolUse", post("WebFetch", "password=1"), {"modifiedResult": "[redacted]"})
    assert replaced(reply) == "[redacted]"


def test_post_tool_use_rewrite_of_bash_is_its_stdout(project: Project) -> None:
    response = {"stdout": "password=1", "stderr": "warn", "interrupted": False, "isImage": False}
    _, reply = hook(project, "PostToolUse", post("Bash", response), {"modifiedResult": "[redacted]"})
    assert replaced(reply) == {"stdout": "[redacted]", "stderr": "", "interrupted": False}


def test_post_tool_use_rewrite_with_the_results_fields_is_that_json(project: Project) -> None:
    response = {"type": "text", "file": {"filePath": "/p/.env", "content": "TOKEN=1", "numLines": 1}}
    edited = {"type": "text", "file": {"filePath": "/p/.env", "content": "TOKEN=***", "numLines": 1}}
    _, reply = hook(project, "PostToolUse", post("Read", response), {"modifiedResult": json.dumps(edited)})
    assert replaced(reply) == edited


@pytest.mark.parametrize(
    "new",
    ["[redacted]", json.dumps({"type": "text"}), json.dumps({"type": "text", "file": "TOKEN=***"}), "[1]"],
    ids=["text", "fewer-fields", "another-kind", "not-an-object"],
)
def test_post_tool_use_rewrite_claude_code_cannot_take_is_not_sent_and_warns(project: Project, new: str) -> None:
    response = {"type": "text", "file": {"filePath": "/p/.env", "content": "TOKEN=1"}}
    _, reply = hook(project, "PostToolUse", post("Read", response), {"modifiedResult": new})
    answer = output(reply)
    assert "hookSpecificOutput" not in answer, answer
    assert answer["systemMessage"] == reply.stderr.rstrip("\n"), reply
    assert reply.stderr.count("\n") == 1 and reply.exit_code == 0
    assert "replaced the result of Read" in reply.stderr and "the model got Read's own result" in reply.stderr


def test_post_tool_use_rewrite_of_an_mcp_tool_replaces_its_output(project: Project) -> None:
    stdin = payload("PostToolUse", tool_name="mcp__db__query", tool_input={}, tool_response="rows")
    _, reply = hook(project, "PostToolUse", stdin, {"modifiedResult": "[redacted]"})
    assert output(reply) == {
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedMCPToolOutput": "[redacted]"}
    }


def test_user_prompt_submit_rejection_blocks_the_prompt(project: Project) -> None:
    stdin = payload("UserPromptSubmit", prompt="print my secret")
    asked, reply = hook(project, "UserPromptSubmit", stdin, {"decision": "deny", "reason": "no secrets"})
    assert asked == {"hook": "userPromptSubmitted", "prompt": "print my secret"}
    assert output(reply) == {"decision": "block", "reason": "no secrets"}


def test_user_prompt_submit_context_is_additional_context(project: Project) -> None:
    stdin = payload("UserPromptSubmit", prompt="build it")
    _, reply = hook(project, "UserPromptSubmit", stdin, {"additionalContext": "use make", "modifiedPrompt": "x"})
    assert output(reply) == {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "use make"}
    }


@pytest.mark.parametrize(
    ("source", "ours"), [("startup", "startup"), ("resume", "resume"), ("compact", "resume"), ("clear", "new")]
)
def test_session_start_maps_its_source_and_answers_with_context(project: Project, source: str, ours: str) -> None:
    asked, reply = hook(project, "SessionStart", payload("SessionStart", source=source), {"additionalContext": "hi"})
    assert asked == {"hook": "sessionStart", "source": ours}
    assert output(reply) == {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "hi"}}


@pytest.mark.parametrize(
    ("reason", "ours"),
    [
        ("clear", "user_exit"),
        ("logout", "user_exit"),
        ("prompt_input_exit", "user_exit"),
        ("other", "complete"),
        (None, "complete"),
    ],
)
def test_session_end_maps_its_reason_and_shows_the_summary(project: Project, reason: str, ours: str) -> None:
    asked, reply = hook(project, "SessionEnd", payload("SessionEnd", reason=reason), {"sessionSummary": "3 files"})
    assert asked == {"hook": "sessionEnd", "reason": ours}
    assert output(reply) == {"systemMessage": "3 files"}


@pytest.mark.parametrize("stdin", [b"not json", b"[1, 2]", payload("PreToolUse", tool_input={})])
def test_a_pre_tool_use_payload_that_cannot_be_read_blocks(project: Project, stdin: bytes) -> None:
    asked, reply = hook(project, "PreToolUse", stdin, {})
    assert asked == {}
    assert reply.exit_code == EXIT_BLOCK
    assert "failing closed" in reply.stderr
    assert "Claude Code PreToolUse payload" in reply.stderr


def test_a_payload_over_the_limit_blocks(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("extension_host.bridges.agent_hooks.adapter.MAX_HOOK_INPUT_BYTES", 10)
    _, reply = hook(project, "PreToolUse", PRE, {})
    assert reply.exit_code == EXIT_BLOCK
    assert "is over" in reply.stderr


def test_a_host_that_fails_makes_pre_tool_use_block(project: Project) -> None:
    def broken(_root: Path, _params: dict[str, Any], _deadline: HookDeadline) -> dict[str, Any]:
        raise RuntimeError("the extensions could not start")

    reply = run_agent_hook(CLAUDE, "PreToolUse", PRE, project.root, one_shot=broken)
    assert reply.exit_code == EXIT_BLOCK
    assert "the extensions could not start" in reply.stderr


def test_a_host_that_fails_is_only_a_warning_for_an_observer(project: Project) -> None:
    def broken(_root: Path, _params: dict[str, Any], _deadline: HookDeadline) -> dict[str, Any]:
        raise RuntimeError("the extensions could not start")

    stdin = payload("SessionStart", source="startup")
    reply = run_agent_hook(CLAUDE, "SessionStart", stdin, project.root, one_shot=broken)
    assert reply.exit_code == 1
    assert reply.stdout == ""


def test_an_unknown_event_is_a_warning_listing_the_events(project: Project) -> None:
    _, reply = hook(project, "Notification", payload("Notification"), {})
    assert reply.exit_code == 1
    listed = "PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit, SessionStart, SessionEnd, Stop, "
    assert listed + "SubagentStart, SubagentStop" in reply.stderr


SUBAGENT = {"agent_id": "a43a262c30d8af895", "agent_type": "helper", "agent_transcript_path": "/t/agent.jsonl"}


def test_subagent_start_runs_the_subagent_start_hooks_and_gives_the_subagent_their_context(project: Project) -> None:
    asked, reply = hook(
        project, "SubagentStart", payload("SubagentStart", **SUBAGENT), {"additionalContext": "be brief"}
    )
    assert asked == {
        "hook": "subagentStart",
        "agentId": "a43a262c30d8af895",
        "agentType": "helper",
        "transcriptPath": "/t/agent.jsonl",
    }
    assert output(reply) == {"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "be brief"}}


def test_subagent_stop_sends_the_subagents_answer_and_a_block_keeps_it_going(project: Project) -> None:
    stop = payload("SubagentStop", **SUBAGENT, last_assistant_message="Found 2 bugs.", stop_hook_active=False)
    asked, reply = hook(project, "SubagentStop", stop, {"decision": "block", "reason": "fix them too"})
    assert (asked["hook"], asked["response"], asked["stopHookActive"]) == ("subagentStop", "Found 2 bugs.", False)
    assert output(reply) == {"decision": "block", "reason": "fix them too"}


def test_a_subagent_event_without_the_subagents_id_is_an_error_naming_the_field(project: Project) -> None:
    _, reply = hook(project, "SubagentStop", payload("SubagentStop"), {})
    assert reply.exit_code == 1 and "agent_id" in reply.stderr


def test_a_project_root_that_cannot_be_used_makes_pre_tool_use_block(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    reply = run_agent_hook(CLAUDE, "PreToolUse", PRE, missing, one_shot=lambda _root, _params, _deadline: {})
    assert reply.exit_code == EXIT_BLOCK
    assert str(missing) in reply.stderr


def test_an_answer_of_the_wrong_shape_makes_pre_tool_use_block(project: Project) -> None:
    _, reply = hook(project, "PreToolUse", PRE, {"decision": "deny", "reason": "no", "decidedBy": object()})
    assert reply.exit_code == 0  # a reason was given: the odd field is not needed
    _, reply = hook(project, "PreToolUse", PRE, {"decision": "allow", "modifiedArgs": {"x": object()}})
    assert reply.exit_code == EXIT_BLOCK
    assert "could not be read" in reply.stderr
