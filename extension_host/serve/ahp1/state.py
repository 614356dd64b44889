"""AHP 1.0's states as clients see them, and the reducers that fold its actions into them.

AHP 1.0 splits what the seed protocol keeps in one session state over channels: the root
(``ahp-root://``: the agents this server offers), a session (``ahp-session:/…``: its summary
fields inline, ``lifecycle``, ``chats`` and ``defaultChat``) and a chat (``ahp-chat:/…``: its
summary fields inline, ``turns`` and ``activeTurn``). A status is a bit set
(:data:`IDLE`, :data:`ERROR`, :data:`IN_PROGRESS`, :data:`INPUT_NEEDED`, and the flags
:data:`IS_READ`, :data:`IS_ARCHIVED`); a timestamp is an ISO 8601 string.

:func:`reduce_chat` applies one chat action (:data:`CHAT_ACTIONS`) and :func:`reduce_session`
one session action (:data:`SESSION_ACTIONS`), without touching the state they are given, as the
specification's reducers do; any other action leaves the state as it was. Tool calls may be
confirmed before they run (``pending-confirmation``) and after (``pending-result-confirmation``);
a turn that ends under a call still going cancels it as ``skipped``.

Not here (this server neither sends nor accepts them): input requests, MCP authentication of
tool calls, customizations, changesets, terminals, active clients.

This module is pure: no I/O, no clock but the ``now`` it is given, no knowledge of the host's
events or of the seed protocol (:mod:`extension_host.serve.ahp1.actions` translates those).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, Final

__all__ = [
    "CHAT_ACTIONS",
    "ERROR",
    "IDLE",
    "INPUT_NEEDED",
    "IN_PROGRESS",
    "IS_ARCHIVED",
    "IS_READ",
    "SESSION_ACTIONS",
    "iso",
    "now_ms",
    "reduce_chat",
    "reduce_session",
]

IDLE: Final = 1
ERROR: Final = 1 << 1
IN_PROGRESS: Final = 1 << 3
INPUT_NEEDED: Final = (1 << 3) | (1 << 4)
IS_READ: Final = 1 << 5
IS_ARCHIVED: Final = 1 << 6
_ACTIVITY: Final = (1 << 5) - 1
"""The bits of a status that say what it is doing (the others are flags kept as they are)."""
_BLOCKING: Final = frozenset({"pending-confirmation", "pending-result-confirmation", "auth-required"})
_TERMINAL: Final = frozenset({"completed", "cancelled"})
_CONFIRMATION_KEYS: Final = (
    "invocationMessage",
    "toolInput",
    "confirmationTitle",
    "riskAssessment",
    "edits",
    "editable",
)
"""What ``chat/toolCallReady`` gives a call that waits for confirmation."""

State = dict[str, Any]
Action = dict[str, Any]
Clock = Callable[[], int]


def now_ms() -> int:
    """Epoch milliseconds."""
    return int(time.time() * 1000)


def iso(ms: int) -> str:
    """Epoch milliseconds as the protocol's timestamp (``1970-01-01T00:00:09.999Z``)."""
    second, milli = divmod(ms, 1000)
    return f"{_second(second)}.{milli:03d}Z"


@lru_cache(maxsize=4)
def _second(second: int) -> str:
    """Epoch seconds as a timestamp's date and time (a turn's times mostly share theirs)."""
    return datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")


# -- chats ------------------------------------------------------------------------------


def _status(state: State, terminal: int | None = None) -> int:
    active = state.get("activeTurn")
    if terminal is not None:
        activity = terminal
    elif active is not None and any(
        part.get("kind") == "toolCall" and part["toolCall"].get("status") in _BLOCKING
        for part in active["responseParts"]
    ):
        activity = INPUT_NEEDED
    elif active is not None:
        activity = IN_PROGRESS
    else:
        activity = IDLE
    return (int(state.get("status", IDLE)) & ~_ACTIVITY) | activity


def _refresh(state: State) -> State:
    status = _status(state)
    return state if status == state.get("status") else {**state, "status": status}


def _base(call: dict[str, Any], meta: Any = None) -> dict[str, Any]:
    return {
        "toolCallId": call["toolCallId"],
        "toolName": call.get("toolName"),
        "displayName": call.get("displayName"),
        "intention": call.get("intention"),
        "contributor": call.get("contributor"),
        "_meta": meta if meta is not None else call.get("_meta"),
    }


