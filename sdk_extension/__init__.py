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
from .join import join_session, join_session_async
from .session import Session
from .tools import Tool, ToolInvocation, tool
from .wire.protocol import HOOK_NAMES
from .wire.results import ToolResult

if TYPE_CHECKING:
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

_HOOK_TYPES = frozenset(
    {
        "ErrorOccurredInput",
        "ErrorOccurredOutput",
        "HookInvocation",
        "PostToolUseInput",
        "PostToolUseOutput",
        "PreToolUseInput",
        "PreToolUseOutput",
        "SessionEndInput",
        "SessionEndOutput",
        "SessionStartInput",
        "SessionStartOutput",
        "UserPromptSubmittedInput",
        "UserPromptSubmittedOutput",
    }
)


def __getattr__(name: str) -> object:
    # The hook input and output classes load on first use; most extensions start without them.
    if name in _HOOK_TYPES:
        from . import hooks

        return getattr(hooks, name)
    raise AttributeError(f"module 'sdk_extension' has no attribute {name!r}")


__all__ = [
    "HOOK_NAMES",
    "Command",
    "CommandContext",
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
