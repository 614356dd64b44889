"""A served session as AHP 1.0 shows it, and the one table between the seed protocol's actions
and 1.0's.

Every served session makes its actions once, in the seed protocol's shapes
(:mod:`extension_host.serve.actions`); a :class:`ChatView` shows the session to 1.0 clients
on two channels (its session URI, and its one chat, ``ahp-chat:/<uuid>``, the session's
``defaultChat``) and translates each seed action by :data:`FROM_SEED`:

==================================  ==================================================
seed action                         AHP 1.0 action (channel)
==================================  ==================================================
``session/turnStarted``             ``chat/turnStarted`` (chat), ``message.origin``
                                    ``{kind: "user"}``, ``startedAt``
``session/delta``, ``responsePart``  ``chat/delta``, ``chat/responsePart`` (chat)
``session/toolCallStart``           ``chat/toolCallStart`` (chat), ``displayName`` the
                                    tool's name in words (``probe_echo``: ``probe echo``)
``session/permissionRequest``       ``chat/toolCallReady`` without ``confirmed``: the
                                    call waits in ``pending-confirmation`` (a request
                                    about no tool call is not shown)
``session/permissionResolved``      ``chat/toolCallConfirmed`` (``user-action``, or
                                    ``reason: "denied"``)
``session/toolCallReady``,          ``chat/toolCallReady``, ``chat/toolCallConfirmed``,
``toolCallConfirmed``,              ``chat/toolCallComplete`` (chat)
``toolCallComplete``
``session/turnComplete``,           ``chat/turnComplete``, ``chat/turnCancelled``,
``turnCancelled``, ``error``        ``chat/error`` (chat), with the turn's ``duration``
                                    (ms; a client's cancel: the one it gave)
``session/usage``                   ``chat/usage`` (chat)
``session/titleChanged``,           the same (session)
``session/ready``
==================================  ==================================================

Others (canvases, model changes) have no 1.0 action here and are not shown. What follows from
an action, as ``copilot --ahp-host`` sends it, carries no origin (only the echo of a client's
own action does): after a change of the chat's status, ``session/chatUpdated``; after a
turn's end, ``session/activityChanged`` (no activity); after the first prompt of a session
with no title of its own (it shows its URI's last segment until then), ``session/titleChanged``;
and the summary's changes, for ``root/sessionSummaryChanged``. Beside the seed's actions,
:meth:`ChatView.usage` makes ``chat/usage`` of a model call's ``assistant.usage`` and
:meth:`ChatView.server_tools` ``session/serverToolsChanged`` of the offered tools.
:data:`TO_SEED` maps what a 1.0 client dispatches to the seed action that does it, so the
seed protocol's checks and effects (:mod:`extension_host.serve.client_actions`) are the only
ones. This module knows actions and states, not clients or transports.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any, Final

from extension_protocol.protocol import INVALID_PARAMS

from ...info import ToolInfo
from ...validation import validate
from ..delta_runs import DeltaFold
from ..errors import ServeError
from . import params as shapes
from .state import IDLE, iso, now_ms, reduce_chat, reduce_session
from .turns import cursor_of

__all__ = [
    "FROM_SEED",
    "TO_SEED",
    "ChatView",
    "Shown",
    "default_title",
    "tool_definitions",
]

Action = dict[str, Any]
Translated = list[tuple[str, Action]]
Shown = list[tuple[str, Action, bool]]
"""1.0 actions to send: ``(channel, action, own)``; only an ``own`` one carries the seed action's origin."""

_MAX_REQUESTS: Final = 1024
"""Permission requests (and turn starts, cancels) remembered per session."""
_ENDS: Final = frozenset({"chat/turnComplete", "chat/turnCancelled", "chat/error"})
_ACTIVITY_ENDED: Final[Action] = {"type": "session/activityChanged"}
"""The session's activity after a turn: none (the key left out), as ``copilot --ahp-host`` says it."""
_USAGE_KEYS: Final = ("inputTokens", "outputTokens", "model", "cacheReadTokens")
"""What ``chat/usage`` takes of ``assistant.usage`` (``UsageInfo``'s keys)."""
_TITLE_CHARS: Final = 200
_CATALOG_KEYS: Final = ("resource", "title", "origin", "status")
"""What a session list shows of each chat (``SessionSummary.chats``)."""