def _end_turn(state: State, action: Action, turn_state: str, now: Clock, terminal: int | None = None) -> State:
    active = state.get("activeTurn")
    if active is None or active["id"] != action.get("turnId"):
        return state
    parts = []
    for part in active["responseParts"]:
        call = part["toolCall"] if part.get("kind") == "toolCall" else None
        if call is None or call.get("status") in _TERMINAL:
            parts.append(part)
            continue
        streaming = call.get("status") == "streaming"
        cancelled = {
            "status": "cancelled",
            **_base(call),
            "invocationMessage": (call.get("invocationMessage") or "") if streaming else call.get("invocationMessage"),
            "toolInput": None if streaming else call.get("toolInput"),
            "reason": "skipped",
        }
        parts.append({"kind": "toolCall", "toolCall": cancelled})
    turn: dict[str, Any] = {"id": active["id"]}
    if active.get("startedAt") is not None:
        turn["startedAt"] = active["startedAt"]
    if isinstance(action.get("duration"), int | float):
        turn["duration"] = max(0, action["duration"])
    turn |= {
        "message": active.get("message"),
        "responseParts": parts,
        "usage": active.get("usage"),
        "state": turn_state,
        "error": action.get("error") if turn_state == "error" else None,
    }
    after = {key: value for key, value in state.items() if key != "activeTurn"}
    after["turns"] = [*state["turns"], turn]
    after["modifiedAt"] = iso(now())
    after["status"] = _status(after, terminal)
    return after


def _update_call(state: State, action: Action, update: Callable[[dict[str, Any]], dict[str, Any]]) -> State:
    active = state.get("activeTurn")
    if active is None or active["id"] != action.get("turnId"):
        return state
    call_id = action.get("toolCallId")
    found = False
    parts = []
    for part in active["responseParts"]:
        if part.get("kind") == "toolCall" and part["toolCall"].get("toolCallId") == call_id:
            updated = update(part["toolCall"])
            if updated is not part["toolCall"]:
                found = True
                part = {**part, "toolCall": updated}
        parts.append(part)
    return {**state, "activeTurn": {**active, "responseParts": parts}} if found else state


def _update_part(state: State, action: Action, update: Callable[[dict[str, Any]], dict[str, Any]]) -> State:
    active = state.get("activeTurn")
    if active is None or active["id"] != action.get("turnId"):
        return state
    parts = list(active["responseParts"])
    for index, part in enumerate(parts):
        part_id = part["toolCall"].get("toolCallId") if part.get("kind") == "toolCall" else part.get("id")
        if part_id == action.get("partId"):
            parts[index] = update(part)
            return {**state, "activeTurn": {**active, "responseParts": parts}}
    return state


def _with_active(state: State, action: Action, change: Callable[[dict[str, Any]], dict[str, Any]]) -> State:
    active = state.get("activeTurn")
    if active is None or active["id"] != action.get("turnId"):
        return state
    return {**state, "activeTurn": change(active)}


def _append_text(kind: str, action: Action) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def append(part: dict[str, Any]) -> dict[str, Any]:
        if part.get("kind") != kind:
            return part
        return {**part, "content": str(part.get("content", "")) + str(action.get("content", ""))}

    return append


def _turn_started(state: State, action: Action, now: Clock) -> State:
    active: dict[str, Any] = {"id": action.get("turnId")}
    if action.get("startedAt") is not None:
        active["startedAt"] = action["startedAt"]
    active |= {"message": action.get("message"), "responseParts": [], "usage": None}
    after = {**state, "activeTurn": active}
    after["status"] = _status(after) & ~IS_READ
    after["modifiedAt"] = iso(now())
    queued_id = action.get("queuedMessageId")
    if queued_id is not None:
        steering = after.get("steeringMessage")
        if isinstance(steering, dict) and steering.get("id") == queued_id:
            after.pop("steeringMessage")
        queued = [message for message in after.get("queuedMessages") or [] if message.get("id") != queued_id]
        after.pop("queuedMessages", None)
        if queued:
            after["queuedMessages"] = queued
    return after


