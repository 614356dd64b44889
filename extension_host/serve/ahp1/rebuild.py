"""A served session's AHP 1.0 view made from its seed state, for a server whose first 1.0
client comes after the session's turns (or in the middle of one).

Until a 1.0 client initializes, a server keeps no 1.0 state (:class:`~extension_host.serve.
ahp1.server.Ahp1`). Then each session's :class:`~extension_host.serve.ahp1.actions.ChatView`
is made here: :func:`seed_actions` gives the seed actions that lead from a new session to the
session's seed state (its title, each turn kept with its parts and tool calls, the active turn
with the permission requests it waits on), and :func:`view_of` translates them into a new view,
as they would have been translated live. A tool call a permission request was about shows the
request's own words in 1.0 (``Run <tool>``, its input), and which came first, the call's
``toolCallReady`` or the request, decides what it shows after; the seed state keeps a request
only while it waits, so ``requests`` gives those still in the server's replay buffer
(:func:`requests_in`). A call the state says was asked about (it never ran, or was denied)
without its request there is taken to have been asked as the host asks (after it was ready),
with the input the call shows.

What the result leaves out: timestamps are those of the rebuild; a session keeps its last
:data:`~extension_host.serve.served_session.MAX_SNAPSHOT_TURNS` finished turns, so the view
starts with those (the server gives it the cursor to older ones when the session has some).
:func:`turns_of` converts older finished turns the same way, for ``fetchTurns``. This module
knows seed states and actions; the translation is :mod:`extension_host.serve.ahp1.actions`'.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

from .actions import ChatView

__all__ = ["requests_in", "seed_actions", "turns_of", "view_of"]

Action = dict[str, Any]
Asked = tuple[dict[str, Any], bool]
"""A permission request about a tool call, and whether it came after the call was ready
(running: as a hook asks) rather than before (while its input streamed)."""
Requests = Mapping[tuple[str, str], Asked]
"""Permission requests by (session URI, tool call id)."""

_CALL_KEYS: Final = frozenset(
    {
        "status",
        "toolCallId",
        "toolName",
        "displayName",
        "toolClientId",
        "_meta",
        "invocationMessage",
        "toolInput",
        "confirmed",
    }
)
"""A seed tool call's own keys; a completed call's others are its result's."""
_ENDS: Final = {"complete": "session/turnComplete", "cancelled": "session/turnCancelled", "error": "session/error"}


def requests_in(envelopes: Iterable[dict[str, Any]]) -> dict[tuple[str, str], Asked]:
    """The permission requests about tool calls among seed action ``envelopes`` (oldest first)."""
    found: dict[tuple[str, str], Asked] = {}
    ready: set[tuple[str, str]] = set()
    for envelope in envelopes:
        action = envelope["action"]
        kind = action.get("type")
        if kind == "session/toolCallReady":
            ready.add((str(action.get("session")), str(action.get("toolCallId"))))
        elif kind == "session/permissionRequest":
            request = action.get("request")
            if isinstance(request, dict) and isinstance(request.get("toolCallId"), str):
                key = (str(action.get("session")), request["toolCallId"])
                found[key] = (request, key in ready)
    return found


def view_of(summary: dict[str, Any], state: dict[str, Any], requests: Requests, *, keep: int | None = None) -> ChatView:
    """A new 1.0 view of the served session whose ``summary`` and seed ``state`` these are
    (its chat holding at most ``keep`` finished turns)."""
    view = ChatView(summary["resource"], {**summary, "title": ""}, keep=keep)
    for action in seed_actions(state, requests):
        view.translate(action)
    view.take_changes()  # the summary as it is now is what a client is first shown
    return view


def turns_of(uri: str, turns: Iterable[dict[str, Any]], requests: Requests) -> list[dict[str, Any]]:
    """Finished seed ``turns`` of the session ``uri`` as 1.0 turns, as a view would have shown
    them live (``chat/turnsLoaded``'s, for ``fetchTurns``)."""
    view = ChatView(uri, {"title": uri})  # titled: a prompt renames nothing here
    for turn in turns:
        for action in _turn(uri, turn, requests):
            view.translate(action)
    converted: list[dict[str, Any]] = view.chat_state["turns"]
    return converted


