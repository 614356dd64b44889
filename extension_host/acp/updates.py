"""Host events → ACP ``session/update`` notifications: one table, :data:`UPDATES`.

=============================  ==========================================================
host event                     ``sessionUpdate``
=============================  ==========================================================
``user.message``               ``user_message_chunk``: on load, and live for a prompt an
                               extension sent (the client's own prompt it shows itself)
``assistant.message_delta``    ``agent_message_chunk``
``assistant.message``          ``agent_message_chunk`` unless it was streamed; a
                               ``tool_call`` (``pending``) per tool request
``assistant.reasoning_delta``  ``agent_thought_chunk``
``assistant.reasoning``        ``agent_thought_chunk`` unless it was streamed
``tool.execution_start``       ``tool_call_update`` (``in_progress``)
``tool.execution_complete``    ``tool_call_update`` (``completed``, or ``failed`` for a
                               failure, a timeout or a hook's deny), its result as text
                               ``content`` and ``rawOutput`` (``{message, code}`` if failed)
``session.title_changed``      ``session_info_update`` (``title``)
``commands.changed``           ``available_commands_update``
=============================  ==========================================================

A subagent's events (``agentId``) show only its tool calls, in the parent's turn (titled
``tool (agent)``); its prompt and text end in the ``task`` call's result. The host's agent has no
plans, so no ``plan`` update is ever sent. A tool call's ``kind`` is ``other``: the host's tools
are extensions', and none says what kind it is. This module knows events and ACP's updates;
not sessions, clients or streams.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, Final

__all__ = ["MAPPED_EVENTS", "MAX_RESULT_CHARS", "UPDATES", "UpdateMapper", "available_commands"]

MAX_RESULT_CHARS: Final = 64 * 1024
"""Characters of a tool's result an update carries (cut beyond, saying how much): the agent got
it whole, and the session's log keeps it."""
_MAX_REMEMBERED: Final = 1024
"""Streamed messages and subagent names remembered per session."""

UPDATES: Final[dict[str, tuple[str, ...]]] = {
    "user.message": ("user_message_chunk",),
    "assistant.message_delta": ("agent_message_chunk",),
    "assistant.message": ("agent_message_chunk", "tool_call"),
    "assistant.reasoning_delta": ("agent_thought_chunk",),
    "assistant.reasoning": ("agent_thought_chunk",),
    "tool.execution_start": ("tool_call_update",),
    "tool.execution_complete": ("tool_call_update",),
    "session.title_changed": ("session_info_update",),
    "commands.changed": ("available_commands_update",),
}
"""Each host event that makes updates, and the kinds it makes (the module's table)."""
MAPPED_EVENTS: Final = frozenset({*UPDATES, "subagent.started"})
"""Every event :meth:`UpdateMapper.map` reads (a subagent's start names its later tool calls):
the others (most of a turn's) need not be handed to it."""
_FROM_SUBAGENTS: Final = frozenset({"assistant.message", "tool.execution_start", "tool.execution_complete"})

Update = dict[str, Any]


def available_commands(commands: Mapping[str, Any]) -> Update:
    """The ``available_commands_update`` of the extensions' slash commands (name → description)."""
    offered = [
        {"name": name, "description": description or f"/{name}", "input": {"hint": "arguments"}}
        for name, description in commands.items()
    ]
    return {"sessionUpdate": "available_commands_update", "availableCommands": offered}


