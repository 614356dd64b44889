"""Dispatcher in memory: one call from name to result through pre hooks, the tool and post (or failure) hooks.

A real :class:`~extension_host.calls.tool_registry.ToolRegistry`, :class:`~extension_host.hooks.runner.HookRunner`
and :class:`~extension_host.events.EventLog`; tools are fake registry entries and extensions'
hooks fake forwarders, so no process is started. How several hook outputs combine is
test_composition.py's and test_hook_runner.py's subject; here it is what dispatch does with the
outcome: whether and with what the tool runs, what the caller gets, what is announced.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from extension_host.calls.activity import ActivityTracker
from extension_host.calls.dispatch import AskHandler, Dispatcher, ToolOrigin, builtin_entry
from extension_host.calls.tool_registry import ToolEntry, ToolRegistry
from extension_host.errors import UnknownToolError
from extension_host.events import EventLog
from extension_host.hooks.runner import HookRunner
from extension_host.outcomes import ToolCallResult
from extension_protocol.connection import RpcError
from extension_protocol.results import ToolResult
from extension_protocol.tools import Tool, ToolInvocation
from helpers import run

SESSION = "session-1"
CWD = "/srv/project"
PRE, POST, FAILED = "on_pre_tool_use", "on_post_tool_use", "on_post_tool_use_failure"

Wire = Mapping[str, Any]


class FakeTool:
    """A registry entry's invoker: records each call and answers ``answer(arguments)``."""

    def __init__(self, answer: Callable[[Any], ToolResult] | None = None) -> None:
        self.calls: list[tuple[Any, str]] = []
        self.answer = answer or (lambda arguments: ToolResult(f"ran with {arguments}"))

    async def __call__(self, arguments: Any, tool_call_id: str) -> ToolResult:
        self.calls.append((arguments, tool_call_id))
        return self.answer(arguments)


class FakeHooks:
    """An extension's hook forwarder: records wire inputs, answers ``{"output": answer(hook, wire)}``."""

    def __init__(self, answer: Callable[[str, Wire], Any]) -> None:
        self.answer = answer
        self.received: list[tuple[str, dict[str, Any]]] = []

    async def __call__(self, hook: str, wire: Wire, timeout: float) -> Any:
        self.received.append((hook, dict(wire)))
        return {"output": self.answer(hook, wire)}


class Desk:
    """A dispatcher over a real registry, hook runner and event log."""

    def __init__(self, on_ask: AskHandler | None = None, reasons: Mapping[str, str] | None = None) -> None:
        self.events = EventLog()
        self.registry = ToolRegistry()
        self.hooks = HookRunner(self.events, session_id=SESSION, cwd=CWD)
        self.activity = ActivityTracker()
        self.dispatcher = Dispatcher(
            self.registry,
            self.events,
            self.hooks,
            lambda name: (reasons or {}).get(name),
            on_ask,
            self.activity,
            unknown_hint=lambda: "extension project:shell failed to start",
        )

    def tool(self, name: str, invoker: FakeTool, owner: str = "project:tools") -> FakeTool:
        self.registry.register(owner, [ToolEntry(name, f"{name} tool", None, owner, invoker)])
        return invoker

    def extension_hooks(self, extension_id: str, order: int, answer: Callable[[str, Wire], Any]) -> FakeHooks:
        forwarder = FakeHooks(answer)
        self.hooks.register_extension(extension_id, order, (PRE, POST, FAILED), forwarder)
        return forwarder

    def call(self, name: str, arguments: Any = None, **options: Any) -> ToolCallResult:
        return run(self.dispatcher.call_tool(name, arguments, **options), timeout=5)

    def tool_events(self) -> list[tuple[str, dict[str, Any]]]:
        return [(e["type"], e["data"]) for e in self.events.history() if e["type"].startswith("tool.")]


def only_pre(output: Any) -> Callable[[str, Wire], Any]:
    return lambda hook, wire: output if hook == PRE else None


# -- without hooks ----------------------------------------------------------------------------


def test_a_call_runs_the_tool_and_is_announced_by_a_start_and_a_complete_event() -> None:
    """The tool gets the arguments and the caller's tool call id; both events carry them in order."""
    desk = Desk()
    tool = desk.tool("grep", FakeTool())
    outcome = desk.call("grep", {"pattern": "x"}, tool_call_id="call-7")
    assert tool.calls == [({"pattern": "x"}, "call-7")]
    assert (outcome.result_type, outcome.text_result_for_llm) == ("success", "ran with {'pattern': 'x'}")
    assert (outcome.decision, outcome.decided_by, outcome.additional_context) == (None, None, None)
    assert desk.tool_events() == [
        ("tool.execution_start", {"toolCallId": "call-7", "toolName": "grep", "arguments": {"pattern": "x"}}),
        (
            "tool.execution_complete",
            {
                "toolCallId": "call-7",
                "toolName": "grep",
                "success": True,
                "result": {"content": "ran with {'pattern': 'x'}"},
                "toolTelemetry": {},
            },
        ),
    ]


