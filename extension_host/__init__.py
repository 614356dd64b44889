"""The extension host: discovers extensions, launches them, registers their tools, routes calls.

::

    from extension_host import ExtensionHost

    async with ExtensionHost(project_root) as host:
        print([e.id for e in host.extensions])
        result = await host.call_tool("add", {"a": 1, "b": 2})
"""

from __future__ import annotations

from extension_protocol.lazy import first_use_loader

from .version import __version__ as __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: every command imports this package

if TYPE_CHECKING:
    from extension_protocol.results import ToolResult as ToolResult

    from .calls.command_registry import CommandInfo as CommandInfo
    from .calls.command_registry import CommandResult as CommandResult
    from .calls.permissions import PermissionOutcome as PermissionOutcome
    from .errors import ExtensionHostError as ExtensionHostError
    from .errors import ExtensionLoadError as ExtensionLoadError
    from .errors import ProjectRootError as ProjectRootError
    from .errors import RuntimeFolderError as RuntimeFolderError
    from .errors import ScaffoldError as ScaffoldError
    from .errors import SessionError as SessionError
    from .errors import SessionIdError as SessionIdError
    from .errors import SessionLockedError as SessionLockedError
    from .errors import ToolCollisionError as ToolCollisionError
    from .errors import TrustFileError as TrustFileError
    from .errors import UnknownExtensionError as UnknownExtensionError
    from .errors import UnknownSessionError as UnknownSessionError
    from .errors import UnknownToolError as UnknownToolError
    from .hooks.runner import DEFAULT_HOOK_TIMEOUT as DEFAULT_HOOK_TIMEOUT
    from .hooks.runner import GUARD_HOOKS as GUARD_HOOKS
    from .hooks.runner import HookRecord as HookRecord
    from .hooks.specs import hookimpl as hookimpl
    from .host import ExtensionHost as ExtensionHost
    from .info import ExtensionInfo as ExtensionInfo
    from .info import ExtensionStatus as ExtensionStatus
    from .info import ToolInfo as ToolInfo
    from .outcomes import ErrorDecision as ErrorDecision
    from .outcomes import PromptResult as PromptResult
    from .outcomes import SessionEndResult as SessionEndResult
    from .outcomes import SessionStartResult as SessionStartResult
    from .outcomes import ToolCallResult as ToolCallResult
    from .project.trust import TrustDecision as TrustDecision
    from .project.trust import TrustStore as TrustStore
    from .runtime.budget import CrashBudget as CrashBudget
    from .runtime.budget import ReloadBudget as ReloadBudget
    from .runtime.options import DEFAULT_READINESS_TIMEOUT as DEFAULT_READINESS_TIMEOUT
    from .runtime.options import DEFAULT_TOOL_TIMEOUT as DEFAULT_TOOL_TIMEOUT
    from .runtime.options import Limits as Limits
    from .runtime.options import Timeouts as Timeouts
    from .session.agents import Agent as Agent
    from .session.agents import AgentReply as AgentReply
    from .session.agents import AgentRequest as AgentRequest
    from .session.agents import OfferedTool as OfferedTool
    from .session.agents import ScriptedAgent as ScriptedAgent
    from .session.custom_agents import CustomAgent as CustomAgent
    from .session.errors import AttachmentError as AttachmentError
    from .session.errors import NoAgentError as NoAgentError
    from .session.errors import PromptQueueFullError as PromptQueueFullError
    from .session.errors import PromptRejectedError as PromptRejectedError
    from .session.errors import TurnAbortedError as TurnAbortedError
    from .session.errors import TurnCancelledError as TurnCancelledError
    from .session.errors import TurnError as TurnError
    from .session.model_context import ContextMessage as ContextMessage
    from .session.model_context import ModelContext as ModelContext
    from .session.model_context import ToolCall as ToolCall

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


__all__ = sorted(_EXPORTS)
