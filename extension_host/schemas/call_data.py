"""The ``data`` of the events about tools, hooks, permissions, commands and extensions.

Same rules as :mod:`extension_host.schemas.session_data`: the published Copilot SDK's generated
session-event types, key for key; this host's additions declared and marked in their docstrings;
deep SDK objects this host does not build checked by their discriminating keys only.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from pydantic import with_config
from typing_extensions import TypedDict

from extension_host.schemas.session_data import CLOSED, OPEN
from extension_protocol.protocol import ResultType

__all__ = [
    "CommandCompletedData",
    "CommandExecuteData",
    "CommandQueuedData",
    "CommandsChangedData",
    "ExtensionsLoadedData",
    "ExternalToolCompletedData",
    "ExternalToolRequestedData",
    "HookCall",
    "HookEndData",
    "HookProgressData",
    "HookStartData",
    "PermissionCompletedData",
    "PermissionRequestedData",
    "ToolExecutionCompleteData",
    "ToolExecutionPartialResultData",
    "ToolExecutionProgressData",
    "ToolExecutionStartData",
    "ToolUserRequestedData",
    "ToolsUpdatedData",
]


# --- tools --------------------------------------------------------------------------------------


@with_config(CLOSED)
class ToolExecutionStartData(TypedDict):
    """A tool call begins, before its pre-tool hooks run, as in the Copilot CLI (``tool.execution_start``)."""

    toolCallId: str
    toolName: str
    arguments: NotRequired[Any]
    turnId: NotRequired[str]
    parentToolCallId: NotRequired[str]
    model: NotRequired[str]
    displayVerbatim: NotRequired[bool]
    mcpServerName: NotRequired[str]
    mcpToolName: NotRequired[str]
    mcpConfigServerName: NotRequired[str]
    mcpConfigSource: NotRequired[str]
    mcpTransport: NotRequired[str]
    rte: NotRequired[bool]
    shellToolInfo: NotRequired[dict[str, Any]]
    toolDescription: NotRequired[dict[str, Any]]
    fusion: NotRequired[dict[str, Any]]


@with_config(OPEN)
class ToolResultContent(TypedDict):
    """The result of a tool call as the model sees it."""

    content: str
    detailedContent: NotRequired[str]
    """The tool's ``sessionLog``, when it gave one other than ``content`` (the CLI repeats
    ``content`` here; this host leaves it out rather than write a large result twice)."""
    resultType: NotRequired[ResultType]
    """This host's addition, on a call that did not succeed (the CLI sends no ``result`` then):
    the result type, with the text the model read in ``content``."""


@with_config(OPEN)
class ToolError(TypedDict):
    """Why a tool call failed."""

    message: str
    code: NotRequired[str]
    """The result type: ``failure``, ``denied``, ``rejected`` or ``timeout``."""


@with_config(CLOSED)
class ToolExecutionCompleteData(TypedDict):
    """A tool call ended, whatever its outcome (``tool.execution_complete``)."""

    toolCallId: str
    success: bool
    result: NotRequired[ToolResultContent]
    error: NotRequired[ToolError]
    toolName: NotRequired[str]
    """This host's addition: the tool's name, as in ``tool.execution_start``."""
    turnId: NotRequired[str]
    interactionId: NotRequired[str]
    parentToolCallId: NotRequired[str]
    model: NotRequired[str]
    isUserRequested: NotRequired[bool]
    sandboxed: NotRequired[bool]
    rte: NotRequired[bool]
    mcpMeta: NotRequired[Any]
    shellExecution: NotRequired[dict[str, Any]]
    toolDescription: NotRequired[dict[str, Any]]
    toolTelemetry: NotRequired[dict[str, Any]]
    fusion: NotRequired[dict[str, Any]]


@with_config(CLOSED)
class ToolExecutionProgressData(TypedDict):
    """A running tool says how far it got (``tool.execution_progress``)."""

    toolCallId: str
    progressMessage: str


@with_config(CLOSED)
class ToolExecutionPartialResultData(TypedDict):
    """Output a running tool has produced so far (``tool.execution_partial_result``)."""

    toolCallId: str
    partialOutput: str


@with_config(CLOSED)
class ToolUserRequestedData(TypedDict):
    """The user ran a tool directly, not the assistant (``tool.user_requested``)."""

    toolCallId: str
    toolName: str
    arguments: NotRequired[Any]


@with_config(CLOSED)
class ExternalToolRequestedData(TypedDict):
    """A tool call sent to the extension that offers the tool (``external_tool.requested``)."""

    requestId: str
    sessionId: str
    toolCallId: str
    toolName: str
    arguments: NotRequired[Any]
    providerId: NotRequired[str | None]
    workingDirectory: NotRequired[str]
    traceparent: NotRequired[str]
    tracestate: NotRequired[str]


@with_config(CLOSED)
class ExternalToolCompletedData(TypedDict):
    """The extension answered a tool call (``external_tool.completed``)."""

    requestId: str


# --- hooks --------------------------------------------------------------------------------------


@with_config(CLOSED)
class HookStartData(TypedDict):
    """A hook point is about to run its implementations (``hook.start``), once per run."""

    hookInvocationId: str
    hookType: str
    """The hook point's wire name (``preToolUse``)."""
    input: NotRequired[Any]
    """The hook input as sent (for ``preToolUse``: ``{sessionId, cwd, toolCalls: [{id, name, args}]}``)."""
    parentToolCallId: NotRequired[str]
    hook: NotRequired[str]
    """This host's addition: the hook point's Python name (``on_pre_tool_use``)."""


