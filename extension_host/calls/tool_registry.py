"""The tool registry: which tool name belongs to whom, with no silent winners.

An extension's tools are registered all at once or not at all. A name that is already taken
(by an earlier extension or a built-in tool of the host) is refused with a
:class:`~extension_host.errors.ToolCollisionError` naming the tool and its owner; the earlier
owner keeps it. The one exception is Copilot's ``overridesBuiltInTool``: an extension may
replace a *built-in* tool when it says so, and the built-in comes back when it leaves.

This module stores entries; how a tool is actually called is the caller's business.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from extension_protocol.results import ToolResult
from extension_protocol.tools import TOOL_NAME_PATTERN

from ..errors import ExtensionLoadError, ToolCollisionError

__all__ = ["BUILTIN_OWNER", "ToolEntry", "ToolInvoker", "ToolRegistry"]

BUILTIN_OWNER: Final = "builtin"
"""The owner recorded for tools the embedding application registers."""

ToolInvoker = Callable[[Any, str], Awaitable[ToolResult]]
"""Runs one call: ``(arguments, tool_call_id) -> ToolResult``."""


@dataclass(frozen=True, slots=True)
class ToolEntry:
    """One registered tool."""

    name: str
    description: str
    parameters: dict[str, Any] | None
    owner: str
    invoke: ToolInvoker
    overrides_built_in_tool: bool = False
    holder: object = field(default=None, compare=False, repr=False)
    """Which generation of the owner registered it (a reloaded extension has a new one)."""


class ToolRegistry:
    """Tool name → :class:`ToolEntry`, unique across extensions and built-ins."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolEntry] = {}
        self._overridden: dict[str, ToolEntry] = {}

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def get(self, name: str) -> ToolEntry | None:
        """The entry for ``name``, or ``None``."""
        return self._tools.get(name)

    def builtin(self, name: str) -> ToolEntry | None:
        """The host's built-in tool ``name``, whether or not an extension overrides it now."""
        current = self._tools.get(name)
        if current is not None and current.owner == BUILTIN_OWNER:
            return current
        return self._overridden.get(name)

    def entries(self) -> list[ToolEntry]:
        """All registered tools, in registration order."""
        return list(self._tools.values())

    def owned_by(self, owner: str) -> list[str]:
        """Names of the tools ``owner`` has registered."""
        return [entry.name for entry in self._tools.values() if entry.owner == owner]

    def register(self, owner: str, entries: Iterable[ToolEntry]) -> None:
        """Register every entry of ``owner``, or none of them.

        Raises:
            ToolCollisionError: a name is taken by another owner.
            ExtensionLoadError: a name is invalid or declared twice.
        """
        self.replace(owner, entries)

    def replace(self, owner: str, entries: Iterable[ToolEntry]) -> tuple[list[str], list[str]]:
        """Swap ``owner``'s tools for ``entries`` in one step, or change nothing.

        The new entries are checked against every *other* owner only, so a reloaded extension
        may keep its tool names. Returns the names added and removed.

        Raises:
            ToolCollisionError: a name is taken by another owner.
            ExtensionLoadError: a name is invalid or declared twice.
        """
        batch = list(entries)
        for name, holder in self.conflicts(owner, batch).items():
            raise ToolCollisionError(owner, name, holder)
        before = set(self.owned_by(owner))
        self.unregister(owner)
        for entry in batch:
            current = self._tools.get(entry.name)
            if current is not None:
                self._overridden[entry.name] = current
            self._tools[entry.name] = entry
        after = {entry.name for entry in batch}
        return sorted(after - before), sorted(before - after)

    def conflicts(self, owner: str, entries: Iterable[ToolEntry]) -> dict[str, str]:
        """The names among ``entries`` that another owner holds, with that owner, in the order
        of ``entries``; empty when :meth:`replace` would succeed.

        Raises:
            ExtensionLoadError: a name is invalid or declared twice (whoever holds what).
        """
        seen: set[str] = set()
        taken: dict[str, str] = {}
        for entry in entries:
            if not TOOL_NAME_PATTERN.fullmatch(entry.name):
                raise ExtensionLoadError(
                    owner,
                    f"tool name {entry.name!r} is invalid: use 1-64 letters, digits, '_' or '-'",
                )
            if entry.name in seen:
                raise ExtensionLoadError(owner, f"tool {entry.name!r} is declared twice by {owner}")
            seen.add(entry.name)
            current = self._tools.get(entry.name)
            if (
                current is not None
                and current.owner != owner
                and not (current.owner == BUILTIN_OWNER and entry.overrides_built_in_tool)
            ):
                taken[entry.name] = current.owner
        return taken

    def unregister(self, owner: str, holder: object = None) -> list[str]:
        """Remove every tool of ``owner`` (restoring built-ins it overrode); return their names.

        With ``holder``, only tools that generation registered go (a retiring instance must
        not take its successor's tools with it).
        """
        removed = [
            entry.name
            for entry in self._tools.values()
            if entry.owner == owner and (holder is None or entry.holder is holder)
        ]
        for name in removed:
            del self._tools[name]
            restored = self._overridden.pop(name, None)
            if restored is not None:
                self._tools[name] = restored
        return removed
