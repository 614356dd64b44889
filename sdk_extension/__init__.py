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

from .errors import (
    ExtensionError,
    HookOutputError,
    InvalidHookError,
    InvalidToolError,
    JoinError,
    NotUnderHostError,
    ToolArgumentsError,
)
from .hooks import (
    HOOK_NAMES,
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
from .results import ToolResult
from .session import Session, join_session, join_session_async
from .tools import Tool, ToolInvocation, tool

__all__ = [
    "HOOK_NAMES",
    "ErrorOccurredInput",
    "ErrorOccurredOutput",
    "ExtensionError",
    "HookInvocation",
    "HookOutputError",
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
    "SessionStartInput",
    "SessionStartOutput",
    "Tool",
    "ToolArgumentsError",
    "ToolInvocation",
    "ToolResult",
    "UserPromptSubmittedInput",
    "UserPromptSubmittedOutput",
    "join_session",
    "join_session_async",
    "tool",
]