@with_config(CLOSED)
class HookProgressData(TypedDict):
    """What a running hook says it is doing (``hook.progress``)."""

    message: str
    temporary: NotRequired[bool]
    """True when it replaces the previous temporary message rather than adding to them."""


@with_config(OPEN)
class HookError(TypedDict):
    """Why a hook implementation failed."""

    message: str
    source: NotRequired[str]
    stack: NotRequired[str]


@with_config(CLOSED)
class HookCall(TypedDict):
    """This host's addition: how one implementation of a hook point did."""

    extensionId: str
    """An extension id or an in-process plugin's name."""
    outcome: Literal["ok", "error", "timeout", "invalid", "suspended"]
    decision: str | None
    """The permission, error-handling or stop decision it made, if any."""
    durationMs: float
    error: NotRequired[HookError]


@with_config(CLOSED)
class HookEndData(TypedDict):
    """A hook point's implementations ran (``hook.end``), once per run."""

    hookInvocationId: str
    hookType: str
    success: bool
    """False when an implementation failed (``error`` says which, as its ``source``)."""
    output: NotRequired[Any]
    """The combined output, per tool call id for a tool hook; a denied tool call's is the text
    the model reads."""
    error: NotRequired[HookError]
    parentToolCallId: NotRequired[str]
    hook: NotRequired[str]
    """This host's addition: the hook point's Python name (``on_pre_tool_use``)."""
    calls: NotRequired[list[HookCall]]
    """This host's addition: each implementation called, in order."""


# --- permissions --------------------------------------------------------------------------------

PERMISSION_KINDS = Literal[
    "shell",
    "write",
    "read",
    "mcp",
    "url",
    "memory",
    "custom-tool",
    "hook",
    "extension-management",
    "factory",
    "extension-permission-access",
    "extension-env-access",
]

PERMISSION_RESULT_KINDS = Literal[
    "approved",
    "approved-for-session",
    "approved-for-location",
    "cancelled",
    "denied-by-rules",
    "denied-no-approval-rule-and-could-not-request-from-user",
    "denied-interactively-by-user",
    "denied-by-content-exclusion-policy",
    "denied-by-permission-request-hook",
]


