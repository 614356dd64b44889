"""The model context and the offered tools in the Chat Completions wire format, and back.

:func:`chat_messages` turns the session's model context (``ContextMessage`` items) into the
``messages`` of a Chat Completions request; :func:`chat_tools` turns the offered tools into its
``tools``; :func:`parse_arguments` reads the arguments a model wrote for a tool call.

Chat Completions is stricter than the model context about order: the ``tool`` messages answering
an assistant message's ``tool_calls`` must follow it at once, one per call. The context may hold
other messages between them (the hooks' additional context after a tool result), and calls
without a result (a turn cancelled, or the host stopped, while they ran). So user messages that
arrive inside such a block are moved after it, and a call that never got a result is answered
with a note saying so. This module is plain data in, plain data out: no client, no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from extension_protocol.nesting import loads

from ..session.agents import OfferedTool
from ..session.model_context import ContextMessage

__all__ = ["MISSING_RESULT", "chat_messages", "chat_tools", "parse_arguments"]

MISSING_RESULT: Final = "(no result: the call did not finish)"
"""What the model reads for a tool call of its that never got a result."""

_EMPTY_PARAMETERS: Final[Mapping[str, Any]] = {"type": "object", "properties": {}}


def chat_tools(tools: Sequence[OfferedTool]) -> list[dict[str, Any]]:
    """The offered tools as Chat Completions ``function`` tools (their JSON Schemas as given)."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": dict(tool.parameters) if tool.parameters else dict(_EMPTY_PARAMETERS),
            },
        }
        for tool in tools
    ]


def chat_messages(context: Sequence[ContextMessage]) -> list[dict[str, Any]]:
    """The model context as Chat Completions ``messages`` (see the module for the reordering)."""
    out: list[dict[str, Any]] = []
    open_calls: list[str] = []  # ids of the last assistant message's calls still unanswered
    deferred: list[dict[str, Any]] = []  # messages that arrived while calls were unanswered

    def close_block() -> None:
        out.extend({"role": "tool", "tool_call_id": call_id, "content": MISSING_RESULT} for call_id in open_calls)
        open_calls.clear()
        out.extend(deferred)
        deferred.clear()

    for message in context:
        if message.role == "tool":
            if message.tool_call_id in open_calls:
                open_calls.remove(message.tool_call_id)
                out.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content})
                if not open_calls:
                    close_block()
            continue  # a result for no call of the last assistant message: the model cannot place it
        converted = _convert(message)
        if open_calls and message.role in ("user", "system", "developer"):
            deferred.append(converted)
            continue
        close_block()
        out.append(converted)
        if message.role == "assistant":
            open_calls.extend(call.id for call in message.tool_calls if call.id is not None)
    close_block()
    return out


def _convert(message: ContextMessage) -> dict[str, Any]:
    if message.role == "assistant":
        converted: dict[str, Any] = {"role": "assistant", "content": message.content or None}
        calls = [call for call in message.tool_calls if call.id is not None]
        if calls:
            converted["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": _arguments_text(call.arguments)},
                }
                for call in calls
            ]
        return converted
    if message.role == "user":
        return {"role": "user", "content": message.content + _attachment_note(message.attachments)}
    # Many compatible servers know no "developer" role; "system" means the same to them.
    return {"role": "system", "content": message.content}


def _attachment_note(attachments: Sequence[Mapping[str, Any]]) -> str:
    paths = [str(item.get("path") or item.get("displayName") or "") for item in attachments]
    named = [path for path in paths if path]
    return f"\n\n(attached: {', '.join(named)})" if named else ""


def _arguments_text(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments  # what the model wrote, kept as written when it was not JSON
    return json.dumps({} if arguments is None else arguments, ensure_ascii=False)


def parse_arguments(text: str | None) -> Any:
    """The arguments a model wrote for a tool call: the JSON value, ``{}`` for nothing, or the
    text itself when it is not JSON (the tool's argument check then fails the call, and the model
    reads why). Text nested deeper than :data:`~extension_protocol.nesting.MAX_DEPTH` levels is
    kept as text too: no tool could be sent it."""
    if text is None or not text.strip():
        return {}
    try:
        return loads(text)
    except ValueError:  # not JSON, nested too deeply, or a number too long to read
        return text
