"""Turns through a real host with built-in tools and in-process plugins (no extension process).

A scripted agent answers; the tools are the embedding application's, the hooks pluggy plugins,
so everything runs in memory while passing the same pipeline an extension's tool would.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from extension_host import (
    AgentReply,
    ExtensionHost,
    ModelContext,
    NoAgentError,
    ScriptedAgent,
    ToolCall,
    TurnAbortedError,
    hookimpl,
)
from extension_host.session.agents import AgentRequest, agent_models, agent_usage
from extension_host.session.errors import AttachmentError, PromptRejectedError
from extension_protocol.protocol import Event
from helpers import Project, run
from sdk_extension import tool

Scenario = Callable[[ExtensionHost], Awaitable[None]]


def with_host(project: Project, scenario: Scenario, *plugins: object, **options: Any) -> None:
    async def main() -> None:
        async with project.host(watch=False, fork_server=False, session_hooks=False, **options) as host:
            for number, plugin in enumerate(plugins):
                host.register_plugin(plugin, f"plugin{number}")
            await scenario(host)

    run(main(), timeout=30)


calls: list[str] = []


@tool(description="Count the TODOs of the project")
def count_todos(folder: str) -> str:
    calls.append(folder)
    return f"3 TODOs in {folder}"


flaky_runs: list[int] = []


@tool(description="Fails the first two times")
def flaky() -> str:
    flaky_runs.append(1)
    if len(flaky_runs) <= 2:
        raise RuntimeError(f"attempt {len(flaky_runs)} failed")
    return "worked"


@pytest.fixture(autouse=True)
def fresh_tools() -> None:
    calls.clear()
    flaky_runs.clear()


class Hooks:
    """Prompt and tool hooks that rewrite, add context and are seen in the events."""

    @hookimpl
    def on_user_prompt_submitted(self, input: Any) -> dict[str, Any]:
        return {"modified_prompt": input.prompt + " [checked]", "additional_context": "the repo is big"}

    @hookimpl
    def on_pre_tool_use(self, input: Any) -> dict[str, Any]:
        return {"modified_args": {**input.tool_args, "folder": "src"}}

    @hookimpl
    def on_post_tool_use(self, input: Any) -> dict[str, Any]:
        return {
            "modified_result": input.tool_result.text_result_for_llm + " (audited)",
            "additional_context": "audit ok",
        }


def one_tool_call_agent(name: str = "count_todos", arguments: Any = None) -> ScriptedAgent:
    call = ToolCall(name, arguments if arguments is not None else {"folder": "."}, "call-1")
    return ScriptedAgent([[AgentReply("Let me look.", (call,)), AgentReply("There are 3 TODOs.")]])


def test_a_turn_with_a_tool_call_through_hooks_produces_the_event_sequence(project: Project) -> None:
    agent = one_tool_call_agent()

    async def scenario(host: ExtensionHost) -> None:
        types: list[str] = []
        host.on_event(lambda event: types.append(event["type"]))
        reply = await host.send_and_wait("count the TODOs", timeout=10)
        assert reply is not None and reply["data"]["content"] == "There are 3 TODOs."
        assert calls == ["src"]  # the pre hook's rewrite reached the tool
        assert [t for t in types if not t.startswith("hook.")] == [
            "pending_messages.modified",
            "pending_messages.modified",
            "session.title_changed",  # the session's first prompt names it
            "user.message",
            "system.notification",
            "assistant.turn_start",
            "assistant.message",
            "tool.execution_start",
            "tool.execution_complete",  # after the post hook: the result the agent gets
            "assistant.turn_end",
            "assistant.turn_start",
            "assistant.message",
            "assistant.turn_end",
            "assistant.idle",
            "session.idle",
        ]
        (user,) = host.events.history("user.message")
        assert user["data"]["content"] == "count the TODOs"
        assert user["data"]["transformedContent"] == "count the TODOs [checked]"
        first, second = host.events.history("assistant.message")
        assert first["data"]["toolRequests"] == [
            {"toolCallId": "call-1", "name": "count_todos", "arguments": {"folder": "."}, "type": "function"}
        ]
        assert first["data"]["turnId"] != second["data"]["turnId"]

    with_host(project, scenario, Hooks(), builtin_tools=[count_todos], agent=agent)
    # What the agent saw at its second step: the rewritten prompt, the hooks' context, its call,
    # and the result after the post hook, with its guidance appended as the Copilot CLI does.
    messages = agent.requests[1].messages
    guidance = 'Tool "count_todos" succeeded. Additional guidance from postToolUse hooks:\naudit ok'
    assert [(m.role, m.content) for m in messages] == [
        ("user", "count the TODOs [checked]"),
        ("user", "the repo is big"),
        ("assistant", "Let me look."),
        ("tool", f"3 TODOs in src (audited)\n\n{guidance}"),
    ]
    offered = {t.name: t for t in agent.requests[0].tools}
    assert sorted(offered) == ["count_todos", "extensions_manage", "extensions_reload"]  # the agent's own too
    assert offered["count_todos"].parameters is not None


def test_the_model_context_rebuilt_from_the_events_equals_the_live_one(project: Project) -> None:
    async def scenario(host: ExtensionHost) -> None:
        await host.send_and_wait("count the TODOs", timeout=10)
        rebuilt = ModelContext.from_events(host.events.history())
        assert rebuilt == host.model_context
        assert [m.role for m in rebuilt.messages] == ["user", "user", "assistant", "tool", "assistant"]

    with_host(project, scenario, Hooks(), builtin_tools=[count_todos], agent=one_tool_call_agent())


def test_prompts_sent_while_a_turn_runs_are_queued_and_run_in_order(project: Project) -> None:
    release, started = asyncio.Event(), asyncio.Event()
    seen: list[str] = []

    class SlowAgent:
        async def respond(self, request: Any) -> AgentReply:
            seen.append(request.messages[-1].content)
            started.set()
            await release.wait()
            return AgentReply(f"answered {request.messages[-1].content}")

    async def scenario(host: ExtensionHost) -> None:
        modified: list[int] = []
        host.on_event(
            lambda e: modified.append(len(host.pending_prompts)) if e["type"] == "pending_messages.modified" else None
        )
        first = await host.send("one")
        await asyncio.wait_for(started.wait(), 10)
        second = await host.send("two")
        third = await host.send("three")
        assert host.pending_prompts == [second, third]  # "one" is running
        release.set()
        await host.wait_idle(10)
        assert seen == ["one", "two", "three"]
        assert [e["data"]["messageId"] for e in host.events.history("user.message")] == [first, second, third]
        assert modified == [1, 0, 1, 2, 1, 0]  # queued, taken, queued, queued, taken, taken
        assert len(host.events.history("session.idle")) == 1

    with_host(project, scenario, agent=SlowAgent())


def test_send_without_an_agent_fails_at_once_saying_so(project: Project) -> None:
    async def scenario(host: ExtensionHost) -> None:
        with pytest.raises(NoAgentError, match=r"no agent.*ExtensionHost\(\.\.\., agent=\.\.\.\)"):
            await host.send_and_wait("hello")
        assert host.events.history("user.message") == []

    with_host(project, scenario)


def test_a_rejected_prompt_is_not_queued_and_names_who_rejected_it(project: Project) -> None:
    class Gate:
        @hookimpl
        def on_user_prompt_submitted(self, input: Any) -> None:
            raise ValueError("no deploys on Friday")  # a guard that fails rejects the prompt

    async def scenario(host: ExtensionHost) -> None:
        with pytest.raises(PromptRejectedError, match=r"rejected by plugin0: .*no deploys on Friday"):
            await host.send("deploy")
        assert host.events.history("user.message") == []

    with_host(project, scenario, Gate(), agent=ScriptedAgent.replies("never"))


def test_attachments_must_exist_inside_the_project(project: Project, tmp_path: Path) -> None:
    (project.root / "notes.md").write_text("x")
    outside = tmp_path / "secret.txt"
    outside.write_text("x")

    async def scenario(host: ExtensionHost) -> None:
        reply = await host.send_and_wait("read", [{"type": "file", "path": "notes.md"}], timeout=10)
        assert reply is not None
        (user,) = host.events.history("user.message")
        assert user["data"]["attachments"] == [
            {"type": "file", "path": str((project.root / "notes.md").resolve()), "displayName": "notes.md"}
        ]
        with pytest.raises(AttachmentError, match=r"'missing\.md': no such file"):
            await host.send("read", [{"type": "file", "path": "missing.md"}])
        with pytest.raises(AttachmentError, match="lies outside the project"):
            await host.send("read", [{"type": "file", "path": str(outside)}])
        with pytest.raises(AttachmentError, match=r"'\.\./secret\.txt': lies outside"):
            await host.send("read", [{"type": "file", "path": "../secret.txt"}])

    with_host(project, scenario, agent=ScriptedAgent.replies("ok", "never"))


class ErrorPolicy:
    def __init__(self, handling: str, retry_count: int | None = None, notification: str | None = None) -> None:
        self.output = {"error_handling": handling, "retry_count": retry_count, "user_notification": notification}
        self.seen: list[tuple[str, str]] = []

    @hookimpl
    def on_error_occurred(self, input: Any) -> dict[str, Any]:
        self.seen.append((input.error_context, input.error))
        return {key: value for key, value in self.output.items() if value is not None}


class FailureGuide:
    """Adds guidance when a tool fails, and records what it saw."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    @hookimpl
    def on_post_tool_use_failure(self, input: Any) -> dict[str, Any]:
        self.seen.append((input.tool_name, input.error))
        return {"additional_context": "try again with fewer files"}


