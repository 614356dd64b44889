"""The wire protocol: method names, error codes and message shapes, defined once for both sides.

This is the Copilot SDK extension protocol, version 3, plus two additive fields of this project
(``hookTypes`` and ``eventTypes`` in ``session.resume``). Shapes are ``TypedDict``s so that an
extension pays no validation-library import; the host validates the same definitions at its
trust boundary. Keys are camelCase as they travel. The error codes are
:mod:`extension_protocol.error_codes`' table and the hook points' names
:mod:`extension_protocol.hook_names`', both re-exported here.

This module owns names and shapes only. Framing lives in :mod:`extension_protocol.framing`, request
correlation in :mod:`extension_protocol.connection`; neither knows what a tool or a hook is.
"""

from __future__ import annotations

import re
from typing import Any, Final, Literal, NotRequired, TypedDict, get_args

from .error_codes import (
    ENVIRONMENT_NOT_GRANTED,
    ERROR_CODES,
    HOOK_FAILED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    JSON_RPC_ERRORS,
    METHOD_NOT_FOUND,
    NOT_SUPPORTED,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    SERVER_ERROR_RANGE,
    TOO_MANY_CONNECTIONS,
    TOOL_REGISTRATION_FAILED,
    UNKNOWN_EXTENSION,
    WIRE_ERRORS,
    ErrorCode,
)
from .hook_names import HOOK_NAMES, HOOK_WIRE_NAMES, camel_case, hook_name

__all__ = [
    "COMMAND_NAME_PATTERN",
    "ENVIRONMENT_NOT_GRANTED",
    "ERROR_CODES",
    "HOOK_FAILED",
    "HOOK_NAMES",
    "HOOK_WIRE_NAMES",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "JSON_RPC_ERRORS",
    "LOG_LEVELS",
    "METHOD_CANCEL_REQUEST",
    "METHOD_CONNECT",
    "METHOD_HANDLE_PENDING_COMMAND",
    "METHOD_HANDLE_PENDING_PERMISSION",
    "METHOD_HANDLE_PENDING_TOOL_CALL",
    "METHOD_HOOKS_INVOKE",
    "METHOD_NOT_FOUND",
    "METHOD_PING",
    "METHOD_REGISTER_INTEREST",
    "METHOD_RELEASE_INTEREST",
    "METHOD_SESSION_DETACH",
    "METHOD_SESSION_EVENT",
    "METHOD_SESSION_LIFECYCLE",
    "METHOD_SESSION_LOG",
    "METHOD_SESSION_RESUME",
    "METHOD_SESSION_SEND",
    "NOT_SUPPORTED",
    "PARSE_ERROR",
    "PROTOCOL_VERSION",
    "REQUEST_CANCELLED",
    "RESULT_TYPES",
    "RPC_AUTH_STATUS",
    "RPC_CANVAS_ACTION",
    "RPC_CANVAS_CLOSE",
    "RPC_CANVAS_LIST",
    "RPC_CANVAS_LIST_OPEN",
    "RPC_CANVAS_OPEN",
    "RPC_COMMANDS_EXECUTE",
    "RPC_COMMANDS_LIST",
    "RPC_EPHEMERAL_QUERY",
    "RPC_EVENT_LOG_READ",
    "RPC_EVENT_LOG_TAIL",
    "RPC_EXTENSIONS_LIST",
    "RPC_GET_MESSAGES",
    "RPC_GITHUB_AUTH_STATUS",
    "RPC_MCP_LIST",
    "RPC_MCP_RELOAD",
    "RPC_MODEL_LIST",
    "RPC_TOOLS_METADATA",
    "RPC_USAGE_METRICS",
    "SERVER_ERROR_RANGE",
    "SESSION_UPDATED_START",
    "TOOL_REGISTRATION_FAILED",
    "TOO_MANY_CONNECTIONS",
    "UNKNOWN_EXTENSION",
    "WIRE_ERRORS",
    "CommandDefinition",
    "CommandExecuteData",
    "ConnectResult",
    "ErrorCode",
    "Event",
    "ExecuteCommandParams",
    "HandlePendingCommandParams",
    "HandlePendingPermissionParams",
    "HandlePendingToolCallParams",
    "HooksInvokeParams",
    "LifecycleMetadata",
    "LogLevel",
    "LogParams",
    "ModelState",
    "PermissionDecision",
    "PingResult",
    "RegisterInterestParams",
    "ReleaseInterestParams",
    "ResultType",
    "ResumeParams",
    "ResumeResult",
    "SendParams",
    "SessionCapabilities",
    "SessionEventParams",
    "SessionLifecycleParams",
    "ToolDefinition",
    "ToolRequestedData",
    "UiCapabilities",
    "WireToolResult",
    "camel_case",
    "hook_name",
]

