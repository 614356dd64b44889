"""Hookspecs generated from the hook-point table, pluggy features that are refused, and proof
that a hook point added to the table alone is picked up by every layer (in memory)."""

from __future__ import annotations

import asyncio
import types
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar

import pluggy
import pytest

from extension_host.events import EventLog
from extension_host.hooks.runner import HookRunner
from extension_host.hooks.specs import hookimpl, hookspec, specifications
from extension_protocol import hook_models, hook_names, protocol
from extension_protocol.errors import HookOutputError
from extension_protocol.hook_points import HOOK_POINTS, HookPoint
from extension_protocol.matchers import compile_matchers
from sdk_extension.join import resolve_hooks

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    async def bounded() -> T:
        async with asyncio.timeout(5):
            return await coroutine

    return asyncio.run(bounded())


def make_runner() -> HookRunner:
    return HookRunner(EventLog(), session_id="s", cwd="/srv")


# -- generated specifications ----------------------------------------------------------------


def test_there_is_one_hookspec_per_table_entry_documented_by_it() -> None:
    """The specifications are the table's entries, with its doc and a guard's fail-closed note."""
    specs = specifications()
    names = [name for name in vars(specs) if not name.startswith("_")]
    assert names == list(HOOK_POINTS)
    pre = vars(specs)["on_pre_tool_use"]
    assert pre.__doc__.startswith(HOOK_POINTS["on_pre_tool_use"].doc)
    assert "guard" in pre.__doc__
    assert "guard" not in vars(specs)["on_session_start"].__doc__


def test_the_wire_names_and_the_table_list_the_same_hook_points() -> None:
    """The protocol's light name list (read at join time) agrees with the table, in order."""
    assert list(protocol.HOOK_WIRE_NAMES) == list(HOOK_POINTS) == list(protocol.HOOK_NAMES)


# -- refused pluggy features ------------------------------------------------------------------


class NewStyleWrapper:
    @hookimpl(wrapper=True)
    def on_pre_tool_use(self, input: Any) -> Iterator[None]:
        return (yield)


class OldStyleWrapper:
    @hookimpl(hookwrapper=True)
    def on_pre_tool_use(self, input: Any) -> Iterator[None]:
        yield


class FirstResult:
    @hookspec(firstresult=True)
    def on_pre_tool_use(self, input: Any) -> None:
        return None


class Historic:
    @hookspec(historic=True)
    def on_session_start(self, input: Any) -> None:
        return None


class SpecInsteadOfImpl:
    @hookspec
    def on_session_start(self, input: Any) -> None:
        return None


@pytest.mark.parametrize(
    ("plugin", "why"),
    [
        (NewStyleWrapper(), "on_pre_tool_use uses wrapper=True, which is not supported: wrappers run around"),
        (OldStyleWrapper(), "on_pre_tool_use uses hookwrapper=True, which is not supported: wrappers run around"),
        (FirstResult(), "on_pre_tool_use uses firstresult=True, which is not supported: every implementation"),
        (Historic(), "on_session_start uses historic=True, which is not supported: hook calls are not replayed"),
        (SpecInsteadOfImpl(), "on_session_start is marked hookspec; the hook points are fixed"),
    ],
    ids=["wrapper", "hookwrapper", "firstresult", "historic", "plain-hookspec"],
)
def test_a_plugin_using_a_pluggy_feature_the_runner_cannot_honour_is_refused_saying_why(
    plugin: object, why: str
) -> None:
    """Refused at registration, naming plugin and method, and nothing of it stays registered."""
    runner = make_runner()
    with pytest.raises(pluggy.PluginValidationError) as caught:
        runner.register_plugin(plugin, "odd")
    assert str(caught.value).startswith(f"plugin odd: {why}")
    assert "\n" not in str(caught.value)
    assert runner.implementers("on_pre_tool_use") == runner.implementers("on_session_start") == []
    assert runner.register_plugin(types.SimpleNamespace(), "odd") == "odd"  # the name is free


def test_a_refused_wrapper_does_not_deny_later_tool_calls() -> None:
    """Before refusal a wrapper registered and every call was denied ('returned generator')."""
    runner = make_runner()
    with pytest.raises(pluggy.PluginValidationError):
        runner.register_plugin(NewStyleWrapper(), "wrap")
    base = hook_models.PreToolUseInput(timestamp=datetime.now(UTC), cwd="/", tool_name="t", tool_args={})
    assert run(runner.run("on_pre_tool_use", base)).decision is None


