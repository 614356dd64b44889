"""The model context projection: the ordered messages an agent sees, built from session events.

:class:`ModelContext` applies one event at a time and depends on nothing but the events, so a
context built live and one rebuilt from the replayed log of the same session are equal. What
becomes a message (system events, and what a UI projects from them):

- ``system.message``: a system or developer message, *upserted*: a later one with the same
  role and ``name`` replaces the earlier one in place. These come first, in the order they
  first appeared.
- ``user.message``: the user's prompt, as sent to the model (``transformedContent`` when a
  prompt hook rewrote it, else ``content``), with its attachments.
- ``system.notification``: user-like context (role ``user``), except kind
  ``instruction_discovered``, which is timeline-only. The ``additional_context`` that hooks
  return reaches the model this way.
- ``assistant.message``: the assistant's text and the tool calls it asked for.
- ``tool.execution_complete``: the result of one tool call an ``assistant.message`` asked for
  (role ``tool``); a later result for the same ``toolCallId`` (a retry, or the result after the
  post-tool hooks) replaces it in place. Results of calls no assistant asked for (the embedding
  application's own ``call_tool``, a CLI call) are not the model's and are not kept.

Every other event (timeline, hooks, ephemeral live state) leaves the context unchanged. This
module does not know where events come from, how they are stored, or what an agent does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["MODEL_EVENT_TYPES", "ContextMessage", "ModelContext", "ToolCall"]

Role = Literal["system", "developer", "user", "assistant", "tool"]

MODEL_EVENT_TYPES: frozenset[str] = frozenset(
    {"system.message", "user.message", "system.notification", "assistant.message", "tool.execution_complete"}
)
"""The event types that can change the model context."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call an agent asks for: the tool's name, its arguments and the call's id
    (``None``: the host makes one)."""

    name: str
    arguments: Any = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True, slots=True)
class ContextMessage:
    """One message of the model context.

    ``tool_calls`` is set on assistant messages that asked for tools; ``tool_call_id``,
    ``tool_name`` and ``result_type`` on tool results; ``name`` on named system messages;
    ``attachments`` on user messages.
    """

    role: Role
    content: str
    name: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    tool_name: str | None = None
    result_type: str | None = None
    attachments: tuple[Mapping[str, Any], ...] = ()


class ModelContext:
    """The model context of one session, fed one event at a time (see the module).

    ``agent_id`` names the sub-agent whose child session this context is: only events carrying
    that ``agentId`` count. A session's own context (``None``) leaves every sub-agent's out.
    """

    def __init__(self, agent_id: str | None = None) -> None:
        self.agent_id = agent_id
        self._system: list[ContextMessage] = []
        self._system_index: dict[tuple[str, str | None], int] = {}
        self._chat: list[ContextMessage] = []
        self._tool_index: dict[str, int] = {}
        self._requested: set[str] = set()

    @classmethod
    def from_events(cls, events: Iterable[Mapping[str, Any]], agent_id: str | None = None) -> ModelContext:
        """Build the context from events in session order (live history or a replayed log)."""
        context = cls(agent_id)
        for event in events:
            context.apply(event)
        return context

    def reset(self, events: Iterable[Mapping[str, Any]] = ()) -> None:
        """Forget every message, then apply ``events``: how a resumed session's replayed log
        (or a new, empty session) becomes the context, in place, for whoever holds this one."""
        self._system.clear()
        self._system_index.clear()
        self._chat.clear()
        self._tool_index.clear()
        self._requested.clear()
        for event in events:
            self.apply(event)

    @property
    def messages(self) -> list[ContextMessage]:
        """System and developer messages first, then the conversation in order."""
        return [*self._system, *self._chat]

    def tool_result(self, tool_call_id: str) -> ContextMessage | None:
        """The result the context holds for one tool call, if any."""
        index = self._tool_index.get(tool_call_id)
        return None if index is None else self._chat[index]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ModelContext) and self.messages == other.messages

    __hash__ = None  # type: ignore[assignment]  # mutable: equal by content, never a dict key

    def __len__(self) -> int:
        return len(self._system) + len(self._chat)

    def apply(self, event: Mapping[str, Any]) -> None:
        """Apply one event; types that are not about the model are ignored, and so are events
        whose data lacks what the model needs (they cannot be sent to a model anyway)."""
        kind = event.get("type")
        if kind not in MODEL_EVENT_TYPES or event.get("agentId") != self.agent_id:
            return
        data = event.get("data")
        if not isinstance(data, Mapping):
            return
        if kind == "system.message":
            self._apply_system(data)
        elif kind == "user.message":
            self._apply_user(data)
        elif kind == "system.notification":
            self._apply_notification(data)
        elif kind == "assistant.message":
            self._apply_assistant(data)
        else:
            self._apply_tool_result(data)

    def _apply_system(self, data: Mapping[str, Any]) -> None:
        role, content, name = data.get("role"), data.get("content"), data.get("name")
        if role not in ("system", "developer") or not isinstance(content, str):
            return
        key = (str(role), name if isinstance(name, str) else None)
        message = ContextMessage("system" if role == "system" else "developer", content, name=key[1])
        index = self._system_index.get(key)
        if index is None:
            self._system_index[key] = len(self._system)
            self._system.append(message)
        else:
            self._system[index] = message

    def _apply_user(self, data: Mapping[str, Any]) -> None:
        content = data.get("transformedContent")
        if not isinstance(content, str):
            content = data.get("content")
        if not isinstance(content, str):
            return
        attachments = data.get("attachments")
        kept = tuple(a for a in attachments if isinstance(a, Mapping)) if isinstance(attachments, list) else ()
        self._chat.append(ContextMessage("user", content, attachments=kept))

    def _apply_notification(self, data: Mapping[str, Any]) -> None:
        content, kind = data.get("content"), data.get("kind")
        if not isinstance(content, str):
            return
        if isinstance(kind, Mapping) and kind.get("type") == "instruction_discovered":
            return  # timeline-only: the instruction itself reaches the model another way
        self._chat.append(ContextMessage("user", content))

    def _apply_assistant(self, data: Mapping[str, Any]) -> None:
        content = data.get("content")
        requests = data.get("toolRequests")
        calls: list[ToolCall] = []
        if isinstance(requests, list):
            for request in requests:
                if isinstance(request, Mapping) and isinstance(request.get("name"), str):
                    call_id = request.get("toolCallId")
                    if isinstance(call_id, str):
                        self._requested.add(call_id)
                    calls.append(
                        ToolCall(
                            request["name"], request.get("arguments"), call_id if isinstance(call_id, str) else None
                        )
                    )
        text = content if isinstance(content, str) else ""
        if not text and not calls:
            return
        self._chat.append(ContextMessage("assistant", text, tool_calls=tuple(calls)))

    def _apply_tool_result(self, data: Mapping[str, Any]) -> None:
        call_id, result = data.get("toolCallId"), data.get("result")
        if not isinstance(call_id, str) or call_id not in self._requested:
            return
        content, result_type = "", None
        if isinstance(result, Mapping):
            content = str(result.get("content") or "")
            kept_type = result.get("resultType")
            result_type = kept_type if isinstance(kept_type, str) else None
        error = data.get("error")
        if not content and isinstance(error, Mapping) and isinstance(error.get("message"), str):
            content = error["message"]
        if result_type is None:
            result_type = "success" if data.get("success") else "failure"
        name = data.get("toolName")
        message = ContextMessage(
            "tool",
            content,
            tool_call_id=call_id,
            tool_name=name if isinstance(name, str) else None,
            result_type=result_type,
        )
        index = self._tool_index.get(call_id)
        if index is None:
            self._tool_index[call_id] = len(self._chat)
            self._chat.append(message)
        else:
            self._chat[index] = message
