"""The extension protocol's error codes: one table, each code with its short name and meaning.

:data:`WIRE_ERRORS` is every code the extension protocol sends, and the control socket and the
client server's transports, which speak it, too: JSON-RPC 2.0's own five, this project's in
JSON-RPC's range for implementations (:data:`SERVER_ERROR_RANGE`, -32099..-32000), and one
deliberate exception, ``REQUEST_CANCELLED``: LSP's -32800, kept as LSP has it. The constants are
what code raises and compares; :data:`ERROR_CODES` (code → short name) is derived for messages.
:mod:`extension_protocol.protocol` re-exports them all. The client protocol of ``extensions
serve`` has its own table (``extension_host.serve.errors``), its JSON-RPC rows these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

__all__ = [
    "ENVIRONMENT_NOT_GRANTED",
    "ERROR_CODES",
    "HOOK_FAILED",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "JSON_RPC_ERRORS",
    "METHOD_NOT_FOUND",
    "NOT_SUPPORTED",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "SERVER_ERROR_RANGE",
    "TOOL_REGISTRATION_FAILED",
    "TOO_MANY_CONNECTIONS",
    "UNKNOWN_EXTENSION",
    "WIRE_ERRORS",
    "ErrorCode",
]

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
TOOL_REGISTRATION_FAILED: Final = -32001
NOT_SUPPORTED: Final = -32002
HOOK_FAILED: Final = -32003
UNKNOWN_EXTENSION: Final = -32004
TOO_MANY_CONNECTIONS: Final = -32005
ENVIRONMENT_NOT_GRANTED: Final = -32006
REQUEST_CANCELLED: Final = -32800

SERVER_ERROR_RANGE: Final = range(-32099, -31999)
"""JSON-RPC's range for errors an implementation defines, -32099..-32000: this project's own
codes lie in it, but for the one exception of :data:`WIRE_ERRORS` (``REQUEST_CANCELLED``)."""


@dataclass(frozen=True, slots=True)
class ErrorCode:
    """One error code of a protocol: its number, a short name for messages, what it means, and
    whose it is (``JSON-RPC``'s own, the protocol's, or borrowed from ``LSP``)."""

    code: int
    name: str
    meaning: str
    origin: Literal["JSON-RPC", "this protocol", "LSP"] = "this protocol"


JSON_RPC_ERRORS: Final[tuple[ErrorCode, ...]] = (
    ErrorCode(PARSE_ERROR, "parse error", "the bytes of a frame were not valid JSON", "JSON-RPC"),
    ErrorCode(INVALID_REQUEST, "invalid request", "the JSON was not a valid request object", "JSON-RPC"),
    ErrorCode(METHOD_NOT_FOUND, "method not found", "nobody on this side handles the method", "JSON-RPC"),
    ErrorCode(INVALID_PARAMS, "invalid params", "the params do not have the documented shape", "JSON-RPC"),
    ErrorCode(INTERNAL_ERROR, "internal error", "the handler failed for a reason of its own", "JSON-RPC"),
)
"""JSON-RPC 2.0's own codes, which every protocol of this project answers with."""

WIRE_ERRORS: Final[tuple[ErrorCode, ...]] = (
    *JSON_RPC_ERRORS,
    ErrorCode(
        TOOL_REGISTRATION_FAILED,
        "tool registration failed",
        "`session.resume` refused: a tool name is taken or invalid; the extension is not loaded",
    ),
    ErrorCode(
        NOT_SUPPORTED, "not supported", "the method exists in the Copilot protocol but this side does not implement it"
    ),
    ErrorCode(
        HOOK_FAILED,
        "hook failed",
        "a hook handler raised, or returned an output the protocol cannot carry (`data` names the key)",
    ),
    ErrorCode(
        UNKNOWN_EXTENSION,
        "unknown extension",
        "the control socket was asked about an extension the host did not discover "
        "(`data`: `{extension, known}`, the name asked for and the ids it knows)",
    ),
    ErrorCode(
        TOO_MANY_CONNECTIONS,
        "too many connections",
        "a server already serves as many clients as it allows; sent with id `null` to a new client, "
        "whose connection is then closed (`data`: `{limit}`)",
    ),
    ErrorCode(
        ENVIRONMENT_NOT_GRANTED,
        "environment not granted",
        "`session.resume` refused: the extension asked for sensitive environment variables the user has not "
        "granted (`data`: `{variables}`, the names); the extension is not loaded",
    ),
    ErrorCode(
        REQUEST_CANCELLED,
        "request cancelled",
        "the request was cancelled with `$/cancelRequest` before it finished; LSP's code, kept as LSP has it, "
        "the one code of this project outside -32099..-32000",
        "LSP",
    ),
)
"""Every error code the extension protocol (and the control socket, which speaks it) sends: the
one table of them. This project's own lie in :data:`SERVER_ERROR_RANGE`; ``REQUEST_CANCELLED`` is
the one deliberate exception, LSP's -32800, which an LSP-aware peer knows."""

ERROR_CODES: Final[dict[int, str]] = {error.code: error.name for error in WIRE_ERRORS}
"""Code → short name for messages, from :data:`WIRE_ERRORS`."""