@with_config(OPEN)
class PermissionRequest(TypedDict):
    """What permission is asked for, told apart by ``kind`` (a tool call: ``custom-tool`` or
    ``hook``, with ``toolName`` and its arguments)."""

    kind: PERMISSION_KINDS
    toolCallId: NotRequired[str]
    toolName: NotRequired[str]


@with_config(OPEN)
class PermissionResult(TypedDict):
    """How a permission request ended, told apart by ``kind``; a refusal may carry the user's
    ``feedback``."""

    kind: PERMISSION_RESULT_KINDS
    feedback: NotRequired[str]
    reason: NotRequired[str]
    message: NotRequired[str]


@with_config(CLOSED)
class PermissionRequestedData(TypedDict):
    """Someone must allow or refuse something (``permission.requested``)."""

    requestId: str
    permissionRequest: PermissionRequest
    promptRequest: NotRequired[dict[str, Any]]
    resolvedByHook: NotRequired[bool]
    agentMode: NotRequired[Literal["interactive", "plan", "autopilot"]]
    riskAssessment: NotRequired[Any]


@with_config(CLOSED)
class PermissionCompletedData(TypedDict):
    """A permission request was answered (``permission.completed``)."""

    requestId: str
    result: PermissionResult
    toolCallId: NotRequired[str]
    decisionSource: NotRequired[
        Literal[
            "assisted_approval", "human_response", "host_policy", "unattended_fallback", "authorization_carry_forward"
        ]
    ]


# --- commands -----------------------------------------------------------------------------------


@with_config(CLOSED)
class CommandExecuteData(TypedDict):
    """A slash command for the extension that owns it to run (``command.execute``)."""

    requestId: str
    commandName: str
    command: str
    """The whole command line, ``/name args``."""
    args: str


@with_config(CLOSED)
class CommandQueuedData(TypedDict):
    """A command waits for the current turn (``command.queued``)."""

    requestId: str
    command: str


@with_config(CLOSED)
class CommandCompletedData(TypedDict):
    """A command finished (``command.completed``)."""

    requestId: str


@with_config(OPEN)
class CommandInfo(TypedDict):
    """One slash command on offer."""

    name: str
    description: NotRequired[str]


@with_config(CLOSED)
class CommandsChangedData(TypedDict):
    """The set of slash commands changed (``commands.changed``)."""

    commands: list[CommandInfo]


# --- extensions ---------------------------------------------------------------------------------


@with_config(CLOSED)
class LoadedExtension(TypedDict):
    """One extension as ``session.extensions_loaded`` reports it, as Copilot CLI does: this
    host's statuses in the SDK's four (``quarantined`` is ``failed``, ``detached`` is
    ``running``, ``shadowed`` and ``untrusted`` are ``disabled``); the rest of what the host
    knows is in ``changes`` and ``extensions list --json``."""

    id: str
    name: str
    source: Literal["project", "user", "plugin", "session"]
    status: Literal["running", "disabled", "failed", "starting"]


@with_config(CLOSED)
class ExtensionsLoadedData(TypedDict):
    """The extensions, after a start, reload, restart or stop (``session.extensions_loaded``)."""

    extensions: list[LoadedExtension]
    changes: NotRequired[list[dict[str, Any]]]
    """This host's addition: what changed (``started``, ``reloaded``, ``failed``, ...) and for whom."""


@with_config(CLOSED)
class ToolsUpdatedData(TypedDict):
    """The tools on offer changed (``session.tools_updated``).

    The SDK requires ``model`` (the tools are per model there); this host sends it when an agent
    names its model."""

    model: NotRequired[str]
    added: NotRequired[list[str]]
    """This host's addition: tools now offered, or offered by another extension than before."""
    removed: NotRequired[list[str]]
    """This host's addition: tools no longer offered."""
    extensionId: NotRequired[str]
    """This host's addition: the extension whose tools went, when one failed."""
