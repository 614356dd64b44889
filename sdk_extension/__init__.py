"""What extension authors import: join the host's session, offer tools, intercept with hooks.

::

    from sdk_extension import hook, join_session, tool

    @tool(description="Add two integers")
    def add(a: int, b: int) -> str:
        return str(a + b)

    @hook("pre_tool_use", tools=["bash"])
    def guard(input, invocation):
        ...

    session = join_session(tools=[add], hooks=[guard])
    session.log("ready")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from extension_protocol.lazy import first_use_loader

if TYPE_CHECKING:
    from extension_protocol.commands import Command, CommandContext, command
    from extension_protocol.errors import (
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
    from extension_protocol.hook_points import (
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
    from extension_protocol.protocol import HOOK_NAMES
    from extension_protocol.results import ToolResult
    from extension_protocol.tools import Tool, ToolInvocation, tool

    from .hooks import Hook, hook
    from .join import join_session, join_session_async
    from .session import Session
    from .subagents import CustomAgent

# The names load on first use: the extension that joins pays for them when it asks, and a
# process that needs one module of the package (a hook command reading the wire's limits from
# extension_protocol) pays for that module alone.
_EXPORTS = {
    "Command": "extension_protocol.commands",
    "CommandContext": "extension_protocol.commands",
    "ErrorOccurredInput": "extension_protocol.hook_points",
    "ErrorOccurredOutput": "extension_protocol.hook_points",
    "CustomAgent": ".subagents",
    "ExtensionError": "extension_protocol.errors",
    "Hook": ".hooks",
    "HOOK_NAMES": "extension_protocol.protocol",
    "HookInvocation": "extension_protocol.hook_points",
    "HookOutputError": "extension_protocol.errors",
    "InvalidCommandError": "extension_protocol.errors",
    "InvalidHookError": "extension_protocol.errors",
    "InvalidToolError": "extension_protocol.errors",
    "JoinError": "extension_protocol.errors",
    "NotUnderHostError": "extension_protocol.errors",
    "PostToolUseInput": "extension_protocol.hook_points",
    "PostToolUseOutput": "extension_protocol.hook_points",
    "PreToolUseInput": "extension_protocol.hook_points",
    "PreToolUseOutput": "extension_protocol.hook_points",
    "Session": ".session",
    "SessionEndInput": "extension_protocol.hook_points",
    "SessionEndOutput": "extension_protocol.hook_points",
    "SessionRpcError": "extension_protocol.errors",
    "SessionStartInput": "extension_protocol.hook_points",
    "SessionStartOutput": "extension_protocol.hook_points",
    "Tool": "extension_protocol.tools",
    "ToolArgumentsError": "extension_protocol.errors",
    "ToolInvocation": "extension_protocol.tools",
    "ToolResult": "extension_protocol.results",
    "UserPromptSubmittedInput": "extension_protocol.hook_points",
    "UserPromptSubmittedOutput": "extension_protocol.hook_points",
    "command": "extension_protocol.commands",
    "hook": ".hooks",
    "join_session": ".join",
    "join_session_async": ".join",
    "tool": "extension_protocol.tools",
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
    "Hook",
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
    "hook",
    "join_session",
    "join_session_async",
    "tool",
]
