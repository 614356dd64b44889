"""The client protocol's ``completions``: ``/`` for slash commands, ``@`` for project files.

:func:`complete` looks at the word the cursor ends (``offset``, in UTF-16 code units as the
protocol counts): a word that starts the message with ``/`` completes the extensions' slash
commands (by name; the description rides in the attachment's ``_meta``); a word starting with
``@`` completes the paths of the project's files under ``root``. Each item is the protocol's
``CompletionItem``: ``insertText`` replaces ``[rangeStart, rangeEnd)`` (the word), and its
``attachment`` is a ``resource`` (``file:`` URI, ``displayKind`` ``document``) for a file, a
``simple`` one (``displayKind`` ``command``) for a command.

Files come from git (``git ls-files``: tracked and untracked, ignored ones left out) when
``root`` is in a git repository of a trusted project, run through :mod:`extension_host.launch.git`
so that nothing the repository's configuration names is executed; in an untrusted project, and
outside git, from a walk that skips :data:`SKIPPED_FOLDERS` (git is never started there). Hidden
folders (a name starting with ``.``) are skipped either way. The listing stops at
:data:`MAX_LISTED_FILES` files or :data:`COMPLETION_TIME_BUDGET` seconds, and at most
:data:`MAX_COMPLETION_ITEMS` items are returned: names that start with the typed text first,
then names that hold it, then paths that hold it. Anything else typed completes nothing.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from extension_protocol.protocol import INVALID_PARAMS

from ..calls.command_registry import CommandInfo
from ..launch.git import run_git
from .content_params import CompletionsParams, checked
from .errors import ServeError

__all__ = [
    "COMPLETION_TIME_BUDGET",
    "MAX_COMPLETION_ITEMS",
    "MAX_LISTED_FILES",
    "SKIPPED_FOLDERS",
    "complete",
]

MAX_COMPLETION_ITEMS: Final = 50
"""Items one ``completions`` answer holds at most."""
MAX_LISTED_FILES: Final = 50_000
"""Files of the project looked at for one ``@`` completion; the rest are not offered."""
COMPLETION_TIME_BUDGET: Final = 2.0
"""Seconds the file listing of one ``@`` completion may take; what was found by then is used."""
SKIPPED_FOLDERS: Final = frozenset(
    {"node_modules", "__pycache__", "venv", "env", "dist", "build", "target", "site-packages"}
)
"""Folders the walk (outside git) does not enter, besides hidden ones."""
USER_MESSAGE: Final = "userMessage"
"""The one ``kind`` this server completes; other kinds get no items."""


async def complete(
    params: Mapping[str, Any], *, commands: Mapping[str, CommandInfo], root: Path, trusted: bool
) -> dict[str, Any]:
    """Answer ``completions`` (see the module): ``{"items": [CompletionItem, ...]}``. ``trusted``
    says whether the project ``root`` lies in is trusted: only then is git asked for its files.

    Raises:
        ServeError: ``InvalidParams``: a missing or mistyped field, or ``offset`` past the text.
    """
    p = checked("completions", CompletionsParams, params)
    text, offset = p["text"], p["offset"]
    units = _utf16_length(text)
    if offset > units:
        raise ServeError(
            INVALID_PARAMS, f"completions: offset {offset} is past the end of the text ({units} UTF-16 code units)"
        )
    if p["kind"] != USER_MESSAGE:
        return {"items": []}
    cursor = _index_of(text, offset)
    start = cursor
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    word = text[start:cursor]
    range_start = _utf16_length(text[:start])
    if word.startswith("/") and not text[:start].strip():
        return {"items": _command_items(word[1:], commands, range_start, offset)}
    if word.startswith("@"):
        files = await _project_files(root, trusted)
        return {"items": _file_items(word[1:], files, root, range_start, offset)}
    return {"items": []}


def _utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _index_of(text: str, offset: int) -> int:
    """The index into ``text`` of UTF-16 offset ``offset`` (inside a surrogate pair: after it)."""
    units = 0
    for index, character in enumerate(text):
        if units >= offset:
            return index
        units += 2 if ord(character) > 0xFFFF else 1
    return len(text)


def _command_items(typed: str, commands: Mapping[str, CommandInfo], start: int, end: int) -> list[dict[str, Any]]:
    wanted = typed.lower()
    names = sorted(name for name in commands if name.lower().startswith(wanted))
    items = []
    for name in names[:MAX_COMPLETION_ITEMS]:
        info = commands[name]
        items.append(
            {
                "insertText": f"/{name}",
                "rangeStart": start,
                "rangeEnd": end,
                "attachment": {
                    "type": "simple",
                    "label": f"/{name}",
                    "displayKind": "command",
                    "_meta": {"description": info.description, "extension": info.owner},
                },
            }
        )
    return items


def _file_items(typed: str, files: list[str], root: Path, start: int, end: int) -> list[dict[str, Any]]:
    wanted = typed.lower()
    ranked: list[tuple[int, str]] = []
    for relative in files:
        name = relative.rsplit("/", 1)[-1].lower()
        if name.startswith(wanted):
            ranked.append((0, relative))
        elif wanted in name:
            ranked.append((1, relative))
        elif wanted in relative.lower():
            ranked.append((2, relative))
    ranked.sort(key=lambda item: (item[0], len(item[1]), item[1]))
    return [
        {
            "insertText": f"@{relative}",
            "rangeStart": start,
            "rangeEnd": end,
            "attachment": {
                "type": "resource",
                "uri": (root / relative).as_uri(),
                "label": relative.rsplit("/", 1)[-1],
                "displayKind": "document",
            },
        }
        for _, relative in ranked[:MAX_COMPLETION_ITEMS]
    ]


async def _project_files(root: Path, trusted: bool) -> list[str]:
    """The project's files under ``root``, relative, ``/``-separated (see the module)."""
    deadline = time.monotonic() + COMPLETION_TIME_BUDGET
    listed = await _git_files(root, deadline) if trusted else None
    if listed is None:
        listed = await asyncio.to_thread(_walk, root, deadline)
    return [path for path in listed if not any(part.startswith(".") for part in path.split("/")[:-1])]


async def _git_files(root: Path, deadline: float) -> list[str] | None:
    """``git ls-files`` under ``root`` (through :func:`~extension_host.launch.git.run_git`); ``None``
    when git is missing or refuses (not a repository, another user's, a bare one inside)."""
    output = await run_git(
        root,
        "ls-files",
        "--cached",
        "--others",
        "--exclude-standard",
        "-z",
        timeout=deadline - time.monotonic(),
        limit=MAX_LISTED_FILES,
    )
    if output is None or output.failed:
        return None  # not a repository git will use: walk instead
    return list(dict.fromkeys(output.records))


def _walk(root: Path, deadline: float) -> list[str]:
    files: list[str] = []
    for folder, folders, names in os.walk(root):
        folders[:] = sorted(f for f in folders if not f.startswith(".") and f not in SKIPPED_FOLDERS)
        relative = Path(folder).relative_to(root).as_posix()
        for name in sorted(names):
            files.append(name if relative == "." else f"{relative}/{name}")
            if len(files) >= MAX_LISTED_FILES:
                return files
        if time.monotonic() > deadline:
            break
    return files
