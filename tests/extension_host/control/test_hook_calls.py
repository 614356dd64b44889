"""``host.hook``: one hook point of the host's extensions run for another agent's tool or prompt."""

from __future__ import annotations

from typing import Any, get_args

import pytest

from extension_host import hookimpl
from extension_host.control.hook_calls import HookWireName, parse_hook_call, run_hook_call
from extension_protocol.connection import RpcError
from extension_protocol.protocol import HOOK_WIRE_NAMES, INVALID_PARAMS
from helpers import Project, run


class Policy:
    """An in-process plugin standing in for the project's extensions."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    @hookimpl
    def on_pre_tool_use(self, input: Any) -> dict[str, Any] | None:
        self.seen.append((input.tool_name, input.tool_args))
        command = input.tool_args.get("command", "")
        if "rm -rf" in command:
            return {"permission_decision": "deny", "permission_decision_reason": "no rm -rf"}
        if command == "deploy":
            return {"permission_decision": "ask", "permission_decision_reason": "deploys need a person"}
        if command.startswith("ls"):
            return {"modified_args": {"command": command + " -la"}, "additional_context": "listing"}
        return None

    @hookimpl
    def on_post_tool_use(self, input: Any) -> dict[str, Any] | None:
        text = input.tool_result.text_result_for_llm
        if "password" in text:
            return {"modified_result": {"text_result_for_llm": "[redacted]", "result_type": "success"}}
        return {"additional_context": f"{input.tool_name} gave {len(text)} characters"}

    @hookimpl
    def on_post_tool_use_failure(self, input: Any) -> dict[str, Any]:
        self.seen.append((input.tool_name, input.error))
        return {"additional_context": f"{input.tool_name} failed with {input.error!r}: try make build"}

    @hookimpl
    def on_agent_stop(self, input: Any) -> dict[str, Any] | None:
        self.seen.append(("stop", (input.transcript_path, input.stop_hook_active)))
        return None if input.stop_hook_active else {"decision": "block", "reason": "now run the tests"}

    @hookimpl
    def on_user_prompt_submitted(self, input: Any) -> dict[str, Any] | None:
        if "secret" in input.prompt:
            raise ValueError("prompts must not carry secrets")
        return {"additional_context": "the build uses make", "modified_prompt": input.prompt.strip()}

    @hookimpl
    def on_session_start(self, input: Any) -> dict[str, Any]:
        return {"additional_context": f"started from {input.source}"}

    @hookimpl
    def on_session_end(self, input: Any) -> dict[str, Any]:
        return {"session_summary": f"ended: {input.reason}"}


def answer(project: Project, params: dict[str, Any], policy: Policy | None = None) -> dict[str, Any]:
    async def scenario() -> dict[str, Any]:
        async with project.host(watch=False, persist=False, session_hooks=False) as host:
            host.register_plugin(policy or Policy(), "policy")
            return await run_hook_call(host, parse_hook_call(params))

    return run(scenario())


class Inputs:
    """A plugin that keeps the session fields of each tool hook's input."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str | None, str | None, str | None]] = []

    def note(self, hook: str, input: Any) -> None:
        self.seen.append((hook, input.session_id, input.agent_id, input.agent_type, input.parent_agent_id))

    @hookimpl
    def on_pre_tool_use(self, input: Any) -> dict[str, Any]:
        self.note("pre", input)
        if input.agent_id is not None:
            return {"permission_decision": "deny", "permission_decision_reason": f"not inside {input.agent_type}"}
        return {"permission_decision": "allow"}

    @hookimpl
    def on_post_tool_use(self, input: Any) -> None:
        self.note("post", input)

    @hookimpl
    def on_post_tool_use_failure(self, input: Any) -> None:
        self.note("failure", input)


def test_a_call_inside_a_subagent_runs_the_hooks_with_the_childs_session_and_its_events_carry_it(
    project: Project,
) -> None:
    inputs = Inputs()
    child = {"agentId": "child-1", "agentType": "helper"}
    calls: list[dict[str, Any]] = [
        {"hook": "preToolUse", "toolName": "Bash", "toolArgs": {"command": "cat .env"}, **child},
        {"hook": "postToolUse", "toolName": "Bash", "toolResult": {"textResultForLlm": "x"}, **child},
        {"hook": "postToolUseFailure", "toolName": "Bash", "error": "exit 1", **child},
        {"hook": "preToolUse", "toolName": "Bash", "toolArgs": {"command": "cat .env"}},
    ]

    async def scenario() -> tuple[list[dict[str, Any]], str, list[tuple[str, Any]]]:
        async with project.host(watch=False, persist=False, session_hooks=False) as host:
            host.register_plugin(inputs, "inputs")
            answers = [await run_hook_call(host, parse_hook_call(call)) for call in calls]
            events = [(e["type"], e.get("agentId")) for e in host.events.history() if e["type"].startswith("hook.")]
            return answers, host.session_id, events

    answers, parent, events = run(scenario())
    assert [a.get("decision") for a in answers] == ["deny", None, None, "allow"]
    assert answers[0]["reason"] == "not inside helper"
    assert inputs.seen == [
        ("pre", "child-1", "child-1", "helper", parent),
        ("post", "child-1", "child-1", "helper", parent),
        ("failure", "child-1", "child-1", "helper", parent),
        ("pre", parent, None, None, None),
    ]
    assert [agent for _, agent in events] == ["child-1"] * 6 + [None] * 2


