"""HookRunner in memory: order, chained rewrites, deny, failure policy, events, registration.

Extensions are stood in for by fake forwarders (async functions given to ``register_extension``),
in-process plugins are small pluggy plugins; no process is started.
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from datetime import UTC, datetime
from typing import Any, TypeVar

import pluggy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extension_host.events import EventLog
from extension_host.hooks.composition import Composition
from extension_host.hooks.runner import SUSPEND_AFTER_TIMEOUTS, HookRunner
from extension_host.hooks.specs import hookimpl
from extension_protocol.connection import ConnectionClosed, RpcError
from extension_protocol.hook_models import (
    ErrorOccurredInput,
    HookInvocation,
    PostToolUseInput,
    PreToolUseInput,
    PreToolUseOutput,
    SessionEndInput,
    SessionStartInput,
    UserPromptSubmittedInput,
)
from extension_protocol.matchers import compile_matchers
from extension_protocol.results import ToolResult

T = TypeVar("T")

SESSION = "session-1"
CWD = "/srv/project"
WIRE_NAMES = {
    "on_user_prompt_submitted": "userPromptSubmitted",
    "on_pre_tool_use": "preToolUse",
    "on_post_tool_use": "postToolUse",
    "on_session_start": "sessionStart",
    "on_session_end": "sessionEnd",
    "on_error_occurred": "errorOccurred",
}
GUARDS = ["on_user_prompt_submitted", "on_pre_tool_use"]
OPEN = ["on_post_tool_use", "on_session_start"]

Wire = Mapping[str, Any]
Forward = Callable[[str, Wire, float], Awaitable[Any]]


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run on a fresh loop, bounded so a hang fails the test."""

    async def bounded() -> T:
        async with asyncio.timeout(5):
            return await coroutine

    return asyncio.run(bounded())


def make_runner(**options: Any) -> tuple[HookRunner, EventLog]:
    events = EventLog()
    return HookRunner(events, session_id=SESSION, cwd=CWD, **options), events


def base_input(hook: str, *, prompt: str = "hello", args: Any = None) -> Any:
    now = datetime.now(UTC)
    tool_args = {"command": "ls"} if args is None else args
    if hook == "on_user_prompt_submitted":
        return UserPromptSubmittedInput(timestamp=now, cwd=CWD, prompt=prompt)
    if hook == "on_pre_tool_use":
        return PreToolUseInput(timestamp=now, cwd=CWD, tool_name="shell", tool_args=tool_args)
    if hook == "on_post_tool_use":
        return PostToolUseInput(
            timestamp=now, cwd=CWD, tool_name="shell", tool_args=tool_args, tool_result=ToolResult("output")
        )
    if hook == "on_session_start":
        return SessionStartInput(timestamp=now, cwd=CWD, source="startup")
    if hook == "on_session_end":
        return SessionEndInput(timestamp=now, cwd=CWD, reason="complete")
    return ErrorOccurredInput(timestamp=now, cwd=CWD, error="bad", error_context="system", recoverable=True)


def plugin(hook: str, function: Callable[..., Any], **marks: Any) -> object:
    """A plugin object implementing ``hook`` with ``function`` (its arguments: input[, invocation])."""
    return types.SimpleNamespace(**{hook: hookimpl(**marks)(function)})


def recording_plugin(hook: str, name: str, calls: list[str], answer: Any = None, **marks: Any) -> object:
    def implementation(input: Any) -> Any:
        calls.append(name)
        return answer

    return plugin(hook, implementation, **marks)


class FakeExtension:
    """Stands in for an extension's forwarder: records wire inputs, answers ``hooks.invoke`` with
    ``{"output": answer(wire)}``, or with ``raw(wire)`` as the whole answer when given."""

    def __init__(
        self,
        name: str,
        calls: list[str] | None = None,
        answer: Callable[[Wire], Any] | None = None,
        raw: Callable[[Wire], Any] | None = None,
    ) -> None:
        self.name = name
        self.calls = calls if calls is not None else []
        self.answer = answer or (lambda wire: None)
        self.raw = raw or (lambda wire: {"output": self.answer(wire)})
        self.received: list[tuple[str, dict[str, Any], float]] = []

    async def __call__(self, hook: str, wire: Wire, timeout: float) -> Any:
        self.received.append((hook, dict(wire), timeout))
        self.calls.append(self.name)
        return self.raw(wire)


def hook_events(events: EventLog) -> list[tuple[str, dict[str, Any]]]:
    return [(e["type"], e["data"]) for e in events.history() if e["type"] in ("hook.start", "hook.end")]


def hook_calls(events: EventLog) -> list[dict[str, Any]]:
    """Every implementation call the ``hook.end`` events list, in order."""
    return [call for e in events.history("hook.end") for call in e["data"]["calls"]]


def started_owners(events: EventLog) -> list[str]:
    return [call["extensionId"] for call in hook_calls(events)]


# -- order ------------------------------------------------------------------------------------


def test_call_order_is_tryfirst_then_extensions_by_load_order_then_plugins_then_trylast() -> None:
    """Registered in a scrambled order, implementations are listed and called in the documented order."""
    runner, _ = make_runner()
    calls: list[str] = []
    hook = "on_pre_tool_use"
    runner.register_plugin(recording_plugin(hook, "last", calls, trylast=True), "last")
    runner.register_plugin(recording_plugin(hook, "plain-a", calls), "plain-a")
    for name, order in [("ext-c", 2), ("ext-b", 1), ("ext-a", 0)]:
        runner.register_extension(name, order, (hook,), FakeExtension(name, calls))
    runner.register_plugin(recording_plugin(hook, "plain-b", calls), "plain-b")
    runner.register_plugin(recording_plugin(hook, "first", calls, tryfirst=True), "first")

    expected = ["first", "ext-a", "ext-b", "ext-c", "plain-b", "plain-a", "last"]
    assert runner.implementers(hook) == expected
    run(runner.run(hook, base_input(hook)))
    assert calls == expected


def test_extensions_sort_by_order_not_by_name_or_registration() -> None:
    """An extension with a smaller order runs first even when its name sorts later."""
    runner, _ = make_runner()
    calls: list[str] = []
    hook = "on_session_start"
    runner.register_extension("aaa", 5, (hook,), FakeExtension("aaa", calls))
    runner.register_extension("zzz", 1, (hook,), FakeExtension("zzz", calls))
    assert runner.implementers(hook) == ["zzz", "aaa"]
    run(runner.run(hook, base_input(hook)))
    assert calls == ["zzz", "aaa"]