# -- a hook point added to the table alone ----------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolFailedInput(hook_models.HookInput):
    """A made-up seventh hook point: a tool failed."""

    tool_name: str
    tool_args: Any
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolFailedOutput:
    retry: Literal["no", "later", "now"] | None = None
    modified_error: str | None = None
    additional_context: str | None = None
    attempts: int | None = None


@pytest.fixture
def tool_failed(monkeypatch: pytest.MonkeyPatch) -> HookPoint:
    """Adds ``on_tool_failed`` as one table entry (plus its models among the hook models and its
    wire name in the protocol's list)."""
    monkeypatch.setattr(hook_models, "ToolFailedInput", ToolFailedInput, raising=False)
    monkeypatch.setattr(hook_models, "ToolFailedOutput", ToolFailedOutput, raising=False)
    point = HookPoint(
        "on_tool_failed",
        "ToolFailed",
        {"retry": "strongest", "modified_error": "rewrite", "additional_context": "context", "attempts": "max"},
        "A tool failed; may ask for a retry.",
        rewrites="error",
        guard=True,
    )
    monkeypatch.setitem(HOOK_POINTS, point.name, point)
    monkeypatch.setitem(protocol.HOOK_WIRE_NAMES, point.name, "toolFailed")
    for alias in (point.name, "onToolFailed", "toolFailed"):
        monkeypatch.setitem(hook_names._HOOK_ALIASES, alias, point.name)
    return point


def failed_input(tool: str = "bash") -> ToolFailedInput:
    return ToolFailedInput(timestamp=datetime.now(UTC), cwd="/srv", tool_name=tool, tool_args={}, error="boom")


def test_the_sdk_resolves_checks_and_matches_a_hook_point_added_to_the_table(tool_failed: HookPoint) -> None:
    """Every spelling resolves; outputs are checked from the model's annotations; it takes matchers."""

    def handler(input: Any, invocation: Any) -> None:
        return None

    assert resolve_hooks({"onToolFailed": handler}) == {"on_tool_failed": handler}
    assert tool_failed.wire_name == "toolFailed" and tool_failed.for_tools
    assert tool_failed.output_to_wire({"retry": "now", "attempts": 2}) == {"retry": "now", "attempts": 2}
    with pytest.raises(HookOutputError, match="expected one of no, later, now"):
        tool_failed.output_to_wire({"retry": "maybe"})
    with pytest.raises(HookOutputError, match="non-negative integer"):
        tool_failed.output_to_wire({"attempts": -1})
    assert compile_matchers({"toolFailed": ["ba*"]}, ["on_tool_failed"])["on_tool_failed"].matches("bash")


def test_the_host_runs_and_composes_a_hook_point_added_to_the_table(tool_failed: HookPoint) -> None:
    """pluggy knows it, extensions and plugins implement it, outputs merge per its strategies,
    its matcher applies, and as a guard a failing implementation denies."""
    runner = make_runner()
    seen: list[str] = []

    class Plugin:
        @hookimpl
        def on_tool_failed(self, input: ToolFailedInput) -> dict[str, Any]:
            seen.append(input.error)
            return {"retry": "later", "attempts": 5, "additional_context": "from plugin"}

    async def extension(hook: str, wire: Any, timeout: float) -> Any:
        seen.append(wire["error"])
        return {"output": {"retry": "now", "modifiedError": "BOOM", "attempts": 1, "additionalContext": "from ext"}}

    runner.register_plugin(Plugin(), "plugin")
    runner.register_extension("project:ext", 0, ("on_tool_failed",), extension)
    outcome = run(runner.run("on_tool_failed", failed_input()))
    assert seen == ["boom", "BOOM"]  # extension first, and the plugin sees its rewrite
    assert outcome.value == "BOOM"
    assert outcome.merged_value("retry") == "now"
    assert outcome.merged_value("attempts") == 5
    assert outcome.additional_context == "from ext\n\nfrom plugin"

    runner.register_extension(
        "project:ext",
        0,
        ("on_tool_failed",),
        extension,
        matchers=compile_matchers({"on_tool_failed": ["git"]}, ["on_tool_failed"]),
    )
    assert runner.skipped("on_tool_failed", "bash") == ["project:ext"]
    seen.clear()
    assert run(runner.run("on_tool_failed", failed_input("bash"))).value == "boom"
    assert seen == ["boom"]

    class Broken:
        @hookimpl(tryfirst=True)
        def on_tool_failed(self, input: Any) -> Any:
            raise RuntimeError("bug")

    runner.register_plugin(Broken(), "broken")
    outcome = run(runner.run("on_tool_failed", failed_input()))
    assert (outcome.decision, outcome.decided_by) == ("deny", "broken")
