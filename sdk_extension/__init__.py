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
    from extension_protocol.commands import Command as Command
    from extension_protocol.commands import CommandContext as CommandContext
    from extension_protocol.commands import command as command
    from extension_protocol.errors import ExtensionError as ExtensionError
    from extension_protocol.errors import HookOutputError as HookOutputError
    from extension_protocol.errors import InvalidCommandError as InvalidCommandError
    from extension_protocol.errors import InvalidHookError as InvalidHookError
    from extension_protocol.errors import InvalidToolError as InvalidToolError
    from extension_protocol.errors import JoinError as JoinError
    from extension_protocol.errors import NotUnderHostError as NotUnderHostError
    from extension_protocol.errors import SessionRpcError as SessionRpcError
    from extension_protocol.errors import ToolArgumentsError as ToolArgumentsError
    from extension_protocol.hook_models import ErrorOccurredInput as ErrorOccurredInput
    from extension_protocol.hook_models import ErrorOccurredOutput as ErrorOccurredOutput
    from extension_protocol.hook_models import HookInvocation as HookInvocation
    from extension_protocol.hook_models import PostToolUseInput as PostToolUseInput
    from extension_protocol.hook_models import PostToolUseOutput as PostToolUseOutput
    from extension_protocol.hook_models import PreToolUseInput as PreToolUseInput
    from extension_protocol.hook_models import PreToolUseOutput as PreToolUseOutput
    from extension_protocol.hook_models import SessionEndInput as SessionEndInput
    from extension_protocol.hook_models import SessionEndOutput as SessionEndOutput
    from extension_protocol.hook_models import SessionStartInput as SessionStartInput
    from extension_protocol.hook_models import SessionStartOutput as SessionStartOutput
    from extension_protocol.hook_models import UserPromptSubmittedInput as UserPromptSubmittedInput
    from extension_protocol.hook_models import UserPromptSubmittedOutput as UserPromptSubmittedOutput
    from extension_protocol.protocol import HOOK_NAMES as HOOK_NAMES
    from extension_protocol.results import ToolResult as ToolResult
    from extension_protocol.tools import Tool as Tool
    from extension_protocol.tools import ToolInvocation as ToolInvocation
    from extension_protocol.tools import tool as tool

    from .canvases import Canvas as Canvas
    from .canvases import CanvasAction as CanvasAction
    from .canvases import CanvasContext as CanvasContext
    from .canvases import CanvasError as CanvasError
    from .hooks import Hook as Hook
    from .hooks import hook as hook
    from .join import join_session as join_session
    from .join import join_session_async as join_session_async
    from .session import Session as Session
    from .subagents import CustomAgent as CustomAgent

# The names load on first use: the extension that joins pays for them when it asks, and a
# process that needs one module of the package (a hook command reading the wire's limits from
# extension_protocol) pays for that module alone.
_EXPORTS = {
    "Canvas": ".canvases",
    "CanvasAction": ".canvases",
    "CanvasContext": ".canvases",
    "CanvasError": ".canvases",
    "Command": "extension_protocol.commands",
    "CommandContext": "extension_protocol.commands",
    "ErrorOccurredInput": "extension_protocol.hook_models",
    "ErrorOccurredOutput": "extension_protocol.hook_models",
    "CustomAgent": ".subagents",
    "ExtensionError": "extension_protocol.errors",
    "Hook": ".hooks",
    "HOOK_NAMES": "extension_protocol.protocol",
    "HookInvocation": "extension_protocol.hook_models",
    "HookOutputError": "extension_protocol.errors",
    "InvalidCommandError": "extension_protocol.errors",
    "InvalidHookError": "extension_protocol.errors",
    "InvalidToolError": "extension_protocol.errors",
    "JoinError": "extension_protocol.errors",
    "NotUnderHostError": "extension_protocol.errors",
    "PostToolUseInput": "extension_protocol.hook_models",
    "PostToolUseOutput": "extension_protocol.hook_models",
    "PreToolUseInput": "extension_protocol.hook_models",
    "PreToolUseOutput": "extension_protocol.hook_models",
    "Session": ".session",
    "SessionEndInput": "extension_protocol.hook_models",
    "SessionEndOutput": "extension_protocol.hook_models",
    "SessionRpcError": "extension_protocol.errors",
    "SessionStartInput": "extension_protocol.hook_models",
    "SessionStartOutput": "extension_protocol.hook_models",
    "Tool": "extension_protocol.tools",
    "ToolArgumentsError": "extension_protocol.errors",
    "ToolInvocation": "extension_protocol.tools",
    "ToolResult": "extension_protocol.results",
    "UserPromptSubmittedInput": "extension_protocol.hook_models",
    "UserPromptSubmittedOutput": "extension_protocol.hook_models",
    "command": "extension_protocol.commands",
    "hook": ".hooks",
    "join_session": ".join",
    "join_session_async": ".join",
    "tool": "extension_protocol.tools",
}


__getattr__ = first_use_loader(__name__, _EXPORTS, globals())


__all__ = sorted(_EXPORTS)
