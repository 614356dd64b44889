"""A session's state as clients see it, and the reducer that folds actions into it.

The state is the agent host protocol's ``SessionState`` (plain JSON, camelCase):
``{summary, lifecycle, turns, activeTurn?}``, where a turn is ``{id, userMessage,
responseParts, usage, state, error}`` and a response part is a markdown part ``{kind:
"markdown", id, content}`` or a tool call ``{kind: "toolCall", toolCall: {status, toolCallId,
toolName, ...}}``. :func:`reduce` applies one action and returns the new state without touching
the old one, as the protocol's own reducer does, for the subset of session actions this server
sends or accepts (:data:`SESSION_ACTIONS`); any other action leaves the state as it was.

The canvases open in the session are its ``openCanvases`` (oldest first; absent when none is
open): ``session/canvasOpened`` adds its ``canvas`` or replaces the one of the same
``instanceId`` in place, ``session/canvasClosed`` removes it. They belong to the session, not to
a turn.

Pending permissions live on the active turn (``pendingPermissions``, by request id) as in the
protocol's ``session/permissionRequest`` / ``session/permissionResolved``; a request for a tool
call puts that call in ``pending-confirmation`` until it is resolved.

This module is pure: no I/O, no clock but the ``now`` it is given, no knowledge of the host's
events (:mod:`extension_host.serve.actions` maps those) or of clients.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final

__all__ = [
    "PROGRESS_ACTIONS",
    "SESSION_ACTIONS",
    "initial_state",
    "now_ms",
    "reduce",
]

SESSION_ACTIONS: Final = frozenset(
    {
        "session/ready",
        "session/creationFailed",
        "session/turnStarted",
        "session/delta",
        "session/responsePart",
        "session/turnComplete",
        "session/turnCancelled",
        "session/error",
        "session/toolCallStart",
        "session/toolCallReady",
        "session/toolCallConfirmed",
        "session/toolCallComplete",
        "session/permissionRequest",
        "session/permissionResolved",
        "session/titleChanged",
        "session/usage",
        "session/modelChanged",
        "session/canvasOpened",
        "session/canvasClosed",
    }
)
"""The session actions this reducer knows."""

PROGRESS_ACTIONS: Final = frozenset(
    {
        "session/turnStarted",
        "session/delta",
        "session/responsePart",
        "session/toolCallStart",
        "session/toolCallReady",
        "session/toolCallConfirmed",
        "session/toolCallComplete",
        "session/usage",
    }
)
"""The actions that report a turn's progress: nothing a client must answer or may wait for to
end. They go to clients with the next action that does, or within
:data:`~extension_protocol.connection.PROGRESS_DELAY` (a streamed turn wakes a client once per
run of deltas, not once per delta); every other action is written at once."""

_TERMINAL: Final = frozenset({"completed", "cancelled"})

State = dict[str, Any]
Action = dict[str, Any]


def now_ms() -> int:
    """Epoch milliseconds: the protocol's timestamps."""
    return int(time.time() * 1000)


def initial_state(resource: str, provider: str, *, title: str = "", model: str | None = None, now: int) -> State:
    """A new session's state: ready, idle, no turns."""
    summary: dict[str, Any] = {
        "resource": resource,
        "provider": provider,
        "title": title,
        "status": "idle",
        "createdAt": now,
        "modifiedAt": now,
    }
    if model is not None:
        summary["model"] = model
    return {"summary": summary, "lifecycle": "ready", "turns": []}


def _status(state: State, terminal: str | None = None) -> str:
    if terminal is not None:
        return terminal
    active = state.get("activeTurn")
    if active is None:
        return "idle"
    if active.get("pendingPermissions") or any(
        part.get("kind") == "toolCall" and part["toolCall"].get("status") == "pending-confirmation"
        for part in active["responseParts"]
    ):
        return "input-needed"
    return "in-progress"


def _refresh(state: State) -> State:
    status = _status(state)
    if status == state["summary"].get("status"):
        return state
    return {**state, "summary": {**state["summary"], "status": status}}


def _base(call: dict[str, Any]) -> dict[str, Any]:
    return {
        "toolCallId": call["toolCallId"],
        "toolName": call.get("toolName"),
        "displayName": call.get("displayName"),
        "toolClientId": call.get("toolClientId"),
        "_meta": call.get("_meta"),
    }