def _ready(call: dict[str, Any], action: Action) -> dict[str, Any]:
    if call.get("status") not in ("streaming", "running"):
        return call
    base = _base(call, action.get("_meta"))
    if action.get("confirmed"):
        return {
            "status": "running",
            **base,
            "invocationMessage": action.get("invocationMessage"),
            "toolInput": action.get("toolInput"),
            "confirmed": action["confirmed"],
        }
    ready = {
        "status": "pending-confirmation",
        **base,
        **{key: action.get(key) for key in _CONFIRMATION_KEYS},
    }
    if action.get("options"):
        ready["options"] = action["options"]
    return ready


def _selected(call: dict[str, Any], action: Action) -> dict[str, Any]:
    wanted = action.get("selectedOptionId")
    options = call.get("options")
    if not wanted or not isinstance(options, list):
        return {}
    chosen = next((option for option in options if isinstance(option, dict) and option.get("id") == wanted), None)
    return {"selectedOption": chosen} if chosen is not None else {}


def _confirmed(call: dict[str, Any], action: Action) -> dict[str, Any]:
    if call.get("status") != "pending-confirmation":
        return call
    base = _base(call, action.get("_meta"))
    if action.get("approved"):
        edited = action.get("editedToolInput")
        return {
            "status": "running",
            **base,
            "invocationMessage": call.get("invocationMessage"),
            "toolInput": edited if edited is not None else call.get("toolInput"),
            "confirmed": action.get("confirmed"),
            **_selected(call, action),
        }
    return {
        "status": "cancelled",
        **base,
        "invocationMessage": call.get("invocationMessage"),
        "toolInput": call.get("toolInput"),
        "reason": action.get("reason"),
        "reasonMessage": action.get("reasonMessage"),
        "userSuggestion": action.get("userSuggestion"),
        **_selected(call, action),
    }


def _complete(call: dict[str, Any], action: Action) -> dict[str, Any]:
    status = call.get("status")
    if status not in ("running", "pending-confirmation"):
        return call
    result = action.get("result")
    result = result if isinstance(result, dict) else {}
    running = status == "running"
    selected = {"selectedOption": call["selectedOption"]} if running and call.get("selectedOption") else {}
    return {
        "status": "pending-result-confirmation" if action.get("requiresResultConfirmation") else "completed",
        **_base(call, action.get("_meta")),
        "invocationMessage": call.get("invocationMessage"),
        "toolInput": call.get("toolInput"),
        "confirmed": call.get("confirmed") if running else "not-needed",
        **selected,
        **result,
    }


def _result_confirmed(call: dict[str, Any], action: Action) -> dict[str, Any]:
    if call.get("status") != "pending-result-confirmation":
        return call
    common = {
        **_base(call, action.get("_meta")),
        "invocationMessage": call.get("invocationMessage"),
        "toolInput": call.get("toolInput"),
    }
    selected = {"selectedOption": call["selectedOption"]} if call.get("selectedOption") else {}
    if action.get("approved"):
        return {
            "status": "completed",
            **common,
            "confirmed": call.get("confirmed"),
            **selected,
            **{key: call.get(key) for key in ("success", "pastTenseMessage", "content", "structuredContent", "error")},
        }
    return {"status": "cancelled", **common, "reason": "result-denied", **selected}


def _content_changed(call: dict[str, Any], action: Action) -> dict[str, Any]:
    if call.get("status") != "running":
        return call
    meta = {"_meta": action["_meta"]} if action.get("_meta") is not None else {}
    return {**call, **meta, "content": action.get("content")}


def _tool_call_delta(call: dict[str, Any], action: Action) -> dict[str, Any]:
    if call.get("status") != "streaming":
        return call
    meta = {"_meta": action["_meta"]} if action.get("_meta") is not None else {}
    message = action.get("invocationMessage")
    return {
        **call,
        **meta,
        "partialInput": str(call.get("partialInput") or "") + str(action.get("content", "")),
        "invocationMessage": message if message is not None else call.get("invocationMessage"),
    }


def _tool_call_start(state: State, action: Action) -> State:
    call = {
        "toolCallId": action.get("toolCallId"),
        "toolName": action.get("toolName"),
        "displayName": action.get("displayName"),
        "intention": action.get("intention"),
        "contributor": action.get("contributor"),
        "_meta": action.get("_meta"),
        "status": "streaming",
    }
    return _with_active(
        state,
        action,
        lambda active: {**active, "responseParts": [*active["responseParts"], {"kind": "toolCall", "toolCall": call}]},
    )