def test_missing_arguments_are_an_empty_object_and_each_call_gets_its_own_id() -> None:
    """``None`` becomes ``{}``; without a tool call id the dispatcher makes unique ones."""
    desk = Desk()
    tool = desk.tool("now", FakeTool())
    desk.call("now")
    desk.call("now")
    (first_args, first_id), (_, second_id) = tool.calls
    assert first_args == {}
    assert first_id != second_id and first_id.startswith("call_")


@pytest.mark.parametrize(
    "result",
    [
        ToolResult("tool 'slow' of project:tools did not answer within 30 s", "timeout", error="no answer in 30 s"),
        ToolResult("disk full", "failure", error="OSError: disk full"),
    ],
    ids=["timeout", "failure"],
)
def test_an_unsuccessful_result_reaches_the_caller_and_the_complete_event_carries_its_error(result: ToolResult) -> None:
    """A timeout or failure of the tool is a result, not an exception; the event says success
    false, with the error and its code (the result type) as the Copilot CLI sends them."""
    desk = Desk()
    desk.tool("slow", FakeTool(lambda arguments: result))
    outcome = desk.call("slow", {})
    assert outcome.result == result
    (_, complete) = desk.tool_events()[-1]
    assert complete["success"] is False
    assert complete["result"] == {"content": result.text_result_for_llm, "resultType": result.result_type}
    assert complete["error"] == {"message": result.error, "code": result.result_type}


def test_a_built_in_tool_that_raises_gives_a_failure_naming_the_exception() -> None:
    """builtin_entry runs an in-process Tool; its exception becomes a failure result, with the invocation filled in."""
    seen: list[ToolInvocation] = []

    async def handler(arguments: Any, invocation: ToolInvocation) -> str:
        seen.append(invocation)
        raise RuntimeError("the index is locked")

    desk = Desk()
    desk.registry.register("builtin", [builtin_entry(Tool("index", "search the index", handler), SESSION)])
    outcome = desk.call("index", {"q": "x"}, tool_call_id="call-1")
    assert outcome.result_type == "failure"
    assert "the index is locked" in outcome.text_result_for_llm
    assert seen == [ToolInvocation(SESSION, "call-1", "index", {"q": "x"})]


def test_an_unknown_tool_raises_listing_the_available_ones_and_the_hint() -> None:
    """Nobody ever offered it: UnknownToolError with the names on offer and why one may be missing."""
    desk = Desk()
    desk.tool("grep", FakeTool())
    with pytest.raises(UnknownToolError) as raised:
        desk.call("grpe")
    assert str(raised.value) == "no tool named 'grpe'; available: grep; extension project:shell failed to start"
    assert desk.tool_events() == []


def test_a_tool_whose_extension_failed_gives_a_failure_with_the_reason_and_runs_no_hook() -> None:
    """The supervisor's reason comes back as a failure at once; no hook, no tool event."""
    reason = "tool 'lint' is unavailable: extension project:lint failed: exited with code 1 while running"
    desk = Desk(reasons={"lint": reason})
    guard = desk.extension_hooks("project:guard", 0, lambda hook, wire: None)
    outcome = desk.call("lint", {})
    assert (outcome.result_type, outcome.text_result_for_llm, outcome.error) == ("failure", reason, reason)
    assert guard.received == [] and desk.events.history() == []


# -- pre hooks ----------------------------------------------------------------------------------


def test_a_pre_hook_s_rewritten_arguments_are_what_the_tool_and_the_post_hook_see() -> None:
    """modifiedArgs replaces the arguments for everything after it; ``tool.execution_start``,
    which comes before the hooks (as in the Copilot CLI), shows what the model asked for."""
    desk = Desk()
    tool = desk.tool("shell", FakeTool())
    hooks = desk.extension_hooks(
        "project:guard",
        0,
        lambda hook, wire: {"modifiedArgs": {"command": "ls -la"}} if hook == PRE else None,
    )
    outcome = desk.call("shell", {"command": "ls"})
    assert tool.calls[0][0] == {"command": "ls -la"}
    assert desk.tool_events()[0][1]["arguments"] == {"command": "ls"}
    (pre_hook, pre_wire), (post_hook, post_wire) = hooks.received
    assert (pre_hook, pre_wire["toolName"], pre_wire["cwd"]) == (PRE, "shell", CWD)
    assert pre_wire["toolArgs"] == {"command": "ls"}
    assert (post_hook, post_wire["toolArgs"]) == (POST, {"command": "ls -la"})
    assert post_wire["toolResult"] == {
        "textResultForLlm": "ran with {'command': 'ls -la'}",
        "resultType": "success",
        "toolTelemetry": {},
    }
    assert outcome.result_type == "success"