def test_an_extension_is_only_an_implementer_of_the_hooks_it_declared() -> None:
    """Declaring on_session_start does not make the extension a pre-tool implementer."""
    runner, _ = make_runner()
    fake = FakeExtension("ext")
    runner.register_extension("ext", 0, ("on_session_start",), fake)
    assert runner.implementers("on_session_start") == ["ext"]
    assert runner.implementers("on_pre_tool_use") == []
    run(runner.run("on_pre_tool_use", base_input("on_pre_tool_use")))
    assert fake.received == []


def test_a_hook_nobody_implements_returns_at_once_without_events_or_calls() -> None:
    """Other hooks have implementers, but this one has none: no call, no hook event, input unchanged."""
    runner, events = make_runner()
    calls: list[str] = []
    fake = FakeExtension("ext", calls)
    runner.register_extension("ext", 0, ("on_post_tool_use",), fake)
    runner.register_plugin(recording_plugin("on_session_start", "p", calls), "p")
    base = base_input("on_pre_tool_use", args={"command": "ls"})

    composition = run(runner.run("on_pre_tool_use", base))

    assert calls == [] and fake.received == []
    assert hook_events(events) == []
    assert events.history() == []
    assert composition.args == {"command": "ls"}
    assert composition.decision is None and composition.additional_context is None


def test_registering_an_extension_with_no_hooks_adds_nothing() -> None:
    """An empty hooks tuple registers no implementer anywhere."""
    runner, _ = make_runner()
    runner.register_extension("ext", 0, (), FakeExtension("ext"))
    assert all(runner.implementers(hook) == [] for hook in WIRE_NAMES)


# -- chained rewrites ---------------------------------------------------------------------------


def test_prompt_rewrites_chain_through_extensions_and_the_wire_input_is_camel_case() -> None:
    """The second extension receives the first's rewritten prompt; the result has both rewrites."""
    runner, _ = make_runner()
    hook = "on_user_prompt_submitted"
    one = FakeExtension("one", answer=lambda wire: {"modifiedPrompt": wire["prompt"] + " +one"})
    two = FakeExtension("two", answer=lambda wire: {"modified_prompt": wire["prompt"] + " +two"})
    runner.register_extension("two", 1, (hook,), two)
    runner.register_extension("one", 0, (hook,), one)
    base = base_input(hook, prompt="hello")

    composition = run(runner.run(hook, base))

    assert composition.prompt == "hello +one +two"
    (name_one, wire_one, _), (name_two, wire_two, _) = one.received[0], two.received[0]
    assert name_one == name_two == hook
    expected_ms = round(base.timestamp.timestamp() * 1000)
    assert wire_one == {"timestamp": expected_ms, "cwd": CWD, "prompt": "hello"}
    assert wire_two == {"timestamp": expected_ms, "cwd": CWD, "prompt": "hello +one"}
    assert isinstance(wire_one["timestamp"], int)
    assert base.prompt == "hello"


def test_tool_args_rewrites_chain_through_extensions_into_plugins() -> None:
    """Each extension sees toolArgs as left by the one before; a later plugin sees both rewrites."""
    runner, _ = make_runner()
    hook = "on_pre_tool_use"
    one = FakeExtension("one", answer=lambda wire: {"modifiedArgs": {**wire["toolArgs"], "one": 1}})
    two = FakeExtension("two", answer=lambda wire: {"modifiedArgs": {**wire["toolArgs"], "two": 2}})
    seen: list[Any] = []

    def later(input: PreToolUseInput) -> None:
        seen.append(input.tool_args)

    runner.register_plugin(plugin(hook, later), "later")
    runner.register_extension("two", 1, (hook,), two)
    runner.register_extension("one", 0, (hook,), one)
    base = base_input(hook, args={"command": "ls"})

    composition = run(runner.run(hook, base))

    wire_one, wire_two = one.received[0][1], two.received[0][1]
    assert set(wire_one) == {"timestamp", "cwd", "toolName", "toolArgs"}
    assert isinstance(wire_one["timestamp"], int)
    assert wire_one["timestamp"] == round(base.timestamp.timestamp() * 1000)
    assert (wire_one["cwd"], wire_one["toolName"]) == (CWD, "shell")
    assert wire_one["toolArgs"] == {"command": "ls"}
    assert wire_two["toolArgs"] == {"command": "ls", "one": 1}
    assert seen == [{"command": "ls", "one": 1, "two": 2}]
    assert composition.args == {"command": "ls", "one": 1, "two": 2}
    assert base.tool_args == {"command": "ls"}


def test_tool_result_rewrites_chain_and_travel_as_wire_results() -> None:
    """A modified result from one extension is the toolResult the next one receives."""
    runner, _ = make_runner()
    hook = "on_post_tool_use"
    one = FakeExtension("one", answer=lambda wire: {"modifiedResult": {"textResultForLlm": "redacted"}})
    two = FakeExtension("two")
    runner.register_extension("one", 0, (hook,), one)
    runner.register_extension("two", 1, (hook,), two)

    composition = run(runner.run(hook, base_input(hook)))

    assert one.received[0][1]["toolResult"] == {
        "textResultForLlm": "output",
        "resultType": "success",
        "toolTelemetry": {},
    }
    assert two.received[0][1]["toolResult"]["textResultForLlm"] == "redacted"
    assert composition.result is not None and composition.result.text_result_for_llm == "redacted"


def test_extension_forwarders_receive_the_hook_point_s_timeout() -> None:
    """The per-hook timeout is passed to the forwarder, which applies it to its request."""
    runner, _ = make_runner(timeout=7.0, timeouts={"on_pre_tool_use": 2.5})
    pre, start = FakeExtension("pre"), FakeExtension("start")
    runner.register_extension("pre", 0, ("on_pre_tool_use",), pre)
    runner.register_extension("start", 1, ("on_session_start",), start)
    run(runner.run("on_pre_tool_use", base_input("on_pre_tool_use")))
    run(runner.run("on_session_start", base_input("on_session_start")))
    assert pre.received[0][2] == 2.5
    assert start.received[0][2] == 7.0


# -- deny -------------------------------------------------------------------------------------


