"""Dispatch: one tool call from name to result, through the hook pipeline.

``call_tool`` is the single choke point every tool call passes, built-in or extension:
``on_pre_tool_use`` (which may rewrite the arguments, or deny, or ask) → the owner's invoker,
announced by ``tool.execution_start``/``tool.execution_complete`` → ``on_post_tool_use`` (which
may replace the result). A tool that is gone because its extension failed gives a ``failure``
at once that says so; a name nobody ever offered raises
:class:`~extension_host.errors.UnknownToolError`. Processes are not this module's concern.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sdk_extension.hooks import PostToolUseInput, PreToolUseInput
from sdk_extension.tools import Tool, ToolInvocation, run_tool
from sdk_extension.wire.results import ToolResult

from .activity import ActivityTracker
from .errors import UnknownToolError
from .events import EventLog, unique_ids
from .hooks.composition import Composition, join_context
from .hooks.runner import HookRunner
from .outcomes import ToolCallResult
from .permissions import AskHandler, PermissionBroker
from .registry import BUILTIN_OWNER, ToolEntry, ToolInvoker, ToolRegistry

__all__ = ["AskHandler", "Dispatcher", "builtin_entry"]  # AskHandler: re-exported from permissions


def builtin_entry(tool: Tool, session_id: str) -> ToolEntry:
    """A registry entry that runs an in-process :class:`~sdk_extension.Tool` of the host."""

    async def invoke(arguments: Any, tool_call_id: str) -> ToolResult:
        invocation = ToolInvocation(session_id, tool_call_id, tool.name, arguments)
        return await run_tool(tool, arguments, invocation)

    return ToolEntry(tool.name, tool.description, tool.parameters, BUILTIN_OWNER, invoke)


class Dispatcher:
    """Runs tool calls through the pipeline and reports them as session events."""

    def __init__(
        self,
        registry: ToolRegistry,
        events: EventLog,
        hooks: HookRunner,
        unavailable_reason: Callable[[str], str | None],
        on_ask: AskHandler | None = None,
        activity: ActivityTracker | None = None,
        unknown_hint: Callable[[], str | None] = lambda: None,
        permissions: PermissionBroker | None = None,
    ) -> None:
        """``unknown_hint()`` may add a sentence to an unknown tool's error (why it may be missing);
        ``permissions`` announces and answers an ``ask`` (default: one that asks ``on_ask`` only)."""
        self._unknown_hint = unknown_hint
        self._activity = activity or ActivityTracker()
        self._registry = registry
        self._events = events
        self._hooks = hooks
        self._unavailable_reason = unavailable_reason
        self._permissions = permissions or PermissionBroker(events, on_ask)
        self._call_ids = unique_ids()

    async def call_tool(self, name: str, arguments: Any = None, *, tool_call_id: str | None = None) -> ToolCallResult:
        """Run tool ``name`` through ``on_pre_tool_use`` → the tool → ``on_post_tool_use``.

        A ``deny`` (or an ``ask`` nobody approves) returns result type ``denied`` and the tool
        does not run. Both hook points run against the hooks registered when the call began,
        and every extension involved stays up until the call is over, even if it is reloaded;
        a call that reloads them all itself (``extensions_reload``) runs the new ones' post hooks.

        Raises:
            UnknownToolError: no extension or built-in offers ``name``, and none did.
        """
        with self._activity.track():
            return await self._call_tool(name, arguments, tool_call_id)

    async def _call_tool(self, name: str, arguments: Any, tool_call_id: str | None) -> ToolCallResult:
        entry = self._registry.get(name)
        if entry is None:
            reason = self._unavailable_reason(name)
            if reason is None:
                raise UnknownToolError(name, [e.name for e in self._registry.entries()], hint=self._unknown_hint())
            return ToolCallResult(ToolResult(reason, "failure", error=reason))
        call_id = tool_call_id or f"call_{next(self._call_ids)}"
        arguments = {} if arguments is None else arguments
        # Matchers applied: a hook that is not for this tool costs nothing more than no hook.
        pre_chain = self._hooks.chain_for("on_pre_tool_use", name)
        post_chain = self._hooks.chain_for("on_post_tool_use", name)
        if pre_chain:
            pre = await self._hooks.run(
                "on_pre_tool_use",
                PreToolUseInput(timestamp=datetime.now(UTC), cwd=self._hooks.cwd, tool_name=name, tool_args=arguments),
                pre_chain,
            )
        else:  # the common case: no input object to build, nothing to call
            pre = Composition("on_pre_tool_use", arguments)
        if pre.decision == "ask":
            await self._resolve_ask(pre, name, call_id)
        elif pre.decision == "deny":
            self._permissions.resolved_by_hook(
                _hook_request(name, pre.value, pre.reason, call_id),
                {"kind": "denied-by-permission-request-hook", **({"message": pre.reason} if pre.reason else {})},
                tool_call_id=call_id,
            )
        if pre.decision == "deny":
            text = f"The call to {name} was denied" + (f": {pre.reason}" if pre.reason else "")
            return ToolCallResult(
                ToolResult(text, "denied", error=text), pre.additional_context, "deny", pre.decided_by
            )
        result = await self._run(entry.invoke, name, pre.value, call_id)
        if self._activity.was_released():  # it swapped every extension (extensions_reload): theirs now
            post_chain = self._hooks.chain_for("on_post_tool_use", name)
        if not post_chain:
            return ToolCallResult(result, pre.additional_context, pre.decision, pre.decided_by)
        post = await self._hooks.run(
            "on_post_tool_use",
            PostToolUseInput(
                timestamp=datetime.now(UTC),
                cwd=self._hooks.cwd,
                tool_name=name,
                tool_args=pre.value,
                tool_result=result,
            ),
            post_chain,
        )
        assert post.value is not None
        return ToolCallResult(post.value, join_context(pre.contexts + post.contexts), pre.decision, pre.decided_by)

    async def _resolve_ask(self, pre: Composition, name: str, call_id: str) -> None:
        asked_by = pre.decided_by
        if not self._permissions.can_ask():
            # Announced all the same, so a timeline shows what was asked and why it was denied.
            await self._permissions.request(_hook_request(name, pre.value, pre.reason, call_id), tool_call_id=call_id)
            pre.decide(
                "deny",
                f"{asked_by} asked for confirmation ({pre.reason or 'no reason given'}) and "
                "nobody can answer here: without an ask handler, ask counts as deny",
                asked_by or "host",
            )
            return
        outcome = await self._permissions.request(
            _hook_request(name, pre.value, pre.reason, call_id), tool_call_id=call_id
        )
        if outcome.approved:
            pre.decision = "allow"
            return
        why = f"the user declined ({pre.reason or 'asked by ' + str(asked_by)})"
        if outcome.decided_by == "host":
            why = f"nobody answered ({outcome.feedback}; asked by {asked_by})"
        elif outcome.feedback:
            why += f": {outcome.feedback}"
        pre.decide("deny", why, outcome.decided_by)

    async def _run(self, invoke: ToolInvoker, name: str, arguments: Any, call_id: str) -> ToolResult:
        self._events.emit("tool.execution_start", {"toolCallId": call_id, "toolName": name, "arguments": arguments})
        result = await invoke(arguments, call_id)
        complete: dict[str, Any] = {
            "toolCallId": call_id,
            "toolName": name,
            "success": result.success,
            "result": {"content": result.text_result_for_llm, "resultType": result.result_type},
        }
        if result.error is not None:
            complete["error"] = {"message": result.error}
        self._events.emit("tool.execution_complete", complete)
        return result


def _hook_request(name: str, arguments: Any, reason: str | None, call_id: str) -> dict[str, Any]:
    """A hook's ``ask`` as the SDK's ``PermissionRequestHook``."""
    request: dict[str, Any] = {"kind": "hook", "toolName": name, "toolArgs": arguments, "toolCallId": call_id}
    if reason:
        request["hookMessage"] = reason
    return request