def test_a_deny_returns_denied_with_the_copilot_cli_s_text_and_the_tool_never_runs() -> None:
    """No post hook; the model reads ``Denied by preToolUse hook: <reason>``; the call is
    started and completed with the code ``denied``; who decided is kept."""
    desk = Desk()
    tool = desk.tool("shell", FakeTool())
    hooks = desk.extension_hooks(
        "project:guard",
        0,
        only_pre({"permissionDecision": "deny", "permissionDecisionReason": "no rm", "additionalContext": "use trash"}),
    )
    outcome = desk.call("shell", {"command": "rm -rf /"}, tool_call_id="call-1")
    assert tool.calls == []
    assert [hook for hook, _ in hooks.received] == [PRE]
    assert outcome.result_type == "denied"
    assert outcome.text_result_for_llm == "Denied by preToolUse hook: no rm"
    [(_, _), (_, complete)] = desk.tool_events()
    assert complete["error"] == {"message": "Denied by preToolUse hook: no rm", "code": "denied"}
    assert complete["toolTelemetry"] == {}
    assert outcome.error == outcome.text_result_for_llm
    assert (outcome.decision, outcome.decided_by, outcome.additional_context) == ("deny", "project:guard", "use trash")


def test_an_allow_is_reported_with_who_decided_and_the_tool_runs() -> None:
    desk = Desk()
    tool = desk.tool("shell", FakeTool())
    desk.extension_hooks("project:guard", 0, only_pre({"permissionDecision": "allow"}))
    outcome = desk.call("shell", {"command": "ls"})
    assert len(tool.calls) == 1
    assert (outcome.result_type, outcome.decision, outcome.decided_by) == ("success", "allow", "project:guard")


def test_an_ask_without_an_ask_handler_counts_as_a_deny_that_says_why() -> None:
    desk = Desk()
    tool = desk.tool("shell", FakeTool())
    desk.extension_hooks(
        "project:guard", 0, only_pre({"permissionDecision": "ask", "permissionDecisionReason": "it deletes files"})
    )
    outcome = desk.call("shell", {"command": "rm x"})
    assert tool.calls == []
    assert (outcome.result_type, outcome.decided_by) == ("denied", "project:guard")
    assert outcome.text_result_for_llm == (
        "Denied by preToolUse hook (unable to ask user for confirmation): it deletes files"
    )


def sync_yes(name: str, arguments: Any, reason: str | None) -> bool:
    return True


async def async_yes(name: str, arguments: Any, reason: str | None) -> bool:
    await asyncio.sleep(0)
    return True


@pytest.mark.parametrize("handler", [sync_yes, async_yes], ids=["sync", "async"])
def test_an_approved_ask_runs_the_tool_with_the_decision_allow(handler: AskHandler) -> None:
    """The ask handler may answer directly or be awaited."""
    desk = Desk(on_ask=handler)
    tool = desk.tool("shell", FakeTool())
    desk.extension_hooks("project:guard", 0, only_pre({"permissionDecision": "ask"}))
    outcome = desk.call("shell", {"command": "rm x"})
    assert len(tool.calls) == 1
    assert (outcome.result_type, outcome.decision, outcome.decided_by) == ("success", "allow", "project:guard")


def test_a_declined_ask_is_denied_by_the_user_and_the_handler_saw_the_rewritten_arguments() -> None:
    asked: list[tuple[str, Any, str | None]] = []

    def decline(name: str, arguments: Any, reason: str | None) -> bool:
        asked.append((name, arguments, reason))
        return False

    desk = Desk(on_ask=decline)
    tool = desk.tool("shell", FakeTool())
    desk.extension_hooks(
        "project:guard",
        0,
        only_pre(
            {
                "permissionDecision": "ask",
                "permissionDecisionReason": "it deletes files",
                "modifiedArgs": {"command": "rm -i x"},
            }
        ),
    )
    outcome = desk.call("shell", {"command": "rm x"})
    assert asked == [("shell", {"command": "rm -i x"}, "it deletes files")]
    assert tool.calls == []
    assert (outcome.result_type, outcome.decision, outcome.decided_by) == ("denied", "deny", "user")
    assert outcome.text_result_for_llm == "Denied by preToolUse hook: the user declined (it deletes files)"