def _end_turn(
    state: State, turn_id: Any, turn_state: str, now: int, *, terminal: str | None = None, error: Any = None
) -> State:
    active = state.get("activeTurn")
    if active is None or active["id"] != turn_id:
        return state
    parts = []
    for part in active["responseParts"]:
        call = part.get("toolCall") if part.get("kind") == "toolCall" else None
        if call is None or call.get("status") in _TERMINAL:
            parts.append(part)
            continue
        streaming = call.get("status") == "streaming"
        # A call the turn ended under is skipped, whatever it was doing.
        parts.append(
            {
                "kind": "toolCall",
                "toolCall": {
                    "status": "cancelled",
                    **_base(call),
                    "invocationMessage": (call.get("invocationMessage") or "")
                    if streaming
                    else call.get("invocationMessage"),
                    "toolInput": None if streaming else call.get("toolInput"),
                    "reason": "skipped",
                },
            }
        )
    turn = {
        "id": active["id"],
        "userMessage": active["userMessage"],
        "responseParts": parts,
        "usage": active.get("usage"),
        "state": turn_state,
        "error": error,
    }
    after = {key: value for key, value in state.items() if key != "activeTurn"}
    after["turns"] = [*state["turns"], turn]
    after["summary"] = {**state["summary"], "modifiedAt": now}
    after["summary"]["status"] = _status(after, terminal)
    return after


def _update_call(state: State, turn_id: Any, call_id: Any, update: Callable[[dict[str, Any]], dict[str, Any]]) -> State:
    active = state.get("activeTurn")
    if active is None or active["id"] != turn_id:
        return state
    found = False
    parts = []
    for part in active["responseParts"]:
        if part.get("kind") == "toolCall" and part["toolCall"].get("toolCallId") == call_id:
            updated = update(part["toolCall"])
            if updated is not part["toolCall"]:
                found = True
                part = {**part, "toolCall": updated}
        parts.append(part)
    if not found:
        return state
    return {**state, "activeTurn": {**active, "responseParts": parts}}


def _with_active(state: State, turn_id: Any, change: Callable[[dict[str, Any]], dict[str, Any]]) -> State:
    active = state.get("activeTurn")
    if active is None or active["id"] != turn_id:
        return state
    return {**state, "activeTurn": change(active)}


def reduce(state: State, action: Action, *, now: Callable[[], int] = now_ms) -> State:
    """The state after ``action``; ``state`` itself is never changed."""
    kind = action.get("type")
    turn_id = action.get("turnId")
    if kind == "session/ready":
        return {**state, "lifecycle": "ready"}
    if kind == "session/creationFailed":
        return {**state, "lifecycle": "creationFailed", "creationError": action.get("error")}
    if kind == "session/turnStarted":
        after = {
            **state,
            "activeTurn": {"id": turn_id, "userMessage": action.get("userMessage"), "responseParts": [], "usage": None},
        }
        after["summary"] = {**state["summary"], "status": _status(after), "modifiedAt": now()}
        return after
    if kind == "session/delta":
        part_id = action.get("partId")

        def append(active: dict[str, Any]) -> dict[str, Any]:
            parts = list(active["responseParts"])
            for index, part in enumerate(parts):
                if part.get("kind") == "markdown" and part.get("id") == part_id:
                    parts[index] = {**part, "content": part.get("content", "") + str(action.get("content", ""))}
                    return {**active, "responseParts": parts}
            return active

        return _with_active(state, turn_id, append)
    if kind == "session/responsePart":
        return _with_active(
            state, turn_id, lambda active: {**active, "responseParts": [*active["responseParts"], action.get("part")]}
        )
    if kind == "session/turnComplete":
        return _end_turn(state, turn_id, "complete", now())
    if kind == "session/turnCancelled":
        return _end_turn(state, turn_id, "cancelled", now())
    if kind == "session/error":
        return _end_turn(state, turn_id, "error", now(), terminal="error", error=action.get("error"))
    if kind == "session/toolCallStart":
        call = {
            "toolCallId": action.get("toolCallId"),
            "toolName": action.get("toolName"),
            "displayName": action.get("displayName"),
            "toolClientId": action.get("toolClientId"),
            "_meta": action.get("_meta"),
            "status": "streaming",
        }
        return _with_active(
            state,
            turn_id,
            lambda active: {
                **active,
                "responseParts": [*active["responseParts"], {"kind": "toolCall", "toolCall": call}],
            },
        )
    if kind == "session/toolCallReady":
        return _refresh(_update_call(state, turn_id, action.get("toolCallId"), lambda call: _ready(call, action)))
    if kind == "session/toolCallConfirmed":
        return _refresh(_update_call(state, turn_id, action.get("toolCallId"), lambda call: _confirmed(call, action)))
    if kind == "session/toolCallComplete":
        return _refresh(_update_call(state, turn_id, action.get("toolCallId"), lambda call: _complete(call, action)))
    if kind == "session/permissionRequest":
        return _permission_request(state, turn_id, action)
    if kind == "session/permissionResolved":
        return _permission_resolved(state, turn_id, action)
    if kind == "session/titleChanged":
        return {**state, "summary": {**state["summary"], "title": action.get("title"), "modifiedAt": now()}}
    if kind == "session/usage":
        return _with_active(state, turn_id, lambda active: {**active, "usage": action.get("usage")})
    if kind == "session/modelChanged":
        return {**state, "summary": {**state["summary"], "model": action.get("model"), "modifiedAt": now()}}
    if kind == "session/canvasOpened" or kind == "session/canvasClosed":
        return _canvases(state, action)
    return state


