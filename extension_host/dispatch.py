"""Dispatch: one tool call from name to result, with the events that announce it.

``call_tool`` finds the tool's owner in the registry, emits ``tool.execution_start``, runs
the call through the owner's invoker and emits ``tool.execution_complete``. A tool that is
gone because its extension failed gives a ``failure`` result at once that says so; a name
nobody ever offered raises :class:`~extension_host.errors.UnknownToolError`. The hook
pipeline around the call lives here too once hooks run. Processes are not this module's concern.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sdk_extension.results import ToolResult
from sdk_extension.tools import Tool, ToolInvocation, run_tool

from .errors import UnknownToolError
from .events import EventLog, unique_ids
from .registry import BUILTIN_OWNER, ToolEntry, ToolRegistry

__all__ = ["Dispatcher", "builtin_entry"]


def builtin_entry(tool: Tool, session_id: str) -> ToolEntry:
    """A registry entry that runs an in-process :class:`~sdk_extension.Tool` of the host."""

    async def invoke(arguments: Any, tool_call_id: str) -> ToolResult:
        invocation = ToolInvocation(session_id, tool_call_id, tool.name, arguments)
        return await run_tool(tool, arguments, invocation)

    return ToolEntry(tool.name, tool.description, tool.parameters, BUILTIN_OWNER, invoke)


class Dispatcher:
    """Routes tool calls to their owners and reports them as session events."""

    def __init__(
        self,
        registry: ToolRegistry,
        events: EventLog,
        unavailable_reason: Callable[[str], str | None],
    ) -> None:
        self._registry = registry
        self._events = events
        self._unavailable_reason = unavailable_reason
        self._call_ids = unique_ids()

    async def call_tool(
        self, name: str, arguments: Any = None, *, tool_call_id: str | None = None
    ) -> ToolResult:
        """Run tool ``name`` with ``arguments`` and return its result.

        Raises:
            UnknownToolError: no extension or built-in offers ``name``, and none did.
        """
        entry = self._registry.get(name)
        if entry is None:
            reason = self._unavailable_reason(name)
            if reason is None:
                raise UnknownToolError(name, [e.name for e in self._registry.entries()])
            return ToolResult(reason, "failure", error=reason)
        call_id = tool_call_id or f"call_{next(self._call_ids)}"
        arguments = {} if arguments is None else arguments
        self._events.emit(
            "tool.execution_start", {"toolCallId": call_id, "toolName": name, "arguments": arguments}
        )
        result = await entry.invoke(arguments, call_id)
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
