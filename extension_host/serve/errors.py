"""The client protocol's error codes, in one table, and the error that carries them.

:data:`SERVE_ERRORS` is every code the client protocol (the agent host protocol) answers with:
JSON-RPC 2.0's own five (:data:`~extension_protocol.error_codes.JSON_RPC_ERRORS`) and the
protocol's in ``-32001`` … ``-32010``, each with the protocol's name for it and what it means.
The socket and WebSocket transports refuse a client over their limit before it speaks this
protocol, with the extension protocol's ``TOO_MANY_CONNECTIONS`` and id ``null``; that code is
``UnsupportedProtocolVersion``'s number here, which is only ever an answer to ``initialize``.

A handler raises :class:`ServeError` (an :class:`~extension_protocol.connection.RpcError`, so
the connection answers it as one error, in the one place that maps exceptions to wire errors)
with one of these codes and a message that names the session, URI or parameter at fault. This
module knows codes, not transports.
"""

from __future__ import annotations

from typing import Final

from extension_protocol.connection import RpcError
from extension_protocol.error_codes import JSON_RPC_ERRORS, ErrorCode

__all__ = [
    "ALREADY_EXISTS",
    "AUTH_REQUIRED",
    "CONTENT_NOT_FOUND",
    "NOT_FOUND",
    "PERMISSION_DENIED",
    "PROVIDER_NOT_FOUND",
    "SERVE_ERRORS",
    "SESSION_ALREADY_EXISTS",
    "SESSION_NOT_FOUND",
    "TURN_IN_PROGRESS",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "ServeError",
]

SESSION_NOT_FOUND: Final = -32001
PROVIDER_NOT_FOUND: Final = -32002
SESSION_ALREADY_EXISTS: Final = -32003
TURN_IN_PROGRESS: Final = -32004
UNSUPPORTED_PROTOCOL_VERSION: Final = -32005
CONTENT_NOT_FOUND: Final = -32006
AUTH_REQUIRED: Final = -32007
NOT_FOUND: Final = -32008
PERMISSION_DENIED: Final = -32009
ALREADY_EXISTS: Final = -32010

SERVE_ERRORS: Final[tuple[ErrorCode, ...]] = (
    *JSON_RPC_ERRORS,
    ErrorCode(SESSION_NOT_FOUND, "SessionNotFound", "the session URI names no session of this server"),
    ErrorCode(PROVIDER_NOT_FOUND, "ProviderNotFound", "no agent provider of that name, or it cannot start an agent"),
    ErrorCode(SESSION_ALREADY_EXISTS, "SessionAlreadyExists", "`createSession` with a URI already in use"),
    ErrorCode(TURN_IN_PROGRESS, "TurnInProgress", "the operation needs the session idle, and a turn is running"),
    ErrorCode(
        UNSUPPORTED_PROTOCOL_VERSION,
        "UnsupportedProtocolVersion",
        "`initialize` offered no protocol version this server speaks (`data.supportedVersions`)",
    ),
    ErrorCode(
        CONTENT_NOT_FOUND, "ContentNotFound", "`resourceRead` of a content URI that does not exist (or no longer does)"
    ),
    ErrorCode(
        AUTH_REQUIRED,
        "AuthRequired",
        "the client must authenticate first (never sent here: a WebSocket client without the token is refused "
        "with HTTP 401 before it speaks the protocol)",
    ),
    ErrorCode(NOT_FOUND, "NotFound", "the file, folder or URI does not exist"),
    ErrorCode(
        PERMISSION_DENIED,
        "PermissionDenied",
        "outside what the client may touch (e.g. outside the session's working directory)",
    ),
    ErrorCode(
        ALREADY_EXISTS,
        "AlreadyExists",
        "the target exists and the command may not overwrite it (the protocol's newer code)",
    ),
)
"""Every code of the client protocol, with its name and meaning; the protocol's own lie in
``-32099..-32000`` (:data:`~extension_protocol.error_codes.SERVER_ERROR_RANGE`)."""


class ServeError(RpcError):
    """A client protocol error: ``code`` is one of :data:`SERVE_ERRORS`."""
