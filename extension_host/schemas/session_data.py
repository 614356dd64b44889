"""The ``data`` of the session's own events (timeline, lifecycle, system messages), as
pydantic-validated ``TypedDict``s, and the rules every event shape here follows.

Names and fields follow the published Copilot SDK's generated session-event types (camelCase,
the same required and optional keys); a field the SDK marks optional is ``NotRequired`` and is
not nullable unless the SDK says ``| null``. Where this host sends more than the SDK defines
(the extension an event is about, a hook's outcome), the field is declared here and its
docstring begins with "This host's addition". Objects nested deep in the SDK's types that this
host never builds (metrics, permission prompts, GitHub attachments) are checked by their
discriminating keys and left open below them.

These modules own the shapes only (this one, :mod:`.turn_data`, :mod:`.call_data` and
:mod:`.input_data`); which event type uses which shape, and the envelope, are in
:mod:`extension_host.schemas.event_models`.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict

__all__ = [
    "CLOSED",
    "OPEN",
    "CapabilitiesChangedData",
    "CustomNotificationData",
    "EmptyData",
    "SessionErrorData",
    "SessionIdleData",
    "SessionInfoData",
    "SessionModelChangeData",
    "SessionResumeData",
    "SessionShutdownData",
    "SessionStartData",
    "SessionTitleChangedData",
    "SessionWarningData",
    "SystemMessageData",
    "SystemNotificationData",
    "UsageInfoData",
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
class SessionTitleChangedData(TypedDict):
    """The session's display title changed (``session.title_changed``)."""

    title: str


@with_config(CLOSED)
class SessionModelChangeData(TypedDict):
    """The session's model changed (``session.model_change``)."""

    newModel: str
    previousModel: NotRequired[str]
    source: NotRequired[
        Literal[
            "model_command",
            "settings_command",
            "config_command",
            "model_picker",
            "managed_settings",
            "repo_settings",
            "startup",
            "agent",
            "plan_mode",
            "automatic",
            "sdk",
        ]
    ]
    cause: NotRequired[str]
    reasoningEffort: NotRequired[str | None]
    previousReasoningEffort: NotRequired[str]
    reasoningSummary: NotRequired[Literal["none", "concise", "detailed"]]
    previousReasoningSummary: NotRequired[Literal["none", "concise", "detailed"]]
    verbosity: NotRequired[Literal["low", "medium", "high"]]
    previousVerbosity: NotRequired[Literal["low", "medium", "high"]]
    autoTier: NotRequired[str | None]
    previousAutoTier: NotRequired[str]
    contextTier: NotRequired[str | None]


@with_config(CLOSED)
class UsageInfoData(TypedDict):
    """How full the context window is, in tokens and messages (``session.usage_info``)."""

    currentTokens: int
    messagesLength: int
    tokenLimit: int
    conversationTokens: NotRequired[int]
    systemTokens: NotRequired[int]
    toolDefinitionsTokens: NotRequired[int]
    isInitial: NotRequired[bool]


@with_config(CLOSED)
class CustomNotificationData(TypedDict):
    """A notification whose payload only its source defines (``session.custom_notification``)."""

    source: str
    """Who sends it: the namespace its ``name`` is defined in."""
    name: str
    payload: Any
    subject: NotRequired[dict[str, str]]
    version: NotRequired[int]


@with_config(CLOSED)
class CapabilityFlags(TypedDict):
    """What the session's user interface can show now."""

    canvases: NotRequired[bool]
    elicitation: NotRequired[bool]
    mcpApps: NotRequired[bool]


@with_config(CLOSED)
class CapabilitiesChangedData(TypedDict):
    """What the session's user interface can do changed (``capabilities.changed``)."""

    ui: NotRequired[CapabilityFlags]


@with_config(CLOSED)
class CanvasOpenedData(TypedDict):
    """A canvas instance was opened or focused (``session.canvas.opened``): what its owner answered."""

    instanceId: str
    """The opener's handle for the instance."""
    canvasId: str
    extensionId: str
    """The extension that provides the canvas."""
    title: NotRequired[str]
    status: NotRequired[str]
    url: NotRequired[str]
    """Where the canvas is rendered (http or https)."""
    input: NotRequired[Any]
    """What it was opened with."""


@with_config(CLOSED)
class CanvasClosedData(TypedDict):
    """A canvas instance was closed, or its extension left (``session.canvas.closed``)."""

    instanceId: str
    canvasId: str
    extensionId: str


@with_config(CLOSED)
class EmptyData(TypedDict):
    """No data: the event itself is the news (``pending_messages.modified``)."""


# --- what the model is told besides the conversation --------------------------------------------


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