def _truncated(state: State, action: Action, now: Clock) -> State:
    turn_id = action.get("turnId")
    if turn_id is None:
        turns: list[Any] = []
    else:
        index = next((number for number, turn in enumerate(state["turns"]) if turn.get("id") == turn_id), None)
        if index is None:
            return state
        turns = state["turns"][: index + 1]
    after = {key: value for key, value in state.items() if key != "activeTurn"}
    after["turns"] = turns
    after["modifiedAt"] = iso(now())
    if turn_id is None:
        after.pop("turnsNextCursor", None)
    after["status"] = _status(after)
    return after


def _turns_loaded(state: State, action: Action) -> State:
    known = {turn.get("id") for turn in state["turns"]}
    older = [turn for turn in action.get("turns") or [] if isinstance(turn, dict) and turn.get("id") not in known]
    after = {**state, "turns": [*older, *state["turns"]]}
    after.pop("turnsNextCursor", None)
    if action.get("turnsNextCursor") is not None:
        after["turnsNextCursor"] = action["turnsNextCursor"]
    return after


def _pending_set(state: State, action: Action) -> State:
    entry = {"id": action.get("id"), "message": action.get("message")}
    if action.get("kind") == "steering":
        return {**state, "steeringMessage": entry}
    queued = list(state.get("queuedMessages") or [])
    index = next((number for number, message in enumerate(queued) if message.get("id") == entry["id"]), None)
    if index is None:
        queued.append(entry)
    else:
        queued[index] = entry
    return {**state, "queuedMessages": queued}


def _pending_removed(state: State, action: Action) -> State:
    if action.get("kind") == "steering":
        steering = state.get("steeringMessage")
        if not isinstance(steering, dict) or steering.get("id") != action.get("id"):
            return state
        return {key: value for key, value in state.items() if key != "steeringMessage"}
    queued = state.get("queuedMessages")
    if not queued:
        return state
    kept = [message for message in queued if message.get("id") != action.get("id")]
    if len(kept) == len(queued):
        return state
    after = {key: value for key, value in state.items() if key != "queuedMessages"}
    if kept:
        after["queuedMessages"] = kept
    return after


def _reordered(state: State, action: Action) -> State:
    queued = state.get("queuedMessages")
    if not queued:
        return state
    by_id = {message.get("id"): message for message in queued}
    order = [wanted for wanted in dict.fromkeys(action.get("order") or []) if wanted in by_id]
    rest = [message for message in queued if message.get("id") not in set(order)]
    return {**state, "queuedMessages": [by_id[wanted] for wanted in order] + rest}


_CHAT: Final[dict[str, Callable[[State, Action, Clock], State]]] = {
    "chat/turnStarted": _turn_started,
    "chat/delta": lambda state, action, now: _update_part(state, action, _append_text("markdown", action)),
    "chat/reasoning": lambda state, action, now: _update_part(state, action, _append_text("reasoning", action)),
    "chat/responsePart": lambda state, action, now: _with_active(
        state, action, lambda active: {**active, "responseParts": [*active["responseParts"], action.get("part")]}
    ),
    "chat/turnComplete": lambda state, action, now: _end_turn(state, action, "complete", now),
    "chat/turnCancelled": lambda state, action, now: _end_turn(state, action, "cancelled", now),
    "chat/error": lambda state, action, now: _end_turn(state, action, "error", now, ERROR),
    "chat/activityChanged": lambda state, action, now: {**state, "activity": action.get("activity")},
    "chat/toolCallStart": lambda state, action, now: _tool_call_start(state, action),
    "chat/toolCallDelta": lambda state, action, now: _update_call(state, action, lambda c: _tool_call_delta(c, action)),
    "chat/toolCallReady": lambda state, action, now: _refresh(_update_call(state, action, lambda c: _ready(c, action))),
    "chat/toolCallConfirmed": lambda state, action, now: _refresh(
        _update_call(state, action, lambda c: _confirmed(c, action))
    ),
    "chat/toolCallComplete": lambda state, action, now: _refresh(
        _update_call(state, action, lambda c: _complete(c, action))
    ),
    "chat/toolCallResultConfirmed": lambda state, action, now: _refresh(
        _update_call(state, action, lambda c: _result_confirmed(c, action))
    ),
    "chat/toolCallContentChanged": lambda state, action, now: _update_call(
        state, action, lambda c: _content_changed(c, action)
    ),
    "chat/usage": lambda state, action, now: _with_active(state, action, lambda a: {**a, "usage": action.get("usage")}),
    "chat/truncated": _truncated,
    "chat/turnsLoaded": lambda state, action, now: _turns_loaded(state, action),
    "chat/pendingMessageSet": lambda state, action, now: _pending_set(state, action),
    "chat/pendingMessageRemoved": lambda state, action, now: _pending_removed(state, action),
    "chat/queuedMessagesReordered": lambda state, action, now: _reordered(state, action),
    "chat/draftChanged": lambda state, action, now: {**state, "draft": action.get("draft")},
}

