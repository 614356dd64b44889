"""The models of the hook points: what each hook is given and what it may answer.

Inputs and outputs are frozen dataclasses with snake_case fields; on the wire they are camelCase
with ``timestamp`` in epoch milliseconds (:mod:`extension_protocol.hook_points` converts). Allowed values are
``Literal`` types, weakest first where several implementations' answers rank. Adding a hook point
adds its two models here and its entry to the table in :mod:`extension_protocol.hook_points`. This module only
declares shapes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from .hook_invocation import HookInvocation
from .results import ToolResult

__all__ = [
    "AgentStopDecision",
    "AgentStopInput",
    "AgentStopOutput",
    "ErrorHandling",
    "ErrorOccurredInput",
    "ErrorOccurredOutput",
    "HookInput",
    "HookInvocation",
    "PermissionDecision",
    "PostToolUseFailureInput",
    "PostToolUseFailureOutput",
    "PostToolUseInput",
    "PostToolUseOutput",
    "PreToolUseInput",
    "PreToolUseOutput",
    "SessionEndInput",
    "SessionEndOutput",
    "SessionStartInput",
    "SessionStartOutput",
    "SubagentStartInput",
    "SubagentStartOutput",
    "SubagentStopInput",
    "SubagentStopOutput",
    "UserPromptSubmittedInput",
    "UserPromptSubmittedOutput",
    "UserPromptTransformedInput",
    "UserPromptTransformedOutput",
]

PermissionDecision = Literal["allow", "ask", "deny"]
"""Weakest first: the order is how decisions of several implementations rank."""
ErrorHandling = Literal["retry", "skip", "abort"]
"""Weakest first, like :data:`PermissionDecision`."""
AgentStopDecision = Literal["block"]
"""The one decision an agent-stop hook can make: keep the agent going."""


# -- inputs --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class HookInput:
    """What every hook input has: when, in which working directory, and in which session
    (``session_id`` is empty where a host does not say). In a subagent's child session,
    ``session_id`` is the child's, ``agent_id`` the same id, ``agent_type`` the custom agent's
    name and ``parent_agent_id`` the session that started it (all ``None`` elsewhere)."""

    timestamp: datetime
    cwd: str
    session_id: str = ""
    agent_id: str | None = None
    agent_type: str | None = None
    parent_agent_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UserPromptSubmittedInput(HookInput):
    """The user submitted ``prompt``."""

    prompt: str


@dataclass(frozen=True, slots=True, kw_only=True)
class UserPromptTransformedInput(HookInput):
    """The prompt (as the prompt hooks left it) became ``transformed_prompt``, the text the model
    will be sent."""

    prompt: str
    transformed_prompt: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PreToolUseInput(HookInput):
    """``tool_name`` is about to run with ``tool_args``."""

    tool_name: str
    tool_args: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class PostToolUseInput(HookInput):
    """``tool_name`` ran with ``tool_args`` and produced ``tool_result``."""

    tool_name: str
    tool_args: Any
    tool_result: ToolResult


@dataclass(frozen=True, slots=True, kw_only=True)
class PostToolUseFailureInput(HookInput):
    """``tool_name`` ran with ``tool_args`` and failed (result type ``failure``) with ``error``."""

    tool_name: str
    tool_args: Any
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionStartInput(HookInput):
    """A session starts (``source``: startup, resume or new)."""

    source: str
    initial_prompt: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionEndInput(HookInput):
    """A session ends (``reason``: complete, error, abort, timeout or user_exit)."""

    reason: str
    final_message: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorOccurredInput(HookInput):
    """An error occurred (``error_context``: model_call, tool_execution, system or user_input)."""

    error: str
    error_context: str
    recoverable: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentStopInput(HookInput):
    """The agent answered without asking for a tool (``stop_reason``: ``end_turn``);
    ``stop_hook_active`` when it answered a follow-up an agent-stop hook asked for;
    ``transcript_path`` is the session's event log, when it has one."""

    stop_reason: str | None = None
    transcript_path: str | None = None
    stop_hook_active: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentStartInput(HookInput):
    """A custom agent's child session is about to take its first turn. ``session_id`` is the
    parent's, ``agent_id`` the child's; the agent is ``agent_name`` (also ``agent_type``)."""

    agent_name: str
    agent_display_name: str | None = None
    agent_description: str | None = None
    transcript_path: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentStopInput(HookInput):
    """A custom agent's child session answered without asking for a tool: ``response`` is its
    answer, which becomes the ``task`` call's result; ``stop_hook_active`` when it answered a
    follow-up a subagent-stop hook asked for. ``session_id`` is the parent's, ``agent_id`` the
    child's."""

    agent_name: str
    response: str
    agent_display_name: str | None = None
    agent_description: str | None = None
    stop_reason: str | None = None
    transcript_path: str | None = None
    stop_hook_active: bool = False


# -- outputs -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class UserPromptSubmittedOutput:
    """What a prompt hook may say: a replacement prompt and hidden context."""

    modified_prompt: str | None = None
    additional_context: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UserPromptTransformedOutput:
    """What a prompt-transformed hook may say: the text the model gets instead."""

    modified_transformed_prompt: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PreToolUseOutput:
    """What a pre-tool hook may say: a permission decision, rewritten args, context."""

    permission_decision: PermissionDecision | None = None
    permission_decision_reason: str | None = None
    modified_args: Any = None
    additional_context: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PostToolUseOutput:
    """What a post-tool hook may say: a replacement result and context."""

    modified_result: ToolResult | None = None
    additional_context: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PostToolUseFailureOutput:
    """What a failed-tool hook may say: guidance for the model next to the failure."""

    additional_context: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionStartOutput:
    """What a session-start hook may say: initial context."""

    additional_context: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionEndOutput:
    """What a session-end hook may say: a summary and cleanup descriptions."""

    session_summary: str | None = None
    cleanup_actions: list[str] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorOccurredOutput:
    """What an error hook may say: how to handle the error and what to tell the user."""

    error_handling: ErrorHandling | None = None
    retry_count: int | None = None
    user_notification: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentStopOutput:
    """What an agent-stop hook may say: ``block`` with a ``reason``, which the agent gets as the
    next user message."""

    decision: AgentStopDecision | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentStartOutput:
    """What a subagent-start hook may say: context put before the child's prompt."""

    additional_context: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentStopOutput:
    """What a subagent-stop hook may say: ``block`` with a ``reason``, which the child gets as its
    next user message, or a ``modified_response`` for the parent to read instead."""

    decision: AgentStopDecision | None = None
    reason: str | None = None
    modified_response: str | None = None