def test_a_failed_tool_reaches_the_failure_hooks_not_the_error_hooks_and_the_agent_reads_their_guidance(
    project: Project,
) -> None:
    """As in the Copilot CLI: a ``failure`` is not an error of the session; the failure hooks
    hear of it once and their guidance follows the result as a user message in the CLI's words."""
    policy, guide = ErrorPolicy("retry", retry_count=2), FailureGuide()
    agent = one_tool_call_agent("flaky", {})

    async def scenario(host: ExtensionHost) -> None:
        await host.send_and_wait("go", timeout=10)
        assert len(flaky_runs) == 1
        assert policy.seen == []
        assert [name for name, _ in guide.seen] == ["flaky"] and "attempt 1 failed" in guide.seen[0][1]

    with_host(project, scenario, policy, guide, builtin_tools=[flaky], agent=agent)
    *_, result, guidance = agent.requests[1].messages
    assert (result.role, result.result_type) == ("tool", "failure")
    assert "attempt 1 failed" in result.content
    assert (guidance.role, guidance.content) == (
        "user",
        'Tool "flaky" failed. Additional guidance from postToolUseFailure hooks:\ntry again with fewer files',
    )


class FailingAgent:
    """Fails its first ``failures`` answers, then answers ``done``."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.asked = 0

    async def respond(self, request: Any) -> AgentReply:
        self.asked += 1
        if self.asked <= self.failures:
            raise ConnectionError(f"model call {self.asked} failed: 500")
        return AgentReply("done")


def test_a_failed_model_call_runs_the_error_hooks_and_retry_asks_the_agent_again(project: Project) -> None:
    """The error hooks hear of a failed agent step (``model_call``, recoverable); ``retry`` (this
    host's addition) asks again, up to ``retry_count`` times; a notification is a warning."""
    policy = ErrorPolicy("retry", retry_count=2, notification="the model is flaky")
    agent = FailingAgent(failures=2)

    async def scenario(host: ExtensionHost) -> None:
        reply = await host.send_and_wait("go", timeout=10)
        assert reply is not None and reply["data"]["content"] == "done"
        assert [context for context, _ in policy.seen] == ["model_call", "model_call"]
        assert "model call 1 failed: 500" in policy.seen[0][1]
        warnings = [e["data"]["message"] for e in host.events.history("session.warning")]
        assert warnings == ["the model is flaky"] * 2

    with_host(project, scenario, policy, agent=agent)
    assert agent.asked == 3


@pytest.mark.parametrize("handling", [None, "skip", "abort"])
def test_a_failed_model_call_ends_the_run_with_a_session_error_unless_an_error_hook_says_retry(
    project: Project, handling: str | None
) -> None:
    plugins = [ErrorPolicy(handling)] if handling else []
    agent = FailingAgent(failures=1)

    async def scenario(host: ExtensionHost) -> None:
        with pytest.raises(TurnAbortedError, match="model call 1 failed: 500"):
            await host.send_and_wait("go", timeout=10)
        (error,) = host.events.history("session.error")
        assert error["data"]["errorType"] == "agent"
        types = [e["type"] for e in host.events.history() if e["type"].startswith(("assistant.", "session."))]
        assert types[-4:] == ["assistant.turn_end", "session.error", "assistant.idle", "session.idle"]
        assert host.events.history("session.idle")[-1]["data"] == {"aborted": True, "mode": "interactive"}

    with_host(project, scenario, *plugins, agent=agent)
    assert agent.asked == 1


class Stopper:
    """Blocks the agent's stop ``times`` times, recording each input."""

    def __init__(self, times: int) -> None:
        self.times = times
        self.seen: list[Any] = []

    @hookimpl
    def on_agent_stop(self, input: Any) -> dict[str, Any] | None:
        self.seen.append(input)
        if len(self.seen) > self.times:
            return None
        return {"decision": "block", "reason": f"keep going {len(self.seen)}"}


def test_an_agent_stop_block_sends_its_reason_as_the_next_user_message_and_the_run_goes_on(project: Project) -> None:
    """The reason passes the prompt hooks like any prompt; the next stop says ``stop_hook_active``;
    the transcript is the session's event log."""
    stopper = Stopper(times=1)

    class Marker:
        @hookimpl
        def on_user_prompt_submitted(self, input: Any) -> dict[str, Any]:
            return {"modified_prompt": input.prompt + " [seen]"}

    agent = ScriptedAgent.replies("first answer", "second answer")

    async def scenario(host: ExtensionHost) -> None:
        reply = await host.send_and_wait("go", timeout=10)
        assert reply is not None and reply["data"]["content"] == "second answer"
        users = [e["data"] for e in host.events.history("user.message")]
        assert [(u["content"], u.get("transformedContent")) for u in users] == [
            ("go", "go [seen]"),
            ("keep going 1", "keep going 1 [seen]"),
        ]
        assert [(i.stop_reason, i.stop_hook_active) for i in stopper.seen] == [("end_turn", False), ("end_turn", True)]
        transcript = Path(stopper.seen[0].transcript_path)
        assert transcript.name == "events.jsonl" and transcript.is_file()
        assert host.session_id in transcript.read_text()

    with_host(project, scenario, stopper, Marker(), agent=agent)
    assert [m.content for m in agent.requests[1].messages] == ["go [seen]", "first answer", "keep going 1 [seen]"]


def test_agent_stop_blocks_in_a_row_are_capped_at_eight_then_the_run_ends_with_a_warning(project: Project) -> None:
    stopper = Stopper(times=100)

    async def scenario(host: ExtensionHost) -> None:
        await host.send_and_wait("go", timeout=10)
        assert len(stopper.seen) == 9
        assert len(host.events.history("user.message")) == 9
        (warning,) = host.events.history("session.warning")
        assert warning["data"]["message"] == "Agent stop hook blocked 8 consecutive times; ending turn."

    with_host(project, scenario, stopper, agent=ScriptedAgent.replies(*["again"] * 9))


def test_the_prompt_transformed_hooks_choose_the_text_the_model_gets(project: Project) -> None:
    """They see the prompt as the prompt hooks left it; ``user.message`` keeps what the user
    typed and carries the replacement as ``transformedContent``."""
    seen: list[tuple[str, str]] = []

    class Transformer:
        @hookimpl
        def on_user_prompt_transformed(self, input: Any) -> dict[str, Any]:
            seen.append((input.prompt, input.transformed_prompt))
            return {"modified_transformed_prompt": f"<context>today</context>\n\n{input.transformed_prompt}"}

    agent = ScriptedAgent.replies("ok")

    async def scenario(host: ExtensionHost) -> None:
        await host.send_and_wait("hello", timeout=10)
        (user,) = host.events.history("user.message")
        assert (user["data"]["content"], user["data"]["transformedContent"]) == (
            "hello",
            "<context>today</context>\n\nhello",
        )

    with_host(project, scenario, Transformer(), agent=agent)
    assert seen == [("hello", "hello")]
    assert [m.content for m in agent.requests[0].messages] == ["<context>today</context>\n\nhello"]


def test_an_agent_that_fails_ends_the_turn_with_a_session_error(project: Project) -> None:
    async def scenario(host: ExtensionHost) -> None:
        with pytest.raises(TurnAbortedError, match="the agent failed: ScriptExhausted"):
            await host.send_and_wait("one too many", timeout=10)
        # The session carries on: the next prompt is answered.

    with_host(project, scenario, agent=ScriptedAgent([]))


def test_an_unknown_tool_the_agent_asks_for_is_a_failure_it_sees(project: Project) -> None:
    agent = one_tool_call_agent("no_such_tool", {})

    async def scenario(host: ExtensionHost) -> None:
        await host.send_and_wait("go", timeout=10)

    with_host(project, scenario, agent=agent)
    result = agent.requests[1].messages[-1]
    assert (result.role, result.result_type) == ("tool", "failure")
    assert "no_such_tool" in result.content


def test_send_and_wait_times_out_with_timeout_error(project: Project) -> None:
    never = asyncio.Event()

    class StuckAgent:
        async def respond(self, request: Any) -> AgentReply:
            await never.wait()
            return AgentReply("late")

    async def scenario(host: ExtensionHost) -> None:
        with pytest.raises(TimeoutError):
            await host.send_and_wait("hello", timeout=0.05)

    with_host(project, scenario, agent=StuckAgent())


def test_a_scripted_agent_refuses_a_script_that_does_not_end_each_prompt_with_a_reply() -> None:
    call = ToolCall("t")
    with pytest.raises(ValueError, match="prompt 1 of the script ends with a tool call"):
        ScriptedAgent([[AgentReply(tool_calls=(call,))]])
    with pytest.raises(ValueError, match="prompt 2 of the script has a reply without tool calls"):
        ScriptedAgent([[AgentReply("a")], [AgentReply("b"), AgentReply("c")]])
    with pytest.raises(ValueError, match="prompt 1 of the script has no step"):
        ScriptedAgent([[]])
    agent = ScriptedAgent.replies("hi")
    assert agent.models() == [{"id": "scripted", "name": "scripted"}]


def test_an_agent_may_report_its_models_and_usage_and_one_that_does_not_reports_none() -> None:
    agent = ScriptedAgent.replies("hi")
    agent.respond(AgentRequest([], [], "m1", 0))
    assert agent_models(agent) == [{"id": "scripted", "name": "scripted"}]
    assert agent_usage(agent) == {"requests": 1}

    class Plain:
        def respond(self, request: AgentRequest) -> AgentReply:
            return AgentReply("x")

    assert agent_models(Plain()) is None and agent_usage(Plain()) is None and agent_models(None) is None


def test_the_application_asks_for_a_permission_of_its_own_and_on_ask_answers(project: Project) -> None:
    asked: list[tuple[str, Any, str | None]] = []

    def on_ask(tool: str, arguments: Any, reason: str | None) -> bool:
        asked.append((tool, arguments, reason))
        return True

    async def scenario(host: ExtensionHost) -> None:
        outcome = await host.request_permission(
            {"kind": "custom-tool", "toolName": "publish", "toolDescription": "Publish", "args": {"to": "pypi"}}
        )
        assert (outcome.approved, outcome.decided_by, outcome.result) == (True, "user", {"kind": "approved"})
        assert asked == [("publish", {"to": "pypi"}, None)]
        with pytest.raises(ValueError, match="needs a 'kind'"):
            await host.request_permission({"toolName": "x"})

    with_host(project, scenario, on_ask=on_ask)


def test_a_new_session_cancels_the_running_prompt_and_keeps_its_events_in_the_old_log(project: Project) -> None:
    started = asyncio.Event()

    @tool(description="Waits for ever")
    async def wait_for_ever() -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    agent = ScriptedAgent([[AgentReply("Waiting.", (ToolCall("wait_for_ever", {}, "call-1"),)), AgentReply("Done.")]])

    async def scenario(host: ExtensionHost) -> None:
        old = host.session_id
        waiting = asyncio.ensure_future(host.send_and_wait("wait", timeout=20))
        await asyncio.wait_for(started.wait(), 10)
        new = await host.new_session()
        with pytest.raises(TurnAbortedError, match="new_session"):
            await asyncio.wait_for(waiting, 10)
        assert host.pending_prompts == []
        assert host.model_context.messages == []
        sessions = project.home / "sessions"
        old_types = [json.loads(line)["type"] for line in (sessions / old / "events.jsonl").read_bytes().splitlines()]
        new_types = [json.loads(line)["type"] for line in (sessions / new / "events.jsonl").read_bytes().splitlines()]
        assert "user.message" in old_types and old_types[-1] == "session.shutdown"
        assert "user.message" not in new_types and new_types[0] == "session.start"

    with_host(project, scenario, agent=agent, builtin_tools=[wait_for_ever])


def test_turn_numbers_go_on_after_a_resumed_session_s_turns(project: Project) -> None:
    turn_ids: list[str] = []

    def record(event: Event) -> None:
        if event["type"] == "assistant.turn_start":
            turn_ids.append(event["data"]["turnId"])

    session_ids: list[str] = []

    async def first(host: ExtensionHost) -> None:
        host.on_event(record)
        session_ids.append(host.session_id)
        await host.send_and_wait("count the TODOs", timeout=10)

    async def second(host: ExtensionHost) -> None:
        host.on_event(record)
        await host.send_and_wait("count them again", timeout=10)

    with_host(project, first, agent=one_tool_call_agent(), builtin_tools=[count_todos])
    with_host(project, second, agent=one_tool_call_agent(), builtin_tools=[count_todos], session=session_ids[0])
    assert turn_ids == ["1", "2", "3", "4"]