class UpdateMapper:
    """Turns one session's host events into its ``session/update`` payloads (the module's table).

    ``replaying``: the events are a persisted session's history (every prompt is shown)."""

    def __init__(self, *, replaying: bool = False) -> None:
        self.replaying = replaying
        self._streamed: OrderedDict[str, None] = OrderedDict()
        self._agents: OrderedDict[str, str] = OrderedDict()
        self._calls: dict[str, str] = {}
        """The title of each tool call announced and not completed, by its id."""
        self._table: dict[str, Callable[[dict[str, Any], str | None], list[Update]]] = {
            "user.message": self._user_message,
            "assistant.message_delta": self._delta,
            "assistant.message": self._message,
            "assistant.reasoning_delta": self._thought_delta,
            "assistant.reasoning": self._thought,
            "tool.execution_start": self._tool_start,
            "tool.execution_complete": self._tool_complete,
            "session.title_changed": self._title,
            "commands.changed": self._commands,
        }
        if self._table.keys() != UPDATES.keys():
            raise AssertionError("the mapper and UPDATES name different events")

    def map(self, event: Mapping[str, Any]) -> list[Update]:
        """The updates ``event`` makes, in order (often none)."""
        handler = self._table.get(event.get("type"))  # type: ignore[arg-type]
        data = event.get("data")
        if handler is None or not isinstance(data, dict):
            if event.get("type") == "subagent.started" and isinstance(data, dict):
                self._remember(self._agents, str(event.get("agentId")), str(data.get("agentName", "subagent")))
            return []
        agent_id = event.get("agentId")
        if agent_id:
            if event.get("type") not in _FROM_SUBAGENTS:
                return []
            return handler({**data, "content": None}, self._agents.get(str(agent_id), "subagent"))
        return handler(data, None)

    # -- text -------------------------------------------------------------------------

    def _user_message(self, data: dict[str, Any], _agent: str | None) -> list[Update]:
        if not self.replaying and data.get("source") is None:
            return []  # the client's own prompt: it shows it already
        return [_chunk("user_message_chunk", data.get("content"))]

    def _delta(self, data: dict[str, Any], _agent: str | None) -> list[Update]:
        self._remember(self._streamed, str(data.get("messageId", "")), "")
        return [_chunk("agent_message_chunk", data.get("deltaContent"))]

    def _message(self, data: dict[str, Any], agent: str | None) -> list[Update]:
        updates: list[Update] = []
        content = data.get("content")
        message_id = str(data.get("messageId", ""))
        if self._streamed.pop(message_id, None) is None and isinstance(content, str) and content:
            updates.append(_chunk("agent_message_chunk", content))
        requests = data.get("toolRequests")
        for request in requests if isinstance(requests, list) else ():
            if not isinstance(request, dict) or not isinstance(request.get("toolCallId"), str):
                continue
            name = str(request.get("name", ""))
            title = f"{name} ({agent})" if agent else name
            self._calls[request["toolCallId"]] = title
            updates.append(
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": request["toolCallId"],
                    "title": title,
                    "kind": "other",
                    "status": "pending",
                    "rawInput": request.get("arguments"),
                }
            )
        return updates

    def _thought_delta(self, data: dict[str, Any], _agent: str | None) -> list[Update]:
        self._remember(self._streamed, "reasoning:" + str(data.get("reasoningId", "")), "")
        return [_chunk("agent_thought_chunk", data.get("deltaContent"))]

    def _thought(self, data: dict[str, Any], _agent: str | None) -> list[Update]:
        streamed = self._streamed.pop("reasoning:" + str(data.get("reasoningId", "")), None) is not None
        content = data.get("content")
        return (
            [] if streamed or not isinstance(content, str) or not content else [_chunk("agent_thought_chunk", content)]
        )

    # -- tool calls -------------------------------------------------------------------

    def _tool_start(self, data: dict[str, Any], _agent: str | None) -> list[Update]:
        call_id = data.get("toolCallId")
        if call_id not in self._calls:
            return []  # a call outside the agent's turn (an extension's own)
        return [{"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "in_progress"}]

    def _tool_complete(self, data: dict[str, Any], _agent: str | None) -> list[Update]:
        call_id = data.get("toolCallId")
        if self._calls.pop(str(call_id), None) is None:
            return []
        result = data.get("result")
        result = result if isinstance(result, dict) else {}
        error = data.get("error")
        error = error if isinstance(error, dict) else {}
        text = result.get("content")
        if not isinstance(text, str):
            text = error.get("message")
        text = _cut(text) if isinstance(text, str) else ""
        update: Update = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": call_id,
            "status": "completed" if data.get("success") else "failed",
            "content": [{"type": "content", "content": {"type": "text", "text": text}}],
            "rawOutput": {"content": text},
        }
        if not data.get("success"):
            # as Copilot CLI says why a call failed: its message and a code (denied, rejected, ...)
            code = error.get("code") or result.get("resultType") or "failure"
            update["rawOutput"] = {"message": text, "code": str(code)}
        return [update]

    def tool_title(self, call_id: str) -> str | None:
        """The title of the tool call ``call_id``, while it has not completed."""
        return self._calls.get(call_id)

    # -- the session ------------------------------------------------------------------

    def _title(self, data: dict[str, Any], _agent: str | None) -> list[Update]:
        title = data.get("title")
        return [{"sessionUpdate": "session_info_update", "title": title}] if isinstance(title, str) else []

    def _commands(self, data: dict[str, Any], _agent: str | None) -> list[Update]:
        listed = data.get("commands")
        commands = {
            str(command.get("name")): str(command.get("description") or "")
            for command in (listed if isinstance(listed, list) else ())
            if isinstance(command, dict) and command.get("name")
        }
        return [available_commands(commands)]

    @staticmethod
    def _remember(memory: OrderedDict[str, Any], key: str, value: Any) -> None:
        memory[key] = value
        while len(memory) > _MAX_REMEMBERED:
            memory.popitem(last=False)


def _chunk(kind: str, text: Any) -> Update:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text if isinstance(text, str) else ""}}


def _cut(text: str) -> str:
    if len(text) <= MAX_RESULT_CHARS:
        return text
    return f"{text[:MAX_RESULT_CHARS]}…[truncated: {len(text) - MAX_RESULT_CHARS} characters]"


def input_text(arguments: Any) -> str:
    """A tool call's arguments as one line of JSON (for a permission question)."""
    return json.dumps(arguments, ensure_ascii=False, default=str)[:4096]