class ChatView:
    """One served session (``uri``) as 1.0 clients see it: its session state and its one chat.

    Its title, until the session has one of its own, is the last segment of its URI (the UUID
    of an ``ahp-session:/<uuid>``), as ``copilot --ahp-host`` names a new session; the first
    prompt then titles the session (``session/titleChanged``) while the chat keeps the first
    title. Its chat holds at most ``keep`` finished turns: a turn's end past it drops the oldest
    and sets ``turnsNextCursor`` (:mod:`extension_host.serve.ahp1.turns`); :meth:`loaded` brings
    older ones back. :meth:`translate`, :meth:`usage` and :meth:`server_tools` give the 1.0 actions to
    send, each as ``(channel, action, own)``: ``own`` when the action is the one that carries
    the origin of the seed action (a client's, echoed), not one derived from it.
    """

    def __init__(
        self, uri: str, summary: dict[str, Any], *, now: Callable[[], int] = now_ms, keep: int | None = None
    ) -> None:
        """``keep``: the finished turns the chat's state holds at most (``None``: all of them)."""
        self.uri: Final = uri
        self._keep: Final = keep
        self.chat: Final = f"ahp-chat:/{uuid.uuid4()}"
        self._now = now
        self.requests: OrderedDict[str, str] = OrderedDict()
        """Tool call id → the permission request about it, pending."""
        self.created: Final = iso(int(summary.get("createdAt", now())))
        self.modified = iso(int(summary.get("modifiedAt", now())))
        self._titled = bool(summary.get("title"))
        """Whether the session has a title of its own (else the first prompt gives it one)."""
        title = summary.get("title") or default_title(uri)
        self._started: dict[str, int] = {}
        """When each running turn started (epoch ms), by turn id, for its ``duration``."""
        self._given: dict[str, float] = {}
        """The ``duration`` a client gave when it cancelled a turn, by turn id."""
        self._tools: list[dict[str, Any]] | None = None
        self._changes: dict[str, Any] = {}
        chat_summary = {
            "resource": self.chat,
            "title": title,
            "status": IDLE,
            "modifiedAt": self.modified,
            "origin": {"kind": "user"},
            "movable": False,
        }
        self._chat_fold: Final = DeltaFold(
            {**chat_summary, "turns": []}, lambda state, action: reduce_chat(state, action, now=self._now), "chat/delta"
        )
        session: dict[str, Any] = {
            "provider": summary.get("provider"),
            "title": title,
            "status": IDLE,
            "lifecycle": "ready",
            "activeClients": [],
            "chats": [chat_summary],
            "defaultChat": self.chat,
        }
        if summary.get("workingDirectory"):
            session["workingDirectories"] = [summary["workingDirectory"]]
        self.session_state: dict[str, Any] = session

    @property
    def chat_state(self) -> dict[str, Any]:
        """The chat's state (a run of deltas is folded into it at once, when it is read)."""
        return self._chat_fold.state

    @chat_state.setter
    def chat_state(self, state: dict[str, Any]) -> None:
        self._chat_fold.state = state

    def summary(self) -> dict[str, Any]:
        """The session's ``SessionSummary`` (for ``listSessions`` and ``root/sessionAdded``)."""
        state = self.session_state
        found: dict[str, Any] = {"resource": self.uri}
        found |= {key: state[key] for key in ("provider", "title", "status") if key in state}
        found |= {"createdAt": self.created, "modifiedAt": self.modified}
        if "workingDirectories" in state:
            found["workingDirectories"] = state["workingDirectories"]
        return found | {"chats": self.catalog(), "defaultChat": self.chat}

    def catalog(self) -> list[dict[str, Any]]:
        """The session's chats as a session list shows them (``SessionSummary.chats``)."""
        return [{key: chat[key] for key in _CATALOG_KEYS if key in chat} for chat in self.session_state["chats"]]

    def state_of(self, channel: str) -> dict[str, Any] | None:
        """The state of ``channel`` (this session's or its chat's), or ``None``."""
        if channel == self.uri:
            return self.session_state
        if channel == self.chat:
            return self.chat_state
        return None

    def translate(self, action: Action) -> Shown:
        """The 1.0 actions of one seed action (see :meth:`_apply`)."""
        make = FROM_SEED.get(action["type"])
        return [] if make is None else self._apply(make(self, action))

    def usage(self, data: Any) -> Shown:
        """``chat/usage`` for one model call's ``assistant.usage`` data, in the running turn
        (none outside a turn, or without token counts)."""
        active = self.chat_state.get("activeTurn")
        if active is None or not isinstance(data, dict):
            return []
        usage = {key: data[key] for key in _USAGE_KEYS if isinstance(data.get(key), int | str)}
        if "inputTokens" not in usage or "outputTokens" not in usage:
            return []
        return self._apply([(self.chat, {"type": "chat/usage", "turnId": active["id"], "usage": usage})], own=False)

    def server_tools(self, tools: list[dict[str, Any]]) -> Shown:
        """``session/serverToolsChanged`` when ``tools`` (``ToolDefinition``s) differ from the
        ones last announced (the first time, always)."""
        if tools == self._tools:
            return []
        self._tools = tools
        return self._apply([(self.uri, {"type": "session/serverToolsChanged", "tools": tools})], own=False)

    def take_changes(self) -> dict[str, Any]:
        """What changed in the session's summary since the last call (``root/sessionSummaryChanged``'s
        ``changes``; empty when nothing did)."""
        changes, self._changes = self._changes, {}
        return changes

    def _apply(self, made: Translated, *, own: bool = True) -> Shown:
        """Fold ``made`` (in order) into the states, each followed by what it implies: after a
        change of the chat's status, ``session/chatUpdated``; after a turn's end,
        ``session/activityChanged`` (no activity); after the first prompt of an untitled
        session, ``session/titleChanged``; those never carry an origin, ``made`` does when ``own``.
        The summary's changes are kept for :meth:`take_changes`."""
        out: Shown = []
        chat, fold = self.chat, self._chat_fold
        for channel, translated in made:
            out.append((channel, translated, own))
            kind = translated["type"]
            if channel != chat:
                self._reduce_session(translated)
                if kind == "session/titleChanged":
                    self._titled = True
                    self._changes |= {"title": self.session_state.get("title"), "chats": self.catalog()}
                continue
            if kind == "chat/delta":
                fold.apply(translated)  # a delta changes no status and ends nothing
                continue
            state = fold.state
            before = state.get("status")
            fold.state = state = reduce_chat(state, translated, now=self._now)
            status = state.get("status")
            if status != before:
                out.append((self.uri, self._chat_status(status, state.get("modifiedAt")), False))
            if kind in _ENDS:
                if self._keep is not None and len(state["turns"]) > self._keep:
                    fold.state = self._bounded(state)
                if "activity" in self.session_state:
                    self.session_state = {k: v for k, v in self.session_state.items() if k != "activity"}
                out.append((self.uri, dict(_ACTIVITY_ENDED), False))
            elif kind == "chat/turnStarted" and not self._titled:
                title = _title_of(translated.get("message"))
                if title:
                    out += self._apply([(self.uri, {"type": "session/titleChanged", "title": title})], own=False)
        return out

    def _bounded(self, state: dict[str, Any]) -> dict[str, Any]:
        """``state`` holding only its last ``keep`` finished turns, with the cursor to the others."""
        kept = state["turns"][-self._keep :] if self._keep else []
        bounded = {**state, "turns": kept}
        bounded.pop("turnsNextCursor", None)
        if kept:
            bounded["turnsNextCursor"] = cursor_of(kept[0]["id"])
        return bounded

    def older_turns(self) -> None:
        """The session has finished turns older than those the chat holds (a view made after
        they were dropped): its state gets the cursor to them."""
        turns = self.chat_state["turns"]
        if turns:
            self.chat_state = {**self.chat_state, "turnsNextCursor": cursor_of(turns[0]["id"])}

    def loaded(self, turns: list[dict[str, Any]], cursor: str | None) -> Shown:
        """``chat/turnsLoaded`` of older ``turns`` (1.0 turns, oldest first) and the cursor to
        those before them (``None``: there are none)."""
        action: Action = {"type": "chat/turnsLoaded", "turns": turns}
        if cursor is not None:
            action["turnsNextCursor"] = cursor
        return self._apply([(self.chat, action)], own=False)

    def _chat_status(self, status: Any, modified: Any) -> Action:
        """The chat's status changed to ``status`` (at ``modified``): the session's and its
        chat summary's follow, as ``session/chatUpdated`` (returned) folds it."""
        if modified is not None:
            self.modified = str(modified)
        changes = {"status": status, "modifiedAt": self.modified}
        updated = {"type": "session/chatUpdated", "chat": self.chat, "changes": changes}
        state = reduce_session(self.session_state, updated, now=self._now)
        if state is self.session_state:
            state = {**state, "status": status}
        else:
            state["status"] = status  # a state the reducer just made: nothing else holds it yet
        self.session_state = state
        self._changes |= {**changes, "chats": self.catalog()}
        return updated

    def _reduce_session(self, action: Action) -> None:
        state = reduce_session(self.session_state, action, now=self._now)
        if state.get("activity", "") is None:
            # The specification's reducer assigns ``undefined``, which JSON leaves out.
            state = {key: value for key, value in state.items() if key != "activity"}
        self.session_state = state

    def ended(self, kind: str, action: Action) -> Translated:
        """A turn's end (``chat/turnComplete``, ``turnCancelled``, ``error``) with its
        ``duration``: the one a client gave when it cancelled, else the milliseconds since it
        started here."""
        turn_id = action.get("turnId")
        translated: Action = {"type": kind, "turnId": turn_id}
        if action.get("error") is not None:
            translated["error"] = action["error"]
        started = self._started.pop(str(turn_id), None)
        given = self._given.pop(str(turn_id), None)
        if given is not None:
            translated["duration"] = given
        elif started is not None:
            translated["duration"] = max(0, self._now() - started)
        return [(self.chat, translated)]

    def started(self, turn_id: str) -> None:
        """The turn ``turn_id`` starts now (for its ``duration``)."""
        self._started[turn_id] = self._now()
        while len(self._started) > _MAX_REQUESTS:
            self._started.pop(next(iter(self._started)))

    def cancelling(self, turn_id: str, duration: float | None) -> None:
        """A client cancels ``turn_id``, counting ``duration`` (echoed in its ``chat/turnCancelled``)."""
        if duration is not None:
            self._given[turn_id] = duration
            while len(self._given) > _MAX_REQUESTS:
                self._given.pop(next(iter(self._given)))

    def remember_request(self, call_id: str, request_id: str) -> None:
        self.requests[call_id] = request_id
        while len(self.requests) > _MAX_REQUESTS:
            self.requests.popitem(last=False)

    def to_seed(self, channel: str, action: Action) -> Action:
        """The seed action that does what a 1.0 client's ``action`` on ``channel`` asks.

        Raises:
            ServeError: ``INVALID_PARAMS``: not an action a client may dispatch here, or its
                fields are wrong, naming what.
        """
        kind = action.get("type")
        convert = TO_SEED.get(str(kind))
        if convert is None:
            allowed = ", ".join(sorted(TO_SEED))
            raise ServeError(INVALID_PARAMS, f"dispatchAction: clients may dispatch {allowed}, not {kind!r}")
        if channel != self.chat:
            raise ServeError(
                INVALID_PARAMS, f"dispatchAction: {kind} goes to the chat channel {self.chat}, not {channel}"
            )
        return convert(self, action)