def test_a_pre_hook_that_times_out_denies_the_call_naming_the_extension() -> None:
    """Guards fail closed: no answer in time is a deny, and the tool does not run."""

    async def no_answer(hook: str, wire: Wire, timeout: float) -> Any:
        raise TimeoutError

    desk = Desk()
    tool = desk.tool("shell", FakeTool())
    desk.hooks.register_extension("project:slow-guard", 0, (PRE,), no_answer)
    outcome = desk.call("shell", {"command": "ls"})
    assert tool.calls == []
    assert (outcome.result_type, outcome.decided_by) == ("denied", "project:slow-guard")
    text = outcome.text_result_for_llm
    assert text.startswith("Denied by preToolUse hook: hook on_pre_tool_use of project:slow-guard")
    assert text.endswith("(guard hooks fail closed)")


# -- post hooks ---------------------------------------------------------------------------------


def test_a_post_hook_replaces_the_result_and_its_guidance_is_appended_as_the_copilot_cli_does() -> None:
    """The caller and the event get the modified result with the post hooks' guidance after it;
    context from pre and post hooks is joined in order; the pre hooks' is a message of its own."""
    desk = Desk()
    desk.tool("read", FakeTool(lambda arguments: ToolResult("password=hunter2")))

    def answer(hook: str, wire: Wire) -> Any:
        if hook == PRE:
            return {"additionalContext": "reading a config file"}
        return {"modifiedResult": {"textResultForLlm": "password=***"}, "additionalContext": "a secret was redacted"}

    desk.extension_hooks("project:redact", 0, answer)
    outcome = desk.call("read", {"path": ".env"})
    text = 'password=***\n\nTool "read" succeeded. Additional guidance from postToolUse hooks:\na secret was redacted'
    assert outcome.text_result_for_llm == text
    assert outcome.additional_context == "reading a config file\n\na secret was redacted"
    assert outcome.context_message == "reading a config file"
    assert desk.tool_events()[-1][1]["result"]["content"] == text


def test_a_failed_result_goes_to_the_failure_hooks_not_the_post_hooks() -> None:
    """As in the Copilot CLI: a ``failure`` gets ``postToolUseFailure`` with its error, whose
    guidance the model reads as a message of its own after the result, and no ``postToolUse``."""
    desk = Desk()
    desk.tool("read", FakeTool(lambda arguments: ToolResult("no such file", "failure", error="ENOENT")))
    hooks = desk.extension_hooks(
        "project:audit", 0, lambda hook, wire: {"additionalContext": "check the path"} if hook == FAILED else None
    )
    desk.hooks.register_extension("project:post", 1, (POST,), FakeHooks(lambda hook, wire: None))
    outcome = desk.call("read", {"path": "x"}, tool_call_id="call-9")
    (pre_hook, _), (failed_hook, wire) = hooks.received
    assert (pre_hook, failed_hook) == (PRE, FAILED)
    assert (wire["toolName"], wire["toolArgs"], wire["error"], wire["sessionId"]) == (
        "read",
        {"path": "x"},
        "ENOENT",
        SESSION,
    )
    assert (outcome.result_type, outcome.text_result_for_llm, outcome.error) == ("failure", "no such file", "ENOENT")
    assert (
        outcome.context_message
        == 'Tool "read" failed. Additional guidance from postToolUseFailure hooks:\ncheck the path'
    )
    ends = [e["data"] for e in desk.events.history("hook.end")]
    assert [end["hookType"] for end in ends] == ["preToolUse", "postToolUseFailure"]
    assert ends[-1]["output"] == {"call-9": {"additionalContext": "check the path"}}


@pytest.mark.parametrize("kind", ["denied", "rejected", "timeout"])
def test_a_denied_rejected_or_timed_out_result_gets_neither_post_nor_failure_hooks(kind: str) -> None:
    desk = Desk()
    desk.tool("read", FakeTool(lambda arguments: ToolResult(f"{kind} text", kind, error=f"{kind} error")))  # type: ignore[arg-type]
    hooks = desk.extension_hooks("project:audit", 0, lambda hook, wire: None)
    desk.hooks.register_extension("project:later", 1, (POST, FAILED), FakeHooks(lambda hook, wire: None))
    outcome = desk.call("read", {})
    assert [hook for hook, _ in hooks.received] == [PRE]
    assert outcome.result_type == kind
    (_, complete) = desk.tool_events()[-1]
    message = f"{kind} text" if kind in ("denied", "rejected") else f"{kind} error"
    assert complete["error"] == {"message": message, "code": kind}


