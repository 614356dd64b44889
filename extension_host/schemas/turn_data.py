"""The ``data`` of a turn's events: the user's and the assistant's messages, their streaming,
reasoning and usage, and an abort.

Same rules as :mod:`extension_host.schemas.session_data`: the published Copilot SDK's generated
session-event types, key for key; this host's additions declared and marked in their docstrings.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from pydantic import with_config
from typing_extensions import TypedDict

from extension_host.schemas.session_data import CLOSED, OPEN

__all__ = [
    "AbortData",
    "AssistantIdleData",
    "AssistantIntentData",
    "AssistantMessageData",
    "AssistantMessageDeltaData",
    "AssistantMessageStartData",
    "AssistantReasoningData",
    "AssistantReasoningDeltaData",
    "AssistantStreamingDeltaData",
    "AssistantToolCallDeltaData",
    "AssistantTurnData",
    "AssistantUsageData",
    "Attachment",
    "SubagentCompletedData",
    "SubagentFailedData",
    "SubagentSelectedData",
    "SubagentStartedData",
    "UserMessageData",
]


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
    parentToolCallId: NotRequired[str]
    """In a subagent's child session: the parent's tool call that started it."""


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
class AssistantMessageStartData(TypedDict):
    """A message begins streaming (``assistant.message_start``)."""

    messageId: str
    phase: NotRequired[str]


@with_config(CLOSED)
class AssistantReasoningData(TypedDict):
    """The assistant's reasoning, whole (``assistant.reasoning``)."""

    reasoningId: str
    content: str
    rte: NotRequired[bool]


@with_config(CLOSED)
class AssistantReasoningDeltaData(TypedDict):
    """A piece of reasoning being streamed (``assistant.reasoning_delta``)."""

    reasoningId: str
    deltaContent: str


@with_config(CLOSED)
class AssistantStreamingDeltaData(TypedDict):
    """How much of the model's response has arrived (``assistant.streaming_delta``)."""

    totalResponseSizeBytes: int
    """Bytes received so far, all told."""


@with_config(CLOSED)
class AssistantToolCallDeltaData(TypedDict):
    """A piece of a tool call's input being streamed (``assistant.tool_call_delta``)."""

    toolCallId: str
    inputDelta: str
    """The next piece of the input: serialized JSON arguments, or a custom tool's raw input."""
    toolName: NotRequired[str]
    toolType: NotRequired[Literal["function", "custom"]]


@with_config(CLOSED)
class AssistantIntentData(TypedDict):
    """What the assistant says it is doing now (``assistant.intent``)."""

    intent: str


@with_config(CLOSED)
class AssistantIdleData(TypedDict):
    """The assistant finished its loop (``assistant.idle``)."""

    aborted: NotRequired[bool]


@with_config(CLOSED)
class AbortData(TypedDict):
    """The current turn was stopped (``abort``)."""

    reason: Literal["user_initiated", "remote_command", "user_abort", "autopilot_credit_limit"]


# --- subagents ----------------------------------------------------------------------------------


@with_config(CLOSED)
class SubagentStartedData(TypedDict):
    """A custom agent started as a child session for a ``task`` tool call (``subagent.started``;
    the event's ``agentId`` and ``remoteSessionId`` are the child's id)."""

    toolCallId: str
    agentName: str
    agentDisplayName: str
    agentDescription: str
    remoteSessionId: str
    agentType: NotRequired[str]
    executionMode: NotRequired[Literal["sync", "background"]]
    model: NotRequired[str]


@with_config(CLOSED)
class SubagentSelectedData(TypedDict):
    """The tools the child session of a custom agent is offered (``subagent.selected``;
    ``tools`` is null when it may use every tool of the parent)."""

    agentName: str
    agentDisplayName: str
    tools: list[str] | None


@with_config(CLOSED)
class SubagentCompletedData(TypedDict):
    """A custom agent's child session ended with an answer, or was cancelled with its parent's
    turn (``cancelled``) (``subagent.completed``)."""

    toolCallId: str
    agentName: str
    agentDisplayName: str
    model: NotRequired[str]
    totalToolCalls: NotRequired[int]
    totalTokens: NotRequired[int]
    """Tokens (input and output) the child's model calls used, as its agent reported them."""
    durationMs: NotRequired[float]
    cancelled: NotRequired[bool]


@with_config(CLOSED)
class SubagentFailedData(TypedDict):
    """A custom agent's child session failed (``subagent.failed``)."""

    toolCallId: str
    agentName: str
    agentDisplayName: str
    error: str
    model: NotRequired[str]
    totalToolCalls: NotRequired[int]
    totalTokens: NotRequired[int]
    """Tokens (input and output) the child's model calls used, as its agent reported them."""
    durationMs: NotRequired[float]
