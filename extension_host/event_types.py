"""The session event types: every type an event of this host may have, and whether it is
delivered live only.

:data:`EVENT_TYPES` is the one table of event types: a type's name and whether it is ephemeral
(delivered to listeners, never persisted, whoever emits it: the published SDK's ``ephemeral:
true`` events). :data:`EPHEMERAL_EVENT_TYPES`, which :meth:`extension_host.events.EventLog.emit`
reads, is derived from it once at import; so is the JSON Schema of session events, whose models
(:mod:`extension_host.schemas.event_models`) are keyed by these names and checked to cover
them. Adding an event type is a row here and the shape of its ``data`` there.

This module holds names and flags only, so the host pays nothing for the schemas' models.
"""

from __future__ import annotations

from typing import Final

__all__ = ["EPHEMERAL_EVENT_TYPES", "EVENT_TYPES"]

EVENT_TYPES: Final[dict[str, bool]] = {
    # The session's lifecycle and timeline.
    "session.start": False,
    "session.resume": False,
    "session.shutdown": False,
    "session.idle": True,
    "session.title_changed": True,
    "session.model_change": False,
    "session.info": False,
    "session.warning": False,
    "session.error": False,
    "session.usage_info": True,
    "session.custom_notification": True,
    "session.tools_updated": True,
    "session.extensions_loaded": True,
    "capabilities.changed": True,
    "session.canvas.opened": True,
    "session.canvas.closed": True,
    "user.message": False,
    "pending_messages.modified": True,
    "system.message": False,
    "system.notification": False,
    # A turn: the assistant's messages, their streaming, reasoning and usage, and an abort.
    "assistant.turn_start": False,
    "assistant.intent": True,
    "assistant.reasoning": False,
    "assistant.reasoning_delta": True,
    "assistant.streaming_delta": True,
    "assistant.message_start": True,
    "assistant.message_delta": True,
    "assistant.tool_call_delta": True,
    "assistant.message": False,
    "assistant.turn_end": False,
    "assistant.idle": True,
    "assistant.usage": True,
    "abort": False,
    "subagent.started": False,
    "subagent.selected": False,
    "subagent.completed": False,
    "subagent.failed": False,
    # Tools and hooks (hook.start and hook.end are persisted, as in the CLI; a hook's progress is not).
    "tool.user_requested": False,
    "tool.execution_start": False,
    "tool.execution_progress": True,
    "tool.execution_partial_result": True,
    "tool.execution_complete": False,
    "external_tool.requested": False,
    "external_tool.completed": False,
    "hook.start": False,
    "hook.progress": True,
    "hook.end": False,
    # Requests answered live: a resumed session cannot answer them again.
    "permission.requested": False,
    "permission.completed": False,
    "user_input.requested": True,
    "user_input.completed": True,
    "elicitation.requested": True,
    "elicitation.completed": True,
    "command.queued": True,
    "command.execute": True,
    "command.completed": True,
    "commands.changed": True,
}
"""Every session event type, in the order of the events schema: name → ephemeral."""

EPHEMERAL_EVENT_TYPES: Final = frozenset(name for name, ephemeral in EVENT_TYPES.items() if ephemeral)
"""The event types that are delivered live and never persisted, whoever emits them."""
