"""Errors an extension author can meet, as one small tree.

::

    ExtensionError                  anything this SDK raises on purpose
    ├── NotUnderHostError           join_session() called in a process the host did not start
    ├── JoinError                   the host refused the join, or it did not complete in time
    ├── SessionRpcError             the host refused or failed a session.rpc call (.method, .code)
    ├── InvalidToolError            a tool definition is unusable (.tool)
    ├── InvalidHookError            an unknown hook name or a non-callable handler (.hook)
    ├── InvalidCommandError         a slash command definition is unusable (.command)
    ├── ToolArgumentsError          a call's arguments do not fit the tool (.tool, .field)
    └── HookOutputError             a hook returned something the protocol cannot carry (.hook, .key)

``ToolArgumentsError`` and ``HookOutputError`` never reach the author's code: the SDK turns
them into a ``failure`` tool result or a hook error the host reports.
"""

from __future__ import annotations

__all__ = [
    "ExtensionError",
    "HookOutputError",
    "InvalidCommandError",
    "InvalidHookError",
    "InvalidToolError",
    "JoinError",
    "NotUnderHostError",
    "SessionRpcError",
    "ToolArgumentsError",
]


class ExtensionError(Exception):
    """Root of every error the SDK raises on purpose."""


class NotUnderHostError(ExtensionError):
    """``join_session`` was called in a process that an extension host did not start."""


class JoinError(ExtensionError):
    """The host refused the join (e.g. a tool name is taken) or did not answer in time.

    ``code`` is the JSON-RPC error code of the refusal, or ``None`` for a timeout or a lost
    connection.
    """

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code


class SessionRpcError(ExtensionError):
    """A session-scoped method (``session.rpc``) was refused or failed; ``code`` is the JSON-RPC
    error code (``-32002``, not supported; ``-32601``, unknown method), ``data`` its data."""

    def __init__(self, method: str, message: str, code: int, data: object = None) -> None:
        super().__init__(message if method in message else f"{method}: {message}")
        self.method = method
        self.code = code
        self.data = data


class InvalidToolError(ExtensionError):
    """A tool definition cannot be offered; ``tool`` names it."""

    def __init__(self, tool: str, message: str) -> None:
        super().__init__(f"tool {tool!r}: {message}")
        self.tool = tool


class InvalidHookError(ExtensionError):
    """A hook mapping names an unknown hook point or maps to something not callable."""

    def __init__(self, hook: str, message: str) -> None:
        super().__init__(message)
        self.hook = hook


class InvalidCommandError(ExtensionError):
    """A slash command definition cannot be offered; ``command`` names it."""

    def __init__(self, command: str, message: str) -> None:
        super().__init__(f"command {command!r}: {message}")
        self.command = command


class ToolArgumentsError(ExtensionError):
    """A call's arguments do not match the tool's parameters; ``field`` names the first bad one."""

    def __init__(self, tool: str, field: str | None, message: str) -> None:
        where = f"argument {field!r}" if field else "arguments"
        super().__init__(f"invalid {where} for tool {tool!r}: {message}")
        self.tool = tool
        self.field = field


class HookOutputError(ExtensionError):
    """A hook's return value has an unknown key or a value of the wrong type."""

    def __init__(self, hook: str, key: str | None, message: str) -> None:
        super().__init__(f"hook {hook}: {message}")
        self.hook = hook
        self.key = key
