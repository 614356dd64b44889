"""Slash commands an extension offers: the :class:`Command` value, the :func:`command` decorator,
and running one.

A command is a name (run as ``/name args``), a description, and a handler that takes a
:class:`CommandContext` (the raw argument string, the whole command line, the session id). The
handler may be sync or async; what it returns is ignored, and an exception is the command's
error, which the host reports to whoever ran it. This module does not know how runs arrive or
where their outcome goes (:mod:`sdk_extension.session` does).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, overload

from extension_protocol.workers import run_in_worker

from .errors import InvalidCommandError
from .protocol import COMMAND_NAME_PATTERN, CommandDefinition

__all__ = [
    "MAX_COMMANDS",
    "MAX_COMMAND_ARGS_CHARS",
    "MAX_COMMAND_DESCRIPTION_CHARS",
    "MAX_COMMAND_ERROR_CHARS",
    "Command",
    "CommandContext",
    "command",
    "run_command",
]

MAX_COMMANDS: Final = 128
"""Slash commands one extension may declare."""
MAX_COMMAND_DESCRIPTION_CHARS: Final = 1024
"""Characters of a command's description (it is shown in a menu, not read by the model)."""
MAX_COMMAND_ARGS_CHARS: Final = 64 * 1024
"""Characters of the argument string of one run."""
MAX_COMMAND_ERROR_CHARS: Final = 8 * 1024
"""Characters of the error an extension may answer a run with."""


@dataclass(frozen=True, slots=True)
class CommandContext:
    """One run of a command, as its handler gets it (the JS SDK's ``CommandContext``)."""

    session_id: str
    command_name: str
    """The name, without the leading ``/``."""
    command: str
    """The whole command line, ``/name args``."""
    args: str
    """The raw argument string after the name (``""`` for none)."""


@dataclass(frozen=True)
class Command:
    """A slash command: ``handler(context)`` may be sync or async; raising is the run's error.

    Raises:
        InvalidCommandError: the name is not 1-64 letters, digits, ``_``, ``-``, ``.`` or ``:``
            starting with a letter or digit, the description is too long, or the handler is not callable.
    """

    name: str
    description: str
    handler: Callable[[CommandContext], Any]
    _is_async: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not COMMAND_NAME_PATTERN.fullmatch(self.name):
            raise InvalidCommandError(
                str(self.name),
                "a command name is 1-64 letters, digits, '_', '-', '.' or ':', starting with a letter "
                "or digit, without the leading '/'",
            )
        if not isinstance(self.description, str):
            raise InvalidCommandError(self.name, "the description must be a string")
        if len(self.description) > MAX_COMMAND_DESCRIPTION_CHARS:
            raise InvalidCommandError(
                self.name,
                f"the description has {len(self.description)} characters, over the limit of "
                f"{MAX_COMMAND_DESCRIPTION_CHARS}; shorten it",
            )
        if not callable(self.handler):
            raise InvalidCommandError(self.name, "handler is not callable")
        function = self.handler
        is_async = inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(type(function).__call__)
        object.__setattr__(self, "_is_async", is_async)

    def to_wire(self) -> CommandDefinition:
        """The declaration sent in ``session.resume``."""
        return {"name": self.name, "description": self.description}


@overload
def command(function: Callable[[CommandContext], Any], /) -> Command: ...
@overload
def command(
    *, name: str | None = None, description: str | None = None
) -> Callable[[Callable[[CommandContext], Any]], Command]: ...


def command(
    function: Callable[[CommandContext], Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
) -> Command | Callable[[Callable[[CommandContext], Any]], Command]:
    """Make a :class:`Command` from a function taking a :class:`CommandContext`; usable bare
    (``@command``) or with options. The name defaults to the function's name with ``_`` as
    ``-`` (``run_tests`` → ``/run-tests``), the description to its docstring's first line.

    Raises:
        InvalidCommandError: see :class:`Command`.
    """

    def build(fn: Callable[[CommandContext], Any]) -> Command:
        command_name = name if name is not None else str(getattr(fn, "__name__", "")).replace("_", "-")
        doc = inspect.getdoc(fn) or ""
        text = description if description is not None else (doc.strip().splitlines() or [""])[0]
        return Command(command_name, text, fn)

    return build(function) if function is not None else build


async def run_command(selected: Command, context: CommandContext) -> str | None:
    """Run a command's handler; return ``None`` when it succeeded, else its error (one line,
    bounded by :data:`MAX_COMMAND_ERROR_CHARS`). A sync handler runs on a worker thread."""
    try:
        if selected._is_async:
            await selected.handler(context)
        else:
            await run_in_worker(selected.handler, context)
        return None
    except Exception as exc:
        message = str(exc) or type(exc).__name__
        if len(message) > MAX_COMMAND_ERROR_CHARS:
            message = message[: MAX_COMMAND_ERROR_CHARS - 1] + "…"
        return message
