"""Dispatch: one tool call from name to result, through the hook pipeline.

``call_tool`` is the single choke point every tool call passes, built-in or extension, in the
Copilot CLI's order: ``tool.execution_start`` → ``on_pre_tool_use`` (which may rewrite the
arguments, or deny, or ask) → the owner's invoker → ``on_post_tool_use`` for a success, or
``on_post_tool_use_failure`` for a ``failure`` (a ``denied``, ``rejected`` or ``timeout`` result
gets neither) → ``tool.execution_complete`` with the result the model reads. A denied call
reads ``Denied by preToolUse hook: <reason>``; the post-tool hooks' guidance is appended to a
successful result and the failure hooks' guidance is a message of its own, in the CLI's words.
A tool that is gone because its extension failed gives a ``failure`` at once that says so; a
name nobody ever offered raises :class:`~extension_host.errors.UnknownToolError`. Processes are
not this module's concern.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from extension_protocol.results import ToolResult
from extension_protocol.tools import Tool, ToolInvocation, run_tool

from ..errors import UnknownToolError
from ..events import EventLog, unique_ids
from ..hooks.composition import NO_REASON, Composition, denial_text, join_context
from ..hooks.runner import HookRunner
from ..outcomes import ToolCallResult
from .activity import ActivityTracker
from .permissions import AskHandler, PermissionBroker
from .tool_registry import BUILTIN_OWNER, ToolEntry, ToolInvoker, ToolRegistry

__all__ = ["AskHandler", "Dispatcher", "ToolOrigin", "builtin_entry"]  # AskHandler: re-exported from permissions

UNABLE_TO_ASK: Final = "Denied by preToolUse hook (unable to ask user for confirmation): "
"""How a denial reads when a hook asked and nobody can answer (the Copilot CLI's words)."""


@dataclass(frozen=True, slots=True)
class ToolOrigin:
    """The agent step that asked for a tool call: its ``turnId`` and the model (either unknown:
    ``None``), named in the call's ``tool.execution_*`` events."""

    turn_id: str | None = None
    model: str | None = None

    def to_event(self) -> dict[str, Any]:
        """``{turnId, model}``, each only when known."""
        event: dict[str, Any] = {}
        if self.turn_id is not None:
            event["turnId"] = self.turn_id
        if self.model is not None:
            event["model"] = self.model
        return event


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

    async def call_tool(
        self, name: str, arguments: Any = None, *, tool_call_id: str | None = None, origin: ToolOrigin | None = None
    ) -> ToolCallResult:
        """Run tool ``name`` through the pipeline (see the module).

        A ``deny`` (or an ``ask`` nobody approves) returns result type ``denied`` and the tool
        does not run. The hook points run against the hooks registered when the call began,
        and every extension involved stays up until the call is over, even if it is reloaded;
        a call that reloads them all itself (``extensions_reload``) runs the new ones' post (or
        failure) hooks. ``origin`` (the agent's step that asked for the call) goes into the
        ``tool.execution_*`` events.

        Raises:
            UnknownToolError: no extension or built-in offers ``name``, and none did.
        """
        with self._activity.track():
            return await self._call_tool(name, arguments, tool_call_id, origin.to_event() if origin else {})

    async def _call_tool(
        self, name: str, arguments: Any, tool_call_id: str | None, origin: dict[str, Any]
    ) -> ToolCallResult:
        entry = self._registry.get(name)
        if entry is None:
            reason = self._unavailable_reason(name)
            if reason is None:
                raise UnknownToolError(name, [e.name for e in self._registry.entries()], hint=self._unknown_hint())
            return ToolCallResult(ToolResult(reason, "failure", error=reason))
        call_id = tool_call_id or f"call_{next(self._call_ids)}"
        arguments = {} if arguments is None else arguments
        self._events.emit(
            "tool.execution_start", {"toolCallId": call_id, "toolName": name, "arguments": arguments, **origin}
        )
        hooks = self._hooks
        # Matchers applied: a hook that is not for this tool costs nothing more than no hook.
        # All three chains as of now: an extension reloaded during the call keeps its part in it.
        pre_chain = hooks.chain_for("on_pre_tool_use", name)
        chains = (hooks.chain_for("on_post_tool_use", name), hooks.chain_for("on_post_tool_use_failure", name))
        if pre_chain:
            pre = await hooks.run(
                "on_pre_tool_use",
                hooks.make_input("on_pre_tool_use", tool_name=name, tool_args=arguments),
                pre_chain,
                tool_call_id=call_id,
            )
        else:  # the common case: no input object to build, nothing to call
            pre = Composition("on_pre_tool_use", arguments)
        text: str | None = None
        if pre.decision == "ask":
            text = await self._resolve_ask(pre, name, call_id)
        elif pre.decision == "deny":
            self._permissions.resolved_by_hook(
                _hook_request(name, pre.value, pre.reason, call_id),
                {"kind": "denied-by-permission-request-hook", **({"message": pre.reason} if pre.reason else {})},
                tool_call_id=call_id,
            )
            text = denial_text(pre.reason)
        if text is not None:
            denied = ToolCallResult(
                ToolResult(text, "denied", error=text),
                pre.additional_context,
                "deny",
                pre.decided_by,
                pre.additional_context,
            )
            self._complete(call_id, name, denied.result, origin)
            return denied
        outcome = await self._run(entry.invoke, name, pre, call_id, chains)
        self._complete(call_id, name, outcome.result, origin)
        return outcome

    async def _resolve_ask(self, pre: Composition, name: str, call_id: str) -> str | None:
        """Ask about a call a hook asked about; the text the model reads if it is denied."""
        asked_by, asked_why = pre.decided_by, pre.reason
        if not self._permissions.can_ask():
            # Announced all the same, so a timeline shows what was asked and why it was denied.
            await self._permissions.request(_hook_request(name, pre.value, pre.reason, call_id), tool_call_id=call_id)
            pre.decide(
                "deny",
                f"{asked_by} asked for confirmation ({pre.reason or 'no reason given'}) and "
                "nobody can answer here: without an ask handler, ask counts as deny",
                asked_by or "host",
            )
            return UNABLE_TO_ASK + (asked_why or NO_REASON)
        outcome = await self._permissions.request(
            _hook_request(name, pre.value, pre.reason, call_id), tool_call_id=call_id
        )
        if outcome.approved:
            pre.decision = "allow"
            return None
        why = f"the user declined ({pre.reason or 'asked by ' + str(asked_by)})"
        if outcome.decided_by == "host":
            why = f"nobody answered ({outcome.feedback}; asked by {asked_by})"
        elif outcome.feedback:
            why += f": {outcome.feedback}"
        pre.decide("deny", why, outcome.decided_by)
        return denial_text(why)

    async def _run(
        self,
        invoke: ToolInvoker,
        name: str,
        pre: Composition,
        call_id: str,
        chains: tuple[Sequence[Any], Sequence[Any]],
    ) -> ToolCallResult:
        """Run the tool and the hooks its result calls for (a success's, or a failure's)."""
        result = await invoke(pre.value, call_id)
        if self._activity.was_released():  # it swapped every extension (extensions_reload): theirs now
            chains = (
                self._hooks.chain_for("on_post_tool_use", name),
                self._hooks.chain_for("on_post_tool_use_failure", name),
            )
        kind = result.result_type
        chain = chains[0] if kind == "success" else chains[1] if kind == "failure" else ()
        if not chain:
            return ToolCallResult(result, pre.additional_context, pre.decision, pre.decided_by, pre.additional_context)
        hooks = self._hooks
        if kind == "success":
            post = await hooks.run(
                "on_post_tool_use",
                hooks.make_input("on_post_tool_use", tool_name=name, tool_args=pre.value, tool_result=result),
                chain,
                tool_call_id=call_id,
            )
            assert isinstance(post.value, ToolResult)
            result = post.value
            message: str | None = pre.additional_context
            if post.additional_context:
                guidance = f'Tool "{name}" succeeded. Additional guidance from postToolUse hooks:\n'
                text = f"{result.text_result_for_llm}\n\n{guidance}{post.additional_context}"
                result = ToolResult(text, result.result_type, result.error, result.session_log, result.tool_telemetry)
        else:
            post = await hooks.run(
                "on_post_tool_use_failure",
                hooks.make_input(
                    "on_post_tool_use_failure",
                    tool_name=name,
                    tool_args=pre.value,
                    error=result.error or result.text_result_for_llm,
                ),
                chain,
                tool_call_id=call_id,
            )
            added = post.additional_context
            failed = f'Tool "{name}" failed. Additional guidance from postToolUseFailure hooks:\n{added}'
            message = join_context([pre.additional_context or "", failed if added else ""])
        context = join_context(pre.contexts + post.contexts)
        return ToolCallResult(result, context, pre.decision, pre.decided_by, message)

    def _complete(self, call_id: str, name: str, result: ToolResult, origin: dict[str, Any]) -> None:
        """``tool.execution_complete`` as the Copilot CLI sends it: ``result {content,
        detailedContent}`` on success (``detailedContent`` only when the tool gave a session log),
        ``error {message, code}`` (the result type) otherwise, and ``toolTelemetry``; this host
        adds ``toolName``, and a failure's ``result`` (the text the model read, and its
        ``resultType``) so a session's model context can be rebuilt."""
        text = result.text_result_for_llm
        complete: dict[str, Any] = {"toolCallId": call_id, "toolName": name, **origin, "success": result.success}
        if result.success:
            # detailedContent only when it is not content again: the CLI repeats it, but a large
            # result written twice to the session log would cost its size twice over.
            complete["result"] = {"content": text}
            if result.session_log and result.session_log != text:
                complete["result"]["detailedContent"] = result.session_log
        else:
            kind = result.result_type
            message = text if kind in ("denied", "rejected") else result.error or text
            complete["error"] = {"message": message, "code": kind}
            complete["result"] = {"content": text, "resultType": kind}
        complete["toolTelemetry"] = result.tool_telemetry or {}
        self._events.emit("tool.execution_complete", complete)


def _hook_request(name: str, arguments: Any, reason: str | None, call_id: str) -> dict[str, Any]:
    """A hook's ``ask`` as the SDK's ``PermissionRequestHook``."""
    request: dict[str, Any] = {"kind": "hook", "toolName": name, "toolArgs": arguments, "toolCallId": call_id}
    if reason:
        request["hookMessage"] = reason
    return request