def test_a_pre_tool_deny_comes_back_with_its_reason_and_who_decided(project: Project) -> None:
    got = answer(project, {"hook": "preToolUse", "toolName": "Bash", "toolArgs": {"command": "rm -rf /"}})
    assert got == {"decision": "deny", "reason": "no rm -rf", "decidedBy": "policy"}


def test_the_hooks_see_the_other_agents_own_tool_name_and_arguments(project: Project) -> None:
    policy = Policy()
    answer(project, {"hook": "preToolUse", "toolName": "run_shell_command", "toolArgs": {"command": "make"}}, policy)
    assert policy.seen == [("run_shell_command", {"command": "make"})]


def test_an_ask_is_passed_on_to_the_other_agent_not_resolved_here(project: Project) -> None:
    got = answer(project, {"hook": "preToolUse", "toolName": "Bash", "toolArgs": {"command": "deploy"}})
    assert got["decision"] == "ask"
    assert got["reason"] == "deploys need a person"


def test_a_rewrite_comes_back_as_modified_args_with_its_context(project: Project) -> None:
    got = answer(project, {"hook": "preToolUse", "toolName": "Bash", "toolArgs": {"command": "ls"}})
    assert got == {"modifiedArgs": {"command": "ls -la"}, "additionalContext": "listing"}


def test_no_opinion_is_an_empty_answer(project: Project) -> None:
    assert answer(project, {"hook": "preToolUse", "toolName": "Read", "toolArgs": {"file_path": "/a"}}) == {}


def test_a_post_tool_rewrite_comes_back_as_text(project: Project) -> None:
    got = answer(
        project,
        {"hook": "postToolUse", "toolName": "Read", "toolArgs": {}, "toolResult": {"textResultForLlm": "password=1"}},
    )
    assert got == {"modifiedResult": "[redacted]"}


def test_a_post_tool_context_comes_back(project: Project) -> None:
    got = answer(project, {"hook": "postToolUse", "toolName": "Read", "toolResult": {"textResultForLlm": "abc"}})
    assert got == {"additionalContext": "Read gave 3 characters"}


def test_a_failed_tool_runs_the_failure_hooks_not_the_post_tool_ones(project: Project) -> None:
    policy = Policy()
    params = {"hook": "postToolUseFailure", "toolName": "Bash", "toolArgs": {"command": "make"}, "error": "exit 2"}
    got = answer(project, params, policy)
    assert got == {"additionalContext": "Bash failed with 'exit 2': try make build"}
    assert policy.seen == [("Bash", "exit 2")]


def test_an_agent_stop_block_comes_back_with_its_reason_until_a_stop_hook_is_active(project: Project) -> None:
    policy = Policy()
    first = answer(project, {"hook": "agentStop", "transcriptPath": "/t.jsonl"}, policy)
    assert first == {"decision": "block", "reason": "now run the tests"}
    assert answer(project, {"hook": "agentStop", "transcriptPath": "/t.jsonl", "stopHookActive": True}, policy) == {}
    assert policy.seen == [("stop", ("/t.jsonl", False)), ("stop", ("/t.jsonl", True))]


def test_a_prompt_guard_that_fails_rejects_the_prompt(project: Project) -> None:
    got = answer(project, {"hook": "userPromptSubmitted", "prompt": "my secret"})
    assert got["decision"] == "deny"
    assert "prompts must not carry secrets" in got["reason"]
    assert got["decidedBy"] == "policy"


def test_a_prompt_gets_its_context_and_rewrite(project: Project) -> None:
    got = answer(project, {"hook": "userPromptSubmitted", "prompt": " build it "})
    assert got == {"modifiedPrompt": "build it", "additionalContext": "the build uses make"}