def test_a_deny_stops_the_chain_before_later_implementations() -> None:
    """After an extension denies, the plugin after it is neither called nor announced."""
    runner, events = make_runner()
    calls: list[str] = []
    hook = "on_pre_tool_use"
    runner.register_plugin(recording_plugin(hook, "after", calls), "after")
    denier = FakeExtension(
        "guard", calls, answer=lambda wire: {"permissionDecision": "deny", "permissionDecisionReason": "no rm"}
    )
    runner.register_extension("guard", 0, (hook,), denier)
    allower = recording_plugin(hook, "before", calls, answer={"permission_decision": "allow"}, tryfirst=True)
    runner.register_plugin(allower, "before")

    composition = run(runner.run(hook, base_input(hook)))

    assert calls == ["before", "guard"]
    assert (composition.decision, composition.reason, composition.decided_by) == ("deny", "no rm", "guard")
    assert composition.stopped is True
    assert started_owners(events) == ["before", "guard"]
    assert "after" not in runner.recent
    end = hook_calls(events)[-1]
    assert (end["extensionId"], end["decision"], end["outcome"]) == ("guard", "deny", "ok")


def test_ask_does_not_stop_the_chain_and_wins_over_a_later_allow() -> None:
    """An ask lets later implementations run; their allow does not override it."""
    runner, _ = make_runner()
    calls: list[str] = []
    hook = "on_pre_tool_use"
    runner.register_plugin(recording_plugin(hook, "allower", calls, answer={"permissionDecision": "allow"}), "allower")
    asker = FakeExtension("asker", calls, answer=lambda wire: {"permissionDecision": "ask"})
    runner.register_extension("asker", 0, (hook,), asker)
    composition = run(runner.run(hook, base_input(hook)))
    assert calls == ["asker", "allower"]
    assert (composition.decision, composition.decided_by) == ("ask", "asker")


# -- failure policy ---------------------------------------------------------------------------

Installer = Callable[[HookRunner, str], str]
"""Registers a failing implementation of a hook and returns its owner's name."""


def _raise(error: Callable[[], BaseException]) -> Callable[[Wire], Any]:
    def answer(wire: Wire) -> Any:
        raise error()

    return answer


def failing_extension(answer: Callable[[Wire], Any]) -> Installer:
    def install(runner: HookRunner, hook: str) -> str:
        runner.register_extension("broken-ext", 0, (hook,), FakeExtension("broken-ext", answer=answer))
        return "broken-ext"

    return install


def raising_plugin(runner: HookRunner, hook: str) -> str:
    def implementation(input: Any) -> Any:
        raise RuntimeError("plugin exploded")

    return runner.register_plugin(plugin(hook, implementation, tryfirst=True), "broken-plugin")


def hanging_plugin(runner: HookRunner, hook: str) -> str:
    async def implementation(input: Any) -> Any:
        await asyncio.Event().wait()

    return runner.register_plugin(plugin(hook, implementation, tryfirst=True), "broken-plugin")


def invalid_plugin(runner: HookRunner, hook: str) -> str:
    def implementation(input: Any) -> Any:
        return {"bogus_key": True}

    return runner.register_plugin(plugin(hook, implementation, tryfirst=True), "broken-plugin")


def wrong_type_key(hook: str) -> str:
    return {
        "on_pre_tool_use": "permission_decision",
        "on_user_prompt_submitted": "modified_prompt",
    }.get(hook, "additional_context")


def wrong_type_value(hook: str) -> Any:
    return "maybe" if hook == "on_pre_tool_use" else 42


def wrong_type_extension(runner: HookRunner, hook: str) -> str:
    key, value = wrong_type_key(hook), wrong_type_value(hook)
    return failing_extension(lambda wire: {key: value})(runner, hook)


# (id, installer, outcome, words the reason must contain besides the owner)
FAILURES: list[tuple[str, Installer, str, Callable[[str], list[str]]]] = [
    ("plugin raises", raising_plugin, "error", lambda hook: ["plugin exploded"]),
    ("extension RpcError", failing_extension(_raise(lambda: RpcError(-32003, "boom"))), "error", lambda hook: ["boom"]),
    ("extension times out", failing_extension(_raise(TimeoutError)), "timeout", lambda hook: []),
    ("plugin hangs", hanging_plugin, "timeout", lambda hook: []),
    ("extension unknown key", failing_extension(lambda wire: {"bogusKey": 1}), "invalid", lambda hook: ["bogusKey"]),
    ("plugin unknown key", invalid_plugin, "invalid", lambda hook: ["bogus_key"]),
    ("extension wrong value", wrong_type_extension, "invalid", lambda hook: [wrong_type_key(hook)]),
    ("extension non-dict", failing_extension(lambda wire: 42), "invalid", lambda hook: ["int"]),
    (
        "extension gone",
        failing_extension(_raise(lambda: ConnectionClosed("pipe closed"))),
        "error",
        lambda hook: ["gone"],
    ),
]
FAILURE_CASES = [case[1:] for case in FAILURES]
FAILURE_IDS = [case[0] for case in FAILURES]


@pytest.mark.parametrize("hook", GUARDS)
@pytest.mark.parametrize(("installer", "outcome", "words"), FAILURE_CASES, ids=FAILURE_IDS)
def test_a_failing_guard_implementation_denies_naming_its_owner(
    hook: str, installer: Installer, outcome: str, words: Callable[[str], list[str]]
) -> None:
    """Exception, timeout, invalid output or a lost extension: deny, recorded, later ones not called."""
    runner, events = make_runner(timeouts={hook: 0.05})
    calls: list[str] = []
    owner = installer(runner, hook)
    runner.register_plugin(recording_plugin(hook, "after", calls), "after")

    composition = run(runner.run(hook, base_input(hook)))

    assert composition.decision == "deny"
    assert composition.decided_by == owner
    assert composition.stopped is True
    assert composition.reason is not None
    assert owner in composition.reason
    for word in words(hook):
        assert word in composition.reason
    assert calls == []
    record = runner.recent[owner][-1]
    assert (record.hook, record.owner, record.outcome, record.decision) == (hook, owner, outcome, "deny")
    assert record.error is not None
    (end,) = [e["data"] for e in events.history("hook.end")]
    assert (end["success"], end["error"]["source"]) == (False, owner)
    (call,) = end["calls"]
    assert (call["extensionId"], call["outcome"], call["decision"]) == (owner, outcome, "deny")
    assert events.history("session.warning") == []


