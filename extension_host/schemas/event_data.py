"""The ``data`` of every session event the host emits, as pydantic-validated ``TypedDict``s.

Names and fields follow the published Copilot SDK's generated session-event types (camelCase,
the same required and optional keys); a field the SDK marks optional is ``NotRequired`` and is
not nullable unless the SDK says ``| null``. Where this host sends more than the SDK defines
(the extension an event is about, a hook's outcome), the field is declared here and its
docstring begins with "This host's addition". Objects nested deep in the SDK's types that this
host never builds (metrics, permission prompts, GitHub attachments) are checked by their
discriminating keys and left open below them.

This module owns the shapes only; which event type uses which shape, and the envelope, are in
:mod:`extension_host.schemas.events`.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict

__all__ = [
    "CLOSED",
    "OPEN",
    "AssistantMessageData",
    "AssistantMessageDeltaData",
    "AssistantTurnData",
    "AssistantUsageData",
    "Attachment",
    "EmptyData",
    "SessionErrorData",
    "SessionIdleData",
    "SessionInfoData",
    "SessionResumeData",
    "SessionShutdownData",
    "SessionStartData",
    "SessionWarningData",
    "SystemMessageData",
    "SystemNotificationData",
    "UserMessageData",
]

CLOSED = ConfigDict(extra="forbid", strict=True, use_attribute_docstrings=True)
"""A shape whose every key is declared: an unknown key is an error (as in the SDK's schema)."""
OPEN = ConfigDict(extra="allow", strict=True, use_attribute_docstrings=True)
"""A nested SDK object this host does not build: its declared keys are checked, others pass."""


# --- the timeline -------------------------------------------------------------------------------


@with_config(CLOSED)
class SessionInfoData(TypedDict):
    """An informational timeline message with its category (``session.info``)."""

    infoType: str
    message: str
    tip: NotRequired[str]
    url: NotRequired[str]
    extensionId: NotRequired[str]
    """This host's addition: the extension the message comes from or is about."""


@with_config(CLOSED)
class SessionWarningData(TypedDict):
    """A warning for the timeline with its category (``session.warning``)."""

    warningType: str
    message: str
    remediation: NotRequired[str]
    url: NotRequired[str]
    extensionId: NotRequired[str]
    """This host's addition: the extension the warning comes from or is about."""


@with_config(CLOSED)
class SessionErrorData(TypedDict):
    """An error for the timeline with its category (``session.error``)."""

    errorType: str
    message: str
    errorCode: NotRequired[str]
    stack: NotRequired[str]
    statusCode: NotRequired[int]
    providerCallId: NotRequired[str]
    serviceRequestId: NotRequired[str]
    eligibleForAutoSwitch: NotRequired[bool]
    remediation: NotRequired[str]
    url: NotRequired[str]
    extensionId: NotRequired[str]
    """This host's addition: the extension the error comes from or is about."""


# --- lifecycle ----------------------------------------------------------------------------------


@with_config(OPEN)
class WorkingDirectoryContext(TypedDict):
    """The working directory and git context of a session."""

    cwd: str
    gitRoot: NotRequired[str]
    branch: NotRequired[str]
    headCommit: NotRequired[str]
    baseCommit: NotRequired[str]
    repository: NotRequired[str]


@with_config(CLOSED)
class SessionStartData(TypedDict):
    """A new session (``session.start``)."""

    sessionId: str
    version: int
    producer: str
    copilotVersion: str
    startTime: str
    selectedModel: NotRequired[str]
    context: NotRequired[WorkingDirectoryContext]
    alreadyInUse: NotRequired[bool]
    remoteSteerable: NotRequired[bool]
    reasoningEffort: NotRequired[str]
    reasoningSummary: NotRequired[Literal["none", "concise", "detailed"]]
    verbosity: NotRequired[Literal["low", "medium", "high"]]
    autoTier: NotRequired[str]
    contextTier: NotRequired[str | None]
    detachedFromSpawningParentSessionId: NotRequired[str]
    githubMcpToolConfig: NotRequired[dict[str, Any]]
    sessionLimits: NotRequired[dict[str, Any]]


@with_config(CLOSED)
class SessionResumeData(TypedDict):
    """A persisted session taken up again (``session.resume``)."""

    eventCount: int
    resumeTime: str
    selectedModel: NotRequired[str]
    context: NotRequired[WorkingDirectoryContext]
    alreadyInUse: NotRequired[bool]
    continuePendingWork: NotRequired[bool]
    eventsFileSizeBytes: NotRequired[int]
    sessionWasActive: NotRequired[bool]
    remoteSteerable: NotRequired[bool]
    reasoningEffort: NotRequired[str]
    reasoningSummary: NotRequired[Literal["none", "concise", "detailed"]]
    verbosity: NotRequired[Literal["low", "medium", "high"]]
    autoTier: NotRequired[str]
    contextTier: NotRequired[str | None]
    sessionLimits: NotRequired[dict[str, Any] | None]


@with_config(OPEN)
class CodeChanges(TypedDict):
    """What the session changed in files."""

    filesModified: list[str]
    linesAdded: int
    linesRemoved: int


@with_config(CLOSED)
class SessionShutdownData(TypedDict):
    """The end of a session with its totals (``session.shutdown``)."""

    shutdownType: Literal["routine", "error"]
    sessionStartTime: float
    """Unix time in milliseconds."""
    totalApiDurationMs: float
    codeChanges: CodeChanges
    modelMetrics: dict[str, dict[str, Any]]
    errorReason: NotRequired[str]
    currentModel: NotRequired[str]
    currentTokens: NotRequired[int]
    conversationTokens: NotRequired[int]
    systemTokens: NotRequired[int]
    toolDefinitionsTokens: NotRequired[int]
    eventsFileSizeBytes: NotRequired[int]
    agentMetrics: NotRequired[dict[str, dict[str, Any]]]
    tokenDetails: NotRequired[dict[str, dict[str, Any]]]
    totalNanoAiu: NotRequired[float]


@with_config(CLOSED)
class SessionIdleData(TypedDict):
    """The session has nothing in flight (``session.idle``)."""

    aborted: NotRequired[bool]
    mode: NotRequired[Literal["interactive", "plan", "autopilot"]]


@with_config(CLOSED)
class EmptyData(TypedDict):
    """No data: the event itself is the news (``pending_messages.modified``)."""


# --- messages -----------------------------------------------------------------------------------

ATTACHMENT_TYPES = Literal[
    "file",
    "directory",
    "selection",
    "github_reference",
    "github_commit",
    "github_release",
    "github_actions_job",
    "github_repository",
    "github_file_diff",
    "github_tree_comparison",
    "github_url",
    "github_file",
    "github_snippet",
    "blob",
    "extension_context",
]


@with_config(OPEN)
class Attachment(TypedDict):
    """One attachment of a user message, told apart by ``type``.

    The SDK also requires ``displayName`` for files and folders; prompts sent through
    ``session.send`` need give only ``type`` and ``path``."""

    type: ATTACHMENT_TYPES
    path: NotRequired[str]
    displayName: NotRequired[str]


@with_config(CLOSED)
class UserMessageData(TypedDict):
    """A prompt that enters the session (``user.message``)."""

    content: str
    attachments: NotRequired[list[Attachment]]
    source: NotRequired[str]
    """Who sent it; this host gives the extension's id for ``session.send``."""
    transformedContent: NotRequired[str]
    agentMode: NotRequired[Literal["interactive", "plan", "autopilot", "shell"]]
    delivery: NotRequired[Literal["idle", "steering", "queued"]]
    interactionId: NotRequired[str]
    messageId: NotRequired[str]
    turnId: NotRequired[str]
    isAutopilotContinuation: NotRequired[bool]
    parentAgentTaskId: NotRequired[str]
    nativeDocumentPathFallbackPaths: NotRequired[list[str]]
    supportedNativeDocumentMimeTypes: NotRequired[list[str]]


@with_config(OPEN)
class ToolRequest(TypedDict):
    """A tool call the assistant asks for in a message."""

    toolCallId: str
    name: str
    arguments: NotRequired[Any]


@with_config(CLOSED)
class AssistantMessageData(TypedDict):
    """What the assistant said, and the tools it asked for (``assistant.message``)."""

    messageId: str
    content: str
    toolRequests: NotRequired[list[ToolRequest]]
    turnId: NotRequired[str]
    interactionId: NotRequired[str]
    model: NotRequired[str]
    outputTokens: NotRequired[int]
    parentToolCallId: NotRequired[str]
    phase: NotRequired[str]
    reasoningText: NotRequired[str]
    reasoningOpaque: NotRequired[str]
    encryptedContent: NotRequired[str]
    requestId: NotRequired[str]
    apiCallId: NotRequired[str]
    clientRequestId: NotRequired[str]
    serviceRequestId: NotRequired[str]
    originatingMessageId: NotRequired[str]
    chunkCount: NotRequired[int]
    chunkIndex: NotRequired[int]
    rte: NotRequired[bool]
    citations: NotRequired[Any]
    fusion: NotRequired[dict[str, Any]]
    reasoningBlocks: NotRequired[Any]
    reasoningWireField: NotRequired[str]
    serverTools: NotRequired[Any]


@with_config(CLOSED)
class AssistantMessageDeltaData(TypedDict):
    """A piece of a message being streamed (``assistant.message_delta``)."""

    messageId: str
    deltaContent: str
    parentToolCallId: NotRequired[str]


@with_config(CLOSED)
class AssistantTurnData(TypedDict):
    """A turn of the assistant begins or ends (``assistant.turn_start``, ``assistant.turn_end``)."""

    turnId: str
    model: NotRequired[str]
    interactionId: NotRequired[str]


@with_config(CLOSED)
class AssistantUsageData(TypedDict):
    """What one model call used, as the agent reports it (``assistant.usage``)."""

    model: str
    inputTokens: NotRequired[int]
    outputTokens: NotRequired[int]
    cacheReadTokens: NotRequired[int]
    cacheWriteTokens: NotRequired[int]
    reasoningTokens: NotRequired[int]
    acceptedPredictionTokens: NotRequired[int]
    rejectedPredictionTokens: NotRequired[int]
    cost: NotRequired[float]
    duration: NotRequired[float]
    timeToFirstTokenMs: NotRequired[float]
    interTokenLatencyMs: NotRequired[float]
    outputTtftMs: NotRequired[float]
    maxOutputTokens: NotRequired[int]
    maxPromptTokens: NotRequired[int]
    finishReason: NotRequired[str]
    initiator: NotRequired[str]
    interactionType: NotRequired[str]
    apiCallId: NotRequired[str]
    apiEndpoint: NotRequired[str]
    providerCallId: NotRequired[str]
    serviceRequestId: NotRequired[str]
    parentToolCallId: NotRequired[str]
    reasoningEffort: NotRequired[str]
    reasoningSummary: NotRequired[Literal["none", "concise", "detailed"]]
    transport: NotRequired[str]
    cacheExpiresAt: NotRequired[str]
    contentFilterTriggered: NotRequired[bool]
    copilotUsage: NotRequired[dict[str, Any]]
    fusion: NotRequired[dict[str, Any]]
    isAuto: NotRequired[bool]
    isByok: NotRequired[bool]
    rte: NotRequired[bool]


@with_config(CLOSED)
class SystemMessageData(TypedDict):
    """Instructions in the model's context, as system or developer (``system.message``)."""

    role: Literal["system", "developer"]
    content: str
    name: NotRequired[str]
    interactionId: NotRequired[str]
    metadata: NotRequired[dict[str, Any]]


NOTIFICATION_KINDS = Literal[
    "agent_completed",
    "agent_idle",
    "new_inbox_message",
    "shell_completed",
    "shell_detached_completed",
    "instruction_discovered",
    "factory_completed",
    "unclassified",
]


@with_config(OPEN)
class NotificationKind(TypedDict):
    """What a system notification is about, told apart by ``type``."""

    type: NOTIFICATION_KINDS


@with_config(CLOSED)
class SystemNotificationData(TypedDict):
    """Context for the model that reads like the user's (``system.notification``)."""

    content: str
    kind: NotificationKind