PROTOCOL_VERSION: Final = 3
"""The only protocol version this project speaks (the Copilot SDK accepts exactly 3 too)."""

# Methods, named as the Copilot SDK names them.
METHOD_CONNECT: Final = "connect"
METHOD_PING: Final = "ping"
METHOD_SESSION_RESUME: Final = "session.resume"
METHOD_SESSION_EVENT: Final = "session.event"
METHOD_SESSION_LIFECYCLE: Final = "session.lifecycle"
"""Notification ``{type, sessionId, metadata?}``, host → extension (see :class:`SessionLifecycleParams`)."""
SESSION_UPDATED_START: Final = (
    b'{"jsonrpc":"2.0","method":"' + METHOD_SESSION_LIFECYCLE.encode() + b'","params":{"type":"session.updated",'
)
"""How the host's ``session.updated`` notices begin, as it writes them (several per tool call,
to every extension): an SDK with no use for them drops them unread
(:meth:`~extension_protocol.connection.Connection.skip_unread`)."""
METHOD_SESSION_LOG: Final = "session.log"
METHOD_SESSION_SEND: Final = "session.send"
METHOD_HANDLE_PENDING_TOOL_CALL: Final = "session.tools.handlePendingToolCall"
METHOD_HOOKS_INVOKE: Final = "hooks.invoke"
METHOD_REGISTER_INTEREST: Final = "session.eventLog.registerInterest"
METHOD_RELEASE_INTEREST: Final = "session.eventLog.releaseInterest"
METHOD_HANDLE_PENDING_COMMAND: Final = "session.commands.handlePendingCommand"
METHOD_SESSION_DETACH: Final = "session.detach"
"""The JS SDK's ``session.disconnect()``: the extension leaves the session (answered ``{success}``)."""
METHOD_HANDLE_PENDING_PERMISSION: Final = "session.permissions.handlePendingPermissionRequest"
"""Request ``{sessionId, requestId, result}`` → ``{success}``: an extension's answer to a
``permission.requested`` event (it joined with ``requestPermission: true``)."""
METHOD_CANCEL_REQUEST: Final = "$/cancelRequest"
"""Notification ``{id}``: the sender no longer wants the answer to its request ``id`` (as in LSP)."""

# The session-scoped queries (the JS SDK's ``session.rpc``), extension → host, as RPC_* beside the
# METHOD_* above; the host's table of how each is answered, with its shapes, is
# ``extension_host.runtime.session_rpc``.
RPC_EXTENSIONS_LIST: Final = "session.extensions.list"
RPC_COMMANDS_LIST: Final = "session.commands.list"
RPC_COMMANDS_EXECUTE: Final = "session.commands.execute"
RPC_TOOLS_METADATA: Final = "session.tools.getCurrentMetadata"
RPC_MODEL_LIST: Final = "session.model.list"
RPC_USAGE_METRICS: Final = "session.usage.getMetrics"
RPC_MCP_LIST: Final = "session.mcp.list"
RPC_MCP_RELOAD: Final = "session.mcp.reload"
RPC_EVENT_LOG_READ: Final = "session.eventLog.read"
RPC_EVENT_LOG_TAIL: Final = "session.eventLog.tail"
RPC_GET_MESSAGES: Final = "session.getMessages"
RPC_GITHUB_AUTH_STATUS: Final = "session.gitHubAuth.getStatus"
RPC_AUTH_STATUS: Final = "auth.getStatus"
RPC_CANVAS_LIST: Final = "session.canvas.list"
RPC_CANVAS_LIST_OPEN: Final = "session.canvas.listOpen"
RPC_CANVAS_OPEN: Final = "session.canvas.open"
RPC_CANVAS_CLOSE: Final = "session.canvas.close"
RPC_CANVAS_ACTION: Final = "session.canvas.action.invoke"
RPC_EPHEMERAL_QUERY: Final = "session.ui.ephemeralQuery"


ResultType = Literal["success", "failure", "rejected", "denied", "timeout"]
RESULT_TYPES: Final[tuple[ResultType, ...]] = get_args(ResultType)

LogLevel = Literal["info", "warning", "error"]
LOG_LEVELS: Final[tuple[LogLevel, ...]] = ("info", "warning", "error")


