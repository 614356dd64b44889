"""The tool hook points run for a tool call another agent makes: a guard's verdict, no tool run.

When this host's extensions guard another agent (Claude Code, Gemini CLI: see
:mod:`extension_host.bridges`), that agent runs its own tools. :func:`check_tool_call` runs
``on_pre_tool_use`` on the call it is about to make and returns the verdict as it stands: an
``ask`` is passed on (the other agent asks its user), not resolved here as the dispatcher does
for the host's own tools. :func:`review_tool_result` runs ``on_post_tool_use`` on the result
it got, :func:`review_tool_failure` ``on_post_tool_use_failure`` on a call that failed. All
honour matchers, emit ``hook.start``/``hook.end`` and fail closed as the runner does; none
looks up, runs or announces a tool (no ``tool.execution_*`` event), so any name is accepted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from extension_protocol.results import ToolResult

from .runner import HookRunner

__all__ = ["ToolCheck", "ToolReview", "check_tool_call", "review_tool_failure", "review_tool_result"]


@dataclass(frozen=True)
class ToolCheck:
    """The pre-tool hooks' verdict on a call: ``decision`` is ``None`` when no hook had an
    opinion; ``arguments`` is the rewritten input, ``None`` when no hook rewrote it."""

    decision: str | None = None
    reason: str | None = None
    decided_by: str | None = None
    arguments: Any = None
    additional_context: str | None = None


@dataclass(frozen=True)
class ToolReview:
    """The post-tool hooks' answer: ``result`` is the rewritten result, ``None`` when no hook
    rewrote it."""

    result: ToolResult | None = None
    additional_context: str | None = None


async def check_tool_call(hooks: HookRunner, name: str, arguments: Any) -> ToolCheck:
    """Run ``on_pre_tool_use`` for a call of tool ``name`` with ``arguments`` made elsewhere."""
    chain = hooks.chain_for("on_pre_tool_use", name)
    if not chain:
        return ToolCheck()
    before = {} if arguments is None else arguments
    outcome = await hooks.run(
        "on_pre_tool_use",
        hooks.make_input("on_pre_tool_use", tool_name=name, tool_args=before),
        chain,
    )
    return ToolCheck(
        decision=outcome.decision,
        reason=outcome.reason,
        decided_by=outcome.decided_by,
        arguments=None if outcome.value == before else outcome.value,
        additional_context=outcome.additional_context,
    )


async def review_tool_result(hooks: HookRunner, name: str, arguments: Any, result: ToolResult) -> ToolReview:
    """Run ``on_post_tool_use`` for the ``result`` of a call of tool ``name`` made elsewhere."""
    chain = hooks.chain_for("on_post_tool_use", name)
    if not chain:
        return ToolReview()
    outcome = await hooks.run(
        "on_post_tool_use",
        hooks.make_input(
            "on_post_tool_use", tool_name=name, tool_args={} if arguments is None else arguments, tool_result=result
        ),
        chain,
    )
    rewritten = outcome.value if isinstance(outcome.value, ToolResult) and outcome.value != result else None
    return ToolReview(rewritten, outcome.additional_context)


async def review_tool_failure(hooks: HookRunner, name: str, arguments: Any, error: str) -> str | None:
    """Run ``on_post_tool_use_failure`` for a call of tool ``name`` made elsewhere that failed
    with ``error``; returns the hooks' guidance for the model, if any."""
    chain = hooks.chain_for("on_post_tool_use_failure", name)
    if not chain:
        return None
    outcome = await hooks.run(
        "on_post_tool_use_failure",
        hooks.make_input(
            "on_post_tool_use_failure",
            tool_name=name,
            tool_args={} if arguments is None else arguments,
            error=error,
        ),
        chain,
    )
    return outcome.additional_context
