"""The model of every session event: its envelope with the shape of its ``data``, and one check
for any event.

:data:`EVENT_DATA` gives each event type of the table (:data:`extension_host.event_types.EVENT_TYPES`,
which also says whether it is ephemeral) the shape of its ``data``; a test keeps the two
covering the same types. From them come the event models (the envelope ``{id, timestamp,
parentId, type, data, ephemeral?, agentId?}`` with ``type`` fixed, ``data`` of that shape and
``ephemeral: true`` required of an ephemeral type), the discriminated union ``SessionEvent`` on
``type`` that ``session-events.schema.json`` is generated from, and :func:`check_event`, which
the test suite runs on every event it sees. An event type missing from the table is an error, so
a new event gets a shape before it ships. Adding one is a row in the table, an entry here and, if
need be, a shape in :mod:`~extension_host.schemas.session_data`,
:mod:`~extension_host.schemas.turn_data`, :mod:`~extension_host.schemas.call_data` or
:mod:`~extension_host.schemas.input_data`.

This module imports pydantic and builds every validator when first imported; the host itself
never imports it (the ``schema`` command and the tests do).
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, Final, Literal, NotRequired

from pydantic import Field, TypeAdapter, ValidationError, with_config
from typing_extensions import TypedDict

from extension_host.event_types import EVENT_TYPES
from extension_host.schemas import call_data as c
from extension_host.schemas import input_data as i
from extension_host.schemas import session_data as d
from extension_host.schemas import turn_data as t

__all__ = ["EVENT_DATA", "check_event", "event_adapter"]

EVENT_DATA: Final[dict[str, Any]] = {
    "session.start": d.SessionStartData,
    "session.resume": d.SessionResumeData,
    "session.shutdown": d.SessionShutdownData,
    "session.idle": d.SessionIdleData,
    "session.title_changed": d.SessionTitleChangedData,
    "session.model_change": d.SessionModelChangeData,
    "session.info": d.SessionInfoData,
    "session.warning": d.SessionWarningData,
    "session.error": d.SessionErrorData,
    "session.usage_info": d.UsageInfoData,
    "session.custom_notification": d.CustomNotificationData,
    "session.tools_updated": c.ToolsUpdatedData,
    "session.extensions_loaded": c.ExtensionsLoadedData,
    "capabilities.changed": d.CapabilitiesChangedData,
    "session.canvas.opened": d.CanvasOpenedData,
    "session.canvas.closed": d.CanvasClosedData,
    "user.message": t.UserMessageData,
    "pending_messages.modified": d.EmptyData,
    "system.message": d.SystemMessageData,
    "system.notification": d.SystemNotificationData,
    "assistant.turn_start": t.AssistantTurnData,
    "assistant.intent": t.AssistantIntentData,
    "assistant.reasoning": t.AssistantReasoningData,
    "assistant.reasoning_delta": t.AssistantReasoningDeltaData,
    "assistant.streaming_delta": t.AssistantStreamingDeltaData,
    "assistant.message_start": t.AssistantMessageStartData,
    "assistant.message_delta": t.AssistantMessageDeltaData,
    "assistant.tool_call_delta": t.AssistantToolCallDeltaData,
    "assistant.message": t.AssistantMessageData,
    "assistant.turn_end": t.AssistantTurnData,
    "assistant.idle": t.AssistantIdleData,
    "assistant.usage": t.AssistantUsageData,
    "abort": t.AbortData,
    "subagent.started": t.SubagentStartedData,
    "subagent.selected": t.SubagentSelectedData,
    "subagent.completed": t.SubagentCompletedData,
    "subagent.failed": t.SubagentFailedData,
    "tool.user_requested": c.ToolUserRequestedData,
    "tool.execution_start": c.ToolExecutionStartData,
    "tool.execution_progress": c.ToolExecutionProgressData,
    "tool.execution_partial_result": c.ToolExecutionPartialResultData,
    "tool.execution_complete": c.ToolExecutionCompleteData,
    "external_tool.requested": c.ExternalToolRequestedData,
    "external_tool.completed": c.ExternalToolCompletedData,
    "hook.start": c.HookStartData,
    "hook.progress": c.HookProgressData,
    "hook.end": c.HookEndData,
    "permission.requested": c.PermissionRequestedData,
    "permission.completed": c.PermissionCompletedData,
    "user_input.requested": i.UserInputRequestedData,
    "user_input.completed": i.UserInputCompletedData,
    "elicitation.requested": i.ElicitationRequestedData,
    "elicitation.completed": i.ElicitationCompletedData,
    "command.queued": c.CommandQueuedData,
    "command.execute": c.CommandExecuteData,
    "command.completed": c.CommandCompletedData,
    "commands.changed": c.CommandsChangedData,
}
"""The shape of each event type's ``data``, keyed by the names of the table of event types."""


def _model_name(event_type: str) -> str:
    # "assistant.message_delta" -> "AssistantMessageDeltaEvent"
    words = event_type.replace(".", "_").split("_")
    return "".join(word[:1].upper() + word[1:] for word in words) + "Event"


_EPHEMERAL: Final[dict[bool, Any]] = {
    True: Annotated[Literal[True], Field(description="Always true: delivered live, never persisted.")],
    False: NotRequired[Annotated[bool, Field(description="True when the event is not persisted.")]],
}


def _event_model(name: str, ephemeral: bool) -> Any:
    """The envelope with ``type`` fixed to ``name`` and ``data`` of its shape."""
    data = EVENT_DATA[name]
    fields: dict[str, Any] = {
        "id": Annotated[str, Field(description="Unique event id, made when the event is emitted.")],
        "timestamp": Annotated[str, Field(description="When the event was emitted (ISO 8601).")],
        "parentId": Annotated[
            str | None, Field(description="The previous persistent event's id; null for the first event.")
        ],
        "type": Literal[name],
        "data": data,
        "ephemeral": _EPHEMERAL[ephemeral],
        "agentId": NotRequired[
            Annotated[str, Field(description="The sub-agent that emitted it; absent for the main agent.")]
        ],
    }
    model = TypedDict(_model_name(name), fields)  # type: ignore[misc]
    model.__doc__ = f'Session event "{name}": {(data.__doc__ or "").strip().splitlines()[0]}'
    return with_config(d.CLOSED)(model)


@functools.cache
def _models() -> dict[str, Any]:
    return {name: _event_model(name, ephemeral) for name, ephemeral in EVENT_TYPES.items()}


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
            f"event type {event_type!r} has no schema; add it to EVENT_TYPES in extension_host/event_types.py and "
            "its data to EVENT_DATA in extension_host/schemas/event_models.py, then regenerate the schema files "
            "(python -m extension_host.schemas)"
        )
    try:
        adapter.validate_python(event)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "event"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        return f"event {event_type}: {where}: {first['msg']}{more}"
    return None
