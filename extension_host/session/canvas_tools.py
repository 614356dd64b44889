"""The agent's tools for canvases: ``list_canvas_capabilities``, ``open_canvas`` and
``invoke_canvas_action``.

GitHub Copilot CLI offers its model these three tools when extensions declare canvases; the host
offers them with the CLI's names, descriptions and parameters (read from the CLI 1.0.102), over
the session's :class:`~extension_host.calls.canvases.Canvases`. The CLI lists the declared
canvases in a ``<canvases>`` section of its system prompt; this host has no system prompt of its
own, so the same list ends ``open_canvas``'s description (:func:`catalog_description`). The host
offers the tools only while a canvas is declared (:data:`CANVAS_TOOLS` is what it hides
otherwise). A failure is the tool's ``failure`` result in one line (the CLI's texts, and "no
canvas can be shown here" while no client that shows canvases is attached); a success is the
instance (``open_canvas``), the declaration (``list_canvas_capabilities``) or the action's
result (``invoke_canvas_action``) as JSON. The tools run through the dispatcher like any tool
(hooks apply).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from extension_protocol.results import ToolResult
from extension_protocol.tools import Tool, ToolInvocation

from ..calls.canvases import CanvasEntry, Canvases, CanvasFailure

__all__ = [
    "CANVAS_TOOLS",
    "INVOKE_TOOL",
    "LIST_TOOL",
    "OPEN_TOOL",
    "canvas_tools",
    "catalog_description",
]

LIST_TOOL: Final = "list_canvas_capabilities"
OPEN_TOOL: Final = "open_canvas"
INVOKE_TOOL: Final = "invoke_canvas_action"
CANVAS_TOOLS: Final = (LIST_TOOL, OPEN_TOOL, INVOKE_TOOL)

_EXTENSION_ID: Final = {
    "type": "string",
    "description": "Owning provider identifier. Optional when canvasId is unique across providers; required to "
    "disambiguate when multiple providers register the same canvasId.",
}
_OPEN_DESCRIPTION: Final = (
    "Open or focus a declared canvas. canvasId selects the canvas type (from the <canvases> section); instanceId is "
    "a handle you choose for this specific panel and reuse in later invoke_canvas_action calls. Re-opening the same "
    "instanceId focuses the existing panel; using a new instanceId opens an additional panel of the same canvas type."
)
_INVOKE_DESCRIPTION: Final = (
    "Invoke an action on an open canvas instance. Identify the panel by the instanceId you passed to open_canvas "
    "\u2014 do not pass canvasId or extensionId here. Action names and schemas come from list_canvas_capabilities "
    "for the canvas type."
)
_LIST_DESCRIPTION: Final = (
    "Inspect a canvas *type* to discover its open input schema and supported actions (action names + input "
    "schemas). Takes a canvasId from the <canvases> section \u2014 not a running instanceId."
)
_OPEN_PARAMETERS: Final = {
    "type": "object",
    "properties": {
        "extensionId": _EXTENSION_ID,
        "canvasId": {
            "type": "string",
            "description": "Canvas type to open. Must be a canvasId from the <canvases> section \u2014 do not "
            "invent one.",
        },
        "instanceId": {
            "type": "string",
            "description": "Caller-chosen handle for this panel. Free-form (slug or UUID), unrelated to canvasId. "
            "Reuse it in invoke_canvas_action to address the same panel; pick a new value to open another panel "
            "of the same type.",
        },
        "input": {
            "type": ["object", "null"],
            "description": "Canvas open input matching the canvas input schema. Send a JSON object, or null when "
            "the canvas takes no input, and never JSON-encoded text",
        },
    },
    "required": ["canvasId", "instanceId"],
}
_INVOKE_PARAMETERS: Final = {
    "type": "object",
    "properties": {
        "instanceId": {
            "type": "string",
            "description": "The instanceId from a prior open_canvas \u2014 the panel handle, NOT canvasId or "
            "extensionId.",
        },
        "actionName": {
            "type": "string",
            "description": "Action name to invoke. See list_canvas_capabilities for the actions a canvas supports.",
        },
        "input": {
            "type": ["object", "null"],
            "description": "Action input matching the action input schema. Send a JSON object, or null when the "
            "action takes no input, and never JSON-encoded text",
        },
    },
    "required": ["instanceId", "actionName"],
}
_LIST_PARAMETERS: Final = {
    "type": "object",
    "properties": {
        "extensionId": _EXTENSION_ID,
        "canvasId": {
            "type": "string",
            "description": "Canvas type to inspect (not a running instance). Must be a canvasId from the <canvases> "
            "section.",
        },
    },
    "required": ["canvasId"],
}


def canvas_tools(canvases: Canvases) -> list[Tool]:
    """The three canvas tools over ``canvases``."""
    tools = _Tools(canvases)
    return [
        Tool(LIST_TOOL, _LIST_DESCRIPTION, tools.list_capabilities, _LIST_PARAMETERS),
        Tool(OPEN_TOOL, _OPEN_DESCRIPTION, tools.open, _OPEN_PARAMETERS),
        Tool(INVOKE_TOOL, _INVOKE_DESCRIPTION, tools.invoke, _INVOKE_PARAMETERS),
    ]


def catalog_description(declared: Sequence[CanvasEntry]) -> str:
    """``open_canvas``'s description followed by the ``<canvases>`` section listing ``declared``."""
    lines = [
        f"- {entry.canvas_id} ({entry.owner}): {entry.display_name} \u2014 {entry.description}" for entry in declared
    ]
    return "\n".join([_OPEN_DESCRIPTION, "", "<canvases>", "Available canvases:", *lines, "</canvases>"])


