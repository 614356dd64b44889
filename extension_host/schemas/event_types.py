"""Every session event type this host emits, its envelope, and one check for any event.

:data:`EVENT_TYPES` is the table: an event type and the shape of its ``data``; whether the event
is always ephemeral (never persisted) is the host's own table,
:data:`~extension_host.events.EPHEMERAL_EVENT_TYPES`, which names no type without a row here.
From it come the event models (the envelope ``{id, timestamp, parentId, type, data, ephemeral?,
agentId?}`` with ``type`` fixed and ``data`` of that shape), the discriminated union
``SessionEvent`` on ``type`` that ``session-events.schema.json`` is generated from, and
:func:`check_event`, which the test suite runs on every event it sees. An event type missing
from the table is an error, so a new event gets a shape before it ships. Adding one is a row
here and, if need be, a shape in :mod:`~extension_host.schemas.session_data`,
:mod:`~extension_host.schemas.turn_data` or :mod:`~extension_host.schemas.call_data`.

This module imports pydantic and builds every validator when first imported; the host itself
never imports it (the ``schema`` command and the tests do).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal, NotRequired

from pydantic import Field, TypeAdapter, ValidationError, with_config
from typing_extensions import TypedDict

from extension_host.events import EPHEMERAL_EVENT_TYPES
from extension_host.schemas import call_data as c
from extension_host.schemas import session_data as d
from extension_host.schemas import turn_data as t

__all__ = [
    "EVENT_TYPES",
    "EventType",
    "check_event",
    "event_adapter",
    "event_type_names",
]


@dataclass(frozen=True, slots=True)
class EventType:
    """One row of the table: a session event type and the shape of its ``data``."""

    name: str
    data: Any

    @property
    def always_ephemeral(self) -> bool:
        """Whether the event is never persisted (``ephemeral: true`` required): the host's own
        table, :data:`~extension_host.events.EPHEMERAL_EVENT_TYPES`, says."""
        return self.name in EPHEMERAL_EVENT_TYPES


EVENT_TYPES: Final[tuple[EventType, ...]] = (
    EventType("session.start", d.SessionStartData),
    EventType("session.resume", d.SessionResumeData),
    EventType("session.shutdown", d.SessionShutdownData),
    EventType("session.idle", d.SessionIdleData),
    EventType("session.title_changed", d.SessionTitleChangedData),
    EventType("session.model_change", d.SessionModelChangeData),
    EventType("session.info", d.SessionInfoData),
    EventType("session.warning", d.SessionWarningData),
    EventType("session.error", d.SessionErrorData),
    EventType("session.tools_updated", c.ToolsUpdatedData),
    EventType("session.extensions_loaded", c.ExtensionsLoadedData),
    EventType("user.message", t.UserMessageData),
    EventType("pending_messages.modified", d.EmptyData),
    EventType("system.message", d.SystemMessageData),
    EventType("system.notification", d.SystemNotificationData),
    EventType("assistant.turn_start", t.AssistantTurnData),
    EventType("assistant.intent", t.AssistantIntentData),
    EventType("assistant.reasoning", t.AssistantReasoningData),
    EventType("assistant.reasoning_delta", t.AssistantReasoningDeltaData),
    EventType("assistant.message_start", t.AssistantMessageStartData),
    EventType("assistant.message_delta", t.AssistantMessageDeltaData),
    EventType("assistant.message", t.AssistantMessageData),
    EventType("assistant.turn_end", t.AssistantTurnData),
    EventType("assistant.idle", t.AssistantIdleData),
    EventType("assistant.usage", t.AssistantUsageData),
    EventType("abort", t.AbortData),
    EventType("subagent.started", t.SubagentStartedData),
    EventType("subagent.selected", t.SubagentSelectedData),
    EventType("subagent.completed", t.SubagentCompletedData),
    EventType("subagent.failed", t.SubagentFailedData),
    EventType("tool.user_requested", c.ToolUserRequestedData),
    EventType("tool.execution_start", c.ToolExecutionStartData),
    EventType("tool.execution_progress", c.ToolExecutionProgressData),
    EventType("tool.execution_partial_result", c.ToolExecutionPartialResultData),
    EventType("tool.execution_complete", c.ToolExecutionCompleteData),
    EventType("external_tool.requested", c.ExternalToolRequestedData),
    EventType("external_tool.completed", c.ExternalToolCompletedData),
    EventType("hook.start", c.HookStartData),
    EventType("hook.end", c.HookEndData),
    EventType("permission.requested", c.PermissionRequestedData),
    EventType("permission.completed", c.PermissionCompletedData),
    EventType("command.queued", c.CommandQueuedData),
    EventType("command.execute", c.CommandExecuteData),
    EventType("command.completed", c.CommandCompletedData),
    EventType("commands.changed", c.CommandsChangedData),
)


def event_type_names() -> tuple[str, ...]:
    """The event types that have a shape, in the table's order."""
    return tuple(row.name for row in EVENT_TYPES)


