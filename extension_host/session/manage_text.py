"""What the agent reads from ``extensions_manage`` and ``extensions_reload``: the texts.

The shapes are GitHub Copilot CLI's (1.0.102), read from what it sends its model: the bullet
list of ``list`` and of a reload, the ``inspect`` block with its fenced log tail, and the
one-line refusals. Where the host knows more it adds a line in the same shape (``Error:`` with
an extension's one-line reason, ``Tools:`` with what it offers). This module formats; it
changes nothing and starts nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final

from ..info import ExtensionInfo
from ..launch.logs import current_run_tail
from ..project.discovery import ENTRY_FILES

__all__ = [
    "LOG_TAIL_LINES",
    "choices",
    "entry_path",
    "extension_list",
    "guide",
    "inspect_text",
    "reload_text",
    "scaffolded",
]

LOG_TAIL_LINES: Final = 40
"""How many of the last non-blank lines of an extension's log (its current run) ``inspect`` shows."""
_NO_PID: Final = "unknown"


def choices(values: Sequence[str]) -> str:
    """``"a", "b", or "c"`` (``"a" or "b"``): how the CLI lists what it accepts."""
    quoted = [f'"{value}"' for value in values]
    if len(quoted) < 3:
        return " or ".join(quoted)
    return ", ".join(quoted[:-1]) + ", or " + quoted[-1]


def entry_path(info: ExtensionInfo) -> Path:
    """The file the extension runs (its folder when none is there)."""
    for name in ENTRY_FILES:
        if (info.path / name).is_file():
            return info.path / name
    return info.path


def _facts(info: ExtensionInfo, indent: str) -> list[str]:
    return [f"{indent}ID: {info.id}", f"{indent}Source: {info.source}", f"{indent}Path: {entry_path(info)}"]


def _pid(info: ExtensionInfo) -> int | str:
    """Its process, while it has one that runs it (a failed one's last pid is no use)."""
    return info.pid if info.pid and info.status in ("starting", "running") else _NO_PID


def _tail_lines(info: ExtensionInfo, indent: str) -> list[str]:
    lines = [f"{indent}PID: {_pid(info)}"]
    if info.log_path is not None:
        lines.append(f"{indent}Log: {info.log_path}")
    if info.error:
        lines.append(f"{indent}Error: {info.error}")
    return lines


def extension_list(infos: Sequence[ExtensionInfo]) -> str:
    """``list``: every discovered extension, in load order."""
    if not infos:
        return "No extensions discovered."
    blocks = [
        "\n".join([f"• **{info.name}** — {info.status}", *_facts(info, "  "), *_tail_lines(info, "  ")])
        for info in infos
    ]
    return f"Discovered extensions ({len(infos)}):\n\n" + "\n\n".join(blocks)


def inspect_text(info: ExtensionInfo) -> str:
    """``inspect``: one extension, and the tail of its log's current run."""
    lines = [f"Extension: **{info.name}**", *_facts(info, ""), f"Status: {info.status}"]
    lines += _tail_lines(info, "")
    if info.tools:
        lines.append(f"Tools: {', '.join(info.tools)}")
    text = "\n".join(lines)
    tail = _log_tail(info.log_path) if info.log_path is not None else None
    if tail is not None:
        text += f"\n\nLog tail ({len(tail.encode())} bytes):\n```\n{tail}\n```"
    return text


def reload_text(infos: Sequence[ExtensionInfo]) -> str:
    """What ``extensions_reload`` answers once every extension is running or has failed."""
    lines = [f"Extensions reloaded. {len(infos)} extension(s) running.", ""]
    if not infos:
        lines.append("No extensions found.")
    for info in infos:
        status = "ready" if info.status == "running" else info.status
        lines.append(f"• **{info.name}** — {status} [{info.source}] (pid: {_pid(info)})")
        if info.log_path is not None:
            lines.append(f"  Log: {info.log_path}")
        if info.error:
            lines.append(f"  Error: {info.error}")
    return "\n".join([*lines, "", "New tools are now available."])


def scaffolded(entry: Path) -> str:
    """What a successful ``scaffold`` answers."""
    return (
        f"Extension scaffolded at: {entry}\n\n"
        "Edit this file to implement your extension, then call extensions_reload to activate it."
    )


def guide(documents: Sequence[tuple[Path, str]], project_dir: Path, user_dir: Path, sdk: Path) -> str:
    """``guide``: where extensions live, the rules that matter, and the files to read."""
    lines = [
        f"For the Python SDK's API, see {sdk / '__init__.py'} (join_session, tool, ToolResult, hooks).",
        "",
        f"Extensions live in {project_dir}/<name>/ (this project) or {user_dir}/<name>/ (yours, every "
        "project); the folder holds extension.py (Python) or a Copilot SDK extension.mjs (Node.js). "
        "Tool names are unique across all extensions (start them with the extension's name); what an "
        "extension prints goes to its log. After an edit, call extensions_reload; extensions_manage "
        'with operation "inspect" shows its status and the tail of its log.',
        "",
        "Extension documentation (use the view tool to read any file):",
        "",
    ]
    for path, what in documents:
        lines += [f"• {path}", f"  {what}"]
    return "\n".join(lines)


def _log_tail(path: Path) -> str | None:
    """The last :data:`LOG_TAIL_LINES` lines of the log's current run; ``None`` if there are none."""
    lines = current_run_tail(path, LOG_TAIL_LINES)
    return "\n".join(lines) + "\n" if lines else None
