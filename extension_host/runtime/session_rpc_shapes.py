"""The params and results of the session-scoped methods (:mod:`extension_host.runtime.session_rpc`).

Each ``TypedDict`` here is the published SDK's type of the same name in ``rpc.d.ts`` (camelCase
on the wire), cut to the fields this host reads or answers. They are read through pydantic where
an extension's params arrive (:func:`extension_host.validation.validate`) and where
``api.schema.json`` is generated (:mod:`extension_host.schemas.api`); bounds that pydantic checks
(``max`` 1–1000, say) sit on the fields so the schema states them too.

This module holds shapes only: the table of :mod:`extension_host.runtime.session_rpc` pairs each
method with its shapes and how it is answered.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, NotRequired, TypedDict

from pydantic import Field

from extension_protocol import canvases as wire
from extension_protocol import protocol as p

__all__ = [
    "MAX_AGENT_IDS",
    "MAX_CURSOR_CHARS",
    "MAX_QUESTION_CHARS",
    "MAX_TYPES",
    "AuthStatus",
    "CanvasActionInvokeRequest",
    "CanvasCloseRequest",
    "CanvasList",
    "CanvasListOpenResult",
    "CanvasOpenRequest",
    "CommandList",
    "CommandsListParams",
    "EphemeralQueryRequest",
    "EphemeralQueryResult",
    "EventLogReadRequest",
    "EventLogTailResult",
    "EventsReadResult",
    "ExecuteCommandResult",
    "ExtensionList",
    "GetMessagesResult",
    "McpServerList",
    "ModelList",
    "SessionRpcParams",
    "SlashCommandInfo",
    "ToolsGetCurrentMetadataResult",
]

MAX_CURSOR_CHARS: Final = 256
"""The longest ``cursor`` accepted (this host's cursors are under 100 characters)."""
MAX_TYPES: Final = 256
"""Event types one ``session.eventLog.read`` may filter on."""
MAX_AGENT_IDS: Final = 256
"""Agent ids one ``session.eventLog.read`` may filter on."""

MAX_QUESTION_CHARS: Final = 32 * 1024
"""The longest question ``session.ui.ephemeralQuery`` accepts."""

_Name = Annotated[str, Field(min_length=1, max_length=200)]
_InstanceId = Annotated[str, Field(min_length=1, max_length=wire.MAX_INSTANCE_ID_CHARS)]
_CanvasName = Annotated[str, Field(min_length=1, max_length=wire.MAX_CANVAS_ID_CHARS)]


class SessionRpcParams(TypedDict):
    """Only the session id (the queries of the session-rpc table that take nothing else)."""

    sessionId: str


class Extension(TypedDict):
    """One extension as the SDK describes it: ``status`` is running, disabled, failed or starting."""

    id: str
    name: str
    source: str
    status: Literal["running", "disabled", "failed", "starting"]
    pid: NotRequired[int]


class ExtensionList(TypedDict):
    """Answer to ``session.extensions.list``: every extension the host discovered."""

    extensions: list[Extension]


class CommandsListParams(TypedDict):
    """``session.commands.list``: ``includeClientCommands: false`` leaves out extensions' commands."""

    sessionId: str
    includeClientCommands: NotRequired[bool]


class SlashCommandInfo(TypedDict):
    """One slash command; every command of this host is a client's (an extension's)."""

    name: str
    description: str
    kind: Literal["client"]
    allowDuringAgentExecution: bool


class CommandList(TypedDict):
    """Answer to ``session.commands.list``."""

    commands: list[SlashCommandInfo]


class ExecuteCommandResult(TypedDict):
    """Answer to ``session.commands.execute``: ``error`` when the command failed."""

    error: NotRequired[str]


class ToolMetadata(TypedDict):
    """One offered tool: its name, description and JSON Schema input."""

    name: str
    description: str
    input_schema: NotRequired[dict[str, Any]]


class ToolsGetCurrentMetadataResult(TypedDict):
    """Answer to ``session.tools.getCurrentMetadata``; ``tools`` is null before the tools are known."""

    tools: list[ToolMetadata] | None


class ModelList(TypedDict):
    """Answer to ``session.model.list``: the agent's models as the SDK's ``Model`` objects."""

    models: list[dict[str, Any]]


class McpServerList(TypedDict):
    """Answer to ``session.mcp.list`` (this host runs no MCP servers: always empty)."""

    servers: list[dict[str, Any]]


class EventLogReadRequest(TypedDict):
    """``session.eventLog.read``: a cursor, a batch size, and optional long-poll and filters.

    ``cursor`` omitted reads from the start of the session; ``max`` is 1–1000 (200 by default);
    ``waitMs`` waits (up to 30,000 ms) for new events when the cursor is at the tail;
    ``types`` is ``"*"`` or a non-empty list of event types; ``direction: "backward"`` pages
    from the newest persisted events toward older ones; ``includeEphemeral: false`` leaves out
    live ephemeral events.
    """

    sessionId: str
    cursor: NotRequired[Annotated[str, Field(max_length=MAX_CURSOR_CHARS)]]
    max: NotRequired[Annotated[int, Field(ge=1, le=1000)]]
    waitMs: NotRequired[Annotated[int, Field(ge=0)]]
    types: NotRequired[Literal["*"] | Annotated[list[_Name], Field(min_length=1, max_length=MAX_TYPES)]]
    agentScope: NotRequired[Literal["primary", "all"]]
    agentIds: NotRequired[Annotated[list[_Name], Field(min_length=1, max_length=MAX_AGENT_IDS)]]
    direction: NotRequired[Literal["forward", "backward"]]
    includeEphemeral: NotRequired[bool]


class EventsReadResult(TypedDict):
    """Answer to ``session.eventLog.read``: events oldest first, the cursor for the next read,
    ``hasMore`` in the read's direction, and ``cursorStatus`` (``expired``: the cursor's
    position is gone, the events start at the oldest still readable)."""

    events: list[p.Event]
    cursor: str
    hasMore: bool
    cursorStatus: Literal["ok", "expired"]


class GetMessagesResult(TypedDict):
    """Answer to ``session.getMessages`` (the JS SDK's ``getEvents()``): every persisted event."""

    events: list[p.Event]


class AuthStatus(TypedDict):
    """Answer to ``session.gitHubAuth.getStatus`` and ``auth.getStatus``: this host has no
    GitHub sign-in, so never authenticated."""

    isAuthenticated: bool
    statusMessage: NotRequired[str]


class EventLogTailResult(TypedDict):
    """Answer to ``session.eventLog.tail``: a cursor at the current end of the session's events."""

    cursor: str


class CanvasList(TypedDict):
    """Answer to ``session.canvas.list``: every declared canvas (the SDK's ``DiscoveredCanvas``)."""

    canvases: list[dict[str, Any]]


class CanvasListOpenResult(TypedDict):
    """Answer to ``session.canvas.listOpen``: the open instances (the SDK's ``OpenCanvasInstance``)."""

    openCanvases: list[dict[str, Any]]


class CanvasOpenRequest(TypedDict):
    """``session.canvas.open``: open (or focus) ``instanceId`` of ``canvasId``; ``extensionId``
    when several extensions declare that id. Answered with the ``OpenCanvasInstance``."""

    sessionId: str
    canvasId: _CanvasName
    instanceId: _InstanceId
    extensionId: NotRequired[_Name]
    input: NotRequired[Any]


class CanvasCloseRequest(TypedDict):
    """``session.canvas.close``: close an open instance."""

    sessionId: str
    instanceId: _InstanceId


class CanvasActionInvokeRequest(TypedDict):
    """``session.canvas.action.invoke``: run an action on an open instance; answered with its result."""

    sessionId: str
    instanceId: _InstanceId
    actionName: _CanvasName
    input: NotRequired[Any]


class EphemeralQueryRequest(TypedDict):
    """``session.ui.ephemeralQuery``: a question for the session's agent, outside the conversation."""

    sessionId: str
    question: Annotated[str, Field(min_length=1, max_length=MAX_QUESTION_CHARS)]


class EphemeralQueryResult(TypedDict):
    """Answer to ``session.ui.ephemeralQuery``: the agent's answer."""

    answer: str
