"""The wire methods the host and the SDK speak, with their params and results.

:data:`API_METHODS` lists each JSON-RPC method of :mod:`extension_protocol.protocol`: who sends
it, whether it is a request or a notification, and the shapes of its params and result. The
shapes are the protocol module's own ``TypedDict``s, read through pydantic (never written a
second time); the few results the protocol module types only as a dict are declared here.
The session-scoped methods get their rows from the table that answers them,
:data:`~extension_host.runtime.session_rpc.SESSION_RPC_METHODS`. ``api.schema.json`` is generated
from this table, and a test checks that every ``METHOD_*`` name of the protocol module and every
method of the session-rpc table has a row.

This module owns the method table; it does not validate traffic (the host does that where the
messages arrive, :mod:`extension_host.validation`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal, NotRequired, TypedDict

from extension_host.runtime.session_rpc import SESSION_RPC_METHODS
from extension_protocol import protocol as p

__all__ = [
    "API_METHODS",
    "ApiMethod",
    "CancelRequestParams",
    "ConnectParams",
    "EmptyParams",
    "EventIdResult",
    "HandledResult",
    "HooksInvokeResult",
    "InterestHandleResult",
    "MessageIdResult",
    "PingParams",
    "SessionParams",
]

Direction = Literal["extension-to-host", "host-to-extension", "both"]


class EmptyParams(TypedDict):
    """No parameters (an empty object)."""


class ConnectParams(TypedDict):
    """``connect``: what the client can decode (``supportedTaskKinds``); other fields are ignored."""

    supportedTaskKinds: NotRequired[list[str]]
    token: NotRequired[str]


class PingParams(TypedDict):
    """``ping``: an optional message to echo."""

    message: NotRequired[str]


class CancelRequestParams(TypedDict):
    """``$/cancelRequest``: the sender no longer wants the answer to its request ``id``."""

    id: int | str


class HandledResult(TypedDict):
    """Answer to ``session.tools.handlePendingToolCall`` and ``session.permissions.handlePendingPermissionRequest``."""

    success: bool


class HooksInvokeResult(TypedDict):
    """Answer to ``hooks.invoke``: the hook's output, or none for "no opinion"."""

    output: NotRequired[dict[str, Any] | None]


class EventIdResult(TypedDict):
    """Answer to ``session.log``: the id of the event it became."""

    eventId: str


class InterestHandleResult(TypedDict):
    """Answer to ``session.eventLog.registerInterest``: the handle that gives it back."""

    handle: str


class SessionParams(TypedDict):
    """Only the session id (``session.detach`` and the session-scoped queries)."""

    sessionId: str


class MessageIdResult(TypedDict):
    """Answer to ``session.send``: the id of the ``user.message`` event it became."""

    messageId: str


@dataclass(frozen=True, slots=True)
class ApiMethod:
    """One wire method; ``result`` is ``None`` for a notification."""

    name: str
    direction: Direction
    params: Any
    result: Any | None
    description: str


API_METHODS: Final[tuple[ApiMethod, ...]] = (
    ApiMethod(
        p.METHOD_CONNECT,
        "extension-to-host",
        ConnectParams,
        p.ConnectResult,
        "Open the connection: the protocol version, the host's version, the task kinds it may return (none).",
    ),
    ApiMethod(p.METHOD_PING, "extension-to-host", PingParams, p.PingResult, "Is the host there? pong, and the time."),
    ApiMethod(
        p.METHOD_SESSION_RESUME,
        "extension-to-host",
        p.ResumeParams,
        p.ResumeResult,
        "Join the session and declare tools, hooks, commands and the environment variables asked for.",
    ),
    ApiMethod(
        p.METHOD_SESSION_EVENT,
        "host-to-extension",
        p.SessionEventParams,
        None,
        "A session event (see session-events.schema.json); a tool call is an external_tool.requested event.",
    ),
    ApiMethod(
        p.METHOD_SESSION_LIFECYCLE,
        "host-to-extension",
        p.SessionLifecycleParams,
        None,
        "The session changed: session.updated with its start and last modified time, after each persisted event.",
    ),
    ApiMethod(
        p.METHOD_HANDLE_PENDING_TOOL_CALL,
        "extension-to-host",
        p.HandlePendingToolCallParams,
        HandledResult,
        "The answer to one external_tool.requested, by its requestId.",
    ),
    ApiMethod(
        p.METHOD_HANDLE_PENDING_PERMISSION,
        "extension-to-host",
        p.HandlePendingPermissionParams,
        HandledResult,
        "The answer of an extension that joined with requestPermission to a permission.requested event; "
        "success is false when the request was already answered or never existed.",
    ),
    ApiMethod(
        p.METHOD_HOOKS_INVOKE,
        "host-to-extension",
        p.HooksInvokeParams,
        HooksInvokeResult,
        "Run one hook of the extension; input keys camelCase, timestamp in epoch milliseconds.",
    ),
    ApiMethod(
        p.METHOD_SESSION_LOG,
        "extension-to-host",
        p.LogParams,
        EventIdResult,
        "A message for the session timeline: a session.info, session.warning or session.error event.",
    ),
    ApiMethod(
        p.METHOD_SESSION_SEND,
        "extension-to-host",
        p.SendParams,
        MessageIdResult,
        "A prompt into the session: a user.message event, then a turn.",
    ),
    ApiMethod(
        p.METHOD_REGISTER_INTEREST,
        "extension-to-host",
        p.RegisterInterestParams,
        InterestHandleResult,
        "Forward events of one more type to this extension ('*' for all); the handle gives it back.",
    ),
    ApiMethod(
        p.METHOD_RELEASE_INTEREST,
        "extension-to-host",
        p.ReleaseInterestParams,
        HandledResult,
        "Give back one registerInterest; its type stops coming once its last handle is back.",
    ),
    ApiMethod(
        p.METHOD_HANDLE_PENDING_COMMAND,
        "extension-to-host",
        p.HandlePendingCommandParams,
        HandledResult,
        "The end of one command.execute, by its requestId; error when the command failed.",
    ),
    ApiMethod(
        p.METHOD_SESSION_DETACH,
        "extension-to-host",
        SessionParams,
        HandledResult,
        "Leave the session (the JS SDK's disconnect()): the extension's tools, commands and hooks go.",
    ),
    ApiMethod(
        p.METHOD_CANCEL_REQUEST,
        "both",
        CancelRequestParams,
        None,
        "The sender gave up on a request it made; the receiver may stop working on it.",
    ),
    *(
        ApiMethod(method.name, "extension-to-host", method.params, method.result, method.description)
        for method in SESSION_RPC_METHODS.values()
    ),
)
