"""What extension authors import: join the host's session, offer tools, intercept with hooks.

::

    from sdk_extension import join_session, tool

    @tool(description="Add two integers")
    def add(a: int, b: int) -> str:
        return str(a + b)

    session = join_session(tools=[add])
    session.log("ready")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import first_use_loader

if TYPE_CHECKING:
    from .commands import Command, CommandContext, command
    from .errors import (
        ExtensionError,
        HookOutputError,
        InvalidCommandError,
        InvalidHookError,
        InvalidToolError,
        JoinError,
        NotUnderHostError,
        SessionRpcError,
        ToolArgumentsError,
    )
    from .hooks import (
        ErrorOccurredInput,
        ErrorOccurredOutput,
        HookInvocation,
        PostToolUseInput,
        PostToolUseOutput,
        PreToolUseInput,
        PreToolUseOutput,
        SessionEndInput,
        SessionEndOutput,
        SessionStartInput,
        SessionStartOutput,
        UserPromptSubmittedInput,
        UserPromptSubmittedOutput,
    )
    from .join import join_session, join_session_async
    from .session import Session
    from .subagents import CustomAgent
    from .tools import Tool, ToolInvocation, tool
    from .wire.protocol import HOOK_NAMES
    from .wire.results import ToolResult

# The names load on first use: the extension that joins pays for them when it asks, and a
# process that needs one module of the package (a hook command reading the wire's limits from
# sdk_extension.wire) pays for that module alone.
_EXPORTS = {
    "Command": ".commands",
    "CommandContext": ".commands",
    "ErrorOccurredInput": ".hooks",
    "ErrorOccurredOutput": ".hooks",
    "CustomAgent": ".subagents",
    "ExtensionError": ".errors",
    "HOOK_NAMES": ".wire.protocol",
    "HookInvocation": ".hooks",
    "HookOutputError": ".errors",
    "InvalidCommandError": ".errors",
    "InvalidHookError": ".errors",
    "InvalidToolError": ".errors",
    "JoinError": ".errors",
    "NotUnderHostError": ".errors",
    "PostToolUseInput": ".hooks",
    "PostToolUseOutput": ".hooks",
    "PreToolUseInput": ".hooks",
    "PreToolUseOutput": ".hooks",
    "Session": ".session",
    "SessionEndInput": ".hooks",
    "SessionEndOutput": ".hooks",
    "SessionRpcError": ".errors",
    "SessionStartInput": ".hooks",
    "SessionStartOutput": ".hooks",
    "Tool": ".tools",
    "ToolArgumentsError": ".errors",
    "ToolInvocation": ".tools",
    "ToolResult": ".wire.results",
    "UserPromptSubmittedInput": ".hooks",
    "UserPromptSubmittedOutput": ".hooks",
    "command": ".commands",
    "join_session": ".join",
    "join_session_async": ".join",
    "tool": ".tools",
}


__getattr__ = first_use_loader(__name__, _EXPORTS, globals())


__all__ = [
    "HOOK_NAMES",
    "Command",
    "CommandContext",
    "CustomAgent",
    "ErrorOccurredInput",
    "ErrorOccurredOutput",
    "ExtensionError",
    "HookInvocation",
    "HookOutputError",
    "InvalidCommandError",
    "InvalidHookError",
    "InvalidToolError",
    "JoinError",
    "NotUnderHostError",
    "PostToolUseInput",
    "PostToolUseOutput",
    "PreToolUseInput",
    "PreToolUseOutput",
    "Session",
    "SessionEndInput",
    "SessionEndOutput",
    "SessionRpcError",
    "SessionStartInput",
    "SessionStartOutput",
    "Tool",
    "ToolArgumentsError",
    "ToolInvocation",
    "ToolResult",
    "UserPromptSubmittedInput",
    "UserPromptSubmittedOutput",
    "command",
    "join_session",
    "join_session_async",
    "tool",
]
