"""The extension host: discovers extensions, launches them, registers their tools, routes calls.

::

    from extension_host import ExtensionHost

    async with ExtensionHost(project_root) as host:
        print([e.id for e in host.extensions])
        result = await host.call_tool("add", {"a": 1, "b": 2})
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from extension_protocol.lazy import first_use_loader

if TYPE_CHECKING:
    from extension_protocol.results import ToolResult

    from .calls.command_registry import CommandInfo, CommandResult
    from .calls.permissions import PermissionOutcome
    from .errors import (
        ExtensionHostError,
        ExtensionLoadError,
        ProjectRootError,
        RuntimeFolderError,
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
    from .host import ExtensionHost
    from .info import ExtensionInfo, ExtensionStatus, ToolInfo
    from .outcomes import ErrorDecision, PromptResult, SessionEndResult, SessionStartResult, ToolCallResult
    from .project.trust import TrustDecision, TrustStore
    from .runtime.budget import CrashBudget, ReloadBudget
    from .runtime.options import DEFAULT_READINESS_TIMEOUT, DEFAULT_TOOL_TIMEOUT, Limits, Timeouts
    from .session.agents import Agent, AgentReply, AgentRequest, OfferedTool, ScriptedAgent
    from .session.custom_agents import CustomAgent
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

# The names load on first use: a process that needs one module of the package (a hook command
# that only talks to a running host) does not pay for importing the whole host.
_EXPORTS = {
    "Agent": ".session.agents",
    "AgentReply": ".session.agents",
    "AgentRequest": ".session.agents",
    "AttachmentError": ".session.errors",
    "CommandInfo": ".calls.command_registry",
    "CommandResult": ".calls.command_registry",
    "ContextMessage": ".session.model_context",
    "CrashBudget": ".runtime.budget",
    "DEFAULT_HOOK_TIMEOUT": ".hooks.runner",
    "DEFAULT_READINESS_TIMEOUT": ".runtime.options",
    "DEFAULT_TOOL_TIMEOUT": ".runtime.options",
    "Limits": ".runtime.options",
    "Timeouts": ".runtime.options",
    "ErrorDecision": ".outcomes",
    "ExtensionHost": ".host",
    "ExtensionHostError": ".errors",
    "ExtensionInfo": ".info",
    "ExtensionLoadError": ".errors",
    "ExtensionStatus": ".info",
    "GUARD_HOOKS": ".hooks.runner",
    "HookRecord": ".hooks.runner",
    "ModelContext": ".session.model_context",
    "NoAgentError": ".session.errors",
    "OfferedTool": ".session.agents",
    "PermissionOutcome": ".calls.permissions",
    "ProjectRootError": ".errors",
    "PromptQueueFullError": ".session.errors",
    "PromptRejectedError": ".session.errors",
    "PromptResult": ".outcomes",
    "ReloadBudget": ".runtime.budget",
    "RuntimeFolderError": ".errors",
    "ScaffoldError": ".errors",
    "ScriptedAgent": ".session.agents",
    "CustomAgent": ".session.custom_agents",
    "SessionEndResult": ".outcomes",
    "SessionError": ".errors",
    "SessionIdError": ".errors",
    "SessionLockedError": ".errors",
    "SessionStartResult": ".outcomes",
    "ToolCall": ".session.model_context",
    "ToolCallResult": ".outcomes",
    "ToolCollisionError": ".errors",
    "ToolInfo": ".info",
    "ToolResult": "extension_protocol.results",
    "TrustDecision": ".project.trust",
    "TrustFileError": ".errors",
    "TrustStore": ".project.trust",
    "TurnAbortedError": ".session.errors",
    "TurnCancelledError": ".session.errors",
    "TurnError": ".session.errors",
    "UnknownExtensionError": ".errors",
    "UnknownSessionError": ".errors",
    "UnknownToolError": ".errors",
    "hookimpl": ".hooks.specs",
}


__getattr__ = first_use_loader(__name__, _EXPORTS, globals())


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
    "CustomAgent",
    "ErrorDecision",
    "ExtensionHost",
    "ExtensionHostError",
    "ExtensionInfo",
    "ExtensionLoadError",
    "ExtensionStatus",
    "HookRecord",
    "Limits",
    "ModelContext",
    "NoAgentError",
    "OfferedTool",
    "PermissionOutcome",
    "ProjectRootError",
    "PromptQueueFullError",
    "PromptRejectedError",
    "PromptResult",
    "ReloadBudget",
    "RuntimeFolderError",
    "ScaffoldError",
    "ScriptedAgent",
    "SessionEndResult",
    "SessionError",
    "SessionIdError",
    "SessionLockedError",
    "SessionStartResult",
    "Timeouts",
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