def test_a_tool_and_the_agent_step_that_asked_for_it_are_named_in_its_events() -> None:
    """``turnId`` and ``model`` go into ``tool.execution_start`` and ``_complete``; a session log
    is the complete event's ``detailedContent`` and the tool's telemetry its ``toolTelemetry``."""
    desk = Desk()
    result = ToolResult("3 matches", session_log="a.py:1\nb.py:2\nc.py:3", tool_telemetry={"metrics": {"n": 3}})
    desk.tool("grep", FakeTool(lambda arguments: result))
    desk.extension_hooks("project:audit", 0, lambda hook, wire: None)
    run(desk.dispatcher.call_tool("grep", {}, tool_call_id="call-2", origin=ToolOrigin("4", "test-model")), timeout=5)
    (_, start), (_, complete) = desk.tool_events()
    assert (start["turnId"], start["model"], complete["turnId"], complete["model"]) == (
        "4",
        "test-model",
        "4",
        "test-model",
    )
    assert complete["result"] == {"content": "3 matches", "detailedContent": "a.py:1\nb.py:2\nc.py:3"}
    assert complete["toolTelemetry"] == {"metrics": {"n": 3}}


def test_both_hook_points_use_the_hooks_registered_when_the_call_began() -> None:
    """An extension whose hooks go away while the tool runs (it is reloaded) still gets its post hook."""
    desk = Desk()

    async def run_while_hooks_leave(arguments: Any, tool_call_id: str) -> ToolResult:
        desk.hooks.unregister("project:audit")
        return ToolResult("done")

    desk.registry.register("project:tools", [ToolEntry("build", "", None, "project:tools", run_while_hooks_leave)])
    hooks = desk.extension_hooks("project:audit", 0, lambda hook, wire: None)
    desk.call("build", {})
    assert [hook for hook, _ in hooks.received] == [PRE, POST]
    desk.call("build", {})
    assert len(hooks.received) == 2


def test_a_call_counts_as_activity_until_its_post_hooks_are_done() -> None:
    """A swap during the call waits for it (drain): the tracker is busy until the whole pipeline ends."""

    async def scenario() -> None:
        desk = Desk()
        post_started, release = asyncio.Event(), asyncio.Event()

        async def slow_post(hook: str, wire: Wire, timeout: float) -> Any:
            if hook == POST:
                post_started.set()
                await release.wait()
            return {"output": None}

        desk.tool("build", FakeTool())
        desk.hooks.register_extension("project:audit", 0, (PRE, POST), slow_post)
        call = asyncio.ensure_future(desk.dispatcher.call_tool("build", {}))
        await post_started.wait()
        generation = desk.activity.advance()
        assert desk.activity.busy_until(generation)
        release.set()
        assert (await call).result_type == "success"
        assert await desk.activity.wait_idle(generation, timeout=1)

    run(scenario(), timeout=5)


def test_a_call_that_raises_unknown_tool_leaves_no_activity_behind() -> None:
    desk = Desk()
    with pytest.raises(UnknownToolError):
        desk.call("nothing")
    assert not desk.activity.busy_until(desk.activity.generation)


def test_a_failing_post_hook_leaves_the_tool_s_result_and_warns_naming_the_extension() -> None:
    """Post hooks fail open: the caller gets what the tool returned; a warning says which hook failed."""

    async def broken(hook: str, wire: Wire, timeout: float) -> Any:
        raise RpcError(-32003, "hook on_post_tool_use raised KeyError: 'x'")

    desk = Desk()
    desk.tool("read", FakeTool(lambda arguments: ToolResult("contents")))
    desk.hooks.register_extension("project:audit", 0, (POST,), broken)
    outcome = desk.call("read", {})
    assert (outcome.result_type, outcome.text_result_for_llm) == ("success", "contents")
    [warning] = desk.events.history("session.warning")
    assert warning["data"]["extensionId"] == "project:audit"
    assert "hook on_post_tool_use of project:audit failed" in warning["data"]["message"]


def test_the_events_of_a_call_follow_the_copilot_cli_s_order_start_pre_hook_post_hook_complete() -> None:
    desk = Desk()
    desk.tool("read", FakeTool())
    desk.extension_hooks("project:audit", 0, lambda hook, wire: None)
    desk.call("read", {})
    assert [(e["type"], e["data"].get("hook")) for e in desk.events.history()] == [
        ("tool.execution_start", None),
        ("hook.start", PRE),
        ("hook.end", PRE),
        ("hook.start", POST),
        ("hook.end", POST),
        ("tool.execution_complete", None),
    ]