def _failure(message: str) -> ToolResult:
    return ToolResult(message, "failure", error=message)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _optional_string(args: dict[str, Any], key: str) -> str | None:
    value = args.get(key)
    return value if isinstance(value, str) and value else None


class _Tools:
    def __init__(self, canvases: Canvases) -> None:
        self._canvases = canvases

    async def list_capabilities(self, arguments: Any, invocation: ToolInvocation) -> ToolResult | str:
        args = arguments if isinstance(arguments, dict) else {}
        canvas_id = _optional_string(args, "canvasId")
        if canvas_id is None:
            return _failure('list_canvas_capabilities requires a "canvasId" from the <canvases> section.')
        try:
            return _text(self._canvases.find(canvas_id, _optional_string(args, "extensionId")).to_wire())
        except CanvasFailure as exc:
            return _failure(str(exc))

    async def open(self, arguments: Any, invocation: ToolInvocation) -> ToolResult | str:
        args = arguments if isinstance(arguments, dict) else {}
        canvas_id = _optional_string(args, "canvasId")
        instance_id = _optional_string(args, "instanceId")
        if canvas_id is None or instance_id is None:
            return _failure(
                'open_canvas requires a "canvasId" from the <canvases> section and an "instanceId" you choose.'
            )
        try:
            opened = await self._canvases.open(
                canvas_id, instance_id, args.get("input"), _optional_string(args, "extensionId")
            )
        except CanvasFailure as exc:
            return _failure(str(exc))
        return _text(opened.to_wire())

    async def invoke(self, arguments: Any, invocation: ToolInvocation) -> ToolResult | str:
        args = arguments if isinstance(arguments, dict) else {}
        instance_id = _optional_string(args, "instanceId")
        action = _optional_string(args, "actionName")
        if instance_id is None or action is None:
            return _failure('invoke_canvas_action requires an "instanceId" (from open_canvas) and an "actionName".')
        try:
            result = await self._canvases.invoke(instance_id, action, args.get("input"))
        except CanvasFailure as exc:
            return _failure(str(exc))
        return _text(result) if result is not None else "null"