@pytest.mark.parametrize("hook", OPEN)
@pytest.mark.parametrize(("installer", "outcome", "words"), FAILURE_CASES, ids=FAILURE_IDS)
def test_a_failing_non_guard_implementation_fails_open_with_a_warning(
    hook: str, installer: Installer, outcome: str, words: Callable[[str], list[str]]
) -> None:
    """The failure is skipped: later implementations still run and contribute; a warning names the owner."""
    runner, events = make_runner(timeouts={hook: 0.05})
    calls: list[str] = []
    owner = installer(runner, hook)
    runner.register_plugin(recording_plugin(hook, "after", calls, answer={"additional_context": "still here"}), "after")
    base = base_input(hook)

    composition = run(runner.run(hook, base))

    assert calls == ["after"]
    assert composition.decision is None and composition.stopped is False
    assert composition.additional_context == "still here"
    if hook == "on_post_tool_use":
        assert composition.result == base.tool_result
    (warning,) = [e["data"] for e in events.history("session.warning")]
    assert warning["extensionId"] == owner
    assert owner in warning["message"]
    for word in words(hook):
        assert word in warning["message"]
    record = runner.recent[owner][-1]
    assert (record.outcome, record.decision) == (outcome, None)
    assert runner.recent["after"][-1].outcome == "ok"
    (end,) = [e["data"] for e in events.history("hook.end")]
    assert (end["success"], end["error"]["source"]) == (False, owner)
    outcomes = {call["extensionId"]: call["outcome"] for call in end["calls"]}
    assert outcomes == {owner: outcome, "after": "ok"}


def test_a_timed_out_plugin_is_cancelled() -> None:
    """The hanging coroutine of an in-process plugin is cancelled when its timeout passes."""
    runner, _ = make_runner(timeouts={"on_pre_tool_use": 0.05})
    cancelled: list[bool] = []

    async def hang(input: Any) -> Any:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    runner.register_plugin(plugin("on_pre_tool_use", hang), "hang")
    composition = run(runner.run("on_pre_tool_use", base_input("on_pre_tool_use")))
    assert cancelled == [True]
    assert composition.decision == "deny"
    assert "0.05" in (runner.recent["hang"][-1].error or "")


def test_recent_outcomes_keep_only_the_last_twenty_per_owner() -> None:
    """After 25 calls, 20 records remain for that implementation."""
    runner, _ = make_runner()
    runner.register_plugin(recording_plugin("on_session_start", "p", []), "p")
    for _ in range(25):
        run(runner.run("on_session_start", base_input("on_session_start")))
    assert len(runner.recent["p"]) == 20
    assert all(record.outcome == "ok" for record in runner.recent["p"])


# -- events -----------------------------------------------------------------------------------


def test_a_hook_point_s_run_emits_one_persisted_start_and_end_pair_listing_every_call() -> None:
    """One pair per run of a hook point, not per implementation, persisted as in the Copilot CLI:
    the start carries the input, the end the combined output and each call in order."""
    runner, events = make_runner()
    hook = "on_pre_tool_use"
    runner.register_plugin(recording_plugin(hook, "plugin", [], answer={"permissionDecision": "allow"}), "plugin")
    runner.register_extension("ext", 0, (hook,), FakeExtension("ext"))
    runner.register_plugin(recording_plugin(hook, "first", [], tryfirst=True), "first")

    run(runner.run(hook, base_input(hook), tool_call_id="call_7"))
    run(runner.run(hook, base_input(hook), tool_call_id="call_8"))

    pairs = hook_events(events)
    assert [kind for kind, _ in pairs] == ["hook.start", "hook.end"] * 2
    (_, start), (_, end) = pairs[:2]
    assert start["hookInvocationId"] == end["hookInvocationId"] != pairs[2][1]["hookInvocationId"]
    assert start["hookType"] == end["hookType"] == "preToolUse"
    assert start["input"] == {
        "sessionId": SESSION,
        "cwd": CWD,
        "toolCalls": [{"id": "call_7", "name": "shell", "args": {"command": "ls"}}],
    }
    assert (end["success"], "error" in end) == (True, False)
    assert end["output"] == {"call_7": {"permissionDecision": "allow"}}
    assert [call["extensionId"] for call in end["calls"]] == ["first", "ext", "plugin"]
    assert all(call["outcome"] == "ok" and call["durationMs"] >= 0 for call in end["calls"])
    assert end["calls"][-1]["decision"] == "allow"
    assert not any(e.get("ephemeral") for e in events.history() if e["type"].startswith("hook."))


def test_a_denied_tool_call_s_hook_end_output_is_the_text_the_model_reads() -> None:
    """As in the Copilot CLI: ``{toolCallId: "Denied by preToolUse hook: <reason>"}``, and
    ``No reason provided`` when the hook gave none."""
    runner, events = make_runner()
    hook = "on_pre_tool_use"
    reasons = iter(["not here", None])
    runner.register_extension(
        "guard",
        0,
        (hook,),
        FakeExtension(
            "guard", answer=lambda wire: {"permissionDecision": "deny", "permissionDecisionReason": next(reasons)}
        ),
    )

    run(runner.run(hook, base_input(hook), tool_call_id="call_1"))
    run(runner.run(hook, base_input(hook), tool_call_id="call_2"))

    outputs = [e["data"]["output"] for e in events.history("hook.end")]
    assert outputs == [
        {"call_1": "Denied by preToolUse hook: not here"},
        {"call_2": "Denied by preToolUse hook: No reason provided"},
    ]


@pytest.mark.parametrize("hook", list(WIRE_NAMES))
def test_hook_events_carry_the_wire_name_of_the_hook_point(hook: str) -> None:
    """hookType is the wire spelling, e.g. preToolUse; hook is the Python name."""
    runner, events = make_runner()
    runner.register_plugin(recording_plugin(hook, "p", []), "p")
    run(runner.run(hook, base_input(hook)))
    start, end = [data for _, data in hook_events(events)]
    assert start["hookType"] == end["hookType"] == WIRE_NAMES[hook]
    assert start["hook"] == end["hook"] == hook


# -- in-process plugins -------------------------------------------------------------------------


def test_sync_and_async_plugins_both_contribute() -> None:
    """An async plugin returning an output object and a sync one returning a camelCase dict both count."""
    runner, _ = make_runner()
    hook = "on_pre_tool_use"

    class AsyncPlugin:
        @hookimpl(tryfirst=True)
        async def on_pre_tool_use(self, input: PreToolUseInput, invocation: HookInvocation) -> PreToolUseOutput:
            await asyncio.sleep(0)
            return PreToolUseOutput(additional_context=f"async saw {input.tool_name}")

    class SyncPlugin:
        @hookimpl
        def on_pre_tool_use(self, input: PreToolUseInput) -> dict[str, Any]:
            return {"additionalContext": f"sync saw {input.tool_name}", "permissionDecision": "ask"}

    runner.register_plugin(AsyncPlugin(), "async")
    runner.register_plugin(SyncPlugin(), "sync")
    composition = run(runner.run(hook, base_input(hook)))
    assert composition.additional_context == "async saw shell\n\nsync saw shell"
    assert (composition.decision, composition.decided_by) == ("ask", "sync")
    assert runner.recent["async"][-1].outcome == runner.recent["sync"][-1].outcome == "ok"


