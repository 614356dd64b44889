"""The extension host: discovers extensions, launches them, registers their tools, routes calls.

::

    from extension_host import ExtensionHost

    async with ExtensionHost(project_root) as host:
        print([e.id for e in host.extensions])
        result = await host.call_tool("add", {"a": 1, "b": 2})
"""

from __future__ import annotations

from sdk_extension.wire.results import ToolResult

from .budget import CrashBudget, ReloadBudget
from .commands import CommandInfo, CommandResult
from .errors import (
    ExtensionHostError,
    ExtensionLoadError,
    ProjectRootError,
    ScaffoldError,
    SessionError,
    SessionIdError,
    SessionLockedError,
    ToolCollisionError,
    TrustFileError,
    UnknownExtensionError,
    UnknownSessionError,
    UnknownToolError,
)
from .hooks.runner import DEFAULT_HOOK_TIMEOUT, GUARD_HOOKS, HookRecord
from .hooks.specs import hookimpl
from .host import DEFAULT_READINESS_TIMEOUT, DEFAULT_TOOL_TIMEOUT, ExtensionHost
from .info import ExtensionInfo, ExtensionStatus, ToolInfo
from .outcomes import ErrorDecision, PromptResult, SessionEndResult, SessionStartResult, ToolCallResult
from .permissions import PermissionOutcome
from .session.agents import Agent, AgentReply, AgentRequest, OfferedTool, ScriptedAgent
from .session.errors import (
    AttachmentError,
    NoAgentError,
    PromptQueueFullError,
    PromptRejectedError,
    TurnAbortedError,
    TurnCancelledError,
    TurnError,
)
from .session.model_context import ContextMessage, ModelContext, ToolCall
from .trust import TrustDecision, TrustStore

__all__ = [
    "DEFAULT_HOOK_TIMEOUT",
    "DEFAULT_READINESS_TIMEOUT",
    "DEFAULT_TOOL_TIMEOUT",
    "GUARD_HOOKS",
    "Agent",
    "AgentReply",
    "AgentRequest",
    "AttachmentError",
    "CommandInfo",
    "CommandResult",
    "ContextMessage",
    "CrashBudget",
    "ErrorDecision",
    "ExtensionHost",
    "ExtensionHostError",
    "ExtensionInfo",
    "ExtensionLoadError",
    "ExtensionStatus",
    "HookRecord",
    "ModelContext",
    "NoAgentError",
    "OfferedTool",
    "PermissionOutcome",
    "ProjectRootError",
    "PromptQueueFullError",
    "PromptRejectedError",
    "PromptResult",
    "ReloadBudget",
    "ScaffoldError",
    "ScriptedAgent",
    "SessionEndResult",
    "SessionError",
    "SessionIdError",
    "SessionLockedError",
    "SessionStartResult",
    "ToolCall",
    "ToolCallResult",
    "ToolCollisionError",
    "ToolInfo",
    "ToolResult",
    "TrustDecision",
    "TrustFileError",
    "TrustStore",
    "TurnAbortedError",
    "TurnCancelledError",
    "TurnError",
    "UnknownExtensionError",
    "UnknownSessionError",
    "UnknownToolError",
    "hookimpl",
]