def _model_name(event_type: str) -> str:
    # "assistant.message_delta" -> "AssistantMessageDeltaEvent"
    words = event_type.replace(".", "_").split("_")
    return "".join(word[:1].upper() + word[1:] for word in words) + "Event"


_ALWAYS_EPHEMERAL: Final = Annotated[Literal[True], Field(description="Always true: delivered live, never persisted.")]
_MAYBE_EPHEMERAL: Final = NotRequired[Annotated[bool, Field(description="True when the event is not persisted.")]]


def _event_model(row: EventType) -> Any:
    """The envelope with ``type`` fixed to the row's and ``data`` of its shape."""
    fields: dict[str, Any] = {
        "id": Annotated[str, Field(description="Unique event id, made when the event is emitted.")],
        "timestamp": Annotated[str, Field(description="When the event was emitted (ISO 8601).")],
        "parentId": Annotated[
            str | None, Field(description="The previous persistent event's id; null for the first event.")
        ],
        "type": Literal[row.name],
        "data": row.data,
        "ephemeral": _ALWAYS_EPHEMERAL if row.always_ephemeral else _MAYBE_EPHEMERAL,
        "agentId": NotRequired[
            Annotated[str, Field(description="The sub-agent that emitted it; absent for the main agent.")]
        ],
    }
    model = TypedDict(_model_name(row.name), fields)  # type: ignore[misc]
    model.__doc__ = f'Session event "{row.name}": {(row.data.__doc__ or "").strip().splitlines()[0]}'
    return with_config(d.CLOSED)(model)


@functools.cache
def _models() -> dict[str, Any]:
    return {row.name: _event_model(row) for row in EVENT_TYPES}


@functools.cache
def _adapters() -> dict[str, TypeAdapter[Any]]:
    return {name: TypeAdapter(model) for name, model in _models().items()}


@functools.cache
def event_adapter() -> TypeAdapter[Any]:
    """One validator for any event: the union of every event model, told apart by ``type``."""
    models = tuple(_models().values())
    union = functools.reduce(lambda left, right: left | right, models[1:], models[0])
    annotated: Any = Annotated[union, Field(discriminator="type")]
    return TypeAdapter(annotated)


def check_event(event: Any) -> str | None:
    """``None`` if ``event`` is a valid session event, else one line saying what is wrong.

    The line names the event type and the first bad field, and for a type without a shape says
    where to add one.
    """
    if not isinstance(event, dict):
        return f"an event must be an object, not {type(event).__name__}"
    event_type = event.get("type")
    adapter = _adapters().get(event_type) if isinstance(event_type, str) else None
    if adapter is None:
        return (
            f"event type {event_type!r} has no schema; add it to EVENT_TYPES in extension_host/schemas/event_types.py "
            "and regenerate the schema files (python -m extension_host.schemas)"
        )
    try:
        adapter.validate_python(event)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "event"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        return f"event {event_type}: {where}: {first['msg']}{more}"
    return None