def default_title(uri: str) -> str:
    """A session's title until it has one: its URI's last segment (``ahp-session:/<uuid>`` → the UUID)."""
    tail = uri.rstrip("/").rsplit("/", 1)[-1]
    return tail.rsplit(":", 1)[-1] or uri


def _title_of(message: Any) -> str:
    """A session's title from its first prompt: the first line, at most :data:`_TITLE_CHARS`."""
    text = message.get("text") if isinstance(message, dict) else None
    line = next((line.strip() for line in str(text or "").splitlines() if line.strip()), "")
    return line if len(line) <= _TITLE_CHARS else line[: _TITLE_CHARS - 1] + "…"


def tool_definitions(tools: Iterable[ToolInfo]) -> list[dict[str, Any]]:
    """The offered tools as AHP's ``ToolDefinition``s (name, description, input schema), by name."""
    found = []
    for tool in sorted(tools, key=lambda tool: tool.name):
        definition: dict[str, Any] = {"name": tool.name, "description": tool.description}
        schema = tool.parameters
        if isinstance(schema, dict) and schema.get("type") == "object":
            definition["inputSchema"] = schema
        found.append(definition)
    return found


def _chat(kind: str, *keys: str) -> Callable[[ChatView, Action], Translated]:
    def make(view: ChatView, action: Action) -> Translated:
        translated: Action = {"type": kind, "turnId": action.get("turnId")}
        for key in keys:
            if action.get(key) is not None:
                translated[key] = action[key]
        return [(view.chat, translated)]

    return make


