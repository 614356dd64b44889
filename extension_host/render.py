"""Human-readable output of the CLI: tables and detail views. Text in, text out; no I/O."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sdk_extension.results import ToolResult

from .discovery import ExtensionSpec
from .hooks import HookRecord
from .info import ExtensionInfo, ToolInfo
from .outcomes import ReloadOutcome

__all__ = [
    "extension_detail",
    "extensions_table",
    "grants",
    "hook_end",
    "reload_outcome",
    "table",
    "tool_result",
    "trust_change",
]


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned columns separated by two spaces; the last column is not padded."""
    widths = [max(len(str(row[i])) for row in (headers, *rows)) for i in range(len(headers))]
    lines = []
    for row in (headers, *rows):
        cells = [str(cell).ljust(width) for cell, width in zip(row[:-1], widths)]
        lines.append("  ".join([*cells, str(row[-1])]).rstrip())
    return "\n".join(lines)


def extensions_table(extensions: Sequence[ExtensionInfo]) -> str:
    """One line per extension: id, status, pid, tools, hooks, and the error or shadowing."""
    if not extensions:
        return "no extensions found"
    rows = [
        (
            info.id,
            info.status,
            str(info.pid) if info.pid and info.status in ("running", "starting") else "-",
            ", ".join(info.tools) or "-",
            ", ".join(info.hooks) or "-",
            _note(info),
        )
        for info in extensions
    ]
    return table(("ID", "STATUS", "PID", "TOOLS", "HOOKS", "NOTE"), rows)


def reload_outcomes(outcomes: Sequence[ReloadOutcome]) -> str:
    """One line per outcome of a reload: id, what happened, and the tools or the reason."""
    if not outcomes:
        return "no extensions to reload"
    return _columns([(o.extension, o.action, _outcome_note(o)) for o in outcomes])


def extension_statuses(extensions: Sequence[ExtensionInfo]) -> str:
    """One line per extension: id, status, and its tools or what is wrong with it."""
    if not extensions:
        return "no extensions found"
    rows = [
        (
            info.id,
            info.status,
            _note(info) or _tools_note(info.tools),
        )
        for info in extensions
    ]
    return _columns(rows)


def _outcome_note(outcome: ReloadOutcome) -> str:
    if outcome.action == "kept":
        return f"new version failed, the running one keeps serving: {outcome.error}"
    if outcome.action in ("started", "reloaded"):
        return _tools_note(outcome.tools)
    return outcome.error or ""


def _tools_note(tools: Sequence[str]) -> str:
    return f"tools: {', '.join(tools)}" if tools else "no tools"


def _columns(rows: Sequence[Sequence[str]]) -> str:
    # table() without a header line: the first row stands in for it.
    return table(rows[0], rows[1:])


def _note(info: ExtensionInfo) -> str:
    if info.error:
        return info.error
    if info.shadowed_by:
        return f"shadowed by {info.shadowed_by}"
    if info.reload_error:
        return f"last reload failed, this version kept serving: {info.reload_error}"
    return ""


def extension_detail(
    info: ExtensionInfo,
    tools: Sequence[ToolInfo],
    log_tail: Sequence[str],
    hook_calls: Sequence[HookRecord] = (),
) -> str:
    """Everything about one extension, for ``extensions inspect``."""
    lines = [
        f"{info.id}",
        f"  path:    {info.path}",
        f"  status:  {info.status}",
        f"  pid:     {info.pid if info.pid else '-'}",
    ]
    if info.error:
        lines.append(f"  error:   {info.error}")
    if info.reload_error:
        lines.append(f"  last reload failed (this version kept serving): {info.reload_error}")
    if info.shadowed_by:
        lines.append(f"  shadowed by {info.shadowed_by}: it is not started")
    lines.append(f"  hooks:   {', '.join(info.hooks) or '-'}")
    lines.append(f"  tools:   {'-' if not tools else ''}")
    for tool in tools:
        lines.append(f"    {tool.name}: {tool.description}")
        schema = json.dumps(tool.parameters, indent=2) if tool.parameters else "(no parameters)"
        lines.extend(f"      {line}" for line in schema.splitlines())
    if hook_calls:
        lines.append("  recent hook calls:")
        lines.extend(
            f"    {_hook_line(call.hook, call.outcome, call.decision, call.duration_ms, call.error)}"
            for call in hook_calls
        )
    lines.append(f"  log:     {info.log_path or '-'}")
    lines.extend(f"    | {line}" for line in log_tail)
    return "\n".join(lines)


def hook_end(data: dict[str, Any]) -> str:
    """One line for a ``hook.end`` event: who, which hook, what came of it."""
    return f"{data['extensionId']}: " + _hook_line(
        data["hook"], data["outcome"], data.get("decision"), data["durationMs"], data.get("error")
    )


def _hook_line(hook: str, outcome: str, decision: str | None, duration_ms: float, error: str | None) -> str:
    text = f"{hook} {outcome}"
    if decision:
        text += f", decided {decision}"
    text += f" ({duration_ms:.1f} ms)"
    return f"{text}: {error}" if error else text


def reload_outcome(outcome: ReloadOutcome) -> str:
    """One sentence about what a start, reload or stop did to an extension."""
    note = _outcome_note(outcome)
    return f"{outcome.extension}: {outcome.action}" + (f" ({note})" if note else "")


def tool_result(result: ToolResult) -> str:
    """The text of a result, with its type when it is not a success."""
    if result.success:
        return result.text_result_for_llm
    return f"[{result.result_type}] {result.text_result_for_llm}"


def trust_change(root: Path, trusted: bool, specs: Sequence[ExtensionSpec], record: Path) -> str:
    """What ``extensions trust`` (or ``--revoke``) did, and which extensions it concerns."""
    if trusted:
        lines = [f"trusted {root}"]
        if specs:
            lines.append("its extensions run from now on (in every command, and in a running host at its next change):")
        else:
            lines.append("it has no extensions yet; the ones you add will run")
    else:
        lines = [f"no longer trusted: {root}"]
        if specs:
            lines.append("its extensions do not run any more:")
    lines.extend(
        f"  {spec.id}  {spec.folder / spec.entry_name}" + (f"  (links to {spec.link_target})" if spec.link_target else "")
        for spec in specs
    )
    undo = "extensions trust --revoke" if trusted else "extensions trust"
    lines.append(f"recorded in {record}; undo with: {undo}")
    return "\n".join(lines)


def grants(extension: str, changed: Sequence[str], revoked: bool, granted: Sequence[str]) -> str:
    """What ``extensions grant`` did, and what the extension is granted now."""
    now = ", ".join(granted) or "nothing"
    if not changed:
        return f"{extension} is granted: {now}"
    verb = "took back" if revoked else "granted"
    return f"{verb} {', '.join(changed)} {'from' if revoked else 'to'} {extension}; it is granted: {now}"