CHAT_ACTIONS: Final = frozenset(_CHAT)
"""The chat actions :func:`reduce_chat` knows."""


def reduce_chat(state: State, action: Action, *, now: Clock = now_ms) -> State:
    """The chat state after ``action``; ``state`` itself is never changed."""
    reducer = _CHAT.get(str(action.get("type")))
    return reducer(state, action, now) if reducer is not None else state


# -- sessions ---------------------------------------------------------------------------


def _flag(flag: int, key: str) -> Callable[[State, Action, Clock], State]:
    def change(state: State, action: Action, now: Clock) -> State:
        status = int(state.get("status", IDLE))
        return {**state, "status": status | flag if action.get(key) else status & ~flag}

    return change


def _chat_index(state: State, uri: Any) -> int | None:
    return next((index for index, chat in enumerate(state.get("chats", [])) if chat.get("resource") == uri), None)


def _chat_added(state: State, action: Action, now: Clock) -> State:
    summary = action.get("summary")
    if not isinstance(summary, dict):
        return state
    chats = list(state.get("chats", []))
    index = _chat_index(state, summary.get("resource"))
    if index is None:
        chats.append(summary)
    else:
        chats[index] = summary
    return {**state, "chats": chats}


def _chat_removed(state: State, action: Action, now: Clock) -> State:
    index = _chat_index(state, action.get("chat"))
    if index is None:
        return state
    after = {**state, "chats": [chat for number, chat in enumerate(state["chats"]) if number != index]}
    if state.get("defaultChat") == action.get("chat"):
        after.pop("defaultChat")
    return after


def _chat_updated(state: State, action: Action, now: Clock) -> State:
    changes = action.get("changes")
    index = _chat_index(state, action.get("chat"))
    if not isinstance(changes, dict) or index is None:
        return state
    chats = list(state["chats"])
    chats[index] = {**chats[index], **{key: value for key, value in changes.items() if key != "resource"}}
    return {**state, "chats": chats}


def _default_chat(state: State, action: Action, now: Clock) -> State:
    if action.get("defaultChat") is None:
        return {key: value for key, value in state.items() if key != "defaultChat"}
    return {**state, "defaultChat": action["defaultChat"]}


_SESSION: Final[dict[str, Callable[[State, Action, Clock], State]]] = {
    "session/ready": lambda state, action, now: {**state, "lifecycle": "ready"},
    "session/creationFailed": lambda state, action, now: {
        **state,
        "lifecycle": "creationFailed",
        "creationError": action.get("error"),
    },
    "session/titleChanged": lambda state, action, now: {**state, "title": action.get("title")},
    "session/activityChanged": lambda state, action, now: {**state, "activity": action.get("activity")},
    "session/isReadChanged": _flag(IS_READ, "isRead"),
    "session/isArchivedChanged": _flag(IS_ARCHIVED, "isArchived"),
    "session/chatAdded": _chat_added,
    "session/chatRemoved": _chat_removed,
    "session/chatUpdated": _chat_updated,
    "session/defaultChatChanged": _default_chat,
    "session/metaChanged": lambda state, action, now: {**state, "_meta": action.get("_meta")},
    "session/serverToolsChanged": lambda state, action, now: {**state, "serverTools": action.get("tools")},
}

SESSION_ACTIONS: Final = frozenset(_SESSION)
"""The session actions :func:`reduce_session` knows."""


def reduce_session(state: State, action: Action, *, now: Clock = now_ms) -> State:
    """The session state after ``action``; ``state`` itself is never changed."""
    reducer = _SESSION.get(str(action.get("type")))
    return reducer(state, action, now) if reducer is not None else state
