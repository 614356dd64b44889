"""The shapes of what AHP 1.0 clients send to ``extensions serve``, checked before anything acts
on them.

Every 1.0 command names its ``channel`` (``ahp-root://`` for the connection-level ones); each
command's params and each action a 1.0 client may dispatch is a ``TypedDict`` here, validated
with :func:`extension_host.validation.validate` (``INVALID_PARAMS`` naming the method and the
field). Strings and lists a client chooses are bounded as the seed protocol's are
(:mod:`extension_host.serve.params`); other keys are let through, as the protocol grows. This
module knows shapes; it does not act on them.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, NotRequired, TypedDict

from pydantic import Field

from ..params import MAX_CLIENT_ID_CHARS, MAX_SUBSCRIPTIONS, MAX_TEXT_CHARS, MAX_URI_CHARS
from ..served_session import MAX_FETCH_TURNS
from .turns import MAX_CURSOR_CHARS

__all__ = [
    "MAX_DURATION_MS",
    "MAX_WORKING_DIRECTORIES",
    "ROOT",
    "AuthenticateParams",
    "ChannelParams",
    "ChatTurnCancelled",
    "ChatTurnStarted",
    "CreateSessionParams",
    "DispatchParams",
    "FetchTurnsParams",
    "InitializeParams",
    "ReconnectParams",
    "ToolCallConfirmed",
]

ROOT: Final = "ahp-root://"
"""The root channel: the connection-level commands name it."""
MAX_WORKING_DIRECTORIES: Final = 64
MAX_DURATION_MS: Final = 10 * 365 * 24 * 3600 * 1000
"""The longest ``duration`` a client may give (ten years, in milliseconds)."""

Uri = Annotated[str, Field(min_length=1, max_length=MAX_URI_CHARS)]
Root = Literal["ahp-root://"]
Version = Annotated[str, Field(pattern=r"^\d+\.\d+\.\d+$", max_length=64)]
Id = Annotated[str, Field(min_length=1, max_length=256)]
Meta = Annotated[dict[str, Any], Field(max_length=64)]


class Implementation(TypedDict):
    name: Annotated[str, Field(max_length=256)]
    version: NotRequired[Annotated[str, Field(max_length=256)]]
    title: NotRequired[Annotated[str, Field(max_length=256)]]


class InitializeParams(TypedDict):
    channel: Root
    protocolVersions: Annotated[list[Version], Field(min_length=1, max_length=32)]
    clientId: Annotated[str, Field(min_length=1, max_length=MAX_CLIENT_ID_CHARS)]
    clientInfo: NotRequired[Implementation]
    initialSubscriptions: NotRequired[Annotated[list[Uri], Field(max_length=MAX_SUBSCRIPTIONS)]]
    locale: NotRequired[Annotated[str, Field(max_length=64)]]
    capabilities: NotRequired[Meta]
    _meta: NotRequired[Meta]


class ReconnectParams(TypedDict):
    channel: Root
    clientId: Annotated[str, Field(min_length=1, max_length=MAX_CLIENT_ID_CHARS)]
    lastSeenServerSeq: Annotated[int, Field(ge=0)]
    subscriptions: Annotated[list[Uri], Field(max_length=MAX_SUBSCRIPTIONS)]


class ChannelParams(TypedDict):
    """``subscribe``, ``disposeSession``, ``listSessions``, ``ping``, …: a channel."""

    channel: Uri
    _meta: NotRequired[Meta]


class FetchTurnsParams(TypedDict):
    channel: Uri
    cursor: NotRequired[Annotated[str, Field(min_length=1, max_length=MAX_CURSOR_CHARS)]]
    """A chat state's ``turnsNextCursor``; without it, the page before the turns the chat holds."""
    limit: NotRequired[Annotated[int, Field(ge=1, le=MAX_FETCH_TURNS)]]
    """At most this many turns before the cursor (an addition: AHP 1.0 leaves the page size to the server)."""
    _meta: NotRequired[Meta]


class CreateSessionParams(TypedDict):
    channel: Uri
    provider: NotRequired[Annotated[str, Field(min_length=1, max_length=64)]]
    workingDirectories: NotRequired[Annotated[list[Uri], Field(max_length=MAX_WORKING_DIRECTORIES)]]
    config: NotRequired[Meta]
    progressToken: NotRequired[Annotated[str, Field(max_length=256)]]


class AuthenticateParams(TypedDict):
    channel: Root
    resource: Uri
    token: Annotated[str, Field(max_length=64 * 1024)]
    expiresIn: NotRequired[Annotated[int, Field(ge=1)]]
    scopes: NotRequired[Annotated[list[Annotated[str, Field(max_length=256)]], Field(max_length=64)]]


class DispatchParams(TypedDict):
    channel: Uri
    clientSeq: Annotated[int, Field(ge=0)]
    action: dict[str, Any]


class Message(TypedDict):
    text: Annotated[str, Field(max_length=MAX_TEXT_CHARS)]
    origin: NotRequired[dict[str, Any]]
    attachments: NotRequired[Annotated[list[dict[str, Any]], Field(max_length=0)]]
    """Attachments are not taken (yet): a message that has some is refused, not half-read."""


class ChatTurnStarted(TypedDict):
    type: Literal["chat/turnStarted"]
    turnId: Id
    message: Message


class ChatTurnCancelled(TypedDict):
    type: Literal["chat/turnCancelled"]
    turnId: Id
    duration: NotRequired[Annotated[float, Field(ge=0, le=MAX_DURATION_MS)]]
    """Milliseconds the turn ran, as the client counts them (echoed as given)."""


class ToolCallConfirmed(TypedDict):
    type: Literal["chat/toolCallConfirmed"]
    turnId: Id
    toolCallId: Id
    approved: bool
    confirmed: NotRequired[Annotated[str, Field(max_length=64)]]
    reason: NotRequired[Annotated[str, Field(max_length=64)]]
    reasonMessage: NotRequired[Annotated[str, Field(max_length=4096)]]