def _turn_started(view: ChatView, action: Action) -> Translated:
    message = action.get("userMessage")
    text = message.get("text", "") if isinstance(message, dict) else ""
    view.started(str(action.get("turnId")))
    started = {
        "type": "chat/turnStarted",
        "turnId": action.get("turnId"),
        "message": {"text": text, "origin": {"kind": "user"}},
        "startedAt": iso(view._now()),
    }
    return [(view.chat, started)]


def _permission_request(view: ChatView, action: Action) -> Translated:
    request = action.get("request")
    if not isinstance(request, dict) or not isinstance(request.get("toolCallId"), str):
        return []
    call_id = request["toolCallId"]
    view.remember_request(call_id, str(request.get("requestId")))
    ready: Action = {
        "type": "chat/toolCallReady",
        "turnId": action.get("turnId"),
        "toolCallId": call_id,
        "invocationMessage": f"Run {request.get('toolName', 'a tool')}",
        "toolInput": request.get("toolInput"),
    }
    if request.get("message"):
        ready["confirmationTitle"] = request["message"]
    return [(view.chat, ready)]


def _permission_resolved(view: ChatView, action: Action) -> Translated:
    request_id = str(action.get("requestId"))
    call_id = next((call for call, request in view.requests.items() if request == request_id), None)
    if call_id is None:
        return []
    del view.requests[call_id]
    confirmed: Action = {"type": "chat/toolCallConfirmed", "turnId": action.get("turnId"), "toolCallId": call_id}
    if action.get("approved"):
        confirmed |= {"approved": True, "confirmed": "user-action"}
    else:
        confirmed |= {"approved": False, "reason": "denied"}
    return [(view.chat, confirmed)]


