"""The slash-command registry: which command name belongs to which extension, with no silent winners.

Beside the tool registry and under the same rule: an extension's commands are registered all at
once or not at all, and a name another extension holds is refused with a
:class:`CommandCollisionError` naming the command and its holder (who wins between extensions
started together follows load order, as for tools: the instance and its supervisor decide).
:func:`declared_commands` checks the ``commands`` of a ``session.resume`` (name syntax, size of
each description, how many). Every change of the set is reported to ``on_change`` (the host
emits ``commands.changed``). :class:`CommandResult` is what running one returns.

This module stores entries and checks declarations; how a command is run is the caller's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from extension_protocol.commands import MAX_COMMAND_DESCRIPTION_CHARS, MAX_COMMANDS
from extension_protocol.protocol import COMMAND_NAME_PATTERN, CommandDefinition

from ..errors import ExtensionLoadError

__all__ = [
    "CommandChangeListener",
    "CommandCollisionError",
    "CommandEntry",
    "CommandInfo",
    "CommandInvoker",
    "CommandRegistry",
    "CommandResult",
    "CommandStatus",
    "declared_commands",
]

CommandStatus = Literal["ok", "error", "unknown", "unavailable", "timeout", "invalid"]
"""How a run ended: ``ok``; ``error`` (the handler failed, ``error`` says how); ``unknown`` (no
such command); ``unavailable`` (its extension is gone or going); ``timeout``; ``invalid`` (the
arguments were refused before anything ran, e.g. too long)."""


@dataclass(frozen=True, slots=True)
class CommandResult:
    """The outcome of one run of a slash command; never an exception."""

    command: str
    status: CommandStatus
    error: str | None = None
    owner: str | None = None
    """The extension that ran it (``None`` when nobody offers the name)."""
    request_id: str | None = None

    @property
    def ok(self) -> bool:
        """True when the command ran and its handler succeeded."""
        return self.status == "ok"

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (what ``extensions command --json`` prints)."""
        return {
            "command": self.command,
            "status": self.status,
            "ok": self.ok,
            "error": self.error,
            "owner": self.owner,
            "request_id": self.request_id,
        }


CommandInvoker = Callable[[str, "float | None"], Awaitable[CommandResult]]
"""Runs the command: ``(args, timeout) -> CommandResult`` (``timeout`` ``None``: the owner's default)."""


@dataclass(frozen=True, slots=True)
class CommandEntry:
    """One registered command."""

    name: str
    description: str
    owner: str
    invoke: CommandInvoker
    holder: object = field(default=None, compare=False, repr=False)
    """Which generation of the owner registered it (a reloaded extension has a new one)."""


@dataclass(frozen=True, slots=True)
class CommandInfo:
    """One offered slash command and the extension that provides it."""

    name: str
    description: str
    owner: str

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"name": self.name, "description": self.description, "owner": self.owner}


CommandChangeListener = Callable[[list[CommandEntry]], None]
"""Told the whole set of commands after each change."""


class CommandCollisionError(ExtensionLoadError):
    """``extension`` offers the command ``command``, which extension ``owner`` already has."""

    def __init__(self, extension: str, command: str, owner: str) -> None:
        super().__init__(
            extension,
            f"command '/{command}' is already provided by extension {owner}; rename the command in "
            f"{extension} (command names are unique across all extensions)",
        )
        self.command = command
        self.owner = owner


class CommandRegistry:
    """Command name → :class:`CommandEntry`, unique across extensions."""

    def __init__(self, on_change: CommandChangeListener | None = None) -> None:
        self._commands: dict[str, CommandEntry] = {}
        self._on_change = on_change

    def get(self, name: str) -> CommandEntry | None:
        """The entry for ``name`` (a leading ``/`` is ignored), or ``None``."""
        return self._commands.get(name.removeprefix("/"))

    def entries(self) -> list[CommandEntry]:
        """Every registered command, by name."""
        return sorted(self._commands.values(), key=lambda entry: entry.name)

    def held_by(self, holder: object) -> list[str]:
        """Names of the commands that generation ``holder`` registered."""
        return sorted(entry.name for entry in self._commands.values() if entry.holder is holder)

    def conflicts(self, owner: str, entries: Iterable[CommandEntry]) -> dict[str, str]:
        """The names among ``entries`` that another owner holds, with that owner."""
        return {
            entry.name: current.owner
            for entry in entries
            if (current := self._commands.get(entry.name)) is not None and current.owner != owner
        }

    def replace(self, owner: str, entries: Iterable[CommandEntry]) -> None:
        """Swap ``owner``'s commands for ``entries`` in one step, or change nothing.

        Raises:
            CommandCollisionError: a name is held by another owner.
        """
        batch = list(entries)
        for name, holder in self.conflicts(owner, batch).items():
            raise CommandCollisionError(owner, name, holder)
        before = {name: entry for name, entry in self._commands.items() if entry.owner == owner}
        for name in before:
            del self._commands[name]
        for entry in batch:
            self._commands[entry.name] = entry
        if before or batch:
            self._changed()

    def unregister(self, owner: str, holder: object = None) -> list[str]:
        """Remove the commands of ``owner`` (only those ``holder`` registered, when given)."""
        removed = [
            name
            for name, entry in self._commands.items()
            if entry.owner == owner and (holder is None or entry.holder is holder)
        ]
        for name in removed:
            del self._commands[name]
        if removed:
            self._changed()
        return removed

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(self.entries())


def declared_commands(declared: list[CommandDefinition]) -> list[tuple[str, str]]:
    """The ``(name, description)`` of each command a ``session.resume`` declares, checked.

    Raises:
        ValueError: a name is not a command name or is declared twice, a description is too
            long, or there are too many (the message names the command and the rule).
    """
    if len(declared) > MAX_COMMANDS:
        raise ValueError(f"{len(declared)} commands declared, over the limit of {MAX_COMMANDS}")
    seen: set[str] = set()
    checked: list[tuple[str, str]] = []
    for item in declared:
        name = item["name"]
        if not COMMAND_NAME_PATTERN.fullmatch(name):
            raise ValueError(
                f"command name {name[:80]!r} is invalid: use 1-64 letters, digits, '_', '-', '.' or ':', "
                "starting with a letter or digit, without the leading '/'"
            )
        if name in seen:
            raise ValueError(f"command {name!r} is declared twice")
        seen.add(name)
        description = item.get("description") or ""
        if len(description) > MAX_COMMAND_DESCRIPTION_CHARS:
            raise ValueError(
                f"the description of command {name!r} has {len(description)} characters, over the "
                f"limit of {MAX_COMMAND_DESCRIPTION_CHARS}"
            )
        checked.append((name, description))
    return checked