class ToolDefinition(TypedDict):
    """One tool as an extension declares it in ``session.resume``."""

    name: str
    description: NotRequired[str]
    parameters: NotRequired[dict[str, Any] | None]
    overridesBuiltInTool: NotRequired[bool]


COMMAND_NAME_PATTERN: Final = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}\Z")
"""Slash command names: a letter or digit, then letters, digits, ``_``, ``-``, ``.`` or ``:``, at
most 64 in all, without the leading ``/`` (``deploy`` is run as ``/deploy``). Unlike tool names
no model API constrains them; whitespace would end the name on a command line."""


class CommandDefinition(TypedDict):
    """One slash command as an extension declares it in ``session.resume`` (``commands``)."""

    name: str
    description: NotRequired[str | None]


class CommandExecuteData(TypedDict):
    """``data`` of a ``command.execute`` event, sent to the command's owner only: run it and
    answer ``session.commands.handlePendingCommand`` with this ``requestId``."""

    requestId: str
    commandName: str
    command: str
    """The whole command line, ``/name args``."""
    args: str
    """The raw argument string after the name."""


class HandlePendingCommandParams(TypedDict):
    """``session.commands.handlePendingCommand``: the end of one ``command.execute``
    (``error`` when the handler failed); answered with ``{"success": true}``."""

    sessionId: str
    requestId: str
    error: NotRequired[str | None]


class ExecuteCommandParams(TypedDict):
    """``session.commands.execute``: an extension runs a slash command (any extension's) and is
    answered ``{}`` when it succeeded, else ``{"error"}``."""

    sessionId: str
    commandName: str
    args: NotRequired[str]


class ConnectResult(TypedDict):
    """Answer to ``connect``, as Copilot CLI gives it: ``ok`` (always true), the protocol
    version, the server's package ``version`` and the ``taskKinds`` (of those the client named
    in ``supportedTaskKinds``) it may return to this connection."""

    ok: Literal[True]
    protocolVersion: int
    version: str
    taskKinds: NotRequired[list[str]]


class PingResult(TypedDict):
    """Answer to ``ping``: ``message`` (``pong``, or ``pong: <the message sent>``), the
    server's time (ISO 8601) and the protocol version."""

    message: str
    timestamp: str
    protocolVersion: int


class ResumeParams(TypedDict):
    """``session.resume``: the extension joins the session and declares what it offers.

    The real SDK sends many more session options; they are accepted and ignored.
    """

    sessionId: str
    tools: NotRequired[list[ToolDefinition]]
    hooks: NotRequired[bool]
    hookTypes: NotRequired[list[str]]
    hookMatchers: NotRequired[dict[str, Any]]
    """This project's addition: per tool hook (by ``hookType``), a list of the tool names or
    ``fnmatch`` patterns it is for; a hook left out is called for every tool. The lists are
    checked by the host (``extension_protocol.matchers.compile_matchers``), naming hook and pattern."""
    eventTypes: NotRequired[list[str]]
    commands: NotRequired[list[CommandDefinition]]
    requestedEnvironmentVariables: NotRequired[list[str]]
    disableResume: NotRequired[bool]
    requestPermission: NotRequired[bool]
    """The extension answers ``permission.requested`` events (it has a permission handler)."""
    customAgents: NotRequired[list[dict[str, Any]]]
    """Custom agents the session's agent may start as subagents (the SDK's ``CustomAgentConfig``:
    ``name``, ``prompt``, ``displayName``, ``description``, ``tools``, ``model``,
    ``toolDefinitions``)."""
    canvases: NotRequired[list[dict[str, Any]]]
    """Canvases it provides (the SDK's ``CanvasDeclaration``; see :mod:`extension_protocol.canvases`),
    checked by the host."""


class UiCapabilities(TypedDict):
    """What the session's user interface can do for an extension."""

    elicitation: bool
    """Whether ``session.ui.elicitation`` reaches someone who can answer."""
    mcpApps: bool
    canvases: bool


class SessionCapabilities(TypedDict):
    """``capabilities`` of a ``session.resume`` answer."""

    ui: UiCapabilities
    extensions: bool
    """Copilot CLI's flag for a session whose SDK client asked it to run extensions
    (``requestExtensions``); false in its own sessions, which extensions join."""


class ModelState(TypedDict):
    """The session's current model (``modelId`` absent while no agent names one)."""

    modelId: NotRequired[str]


