"""The actions a client may dispatch (``dispatchAction {clientSeq, action}``), and what each does.

=================================  ==============================================================
action                             effect
=================================  ==============================================================
``session/turnStarted``            ``host.send(userMessage.text)``; the prompt becomes the turn
                                   with the client's ``turnId`` when it runs (its envelope then);
                                   a prompt the host refuses (a hook rejected it, no agent, the
                                   queue is full) starts and ends that turn with ``session/error``
``session/permissionResolved``     ``host.resolve_permission(requestId, approved, feedback)``
``session/modelChanged``           the agent's model for later turns (:func:`~.providers.set_model`)
``session/turnCancelled``          ``host.cancel_turn()`` for the running turn (the prompts
                                   queued behind it are dropped), which ends as cancelled at once
                                   (write-ahead: what the cancelled run still says is not shown)
=================================  ==============================================================

The client's action, with its ``origin`` ``{clientId, clientSeq}``, is the envelope every
subscriber gets. Anything else, or an action for a session, request or turn that is not there,
is a :class:`~extension_host.serve.errors.ServeError` naming it. This module knows the four
actions; numbering and sending them is the server's.
"""

from __future__ import annotations

import sys
from collections.abc import Coroutine, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from extension_protocol.protocol import INVALID_PARAMS

from ..errors import ExtensionHostError
from ..validation import validate
from . import params as shapes
from .errors import ServeError
from .providers import set_model

if TYPE_CHECKING:
    from .clients import Client
    from .served_session import ServedSession

__all__ = ["ActionServer", "dispatch"]


class ActionServer(Protocol):
    """What the actions use of the server (:class:`~extension_host.serve.server.ProtocolServer`)."""

    @property
    def sessions(self) -> Mapping[str, ServedSession]: ...

    def session(self, uri: str) -> ServedSession: ...

    def spawn(self, work: Coroutine[Any, Any, None]) -> None: ...

    def publish(self, session: ServedSession, action: dict[str, Any], origin: dict[str, Any] | None) -> None: ...


def dispatch(server: ActionServer, client: Client, params: Any) -> None:
    """Check and run one dispatched action.

    Raises:
        ServeError: bad params (``INVALID_PARAMS``), an unknown session (``SESSION_NOT_FOUND``),
            or an action this server does not take.
    """
    checked = validate("dispatchAction", shapes.DispatchActionParams, params)
    action = checked["action"]
    kind = action.get("type")
    origin = {"clientId": client.client_id, "clientSeq": checked["clientSeq"]}
    if kind == "session/turnStarted":
        started = validate("dispatchAction", shapes.TurnStartedAction, action)
        session = server.session(started["session"])
        server.spawn(_start_turn(server, session, dict(started), origin))
    elif kind == "session/permissionResolved":
        resolved = validate("dispatchAction", shapes.PermissionResolvedAction, action)
        session = server.session(resolved["session"])
        request_id = resolved["requestId"]
        if not session.host.resolve_permission(request_id, resolved["approved"], resolved.get("feedback")):
            raise ServeError(INVALID_PARAMS, f"session {session.uri} has no pending permission request {request_id!r}")
        # The host announces the answer later (permission.completed): this action stands for it.
        session.mapper.client_resolved(request_id)
        server.publish(session, dict(resolved), origin)
    elif kind == "session/modelChanged":
        changed = validate("dispatchAction", shapes.ModelChangedAction, action)
        session = server.session(changed["session"])
        model = changed["model"]
        if not set_model(session.agent, model["id"] if isinstance(model, dict) else model):
            raise ServeError(INVALID_PARAMS, f"the agent of session {session.uri} cannot change its model")
        server.publish(session, dict(changed), origin)
    elif kind == "session/turnCancelled":
        cancelled = validate("dispatchAction", shapes.TurnCancelledAction, action)
        session = server.session(cancelled["session"])
        if session.mapper.turn_id != cancelled["turnId"]:
            raise ServeError(INVALID_PARAMS, f"turn {cancelled['turnId']!r} is not running in session {session.uri}")
        session.mapper.end_turn()
        server.publish(session, dict(cancelled), origin)
        session.host.cancel_turn()
    else:
        raise ServeError(
            INVALID_PARAMS,
            "dispatchAction: clients may dispatch session/turnStarted, session/permissionResolved, "
            f"session/turnCancelled or session/modelChanged, not {kind!r}",
        )


async def _start_turn(
    server: ActionServer, session: ServedSession, action: dict[str, Any], origin: dict[str, Any]
) -> None:
    turn_id = action["turnId"]
    try:
        message_id = await session.host.send(action["userMessage"]["text"])
    except ExtensionHostError as exc:
        if session.uri not in server.sessions:
            return  # disposed meanwhile
        if session.state.get("activeTurn") is not None:
            # Starting the client's turn now would hide the running one: the server's log says why.
            print(f"extensions serve: turn {turn_id} of {session.uri} was refused: {exc}", file=sys.stderr)
            return
        server.publish(session, action, origin)
        error = {"errorType": type(exc).__name__, "message": str(exc)}
        server.publish(
            session, {"type": "session/error", "session": session.uri, "turnId": turn_id, "error": error}, None
        )
        return
    # Nothing ran between the prompt being queued and here: its user.message comes later.
    session.claim_turn(message_id, turn_id, action, origin)
