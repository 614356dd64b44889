"""``extensions acp --print-config EDITOR``: the snippet that registers this agent in an ACP editor.

- **Zed** keeps its external agents in its settings (``~/.config/zed/settings.json``) under
  ``agent_servers``, each ``{"type": "custom", "command", "args", "env"}``.
- **JetBrains** IDEs (AI Assistant) read ``~/.jetbrains/acp.json``, under ``agent_servers``,
  each ``{"command", "args", "env"}``.

The command is this interpreter running ``-P -m extension_host acp`` (so it works whatever the
editor's ``PATH``, and imports nothing from the project folder the editor starts it in: see
:mod:`extension_host.launch.interpreter`), with ``--home`` when it is not the default, and the
agent's ``--base-url`` and ``--model`` when given. No project is named: each session's ``cwd``
says which project it runs in. The API key is never in the snippet (such files are shared and
synced): the agent reads ``OPENAI_API_KEY`` from the environment the editor starts it with.
Plain data; printing is the front end's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ..launch.interpreter import python_command

__all__ = ["AGENT_NAME", "EDITORS", "EditorConfig", "agent_command", "editor_config"]

AGENT_NAME: Final = "extension-host"
"""The name the editor shows the agent under."""


@dataclass(frozen=True)
class EditorConfig:
    """Where the snippet goes (``file``, in the user's home) and the snippet."""

    file: str
    snippet: dict[str, Any]


@dataclass(frozen=True)
class _Shape:
    file: str
    extra: dict[str, Any]


_SHAPES: Final[dict[str, _Shape]] = {
    "zed": _Shape("~/.config/zed/settings.json", {"type": "custom"}),
    "jetbrains": _Shape("~/.jetbrains/acp.json", {}),
}
EDITORS: Final = tuple(_SHAPES)
"""The editors ``--print-config`` knows."""


def agent_command(home: Path | None = None, options: tuple[str, ...] = ()) -> list[str]:
    """The command line that runs ``extensions acp`` (with ``--home`` when given, then ``options``)."""
    global_options = ["--home", str(home)] if home is not None else []
    return [*python_command("-m", "extension_host", *global_options, "acp", *options)]


def editor_config(editor: str, home: Path | None = None, options: tuple[str, ...] = ()) -> EditorConfig:
    """The registration of this agent for ``editor`` (one of :data:`EDITORS`).

    Raises:
        ValueError: ``editor`` is not one of :data:`EDITORS`.
    """
    shape = _SHAPES.get(editor)
    if shape is None:
        raise ValueError(f"no ACP editor named {editor!r}; known: {', '.join(EDITORS)}")
    command, *args = agent_command(home, options)
    entry = {**shape.extra, "command": command, "args": args, "env": {}}
    return EditorConfig(shape.file, {"agent_servers": {AGENT_NAME: entry}})