def _canvases(state: State, action: Action) -> State:
    opened = action.get("canvas") if action.get("type") == "session/canvasOpened" else None
    if opened is not None and not isinstance(opened, dict):
        return state
    instance_id = opened.get("instanceId") if opened is not None else action.get("instanceId")
    before: list[dict[str, Any]] = state.get("openCanvases", [])
    kept = [canvas for canvas in before if canvas.get("instanceId") != instance_id]
    if opened is not None:
        index = next((number for number, canvas in enumerate(before) if canvas.get("instanceId") == instance_id), None)
        kept.insert(len(kept) if index is None else index, opened)
    elif len(kept) == len(before):
        return state
    after = {key: value for key, value in state.items() if key != "openCanvases"}
    if kept:
        after["openCanvases"] = kept
    return after


def _ready(call: dict[str, Any], action: Action) -> dict[str, Any]:
    if call.get("status") not in ("streaming", "running"):
        return call
    if action.get("confirmed"):
        return {
            "status": "running",
            **_base(call),
            "invocationMessage": action.get("invocationMessage"),
            "toolInput": action.get("toolInput"),
            "confirmed": action["confirmed"],
        }
    return {
        "status": "pending-confirmation",
        **_base(call),
        "invocationMessage": action.get("invocationMessage"),
        "toolInput": action.get("toolInput"),
        "confirmationTitle": action.get("confirmationTitle"),
    }


def _confirmed(call: dict[str, Any], action: Action) -> dict[str, Any]:
    if call.get("status") != "pending-confirmation":
        return call
    common = {**_base(call), "invocationMessage": call.get("invocationMessage"), "toolInput": call.get("toolInput")}
    if action.get("approved"):
        return {"status": "running", **common, "confirmed": action.get("confirmed")}
    return {
        "status": "cancelled",
        **common,
        "reason": action.get("reason"),
        "reasonMessage": action.get("reasonMessage"),
        "userSuggestion": action.get("userSuggestion"),
    }


def _complete(call: dict[str, Any], action: Action) -> dict[str, Any]:
    status = call.get("status")
    if status not in ("running", "pending-confirmation"):
        return call
    confirmed = call.get("confirmed") if status == "running" else "not-needed"
    result = action.get("result")
    return {
        "status": "completed",
        **_base(call),
        "invocationMessage": call.get("invocationMessage"),
        "toolInput": call.get("toolInput"),
        "confirmed": confirmed,
        **(result if isinstance(result, dict) else {}),
    }


def _permission_request(state: State, turn_id: Any, action: Action) -> State:
    request = action.get("request")
    if not isinstance(request, dict):
        return state
    after = _with_active(
        state,
        turn_id,
        lambda active: {
            **active,
            "pendingPermissions": {**active.get("pendingPermissions", {}), str(request.get("requestId")): request},
        },
    )
    call_id = request.get("toolCallId")
    if call_id is not None:

        def ask(call: dict[str, Any]) -> dict[str, Any]:
            if call.get("status") not in ("streaming", "running"):
                return call
            return {**call, "status": "pending-confirmation"}

        after = _update_call(after, turn_id, call_id, ask)
    return _refresh(after)


def _permission_resolved(state: State, turn_id: Any, action: Action) -> State:
    active = state.get("activeTurn")
    if active is None or active["id"] != turn_id:
        return state
    pending = dict(active.get("pendingPermissions", {}))
    request = pending.pop(str(action.get("requestId")), None)
    if request is None:
        return state
    changed = {**active}
    if pending:
        changed["pendingPermissions"] = pending
    else:
        changed.pop("pendingPermissions", None)
    after = {**state, "activeTurn": changed}
    call_id = request.get("toolCallId")
    if call_id is not None:
        approved = bool(action.get("approved"))

        def settle(call: dict[str, Any]) -> dict[str, Any]:
            if call.get("status") != "pending-confirmation":
                return call
            if approved:
                return {**call, "status": "running", "confirmed": "user-action"}
            return {
                **_base(call),
                "status": "cancelled",
                "invocationMessage": call.get("invocationMessage"),
                "toolInput": call.get("toolInput"),
                "reason": "denied",
            }

        after = _update_call(after, turn_id, call_id, settle)
    return _refresh(after)