class ResumeResult(TypedDict):
    """Answer to ``session.resume``, with Copilot CLI's fields."""

    sessionId: str
    nativeSessionId: NotRequired[str]
    startTime: NotRequired[str]
    """When the session started (ISO 8601)."""
    isRemote: NotRequired[bool]
    mode: NotRequired[Literal["interactive", "plan", "autopilot"]]
    workspacePath: NotRequired[str | None]
    capabilities: NotRequired[SessionCapabilities]
    modelState: NotRequired[ModelState]
    grantedEnvironmentVariables: NotRequired[dict[str, str]]
    """The values of the requested variables the extension may have (only when it asked)."""
    openCanvases: NotRequired[list[dict[str, Any]]]
    """The canvas instances open in the session (the SDK's ``OpenCanvasInstance``), when any are."""


class LifecycleMetadata(TypedDict):
    """``metadata`` of a ``session.updated`` lifecycle notification."""

    startTime: str
    modifiedTime: str
    """When the session last changed: the time of its newest persisted event."""


class SessionLifecycleParams(TypedDict):
    """``session.lifecycle`` notification, host → extension: the session changed (Copilot CLI
    sends ``session.updated`` after each persisted event)."""

    type: Literal["session.created", "session.deleted", "session.updated", "session.foreground", "session.background"]
    sessionId: str
    metadata: NotRequired[LifecycleMetadata]


class Event(TypedDict):
    """The session event envelope, as in the Copilot session-events schema."""

    id: str
    timestamp: str
    parentId: str | None
    type: str
    data: dict[str, Any]
    ephemeral: NotRequired[bool]
    agentId: NotRequired[str]


class SessionEventParams(TypedDict):
    """``session.event`` notification, host → extension."""

    sessionId: str
    event: Event


class ToolRequestedData(TypedDict):
    """``data`` of an ``external_tool.requested`` event: run this tool and answer by ``requestId``."""

    requestId: str
    sessionId: str
    toolCallId: str
    toolName: str
    arguments: Any
    workingDirectory: NotRequired[str]
    """The folder the tool should work in (the project root)."""


class WireToolResult(TypedDict):
    """The object form of a tool result (a plain string is the other form)."""

    textResultForLlm: str
    resultType: NotRequired[ResultType]
    error: NotRequired[str]
    sessionLog: NotRequired[str]
    toolTelemetry: NotRequired[dict[str, Any]]
    binaryResultsForLlm: NotRequired[list[dict[str, Any]]]


class HandlePendingToolCallParams(TypedDict):
    """``session.tools.handlePendingToolCall``: the answer to one ``external_tool.requested``."""

    sessionId: str
    requestId: str
    result: NotRequired[str | WireToolResult]
    error: NotRequired[str]


class HooksInvokeParams(TypedDict):
    """``hooks.invoke``, host → extension; answered with ``{"output": {...} | None}``."""

    sessionId: str
    hookType: str
    input: dict[str, Any]


class LogParams(TypedDict):
    """``session.log``: a message for the session timeline; answered with ``{"eventId"}``."""

    sessionId: str
    message: str
    level: NotRequired[LogLevel]
    ephemeral: NotRequired[bool]
    type: NotRequired[str]
    """The category (``infoType``/``warningType``/``errorType`` of the event); default ``notification``."""
    url: NotRequired[str]
    tip: NotRequired[str]


class SendParams(TypedDict):
    """``session.send``: a prompt into the session; answered with ``{"messageId"}``."""

    sessionId: str
    prompt: str
    attachments: NotRequired[list[dict[str, Any]]]


class PermissionDecision(TypedDict):
    """``result`` of ``session.permissions.handlePendingPermissionRequest``: the published SDK's
    ``PermissionDecision`` (``kind``: ``approve-once``, ``reject`` with ``feedback``, ...); other
    fields of a kind are carried as they are."""

    kind: str
    feedback: NotRequired[str]
    message: NotRequired[str]
    reason: NotRequired[str]


class HandlePendingPermissionParams(TypedDict):
    """``session.permissions.handlePendingPermissionRequest``: the answer to one permission request."""

    sessionId: str
    requestId: str
    result: PermissionDecision
    decisionContext: NotRequired[dict[str, Any]]


class RegisterInterestParams(TypedDict):
    """``session.eventLog.registerInterest``: forward events of this type (``*`` for all)."""

    sessionId: str
    eventType: str


class ReleaseInterestParams(TypedDict):
    """``session.eventLog.releaseInterest``: give back one ``registerInterest`` (by the
    ``handle`` it answered); the type stops being forwarded once its last handle is given back,
    unless ``session.resume`` named it. Unknown handles are a no-op. Answered ``{"success": true}``."""

    sessionId: str
    handle: str