def test_session_start_and_end_run_their_hooks(project: Project) -> None:
    assert answer(project, {"hook": "sessionStart", "source": "resume"}) == {"additionalContext": "started from resume"}
    assert answer(project, {"hook": "sessionEnd", "reason": "user_exit"}) == {"sessionSummary": "ended: user_exit"}


@pytest.mark.parametrize(
    ("params", "fault"),
    [
        ("garbage", "params"),
        ({"hook": "onPreToolUse", "toolName": "Bash"}, "hook"),
        ({"hook": "preToolUse"}, "toolName"),
        ({"hook": "preToolUse", "toolName": "x" * 257}, "toolName"),
        ({"hook": "preToolUse", "toolName": "Bash", "toolArgs": ["rm"]}, "toolArgs"),
        ({"hook": "postToolUse", "toolName": "Bash"}, "toolResult"),
        ({"hook": "postToolUse", "toolName": "Bash", "toolResult": {"textResultForLlm": 3}}, "textResultForLlm"),
        ({"hook": "postToolUseFailure", "toolName": "Bash"}, "error"),
        ({"hook": "postToolUseFailure", "error": "exit 2"}, "toolName"),
        ({"hook": "agentStop", "stopHookActive": "yes"}, "stopHookActive"),
        ({"hook": "userPromptSubmitted"}, "prompt"),
        ({"hook": "sessionStart", "source": "reboot"}, "source"),
        ({"hook": "sessionEnd", "reason": "bored"}, "reason"),
        ({"hook": "preToolUse", "toolName": "Bash", "agentId": ""}, "agentId"),
        ({"hook": "preToolUse", "toolName": "Bash", "agentId": "a" * 257}, "agentId"),
        ({"hook": "preToolUse", "toolName": "Bash", "agentId": 7}, "agentId"),
        ({"hook": "preToolUse", "toolName": "Bash", "agentType": "helper"}, "agentType"),
    ],
)
def test_a_malformed_request_is_invalid_params_naming_the_field(params: Any, fault: str) -> None:
    with pytest.raises(RpcError) as caught:
        parse_hook_call(params)
    assert caught.value.code == INVALID_PARAMS
    assert fault in str(caught.value)
    assert str(caught.value).startswith("host.hook")


class SubagentPolicy:
    """A plugin on the subagent hook points, keeping what each was given."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    @hookimpl
    def on_subagent_start(self, input: Any) -> dict[str, Any]:
        self.seen.append(input)
        return {"additional_context": f"{input.agent_name}: be brief"}

    @hookimpl
    def on_subagent_stop(self, input: Any) -> dict[str, Any] | None:
        self.seen.append(input)
        return None if input.stop_hook_active else {"decision": "block", "reason": "add the tests"}


def test_another_agents_subagent_start_and_stop_run_the_subagent_hooks_in_the_session_that_owns_it(
    project: Project,
) -> None:
    policy = SubagentPolicy()
    calls: list[dict[str, Any]] = [
        {"hook": "subagentStart", "agentId": "child-1", "agentType": "helper", "transcriptPath": "/t/a.jsonl"},
        {"hook": "subagentStop", "agentId": "child-1", "agentType": "helper", "response": "Done."},
        {
            "hook": "subagentStop",
            "agentId": "child-1",
            "agentType": "helper",
            "response": "Done.",
            "stopHookActive": True,
        },
    ]

    async def scenario() -> tuple[list[dict[str, Any]], str]:
        async with project.host(watch=False, persist=False, session_hooks=False) as host:
            host.register_plugin(policy, "policy")
            return [await run_hook_call(host, parse_hook_call(call)) for call in calls], host.session_id

    answers, session_id = run(scenario())
    assert answers == [{"additionalContext": "helper: be brief"}, {"decision": "block", "reason": "add the tests"}, {}]
    start, stop, _ = policy.seen
    assert (start.session_id, start.agent_id, start.agent_type, start.parent_agent_id) == (
        session_id,
        "child-1",
        "helper",
        session_id,
    )
    assert start.transcript_path == "/t/a.jsonl" and stop.response == "Done."
    with pytest.raises(RpcError, match="subagentStop needs the agentId"):
        parse_hook_call({"hook": "subagentStop", "response": "x"})


def test_the_hooks_host_hook_runs_are_named_as_the_hook_point_table_names_them() -> None:
    """``host.hook`` takes every hook point but the two no other agent has (the transformed
    prompt, and the error hook the host calls itself), each under its wire name."""
    taken = set(get_args(HookWireName))
    assert taken <= set(HOOK_WIRE_NAMES.values())
    assert set(HOOK_WIRE_NAMES.values()) - taken == {"userPromptTransformed", "errorOccurred"}