def test_plugins_may_take_only_input_or_input_and_invocation() -> None:
    """A plugin asking for invocation gets the session id; one asking only for input works too."""
    runner, _ = make_runner()
    hook = "on_session_end"
    seen: list[Any] = []

    class WithInvocation:
        @hookimpl
        def on_session_end(self, input: SessionEndInput, invocation: HookInvocation) -> dict[str, Any]:
            seen.append(invocation)
            return {"session_summary": f"ended: {input.reason}"}

    class InputOnly:
        @hookimpl
        def on_session_end(self, input: SessionEndInput) -> dict[str, Any]:
            return {"cleanup_actions": ["closed files"]}

    runner.register_plugin(WithInvocation(), "with")
    runner.register_plugin(InputOnly(), "only")
    composition = run(runner.run(hook, base_input(hook)))
    assert seen == [HookInvocation(SESSION)]
    assert composition.merged_value("session_summary") == "ended: complete"
    assert composition.merged_value("cleanup_actions") == ["closed files"]


def test_register_plugin_returns_its_name() -> None:
    """The given name is returned and used as the implementer's name."""
    runner, _ = make_runner()
    assert runner.register_plugin(recording_plugin("on_session_start", "x", []), "audit") == "audit"
    assert runner.implementers("on_session_start") == ["audit"]


def test_a_plugin_with_an_unknown_argument_is_rejected() -> None:
    """A hookimpl asking for an argument the spec does not have raises PluginValidationError."""
    runner, _ = make_runner()

    class Bad:
        @hookimpl
        def on_pre_tool_use(self, input: Any, extra: Any) -> None:
            return None

    with pytest.raises(pluggy.PluginValidationError, match="extra"):
        runner.register_plugin(Bad(), "bad")
    assert runner.implementers("on_pre_tool_use") == []


def test_a_plugin_with_an_unknown_hook_name_is_rejected() -> None:
    """A misspelt hook point is refused at registration, as register_plugin documents."""
    runner, _ = make_runner()

    class Misspelt:
        @hookimpl
        def on_pre_tool_usage(self, input: Any) -> None:
            return None

    with pytest.raises(pluggy.PluginValidationError):
        runner.register_plugin(Misspelt(), "misspelt")


def test_registering_the_same_name_twice_is_an_error() -> None:
    """A second plugin under a taken name raises ValueError."""
    runner, _ = make_runner()
    runner.register_plugin(recording_plugin("on_session_start", "a", []), "dup")
    with pytest.raises(ValueError):
        runner.register_plugin(recording_plugin("on_session_start", "b", []), "dup")


def test_unregister_removes_plugins_and_extensions() -> None:
    """After unregistering, neither is listed nor called; unknown names are ignored."""
    runner, events = make_runner()
    calls: list[str] = []
    hook = "on_pre_tool_use"
    runner.register_plugin(recording_plugin(hook, "plugin", calls), "plugin")
    runner.register_extension("ext", 0, (hook,), FakeExtension("ext", calls))
    runner.register_extension("stays", 1, (hook,), FakeExtension("stays", calls))

    runner.unregister("plugin")
    runner.unregister("ext")
    runner.unregister("never-registered")

    assert runner.implementers(hook) == ["stays"]
    run(runner.run(hook, base_input(hook)))
    assert calls == ["stays"]
    assert started_owners(events) == ["stays"]


def test_an_unregistered_extension_can_register_again_with_a_new_order() -> None:
    """A restarted extension gets its new place in the order."""
    runner, _ = make_runner()
    hook = "on_session_start"
    runner.register_extension("a", 0, (hook,), FakeExtension("a"))
    runner.register_extension("b", 1, (hook,), FakeExtension("b"))
    runner.unregister("a")
    runner.register_extension("a", 2, (hook,), FakeExtension("a"))
    assert runner.implementers(hook) == ["b", "a"]


def test_the_call_order_follows_every_change_made_after_it_was_asked_for() -> None:
    """Registering, reordering, unregistering and failed registrations each show in the next
    chain; a chain taken earlier stays the snapshot it was."""
    runner, _ = make_runner()
    hook = "on_pre_tool_use"
    runner.register_extension("a", 0, (hook,), FakeExtension("a"))
    snapshot = runner.chain(hook)
    assert runner.implementers(hook) == ["a"]
    runner.register_extension("b", 1, (hook,), FakeExtension("b"))
    assert runner.implementers(hook) == ["a", "b"]
    runner.register_plugin(recording_plugin(hook, "p", []), "p")
    assert runner.implementers(hook) == ["a", "b", "p"]
    runner.reorder({"a": 5})
    assert runner.implementers(hook) == ["b", "a", "p"]
    with pytest.raises(pluggy.PluginValidationError):
        runner.register_plugin(types.SimpleNamespace(on_pre_tool_use=hookimpl(lambda nope: None)), "bad")
    assert runner.implementers(hook) == ["b", "a", "p"]
    runner.unregister("b")
    assert runner.implementers(hook) == ["a", "p"]
    runner.unregister("p")
    runner.unregister("a")
    assert runner.implementers(hook) == []
    assert [impl.plugin_name for impl in snapshot] == ["a"]


# -- timeouts -----------------------------------------------------------------------------------


def test_timeouts_are_configurable_per_hook_point_with_a_default() -> None:
    """Named hook points get their own timeout; the rest get the runner's default."""
    runner, _ = make_runner(timeout=12.0, timeouts={"on_session_end": 3.0})
    assert runner.timeout("on_session_end") == 3.0
    assert all(runner.timeout(hook) == 12.0 for hook in WIRE_NAMES if hook != "on_session_end")


def test_the_default_timeout_is_thirty_seconds() -> None:
    """Without configuration every hook point has the contract's 30 s."""
    runner, _ = make_runner()
    assert {runner.timeout(hook) for hook in WIRE_NAMES} == {30.0}


def test_an_unknown_hook_point_in_timeouts_is_rejected_listing_the_valid_names() -> None:
    """ValueError names the bad key and every valid hook point."""
    with pytest.raises(ValueError) as error:
        make_runner(timeouts={"on_pre_tool_uses": 1.0})
    message = str(error.value)
    assert "on_pre_tool_uses" in message
    for hook in WIRE_NAMES:
        assert hook in message


