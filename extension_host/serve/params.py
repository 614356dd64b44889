"""The shapes of what clients send to ``extensions serve``, checked before anything acts on them.

Each command's params and each client-dispatchable action is a ``TypedDict`` here, validated
with :func:`extension_host.validation.validate` (an ``INVALID_PARAMS`` error naming the method
and the field). Strings a client chooses are bounded (:data:`MAX_URI_CHARS`,
:data:`MAX_TEXT_CHARS`); other keys are let through, as the protocol grows. This module knows
shapes; it does not act on them.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, NotRequired, TypedDict

from pydantic import Field

from extension_protocol.canvases import MAX_CANVAS_ID_CHARS, MAX_INSTANCE_ID_CHARS

__all__ = [
    "MAX_CLIENT_ID_CHARS",
    "MAX_SUBSCRIPTIONS",
    "MAX_TEXT_CHARS",
    "MAX_URI_CHARS",
    "CanvasInstanceParams",
    "CreateSessionParams",
    "DispatchActionParams",
    "FetchTurnsParams",
    "InitializeParams",
    "InvokeCanvasActionParams",
    "ModelChangedAction",
    "PermissionResolvedAction",
    "ReconnectParams",
    "ReloadExtensionsParams",
    "SessionForkSource",
    "SessionParams",
    "SubscribeParams",
    "TurnCancelledAction",
    "TurnStartedAction",
]

MAX_URI_CHARS: Final = 2048
"""Longest session URI (or any URI) a client may send."""
MAX_TEXT_CHARS: Final = 1_000_000
"""Longest prompt a client may send in ``session/turnStarted``."""
MAX_CLIENT_ID_CHARS: Final = 256
MAX_SUBSCRIPTIONS: Final = 1024
"""URIs one client may subscribe to at once."""

Uri = Annotated[str, Field(min_length=1, max_length=MAX_URI_CHARS)]
Version = Annotated[str, Field(pattern=r"^\d+\.\d+\.\d+$", max_length=64)]
ClientId = Annotated[str, Field(min_length=1, max_length=MAX_CLIENT_ID_CHARS)]
Id = Annotated[str, Field(min_length=1, max_length=256)]


class ClientCapabilities(TypedDict):
    canvases: NotRequired[bool]
    """It shows canvases: while it is subscribed to a session, that session's canvases can open."""


class InitializeParams(TypedDict):
    protocolVersions: Annotated[list[Version], Field(min_length=1, max_length=32)]
    clientId: ClientId
    initialSubscriptions: NotRequired[Annotated[list[Uri], Field(max_length=MAX_SUBSCRIPTIONS)]]
    locale: NotRequired[str]
    capabilities: NotRequired[ClientCapabilities]


class ReconnectParams(TypedDict):
    clientId: ClientId
    lastSeenServerSeq: Annotated[int, Field(ge=0)]
    subscriptions: Annotated[list[Uri], Field(max_length=MAX_SUBSCRIPTIONS)]
    capabilities: NotRequired[ClientCapabilities]
    """What it shows now; without it, what it said when it last connected to this server."""


class SubscribeParams(TypedDict):
    resource: Uri


class ModelSelection(TypedDict):
    id: Annotated[str, Field(min_length=1, max_length=256)]


class SessionForkSource(TypedDict):
    session: Uri
    turnId: Id


class CreateSessionParams(TypedDict):
    session: Uri
    provider: NotRequired[Annotated[str, Field(min_length=1, max_length=64)]]
    model: NotRequired[ModelSelection | Annotated[str, Field(min_length=1, max_length=256)]]
    workingDirectory: NotRequired[Uri]
    fork: NotRequired[SessionForkSource]
    customAgents: NotRequired[list[dict[str, Any]]]
    """The session's custom agents (checked by :func:`~extension_host.runtime.agent_configs.check_agents`)."""


class SessionParams(TypedDict):
    session: Uri


class ReloadExtensionsParams(TypedDict):
    session: Uri
    extension: NotRequired[Annotated[str, Field(min_length=1, max_length=256)]]
    """One extension by name or id; all of them without it."""


class FetchTurnsParams(TypedDict):
    session: Uri
    before: NotRequired[Id]
    limit: NotRequired[Annotated[int, Field(ge=1)]]


class UserMessage(TypedDict):
    text: Annotated[str, Field(max_length=MAX_TEXT_CHARS)]


class TurnStartedAction(TypedDict):
    type: Literal["session/turnStarted"]
    session: Uri
    turnId: Id
    userMessage: UserMessage


class PermissionResolvedAction(TypedDict):
    type: Literal["session/permissionResolved"]
    session: Uri
    turnId: Id
    requestId: Id
    approved: bool
    feedback: NotRequired[Annotated[str, Field(max_length=4096)]]


class TurnCancelledAction(TypedDict):
    type: Literal["session/turnCancelled"]
    session: Uri
    turnId: Id


class ModelChangedAction(TypedDict):
    type: Literal["session/modelChanged"]
    session: Uri
    model: ModelSelection | Annotated[str, Field(min_length=1, max_length=256)]


class DispatchActionParams(TypedDict):
    clientSeq: Annotated[int, Field(ge=0)]
    action: dict[str, Any]


InstanceId = Annotated[str, Field(min_length=1, max_length=MAX_INSTANCE_ID_CHARS)]


class CanvasInstanceParams(TypedDict):
    session: Uri
    instanceId: InstanceId


class InvokeCanvasActionParams(TypedDict):
    session: Uri
    instanceId: InstanceId
    actionName: Annotated[str, Field(min_length=1, max_length=MAX_CANVAS_ID_CHARS)]
    input: NotRequired[dict[str, Any] | None]
    """A JSON object (or ``null``), sent to the action as it is; its size is checked as JSON."""