def _ready(view: ChatView, action: Action) -> Translated:
    ready = _chat("chat/toolCallReady", "toolCallId", "invocationMessage", "toolInput", "_meta")(view, action)
    if action.get("confirmed"):
        ready[0][1]["confirmed"] = action["confirmed"]
    return ready


def _ended(kind: str) -> Callable[[ChatView, Action], Translated]:
    return lambda view, action: view.ended(kind, action)


def _tool_call_start(view: ChatView, action: Action) -> Translated:
    made = _chat("chat/toolCallStart", "toolCallId", "toolName", "displayName", "_meta")(view, action)
    shown = made[0][1].get("displayName")
    if isinstance(shown, str):
        made[0][1]["displayName"] = shown.replace("_", " ")  # as copilot --ahp-host shows a tool's name
    return made


def _session(kind: str, *keys: str) -> Callable[[ChatView, Action], Translated]:
    def make(view: ChatView, action: Action) -> Translated:
        return [(view.uri, {"type": kind, **{key: action.get(key) for key in keys}})]

    return make


FROM_SEED: Final[dict[str, Callable[[ChatView, Action], Translated]]] = {
    "session/turnStarted": _turn_started,
    "session/delta": _chat("chat/delta", "partId", "content"),
    "session/responsePart": _chat("chat/responsePart", "part"),
    "session/toolCallStart": _tool_call_start,
    "session/permissionRequest": _permission_request,
    "session/permissionResolved": _permission_resolved,
    "session/toolCallReady": _ready,
    "session/toolCallConfirmed": _chat(
        "chat/toolCallConfirmed", "toolCallId", "approved", "confirmed", "reason", "reasonMessage"
    ),
    "session/toolCallComplete": _chat("chat/toolCallComplete", "toolCallId", "result"),
    "session/turnComplete": _ended("chat/turnComplete"),
    "session/turnCancelled": _ended("chat/turnCancelled"),
    "session/error": _ended("chat/error"),
    "session/usage": _chat("chat/usage", "usage"),
    "session/titleChanged": _session("session/titleChanged", "title"),
    "session/ready": _session("session/ready"),
}
"""Seed action type → its 1.0 actions (see the module's table)."""


def _start(view: ChatView, action: Action) -> Action:
    started = validate("dispatchAction", shapes.ChatTurnStarted, action)
    text = started["message"]["text"]
    return {
        "type": "session/turnStarted",
        "session": view.uri,
        "turnId": started["turnId"],
        "userMessage": {"text": text},
    }


def _cancel(view: ChatView, action: Action) -> Action:
    cancelled = validate("dispatchAction", shapes.ChatTurnCancelled, action)
    view.cancelling(cancelled["turnId"], cancelled.get("duration"))
    return {"type": "session/turnCancelled", "session": view.uri, "turnId": cancelled["turnId"]}


def _confirm(view: ChatView, action: Action) -> Action:
    confirmed = validate("dispatchAction", shapes.ToolCallConfirmed, action)
    request_id = view.requests.get(confirmed["toolCallId"])
    if request_id is None:
        raise ServeError(
            INVALID_PARAMS,
            f"chat {view.chat} has no tool call {confirmed['toolCallId']!r} waiting for confirmation",
        )
    resolved: Action = {
        "type": "session/permissionResolved",
        "session": view.uri,
        "turnId": confirmed["turnId"],
        "requestId": request_id,
        "approved": confirmed["approved"],
    }
    if confirmed.get("reasonMessage"):
        resolved["feedback"] = confirmed["reasonMessage"]
    return resolved


TO_SEED: Final[dict[str, Callable[[ChatView, Action], Action]]] = {
    "chat/turnStarted": _start,
    "chat/turnCancelled": _cancel,
    "chat/toolCallConfirmed": _confirm,
}
"""What a 1.0 client may dispatch (on the chat's channel) → the seed action that does it."""