def test_a_composition_is_returned_for_the_hook_that_was_run() -> None:
    """run returns a Composition of that hook, seeded with the base input's rewritable value."""
    runner, _ = make_runner()
    runner.register_plugin(recording_plugin("on_user_prompt_submitted", "p", []), "p")
    composition = run(runner.run("on_user_prompt_submitted", base_input("on_user_prompt_submitted", prompt="hi")))
    assert isinstance(composition, Composition)
    assert (composition.hook, composition.prompt) == ("on_user_prompt_submitted", "hi")


# -- the shape of an extension's answer ---------------------------------------------------------


@pytest.mark.parametrize("hook", GUARDS)
@pytest.mark.parametrize(
    ("answer", "words"),
    [
        ("garbage", ["answered hooks.invoke with str"]),
        (42, ["answered hooks.invoke with int"]),
        ([1], ["answered hooks.invoke with list"]),
        ({"output": "garbage"}, ["returned str"]),
        ({"output": 42}, ["returned int"]),
        ({"output": [1]}, ["returned list"]),
        ({"output": {"additionalContext": 7}}, ["additional_context"]),
        ({"output": {"additionalContext": "a", "additional_context": "b"}}, ["given twice"]),
    ],
    ids=["str", "int", "list", "output-str", "output-int", "output-list", "wrong-type", "both-spellings"],
)
def test_a_guard_answering_anything_malformed_denies_naming_the_extension(
    hook: str, answer: Any, words: list[str]
) -> None:
    """Whatever the shape of the whole answer or of its output, a malformed one is a deny."""
    runner, _events = make_runner()
    runner.register_extension("raw", 0, (hook,), FakeExtension("raw", raw=lambda wire: answer))

    composition = run(runner.run(hook, base_input(hook)))

    assert (composition.decision, composition.decided_by) == ("deny", "raw")
    assert composition.reason is not None and "hook " + hook + " of raw failed" in composition.reason
    for word in words:
        assert word in composition.reason
    assert runner.recent["raw"][-1].outcome == "invalid"


@pytest.mark.parametrize("hook", GUARDS)
@pytest.mark.parametrize("answer", [None, {}, {"output": None}], ids=["null", "no-output-key", "output-null"])
def test_no_answer_no_output_key_and_a_null_output_are_no_opinion(hook: str, answer: Any) -> None:
    """The three spellings of "nothing to say" pass the guard untouched."""
    runner, _events = make_runner()
    runner.register_extension("quiet", 0, (hook,), FakeExtension("quiet", raw=lambda wire: answer))
    base = base_input(hook)

    composition = run(runner.run(hook, base))

    assert composition.decision is None and composition.stopped is False
    assert composition.next_input(base) is base
    assert runner.recent["quiet"][-1].outcome == "ok"


@pytest.mark.parametrize("hook", ["on_post_tool_use", "on_session_start", "on_session_end", "on_error_occurred"])
def test_an_observer_answering_garbage_is_ignored_with_a_warning_naming_extension_and_hook(hook: str) -> None:
    """The answer changes nothing; one session.warning names the extension and the hook point."""
    runner, events = make_runner()
    runner.register_extension("raw", 0, (hook,), FakeExtension("raw", raw=lambda wire: {"output": [1]}))
    base = base_input(hook)

    composition = run(runner.run(hook, base))

    assert composition == Composition(hook, getattr(base, "tool_result", None))
    (warning,) = [e["data"] for e in events.history("session.warning")]
    assert warning["extensionId"] == "raw"
    assert f"hook {hook} of raw failed" in warning["message"] and "(ignored)" in warning["message"]


def test_an_output_that_cannot_be_applied_is_a_deny_not_an_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    """Should folding a checked output in ever raise, a guard still denies and run() returns."""

    def broken_apply(self: Composition, output: Any, owner: str) -> str | None:
        raise KeyError("surprise")

    monkeypatch.setattr(Composition, "apply", broken_apply)
    hook = "on_pre_tool_use"
    runner, _ = make_runner()
    runner.register_extension(
        "ext", 0, (hook,), FakeExtension("ext", answer=lambda wire: {"permissionDecision": "allow"})
    )

    composition = run(runner.run(hook, base_input(hook)))

    assert (composition.decision, composition.decided_by) == ("deny", "ext")
    assert "could not be applied (KeyError" in (composition.reason or "")
    assert runner.recent["ext"][-1].outcome == "invalid"


# -- hook health --------------------------------------------------------------------------------


def timing_out_extension(name: str, hangs: list[bool]) -> FakeExtension:
    """An extension whose hook times out while ``hangs[0]`` is true, and else says nothing."""

    def raw(wire: Wire) -> Any:
        if hangs[0]:
            raise TimeoutError
        return {"output": None}

    return FakeExtension(name, raw=raw)


def test_a_guard_that_timed_out_twice_in_a_row_is_suspended_and_denies_without_being_called() -> None:
    """Two timeouts deny as failures; the third call denies at once saying suspended and how to
    resume; one warning announces the suspension."""
    hook = "on_pre_tool_use"
    runner, events = make_runner()
    fake = timing_out_extension("slow", [True])
    runner.register_extension("slow", 0, (hook,), fake)

    first, second, third = (run(runner.run(hook, base_input(hook))) for _ in range(3))

    assert SUSPEND_AFTER_TIMEOUTS == 2
    assert len(fake.received) == 2
    for composition in (first, second):
        assert composition.decision == "deny" and "no answer within" in (composition.reason or "")
    assert third.decision == "deny"
    assert third.reason == (
        "hook on_pre_tool_use of slow is suspended after 2 timeouts in a row; "
        "fix the extension and save or reload it to resume (guard hooks fail closed)"
    )
    assert [r.outcome for r in runner.recent["slow"]] == ["timeout", "timeout", "suspended"]
    assert runner.suspended("slow") == [hook]
    (warning,) = [e["data"] for e in events.history("session.warning")]
    assert warning["extensionId"] == "slow"
    assert "timed out 2 times in a row and is suspended" in warning["message"]
    assert "denies every call at once until the extension reloads" in warning["message"]
    (last,) = events.history("hook.end")[-1]["data"]["calls"]
    assert (last["outcome"], last["decision"]) == ("suspended", "deny")
    assert events.history("hook.end")[-1]["data"]["success"] is False


def test_an_answer_between_two_timeouts_resets_the_count() -> None:
    """timeout, answer, timeout: not two in a row, so the hook is still called."""
    hook = "on_user_prompt_submitted"
    runner, _ = make_runner()
    hangs = [True]
    fake = timing_out_extension("flaky", hangs)
    runner.register_extension("flaky", 0, (hook,), fake)
    for hang in (True, False, True, False):
        hangs[0] = hang
        run(runner.run(hook, base_input(hook)))
    assert len(fake.received) == 4
    assert runner.suspended("flaky") == []


