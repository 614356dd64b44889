"""The client protocol's error codes, and the errors that carry them.

The codes are the agent host protocol's: the JSON-RPC 2.0 ones (``-32700`` … ``-32603``) and
its own in ``-32001`` … ``-32010``. A handler raises :class:`ServeError` (an
:class:`~extension_protocol.connection.RpcError`, so the connection answers it as one error,
in the one place that maps exceptions to wire errors) with one of these codes and a message
that names the session, URI or parameter at fault. This module knows codes, not transports.
"""

from __future__ import annotations

from typing import Final

from extension_protocol.connection import RpcError

__all__ = [
    "ALREADY_EXISTS",
    "AUTH_REQUIRED",
    "CONTENT_NOT_FOUND",
    "NOT_FOUND",
    "PERMISSION_DENIED",
    "PROVIDER_NOT_FOUND",
    "SESSION_ALREADY_EXISTS",
    "SESSION_NOT_FOUND",
    "TURN_IN_PROGRESS",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "ServeError",
]

SESSION_NOT_FOUND: Final = -32001
"""The session URI names no session of this server."""
PROVIDER_NOT_FOUND: Final = -32002
"""No agent provider of that name."""
SESSION_ALREADY_EXISTS: Final = -32003
"""``createSession`` with a URI already in use."""
TURN_IN_PROGRESS: Final = -32004
"""The operation needs the session idle, and a turn is running."""
UNSUPPORTED_PROTOCOL_VERSION: Final = -32005
"""``initialize`` offered no protocol version this server speaks."""
CONTENT_NOT_FOUND: Final = -32006
"""``resourceRead`` of a content URI that does not exist (or no longer does)."""
AUTH_REQUIRED: Final = -32007
"""The client must authenticate first."""
NOT_FOUND: Final = -32008
"""The file, folder or URI does not exist."""
PERMISSION_DENIED: Final = -32009
"""Outside what the client may touch (e.g. outside the session's working directory)."""
ALREADY_EXISTS: Final = -32010
"""The target exists and the command may not overwrite it (the protocol's newer ``AlreadyExists``)."""


class ServeError(RpcError):
    """A client protocol error: ``code`` is one of this module's constants (or JSON-RPC's)."""
