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
``session/toolCallStart``           ``chat/toolCallStart`` (chat)
``session/permissionRequest``       ``chat/toolCallReady`` without ``confirmed``: the
                                    call waits in ``pending-confirmation`` (a request
                                    about no tool call is not shown)
``session/permissionResolved``      ``chat/toolCallConfirmed`` (``user-action``, or
                                    ``reason: "denied"``)
``session/toolCallReady``,          ``chat/toolCallReady``, ``chat/toolCallConfirmed``,
``toolCallConfirmed``,              ``chat/toolCallComplete`` (chat)
``toolCallComplete``
``session/turnComplete``,           ``chat/turnComplete``, ``chat/turnCancelled``,
``turnCancelled``, ``error``        ``chat/error`` (chat)
``session/usage``                   ``chat/usage`` (chat)
``session/titleChanged``,           the same (session)
``session/ready``
==================================  ==================================================

Others (canvases, model changes) have no 1.0 action here and are not shown. When a chat
action changes the chat's status, ``session/chatUpdated`` follows on the session channel.
:data:`TO_SEED` maps what a 1.0 client dispatches to the seed action that does it, so the
seed protocol's checks and effects (:mod:`extension_host.serve.client_actions`) are the only
ones. This module knows actions and states, not clients or transports.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Final

from extension_protocol.protocol import INVALID_PARAMS

from ..validation import validate
from . import ahp1_params as shapes
from .ahp1_state import IDLE, iso, now_ms, reduce_chat, reduce_session
from .delta_runs import DeltaFold
from .errors import ServeError

__all__ = [
    "FROM_SEED",
    "PROGRESS_ACTIONS",
    "TO_SEED",
    "ChatView",
]

Action = dict[str, Any]
Translated = list[tuple[str, Action]]

PROGRESS_ACTIONS: Final = frozenset(
    {
        "chat/turnStarted",
        "chat/delta",
        "chat/responsePart",
        "chat/toolCallStart",
        "chat/toolCallReady",
        "chat/toolCallComplete",
        "chat/usage",
    }
)
"""1.0's progress actions: written with the next action that is not one, as the seed's are."""
_MAX_REQUESTS: Final = 1024
"""Permission requests remembered per session (by the tool call they are about)."""


class ChatView:
    """One served session (``uri``) as 1.0 clients see it: its session state and its one chat."""

    def __init__(self, uri: str, summary: dict[str, Any], *, now: Callable[[], int] = now_ms) -> None:
        self.uri: Final = uri
        self.chat: Final = f"ahp-chat:/{uuid.uuid4()}"
        self._now = now
        self.requests: OrderedDict[str, str] = OrderedDict()
        """Tool call id → the permission request about it, pending."""
        created = iso(int(summary.get("createdAt", now())))
        modified = iso(int(summary.get("modifiedAt", now())))
        chat_summary = {
            "resource": self.chat,
            "title": summary.get("title", ""),
            "status": IDLE,
            "modifiedAt": modified,
        }
        self._chat_fold: Final = DeltaFold(
            {**chat_summary, "turns": []}, lambda state, action: reduce_chat(state, action, now=self._now), "chat/delta"
        )
        session: dict[str, Any] = {
            "resource": uri,
            "provider": summary.get("provider"),
            "title": summary.get("title", ""),
            "status": IDLE,
            "createdAt": created,
            "modifiedAt": modified,
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
        keys = ("resource", "provider", "title", "status", "createdAt", "modifiedAt", "workingDirectories")
        return {key: state[key] for key in keys if key in state}

    def state_of(self, channel: str) -> dict[str, Any] | None:
        """The state of ``channel`` (this session's or its chat's), or ``None``."""
        if channel == self.uri:
            return self.session_state
        if channel == self.chat:
            return self.chat_state
        return None

    def translate(self, action: Action) -> Translated:
        """The 1.0 actions of one seed action, each with its channel, folded into the states
        here (in order), with ``session/chatUpdated`` after one that changed the chat's status."""
        make = FROM_SEED.get(action["type"])
        if make is None:
            return []
        out: Translated = []
        for channel, translated in make(self, action):
            if channel == self.chat and translated["type"] == "chat/delta":
                self._chat_fold.apply(translated)  # it changes no status
                out.append((channel, translated))
            elif channel == self.chat:
                before = self.chat_state.get("status")
                self.chat_state = reduce_chat(self.chat_state, translated, now=self._now)
                out.append((channel, translated))
                status = self.chat_state.get("status")
                if status != before:
                    changes = {"status": status, "modifiedAt": self.chat_state.get("modifiedAt")}
                    updated = {"type": "session/chatUpdated", "chat": self.chat, "changes": changes}
                    self.session_state = reduce_session(self.session_state, updated, now=self._now)
                    self.session_state = {**self.session_state, "status": status}
                    out.append((self.uri, updated))
            else:
                self.session_state = reduce_session(self.session_state, translated, now=self._now)
                out.append((channel, translated))
        return out

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


def _session(kind: str, *keys: str) -> Callable[[ChatView, Action], Translated]:
    def make(view: ChatView, action: Action) -> Translated:
        return [(view.uri, {"type": kind, **{key: action.get(key) for key in keys}})]

    return make


FROM_SEED: Final[dict[str, Callable[[ChatView, Action], Translated]]] = {
    "session/turnStarted": _turn_started,
    "session/delta": _chat("chat/delta", "partId", "content"),
    "session/responsePart": _chat("chat/responsePart", "part"),
    "session/toolCallStart": _chat("chat/toolCallStart", "toolCallId", "toolName", "displayName", "_meta"),
    "session/permissionRequest": _permission_request,
    "session/permissionResolved": _permission_resolved,
    "session/toolCallReady": _ready,
    "session/toolCallConfirmed": _chat(
        "chat/toolCallConfirmed", "toolCallId", "approved", "confirmed", "reason", "reasonMessage"
    ),
    "session/toolCallComplete": _chat("chat/toolCallComplete", "toolCallId", "result"),
    "session/turnComplete": _chat("chat/turnComplete"),
    "session/turnCancelled": _chat("chat/turnCancelled"),
    "session/error": _chat("chat/error", "error"),
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
