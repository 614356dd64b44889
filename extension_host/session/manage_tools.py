"""The agent's tools for its own extensions: ``extensions_manage`` and ``extensions_reload``.

GitHub Copilot CLI offers its model these two tools so that the agent can write an extension
and use it in the same turn: scaffold one, edit it, reload, call its new tool. The host offers
them with the CLI's names, descriptions, parameters and result texts (read from the tool list
the CLI 1.0.102 sends its model), adapted where the host differs:

- ``scaffold`` writes ``extension.py`` from the host's templates (``kind``: ``basic`` or
  ``tool-only``), or the CLI's ``extension.mjs`` skeleton with ``language: "javascript"`` (a
  parameter the CLI does not have); ``location`` is ``project`` or ``user`` (the host has no
  session-scoped extensions, nor canvases);
- ``guide`` points at the host's templates and SDK rather than the CLI's documents.

``scaffold`` and ``extensions_reload`` ask an ``extension-management`` permission, as the CLI
does (``{kind, operation, extensionName?}``), through the host's permission broker: denied at
once when nobody can answer. In a project that is not trusted, ``scaffold`` of a project
extension refuses, saying how to trust it; a reload there lists the project's extensions as
``untrusted`` with that same advice. Both tools run through the dispatcher like any tool
(hooks apply). A reload swaps every extension, so its call steps out of the dispatcher's count of
running calls meanwhile (it would otherwise wait for itself); the tools the new extensions
offer are on the agent's very next request. This module decides and writes files; the texts
are :mod:`extension_host.session.manage_text`'s.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from extension_protocol.results import ToolResult
from extension_protocol.tools import Tool, ToolInvocation

from ..calls.permissions import PermissionBroker
from ..errors import ScaffoldError, UnknownExtensionError
from ..info import ExtensionInfo
from ..project.discovery import ENTRY_FILES, check_name
from ..project.environment import sdk_folder
from ..project.paths import PROJECT_EXTENSIONS_DIR, extensions_dir
from ..project.scaffold import DEFAULT_TEMPLATE, available_templates, scaffold, template_entry, templates_dir
from ..project.trust import TrustDecision
from . import manage_text as text

__all__ = ["LANGUAGES", "LOCATIONS", "MANAGE_TOOL", "OPERATIONS", "RELOAD_TOOL", "ManageSources", "extension_tools"]

MANAGE_TOOL: Final = "extensions_manage"
RELOAD_TOOL: Final = "extensions_reload"
OPERATIONS: Final = ("list", "inspect", "scaffold", "guide")
LOCATIONS: Final = ("project", "user")
LANGUAGES: Final = {"python": None, "javascript": "mjs"}
"""Scaffold languages and the template each uses (``None``: the ``kind`` names it)."""
PERMISSION_KIND: Final = "extension-management"
_CLI_NAME: Final = re.compile(r"\A[A-Za-z0-9_-]+\Z")
"""The CLI's rule for a scaffolded name (the host's own rule also allows '.')."""
_NO_ANSWER: Final = (
    "Permission denied because no interactive user response was available. Retry in an interactive "
    "session so the user can approve it, or try an alternative that does not require this permission."
)

_MANAGE_DESCRIPTION: Final = (
    'Manage the extension ecosystem. Use "list" to see all loaded extensions (each entry '
    "includes a log file path, once the extension has been launched at least once, that is useful for "
    'diagnosing "failed" extensions), "inspect" to get details about a specific extension \u2014 including '
    "its log file path and a tail of the log, which is the primary way to debug a failed or misbehaving "
    'extension \u2014 "scaffold" to generate a skeleton extension file (Python by default; use language: '
    '"javascript" for a Copilot SDK extension.mjs), or "guide" for an authoring guide with examples. '
    "Extensions can live in the project (.github/extensions/) or in the user's personal extensions "
    'directory. Always call with operation "guide" first before writing any extension code.'
)
_RELOAD_DESCRIPTION: Final = (
    "Reload all extensions from disk. Call this after creating or modifying extension files in "
    ".github/extensions/ or the user extensions directory. New tools are available immediately after reload."
)


def _manage_parameters() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "operation": {
                "type": "string",
                "enum": list(OPERATIONS),
                "description": 'The operation to perform. "list" shows all running extensions, "inspect" shows '
                "details for a specific extension (including a tail of its log file \u2014 use this to debug a "
                'failed or misbehaving extension), "scaffold" generates a skeleton extension file, "guide" '
                "returns an authoring guide with examples.",
            },
            "name": {"type": "string", "description": "Extension name. Required for inspect and scaffold operations."},
            "description": {
                "type": "string",
                "description": "Extension description. Used by scaffold to add a comment.",
            },
            "location": {
                "type": "string",
                "enum": list(LOCATIONS),
                "description": 'Where to scaffold the extension. "project" (default) creates it in '
                '.github/extensions/, "user" creates it in the user\'s personal extensions directory.',
            },
            "kind": {
                "type": "string",
                "enum": available_templates(),
                "description": f'What kind of Python extension to scaffold. "{DEFAULT_TEMPLATE}" (default) generates '
                'an extension that contributes a tool and a hook; "tool-only" one that contributes a tool.',
            },
            "language": {
                "type": "string",
                "enum": list(LANGUAGES),
                "description": 'The language of the scaffolded extension. "python" (default) writes extension.py; '
                '"javascript" writes a Copilot SDK extension.mjs (run with Node.js).',
            },
        },
        "required": ["operation"],
    }


@dataclass(frozen=True, slots=True)
class ManageSources:
    """What the tools read and do, from the host: its folders, its extensions (``find`` raises
    :class:`UnknownExtensionError`), its trust decision, its reload of all, its permission broker,
    and ``released()``, the block in which a call is not counted as running."""

    project_root: Path
    user_home: Path
    extensions: Callable[[], Sequence[ExtensionInfo]]
    find: Callable[[str], ExtensionInfo]
    trust: Callable[[], TrustDecision]
    reload: Callable[[], Awaitable[object]]
    permissions: PermissionBroker
    released: Callable[[], AbstractContextManager[None]]


def extension_tools(sources: ManageSources) -> list[Tool]:
    """``extensions_manage`` and ``extensions_reload`` over ``sources``."""
    tools = _Tools(sources)
    return [
        Tool(MANAGE_TOOL, _MANAGE_DESCRIPTION, tools.manage, _manage_parameters()),
        Tool(RELOAD_TOOL, _RELOAD_DESCRIPTION, tools.reload, {"type": "object", "properties": {}}),
    ]


def _failure(message: str) -> ToolResult:
    return ToolResult(message, "failure", error=message)


class _Tools:
    def __init__(self, sources: ManageSources) -> None:
        self._sources = sources

    async def manage(self, arguments: Any, invocation: ToolInvocation) -> ToolResult | str:
        args = arguments if isinstance(arguments, dict) else {}
        operation = args.get("operation")
        if operation == "list":
            return text.extension_list(self._sources.extensions())
        if operation == "guide":
            return self._guide()
        if operation not in ("inspect", "scaffold"):
            shown = operation if isinstance(operation, str) else ""
            return _failure(f'Unknown operation "{shown}". Use {text.choices(OPERATIONS)}.')
        name = args.get("name")
        if not isinstance(name, str) or not name:
            return _failure(f'The "{operation}" operation requires a "name" parameter.')
        if operation == "inspect":
            try:
                return text.inspect_text(self._sources.find(name))
            except UnknownExtensionError:
                known = ", ".join(info.id for info in self._sources.extensions()) or "none"
                return _failure(f'Extension "{name}" not found. Available extensions: {known}')
        return await self._scaffold(name, args, invocation)

    async def reload(self, arguments: Any, invocation: ToolInvocation) -> ToolResult | str:
        refused = await self._ask({"operation": "reload"}, invocation)
        if refused is not None:
            return refused
        with self._sources.released():
            await self._sources.reload()
        return text.reload_text(self._sources.extensions())

    async def _scaffold(self, name: str, args: dict[str, Any], invocation: ToolInvocation) -> ToolResult | str:
        if not _CLI_NAME.fullmatch(name):
            return _failure(f'Invalid extension name "{name}". Use only alphanumerics, hyphens, and underscores.')
        problem = check_name(name)
        if problem is not None:
            return _failure(f'Invalid extension name "{name}": {problem}.')
        location = args.get("location") or "project"
        if location not in LOCATIONS:
            return _failure(f'Invalid location "{location}". Use {text.choices(LOCATIONS)}.')
        language = args.get("language") or "python"
        if language not in LANGUAGES:
            return _failure(f'Invalid language "{language}". Use {text.choices(list(LANGUAGES))}.')
        kind = args.get("kind") or DEFAULT_TEMPLATE
        if kind not in available_templates():
            return _failure(f'Invalid kind "{kind}". Use {text.choices(available_templates())}.')
        if location == "project":
            untrusted = self._untrusted()
            if untrusted is not None:
                return _failure(untrusted)
        root = (
            self._sources.project_root / PROJECT_EXTENSIONS_DIR
            if location == "project"
            else extensions_dir(self._sources.user_home)
        )
        refused = await self._ask({"operation": "scaffold", "extensionName": name}, invocation)
        if refused is not None:
            return refused
        folder = root / name
        if folder.exists():
            existing = next((folder / entry for entry in ENTRY_FILES if (folder / entry).is_file()), folder)
            return _failure(
                f'Extension "{name}" already exists at {existing}. Edit the existing file or choose a different name.'
            )
        template = LANGUAGES[language] or kind
        description = args.get("description")
        try:
            created = scaffold(name, root, template, description if isinstance(description, str) else None)
        except ScaffoldError as exc:
            return _failure(str(exc))
        return text.scaffolded(created / template_entry(template))

    def _untrusted(self) -> str | None:
        decision = self._sources.trust()
        if decision.trusted:
            return None
        root = self._sources.project_root
        why = (
            f"the trust record cannot be read ({decision.problem})"
            if decision.problem
            else "this project is not trusted, so its extensions do not run"
        )
        return (
            f"Cannot scaffold a project extension: {why}. Ask the user to review {root / PROJECT_EXTENSIONS_DIR} "
            f"and run 'extensions trust' in {root}, or scaffold it with location \"user\"."
        )

    async def _ask(self, request: dict[str, Any], invocation: ToolInvocation) -> ToolResult | None:
        """``None`` when the ``extension-management`` permission is granted, else the refusal."""
        outcome = await self._sources.permissions.request(
            {"kind": PERMISSION_KIND, **request}, tool_call_id=invocation.tool_call_id
        )
        if outcome.approved:
            return None
        if outcome.decided_by == "host":
            message = _NO_ANSWER
        else:
            message = "The user rejected this tool call." + (
                f" User feedback: {outcome.feedback}" if outcome.feedback else ""
            )
        return ToolResult(message, "denied", error=message)

    def _guide(self) -> str:
        templates = templates_dir()
        documents = [
            (templates / "README.md", "Templates, and how tool names get the extension's prefix"),
            (templates / DEFAULT_TEMPLATE / "extension.py", "A complete Python extension: a tool and a hook"),
            (templates / "tool-only" / "extension.py", "The smallest Python extension: one tool"),
            (templates / "mjs" / "extension.mjs", "A Copilot SDK extension (extension.mjs), run with Node.js"),
        ]
        return text.guide(
            [(path, what) for path, what in documents if path.is_file()],
            self._sources.project_root / PROJECT_EXTENSIONS_DIR,
            extensions_dir(self._sources.user_home),
            sdk_folder(),
        )