def seed_actions(state: dict[str, Any], requests: Requests) -> Iterator[Action]:
    """The seed actions that lead a new session to ``state``, in order."""
    summary = state["summary"]
    uri = str(summary["resource"])
    if summary.get("title"):
        yield {"type": "session/titleChanged", "session": uri, "title": summary["title"]}
    for turn in state["turns"]:
        yield from _turn(uri, turn, requests)
    active = state.get("activeTurn")
    if active is not None:
        yield from _turn(uri, active, requests)


def _turn(uri: str, turn: dict[str, Any], requests: Requests) -> Iterator[Action]:
    base = {"session": uri, "turnId": turn["id"]}
    yield {"type": "session/turnStarted", **base, "userMessage": turn.get("userMessage")}
    waiting = {
        request.get("toolCallId"): request
        for request in (turn.get("pendingPermissions") or {}).values()
        if isinstance(request, dict)
    }
    for part in turn["responseParts"]:
        if part.get("kind") != "toolCall":
            yield {"type": "session/responsePart", **base, "part": part}
            continue
        call = part["toolCall"]
        call_id = call.get("toolCallId")
        pending = waiting.get(call_id)
        asked = (pending, call.get("invocationMessage") is not None) if pending is not None else None
        yield from _call(base, call, asked or requests.get((uri, str(call_id))))
    if turn.get("usage") is not None:
        yield {"type": "session/usage", **base, "usage": turn["usage"]}
    end = _ENDS.get(str(turn.get("state")))
    if end is not None:
        yield {"type": end, **base, "error": turn.get("error")} if end == "session/error" else {"type": end, **base}


def _call(base: dict[str, Any], call: dict[str, Any], asked: Asked | None) -> Iterator[Action]:
    """A tool call's actions: started, then what brought it to its status."""
    status = call.get("status")
    call_id = call.get("toolCallId")
    start = {
        "type": "session/toolCallStart",
        **base,
        "toolCallId": call_id,
        "toolName": call.get("toolName"),
        "displayName": call.get("displayName"),
    }
    if status != "completed" and call.get("_meta") is not None:
        start["_meta"] = call["_meta"]
    yield start
    message = call.get("invocationMessage")
    if status == "streaming" or (status == "cancelled" and message == ""):
        return  # never ready (or the turn ended while its input streamed)
    ran = message is not None
    # A request was made about it: known, or its state says so (it never ran, or was denied).
    asking = asked is not None or not ran or call.get("reason") == "denied"
    unknown = {"requestId": f"rebuilt-{call_id}", "toolCallId": call_id, "toolName": call.get("toolName")}
    if call.get("toolInput") is not None:
        unknown["toolInput"] = call["toolInput"]
    request, after_ready = asked or (unknown, ran)
    if ran and (not asking or after_ready):
        # Ready, as the host makes it before the call's hooks run; the confirmation comes after.
        yield _ready(base, call, "not-needed" if asking else call.get("confirmed") or "not-needed")
    if asking:
        yield {"type": "session/permissionRequest", **base, "request": request}
        if status == "cancelled" and call.get("reason") == "denied":
            yield _resolved(base, request, approved=False)
        elif status in ("running", "completed") and call.get("confirmed") == "user-action":
            yield _resolved(base, request, approved=True)
        if ran and not after_ready and status in ("running", "completed"):
            yield _ready(base, call, call.get("confirmed") or "not-needed")  # ready after it was confirmed
    if status == "completed":
        result = {key: value for key, value in call.items() if key not in _CALL_KEYS}
        if call.get("_meta") is not None:
            result["_meta"] = call["_meta"]
        yield {"type": "session/toolCallComplete", **base, "toolCallId": call_id, "result": result}


def _ready(base: dict[str, Any], call: dict[str, Any], confirmed: str) -> Action:
    return {
        "type": "session/toolCallReady",
        **base,
        "toolCallId": call.get("toolCallId"),
        "invocationMessage": call.get("invocationMessage"),
        "toolInput": call.get("toolInput"),
        "confirmed": confirmed,
    }


def _resolved(base: dict[str, Any], request: dict[str, Any], *, approved: bool) -> Action:
    return {
        "type": "session/permissionResolved",
        **base,
        "requestId": str(request.get("requestId")),
        "approved": approved,
    }