def test_a_suspended_observer_is_skipped_and_later_ones_still_run() -> None:
    """The suspended observer is not called; the next implementation contributes; the
    suspension is announced once, not on every skipped call."""
    hook = "on_post_tool_use"
    runner, events = make_runner()
    fake = timing_out_extension("slow", [True])
    runner.register_extension("slow", 0, (hook,), fake)
    runner.register_plugin(recording_plugin(hook, "after", [], answer={"additional_context": "after ran"}), "after")
    for _ in range(4):
        composition = run(runner.run(hook, base_input(hook)))
        assert composition.additional_context == "after ran" and composition.decision is None
    assert len(fake.received) == 2
    assert [r.outcome for r in runner.recent["slow"]] == ["timeout", "timeout", "suspended", "suspended"]
    messages = [e["data"]["message"] for e in events.history("session.warning")]
    assert len(messages) == 3  # two failed calls, one suspension
    assert "is skipped until the extension reloads" in messages[-1]


def test_a_suspended_hook_resumes_when_its_extension_registers_again_and_only_that_hook_is_suspended() -> None:
    """Registering again (a reload or restart joins anew) gives fresh health; the same
    extension's other hook point was never suspended."""
    runner, _ = make_runner()
    hangs = [True]
    old = timing_out_extension("ext", hangs)
    runner.register_extension("ext", 0, ("on_pre_tool_use", "on_session_start"), old)
    for _ in range(3):
        run(runner.run("on_pre_tool_use", base_input("on_pre_tool_use")))
    hangs[0] = False
    run(runner.run("on_session_start", base_input("on_session_start")))
    assert runner.suspended("ext") == ["on_pre_tool_use"]
    assert [hook for hook, _, _ in old.received] == ["on_pre_tool_use", "on_pre_tool_use", "on_session_start"]

    new = timing_out_extension("ext", hangs)
    runner.register_extension("ext", 0, ("on_pre_tool_use", "on_session_start"), new)
    composition = run(runner.run("on_pre_tool_use", base_input("on_pre_tool_use")))

    assert composition.decision is None
    assert len(new.received) == 1
    assert runner.suspended("ext") == []


def test_a_hook_of_a_replaced_generation_does_not_count_against_the_new_one() -> None:
    """A chain snapshot taken before a reload still calls the old generation; its timeouts do
    not suspend the extension's new registration."""
    hook = "on_pre_tool_use"
    runner, _ = make_runner()
    runner.register_extension("ext", 0, (hook,), timing_out_extension("ext", [True]))
    snapshot = runner.chain(hook)
    runner.register_extension("ext", 0, (hook,), FakeExtension("ext"))
    for _ in range(3):
        run(runner.run(hook, base_input(hook), snapshot))
    assert runner.suspended("ext") == []
    assert run(runner.run(hook, base_input(hook))).decision is None


def test_a_suspended_plugin_resumes_when_registered_again() -> None:
    """In-process plugins follow the same rule; the reason says to register the plugin again."""
    hook = "on_pre_tool_use"
    runner, _ = make_runner(timeouts={hook: 0.01})
    hanging_plugin(runner, hook)
    compositions = [run(runner.run(hook, base_input(hook))) for _ in range(3)]
    assert "register the plugin again to resume" in (compositions[-1].reason or "")
    runner.unregister("broken-plugin")
    runner.register_plugin(recording_plugin(hook, "fixed", []), "broken-plugin")
    assert run(runner.run(hook, base_input(hook))).decision is None


# -- property: arbitrary answers never let a guard pass unless they are a valid allow -------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
SNAKE_TO_CAMEL = {
    "permission_decision": "permissionDecision",
    "permission_decision_reason": "permissionDecisionReason",
    "modified_args": "modifiedArgs",
    "modified_prompt": "modifiedPrompt",
    "additional_context": "additionalContext",
}
DECISIONS = st.sampled_from(["allow", "ask", "deny", "Allow", "DENY", "", "maybe", "allow "])
STRINGS = st.text(max_size=8)
# Each real key with values that are right for it, wrong for it, or anything at all.
KEY_VALUES = {
    "permission_decision": DECISIONS | JSON,
    "permission_decision_reason": STRINGS | JSON,
    "modified_args": JSON,
    "modified_prompt": STRINGS | JSON,
    "additional_context": STRINGS | JSON,
}
NEAR_OUTPUTS = st.fixed_dictionaries(
    {},
    optional={
        **{snake: value for snake, value in KEY_VALUES.items()},
        **{camel: KEY_VALUES[snake] for snake, camel in SNAKE_TO_CAMEL.items()},
        "permision_decision": DECISIONS,
        "decision": DECISIONS,
        "output": JSON,
    },
)
OUTPUTS = JSON | NEAR_OUTPUTS
ANSWERS = (
    JSON
    | st.builds(lambda output: {"output": output}, OUTPUTS)
    | st.builds(lambda output, extra: {"output": output, **extra}, OUTPUTS, st.dictionaries(STRINGS, JSON, max_size=2))
)
GUARD_KEYS = {
    "on_pre_tool_use": ("permission_decision", "permission_decision_reason", "modified_args", "additional_context"),
    "on_user_prompt_submitted": ("modified_prompt", "additional_context"),
}


def expected_fields(hook: str, output: Any) -> dict[str, Any] | None:
    """What a correct reading of ``output`` gives (its fields by snake_case name, without the
    null ones), or ``None`` if it is malformed. Written from the contract, not from the code."""
    if output is None:
        return {}
    if not isinstance(output, dict):
        return None
    allowed = GUARD_KEYS[hook]
    spelled = {name: [key for key in output if key in (name, SNAKE_TO_CAMEL[name])] for name in allowed}
    if set(output) - {key for keys in spelled.values() for key in keys}:
        return None  # an unknown key
    if any(len(keys) > 1 for keys in spelled.values()):
        return None  # one field in both spellings
    fields = {name: output[keys[0]] for name, keys in spelled.items() if keys and output[keys[0]] is not None}
    for name, value in fields.items():
        if name == "permission_decision" and value not in ("allow", "ask", "deny"):
            return None
        if name in ("permission_decision_reason", "modified_prompt", "additional_context") and not isinstance(
            value, str
        ):
            return None
    return fields


