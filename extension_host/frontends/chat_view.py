"""What ``extensions chat`` shows: the lines for tool calls, questions, the banner and help.

Text in, text out, as in :mod:`.render` (whose helpers it uses): everything that comes from an
extension or the model passes :func:`~.render.safe_text` or :func:`~.render.safe_cell`, so
neither can drive the terminal. Long arguments and results are cut to one line here; the
session's log keeps them whole.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..calls.command_registry import CommandInfo
from ..info import ExtensionInfo
from . import render

__all__ = [
    "CHAT_HELP",
    "PREVIEW_CHARS",
    "banner",
    "commands_help",
    "permission_question",
    "tool_complete",
    "tool_start",
    "usage_line",
]

PREVIEW_CHARS: Final = 160
"""Characters of a tool's arguments or result shown on its line."""

CHAT_HELP: Final = """Type a message for the model. While it answers, Ctrl-C cancels the turn.
  /new        start a new session (the extensions are reloaded)
  /help       this text
  /exit       leave; the session is kept and can be resumed
keys at a terminal: Up/Down recall earlier lines, Tab completes slash commands;
  Ctrl-C drops the line typed; on an empty line, Ctrl-C twice or Ctrl-D leaves like /exit"""


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    cut = flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1] + "…"
    return render.safe_cell(cut)


def _arguments(arguments: Any) -> str:
    if arguments in (None, {}):
        return ""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return " " + _preview(text)


def banner(
    session_id: str, resumed: bool, model: str | None, base_url: str, extensions: Sequence[ExtensionInfo], tools: int
) -> str:
    """The first lines: the session, the model, what the extensions offer, and what failed."""
    running = sum(1 for info in extensions if info.status == "running")
    lines = [
        f"{'resumed' if resumed else 'new'} session {render.safe_cell(session_id)}",
        f"model {render.safe_cell(model or '?')} at {render.safe_cell(base_url)}",
        f"{running} extension{'' if running == 1 else 's'} running, {tools} tool{'' if tools == 1 else 's'} "
        "on offer; /help for commands, Ctrl-D to leave",
    ]
    for info in extensions:
        if info.status in ("failed", "quarantined", "untrusted"):
            lines.append(f"{render.safe_cell(info.id)}: {info.status}: {render.safe_cell(info.error or '')}")
    return "\n".join(lines)


def commands_help(commands: Mapping[str, CommandInfo]) -> str:
    """:data:`CHAT_HELP` and the extensions' slash commands."""
    if not commands:
        return CHAT_HELP
    rows = [
        f"  /{render.safe_cell(name):<10} {render.safe_cell(info.description)} ({render.safe_cell(info.owner)})"
        for name, info in sorted(commands.items())
    ]
    return CHAT_HELP + "\nthe extensions' commands:\n" + "\n".join(rows)


def tool_start(data: Mapping[str, Any]) -> str:
    """``  → tool {arguments}`` for ``tool.execution_start``."""
    return f"  → {render.safe_cell(str(data.get('toolName', '?')))}{_arguments(data.get('arguments'))}"


def tool_complete(data: Mapping[str, Any]) -> str:
    """``  ← tool: result`` for ``tool.execution_complete`` (with its type when not a success)."""
    result = data.get("result")
    content = str(result.get("content") or "") if isinstance(result, Mapping) else ""
    kind = result.get("resultType") if isinstance(result, Mapping) else None
    error = data.get("error")
    if not content and isinstance(error, Mapping):
        content = str(error.get("message") or "")
    label = "" if kind in (None, "success") else f"[{render.safe_cell(str(kind))}] "
    return f"  ← {render.safe_cell(str(data.get('toolName', '?')))}: {label}{_preview(content)}"


def permission_question(request: Mapping[str, Any]) -> str:
    """The question for a ``permission.requested`` that the user answers."""
    tool = request.get("toolName") or request.get("kind") or "?"
    reason = request.get("hookMessage")
    because = f" ({_preview(str(reason))})" if reason else ""
    arguments = _arguments(request.get("toolArgs", request.get("args")))
    if not arguments and request.get("operation"):  # extension-management: what it would do, to which
        arguments = " " + _preview(
            " ".join(str(request[key]) for key in ("operation", "extensionName") if key in request)
        )
    return f"allow {render.safe_cell(str(tool))}{arguments}?{because} [y/N]"


def usage_line(input_tokens: int, output_tokens: int, calls: int) -> str:
    """What the model calls of one prompt's run used."""
    return f"  ({calls} model call{'' if calls == 1 else 's'}, {input_tokens} tokens in, {output_tokens} out)"