def passes(composition: Composition) -> bool:
    """The guard let the action through: no decision, or allow (ask goes to the user)."""
    return composition.decision in (None, "allow")


@pytest.mark.slow
@settings(max_examples=400, deadline=None, database=None)
@given(hook=st.sampled_from(GUARDS), answer=ANSWERS)
def test_no_answer_of_an_extension_lets_a_guard_pass_unless_it_is_a_valid_allow(hook: str, answer: Any) -> None:
    """Arbitrary JSON as the whole hooks.invoke answer: the guard passes exactly when the answer
    is no opinion or a well-formed output that does not ask or deny; anything else is a deny
    naming the extension, and nothing escapes the runner."""
    runner, _ = make_runner()
    runner.register_extension("raw", 0, (hook,), FakeExtension("raw", raw=lambda wire: answer))
    if answer is None or isinstance(answer, dict):
        fields = expected_fields(hook, None if answer is None else answer.get("output"))
    else:
        fields = None

    composition = run(runner.run(hook, base_input(hook)))

    if fields is None:
        assert (composition.decision, composition.decided_by) == ("deny", "raw")
        assert runner.recent["raw"][-1].outcome == "invalid"
        return
    assert composition.decision == fields.get("permission_decision")
    assert passes(composition) == (fields.get("permission_decision") in (None, "allow"))
    if "modified_prompt" in fields:
        assert composition.prompt == fields["modified_prompt"]
    if "modified_args" in fields:
        assert composition.args == fields["modified_args"]
    assert composition.additional_context == (fields.get("additional_context") or None)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, database=None)
@given(hook=st.sampled_from(GUARDS), output=OUTPUTS)
def test_no_return_value_of_a_plugin_lets_a_guard_pass_unless_it_is_a_valid_allow(hook: str, output: Any) -> None:
    """The same rule for in-process plugins, which return the output itself."""
    runner, _ = make_runner()
    runner.register_plugin(recording_plugin(hook, "p", [], answer=output), "p")
    fields = expected_fields(hook, output)

    composition = run(runner.run(hook, base_input(hook)))

    if fields is None:
        assert (composition.decision, composition.decided_by) == ("deny", "p")
    else:
        assert composition.decision == fields.get("permission_decision")


@pytest.mark.slow
@settings(max_examples=150, deadline=None, database=None)
@given(hook=st.sampled_from(["on_post_tool_use", "on_session_end", "on_error_occurred"]), answer=ANSWERS)
def test_no_answer_of_an_extension_makes_an_observer_decide_or_raise(hook: str, answer: Any) -> None:
    """Observers never deny, never stop the chain, and never raise, whatever they are told."""
    runner, events = make_runner()
    runner.register_extension("raw", 0, (hook,), FakeExtension("raw", raw=lambda wire: answer))
    runner.register_plugin(recording_plugin(hook, "after", [], answer=None), "after")
    composition = run(runner.run(hook, base_input(hook)))
    assert composition.decision is None and composition.stopped is False
    assert runner.recent["after"][-1].outcome == "ok"
    if runner.recent["raw"][-1].outcome != "ok":
        (warning,) = [e["data"] for e in events.history("session.warning")]
        assert warning["extensionId"] == "raw"


# -- matchers ----------------------------------------------------------------------------


def pre_for(tool: str) -> PreToolUseInput:
    return PreToolUseInput(timestamp=datetime.now(UTC), cwd=CWD, tool_name=tool, tool_args={})


def test_an_extension_s_tool_hook_runs_only_for_tools_its_matcher_names() -> None:
    """run() picks the chain for the input's tool; a skipped hook is not called and emits nothing."""
    runner, events = make_runner()
    guard = FakeExtension("guard")
    matchers = compile_matchers({"on_pre_tool_use": ["bash", "run_*"]}, ["on_pre_tool_use"])
    runner.register_extension("guard", 0, ("on_pre_tool_use",), guard, matchers=matchers)
    for tool in ("bash", "run_tests", "echo"):
        run(runner.run("on_pre_tool_use", pre_for(tool)))
    assert [wire["toolName"] for _, wire, _ in guard.received] == ["bash", "run_tests"]
    assert started_owners(events) == ["guard", "guard"]
    assert [i.plugin_name for i in runner.chain_for("on_pre_tool_use", "echo")] == []
    assert runner.skipped("on_pre_tool_use", "echo") == ["guard"]
    assert runner.skipped("on_pre_tool_use", "bash") == []
    assert runner.matchers("guard") == {"on_pre_tool_use": ("bash", "run_*")}


def test_registering_again_without_matchers_drops_the_cached_decisions() -> None:
    runner, _ = make_runner()
    guard = FakeExtension("guard")
    matchers = compile_matchers({"on_pre_tool_use": ["bash"]}, ["on_pre_tool_use"])
    runner.register_extension("guard", 0, ("on_pre_tool_use",), guard, matchers=matchers)
    assert runner.chain_for("on_pre_tool_use", "echo") == []
    runner.register_extension("guard", 0, ("on_pre_tool_use",), guard)
    assert [i.plugin_name for i in runner.chain_for("on_pre_tool_use", "echo")] == ["guard"]
    assert runner.matchers("guard") == {}


def test_a_matcher_limits_only_its_own_registration_and_order_is_kept() -> None:
    runner, _ = make_runner()
    calls: list[str] = []
    only_git = compile_matchers({"on_pre_tool_use": ["git*"]}, ["on_pre_tool_use"])
    runner.register_extension("b", 1, ("on_pre_tool_use",), FakeExtension("b", calls), matchers=only_git)
    runner.register_extension("a", 0, ("on_pre_tool_use",), FakeExtension("a", calls))
    runner.register_plugin(recording_plugin("on_pre_tool_use", "p", calls), "p", {"preToolUse": ["gitx"]})
    run(runner.run("on_pre_tool_use", pre_for("git")))
    run(runner.run("on_pre_tool_use", pre_for("gitx")))
    assert calls == ["a", "b", "a", "b", "p"]


def test_a_plugin_with_a_bad_matcher_is_refused_and_not_registered() -> None:
    runner, _ = make_runner()
    with pytest.raises(ValueError, match="hook on_post_tool_use has a matcher but no handler"):
        runner.register_plugin(recording_plugin("on_pre_tool_use", "p", []), "p", {"on_post_tool_use": ["x"]})
    with pytest.raises(ValueError, match="matcher pattern 'a b' can match no tool"):
        runner.register_plugin(recording_plugin("on_pre_tool_use", "p", []), "p", {"on_pre_tool_use": ["a b"]})
    assert runner.implementers("on_pre_tool_use") == []
