"""Human-readable output of the CLI, and terminal safety. Text in, text out; no I/O.

Tables, detail views and one-line reports are built here, and so is the rule that text coming
from an extension never controls the terminal: every renderer passes such text (ids and
folder names, tools, hooks, notes and errors, descriptions, log lines, results, contexts,
prompts, session messages) through :func:`safe_text` or :func:`safe_cell`, which show control
characters as visible escapes (``\\x1b``, ``\\r``, ``\\u202e``) instead of letting the terminal
act on them. :func:`json_text` is the ``--json`` counterpart: the data stays exact, and the
characters a terminal would act on are written as ``\\uXXXX`` escapes. Those four live in
:mod:`extension_host.visible` (a hook command uses them without this module's imports) and are
named here too.

A table is a :class:`Table`: its plain text, with its cells kept so that a terminal can draw
them to its width and colour the statuses (:mod:`.output`); the text is what a pipe gets. An
extension's error is the one host-made text of several lines (a syntax error's source line and
caret): its lines stay in the NOTE column or indented under the field, each made safe, so
nothing in it can pass for another row or field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from ..visible import json_line, json_text, safe_cell, safe_text

if TYPE_CHECKING:  # names for the signatures only: a command that prints one result imports no more
    from pathlib import Path
    from typing import Protocol

    from extension_protocol.results import ToolResult

    from ..calls.command_registry import CommandInfo, CommandResult
    from ..hooks.runner import HookRecord
    from ..info import ExtensionInfo, ToolInfo
    from ..outcomes import PromptResult, ReloadOutcome
    from ..project.discovery import ExtensionSpec

    class ResultText(Protocol):
        """What :func:`tool_result` reads: a :class:`ToolResult`, or a call's answer as ``extensions
        call`` reads it back from a running host (without importing the result type)."""

        @property
        def text_result_for_llm(self) -> str: ...
        @property
        def result_type(self) -> str: ...
        @property
        def success(self) -> bool: ...


__all__ = [
    "STATUS_STYLES",
    "Cell",
    "Table",
    "additional_context",
    "context_note",
    "error_line",
    "extension_detail",
    "extension_statuses",
    "extensions_table",
    "grants",
    "hook_end",
    "hook_skipped",
    "json_line",
    "json_text",
    "note_lines",
    "prompt_rejection",
    "prompt_result",
    "reload_outcome",
    "reload_outcomes",
    "safe_cell",
    "safe_text",
    "session_message",
    "table",
    "tool_result",
    "trust_change",
]


def _cells(values: Iterable[str]) -> str:
    return ", ".join(safe_cell(value) for value in values)


# -- tables and views --------------------------------------------------------------------


STATUS_STYLES: Final[Mapping[str, str]] = {
    "running": "green",
    "started": "green",
    "reloaded": "green",
    "restarted": "green",
    "failed": "red",
    "quarantined": "red",
    "kept": "yellow",
    "untrusted": "yellow",
    "detached": "yellow",
    "starting": "yellow",
    "shadowed": "dim",
    "disabled": "dim",
    "stopped": "dim",
}
"""The colour of a status (or a reload's action) on a terminal: running green, failed red, what
needs a look yellow, what is not meant to run dim. Colour only repeats the word it paints."""


class Table(str):
    """A table: its plain text (what a pipe, a log or a test gets) is the string itself; its
    cells stay for a terminal, where :func:`~extension_host.frontends.output.say` draws them to
    the terminal's width and colours the status column (:data:`STATUS_STYLES`).

    Every cell is safe already: each of its lines went through :func:`safe_cell`, and a cell
    has more than one line only where a renderer put them (an error's source line and caret).
    Joined or indented, it is plain text again.
    """

    header: tuple[str, ...] | None
    rows: tuple[tuple[str, ...], ...]
    status_column: int | None

    def __new__(
        cls, header: tuple[str, ...] | None, rows: tuple[tuple[str, ...], ...], status_column: int | None = None
    ) -> Table:
        table = super().__new__(cls, _plain_table([header, *rows] if header is not None else list(rows)))
        table.header = header
        table.rows = rows
        table.status_column = status_column
        return table


Cell = str | tuple[str, ...]
"""A table's cell: one line, or the lines of a host-made text (:func:`note_lines`)."""


def table(headers: Sequence[str] | None, rows: Sequence[Sequence[Cell]], *, status_column: int | None = None) -> Table:
    """Left-aligned columns separated by two spaces, the header first (``None``: no header);
    the last column is not padded.

    Every cell is made safe (:func:`safe_cell`) before it is measured, so a value cannot break
    a row or the alignment; a cell given as lines keeps them, each in its column.
    """
    header = tuple(safe_cell(str(cell)) for cell in headers) if headers is not None else None
    return Table(header, tuple(tuple(_safe_lines(cell) for cell in row) for row in rows), status_column)


def _safe_lines(cell: Cell) -> str:
    return "\n".join(safe_cell(line) for line in cell) if isinstance(cell, tuple) else safe_cell(str(cell))


def note_lines(text: str) -> tuple[str, ...]:
    """A note of the host's making (an extension's error) as the lines of one cell: a syntax
    error's first line, its source line and its caret. Each line is still made safe; a line
    break in it can only start a line in the same column."""
    return tuple(text.split("\n"))


def _plain_table(rows: Sequence[Sequence[str]]) -> str:
    split = [[cell.split("\n") for cell in row] for row in rows]
    if not split:
        return ""
    widths = [max(len(line) for row in split for line in row[column]) for column in range(len(split[0]))]
    out = []
    for row in split:
        for index in range(max(len(cell) for cell in row)):
            cells = [cell[index] if index < len(cell) else "" for cell in row]
            padded = [cell.ljust(width) for cell, width in zip(cells[:-1], widths, strict=False)]
            out.append("  ".join([*padded, cells[-1]]).rstrip())
    return "\n".join(out)


def extensions_table(extensions: Sequence[ExtensionInfo]) -> str:
    """One line per extension: id, status, pid, tools, hooks (commands, when one has any), and
    the error or shadowing."""
    if not extensions:
        return "no extensions found"
    if any(info.commands for info in extensions):
        rows_with_commands = [
            (
                info.id,
                info.status,
                str(info.pid) if info.pid and info.status in ("running", "starting") else "-",
                ", ".join(info.tools) or "-",
                ", ".join(info.hooks) or "-",
                ", ".join(f"/{name}" for name in info.commands) or "-",
                note_lines(_note(info)),
            )
            for info in extensions
        ]
        return table(("ID", "STATUS", "PID", "TOOLS", "HOOKS", "COMMANDS", "NOTE"), rows_with_commands, status_column=1)
    rows = [
        (
            info.id,
            info.status,
            str(info.pid) if info.pid and info.status in ("running", "starting") else "-",
            ", ".join(info.tools) or "-",
            ", ".join(info.hooks) or "-",
            note_lines(_note(info)),
        )
        for info in extensions
    ]
    return table(("ID", "STATUS", "PID", "TOOLS", "HOOKS", "NOTE"), rows, status_column=1)


def reload_outcomes(outcomes: Sequence[ReloadOutcome]) -> str:
    """One line per outcome of a reload: id, what happened, and the tools or the reason."""
    if not outcomes:
        return "no extensions to reload"
    return table(None, [(o.extension, o.action, note_lines(_outcome_note(o))) for o in outcomes], status_column=1)


def extension_statuses(extensions: Sequence[ExtensionInfo]) -> str:
    """One line per extension: id, status, and its tools or what is wrong with it."""
    if not extensions:
        return "no extensions found"
    rows = [
        (
            info.id,
            info.status,
            note_lines(_note(info) or _tools_note(info.tools)),
        )
        for info in extensions
    ]
    return table(None, rows, status_column=1)


# The notes below are raw text: table() makes its cells safe, the one-line renderers
# (reload_outcome, extension_detail) pass them through safe_cell.


def _outcome_note(outcome: ReloadOutcome) -> str:
    if outcome.action == "kept":
        return f"new version failed, the running one keeps serving: {outcome.error}"
    if outcome.action in ("started", "reloaded"):
        return _tools_note(outcome.tools)
    return outcome.error or ""


def _tools_note(tools: Sequence[str]) -> str:
    return f"tools: {', '.join(tools)}" if tools else "no tools"


def _note(info: ExtensionInfo) -> str:
    if info.error:
        note = info.error
    elif info.shadowed_by:
        note = f"shadowed by {info.shadowed_by}"
    elif info.reload_error:
        note = f"last reload failed, this version kept serving: {info.reload_error}"
    elif info.status == "detached":
        note = "left the session (session.detach); a reload brings it back"
    elif info.activity:
        note = info.activity
    else:
        note = ""
    first, _, excerpt = note.partition("\n")  # an error's source line and caret stay below the rest
    extras = [first] if first else []
    if info.overrides_builtin:
        extras.append(f"overrides built-in {', '.join(info.overrides_builtin)}")
    if info.canvases:
        extras.append(f"canvases: {', '.join(canvas.id for canvas in info.canvases)}")
    if info.link_target:
        extras.append(f"links to {info.link_target}")
    if info.settings_unset:
        extras.append(f"no value: {', '.join(info.settings_unset)} (extensions config {info.name})")
    if info.note:
        extras.append(info.note)
    return "; ".join(extras) + (f"\n{excerpt}" if excerpt else "")


def _indented(text: str, indent: int) -> str:
    """Host-made ``text`` of several lines (an error with its source line and caret), each line
    made safe, the lines after the first indented by ``indent`` spaces: under the value they
    continue, where no other field or row starts."""
    first, *rest = (safe_cell(line) for line in text.split("\n"))
    return "\n".join([first, *(" " * indent + line for line in rest)])


def extension_detail(
    info: ExtensionInfo,
    tools: Sequence[ToolInfo],
    log_tail: Sequence[str],
    hook_calls: Sequence[HookRecord] = (),
    commands: Sequence[CommandInfo] = (),
) -> str:
    """Everything about one extension, for ``extensions inspect``.

    Each value is one line (:func:`safe_cell`), so nothing an extension says can pose as
    another field, tool or log line.
    """
    cell = safe_cell
    lines = [
        cell(info.id),
        f"  path:    {cell(str(info.path))}" + (f" -> {cell(str(info.link_target))}" if info.link_target else ""),
        f"  status:  {cell(info.status)}",
        f"  pid:     {info.pid if info.pid else '-'}",
    ]
    if info.error:
        lines.append(f"  error:   {_indented(info.error, 11)}")
    if info.reload_error:
        lines.append(f"  last reload failed (this version kept serving): {_indented(info.reload_error, 11)}")
    if info.activity and info.status == "starting":
        lines.append(f"  now:     {cell(info.activity)}")
    if info.note:
        lines.append(f"  note:    {cell(info.note)}")
    if info.shadowed_by:
        lines.append(f"  shadowed by {cell(info.shadowed_by)}: it is not started")
    if info.overrides_builtin:
        lines.append(f"  overrides the built-in tools: {_cells(info.overrides_builtin)}")
    if info.environment_requested or info.environment_granted:
        lines.append(
            f"  environment: requested {_cells(info.environment_requested) or '-'}; "
            f"granted {_cells(info.environment_granted) or '-'}"
            + (f"; not granted {_cells(info.environment_missing)}" if info.environment_missing else "")
        )
    if info.settings:
        lines.append(
            f"  settings: {_cells(info.settings)}"
            + (f"; no value: {_cells(info.settings_unset)}" if info.settings_unset else "")
            + f" (extensions config {cell(info.name)})"
        )
    lines.append(f"  hooks:   {_hooks_cell(info) or '-'}")
    lines.append(f"  tools:   {'-' if not tools else ''}")
    for tool in tools:
        lines.append(f"    {cell(tool.name)}: {cell(tool.description)}")
        # json.dumps escapes C0 and, with its default ensure_ascii, every non-ASCII character
        # (C1, bidi); safe_text keeps that true should the dump ever change.
        schema = json.dumps(tool.parameters, indent=2) if tool.parameters else "(no parameters)"
        lines.extend(f"      {line}" for line in safe_text(schema).split("\n"))
    if commands:
        lines.append("  commands:")
        lines.extend(f"    /{cell(command.name)}: {cell(command.description)}" for command in commands)
    if info.canvases:
        lines.append("  canvases:")
        for canvas in info.canvases:
            lines.append(f"    {cell(canvas.id)} ({cell(canvas.display_name)}): {cell(canvas.description)}")
            lines.extend(
                f"      action {cell(name)}" + (f": {cell(description)}" if description else "")
                for name, description in canvas.actions
            )
    if hook_calls:
        lines.append("  recent hook calls:")
        lines.extend(
            f"    {_hook_line(call.hook, call.outcome, call.decision, call.duration_ms, call.error)}"
            for call in hook_calls
        )
    lines.append(f"  log:     {cell(str(info.log_path)) if info.log_path else '-'}")
    lines.extend(f"    | {cell(line)}" for line in log_tail)
    return "\n".join(lines)


def _hooks_cell(info: ExtensionInfo) -> str:
    """The hooks, each limited one followed by its tool patterns: ``on_pre_tool_use [bash, run_*]``."""
    matchers = dict(info.hook_matchers)
    return ", ".join(
        safe_cell(hook) + (f" [{_cells(matchers[hook])}]" if hook in matchers else "") for hook in info.hooks
    )


def hook_skipped(hook: str, owner: str, tool_name: str) -> str:
    """One line for a hook not called because its matcher does not match the tool (``call --verbose``)."""
    return f"{safe_cell(owner)}: {safe_cell(hook)} skipped (its matcher does not match {safe_cell(tool_name)})"


def hook_end(data: dict[str, Any], notable_only: bool = False) -> str:
    """A line per implementation a ``hook.end`` event says was called (its ``calls``): who,
    which hook, what came of it; with ``notable_only``, only those that failed, denied or
    asked."""
    lines = []
    for call in data.get("calls") or ():
        if notable_only and call.get("outcome") == "ok" and call.get("decision") not in ("deny", "ask"):
            continue
        error = call.get("error")  # {"message": ...}, absent on success
        message = error["message"] if error else None
        line = _hook_line(data["hook"], call["outcome"], call.get("decision"), call["durationMs"], message)
        lines.append(f"{safe_cell(str(call['extensionId']))}: {line}")
    return "\n".join(lines)


def _hook_line(hook: str, outcome: str, decision: str | None, duration_ms: float, error: str | None) -> str:
    text = f"{safe_cell(str(hook))} {safe_cell(str(outcome))}"
    if decision:
        text += f", decided {safe_cell(str(decision))}"
    text += f" ({duration_ms:.1f} ms)"
    return f"{text}: {safe_cell(str(error))}" if error else text


def reload_outcome(outcome: ReloadOutcome) -> str:
    """One line about what a start, reload or stop did to an extension (and, under it, the
    source line and caret of a syntax error)."""
    first, _, excerpt = _outcome_note(outcome).partition("\n")
    line = f"{safe_cell(outcome.extension)}: {safe_cell(outcome.action)}" + (f" ({safe_cell(first)})" if first else "")
    return line + "".join(f"\n  {safe_cell(part)}" for part in excerpt.split("\n") if excerpt)


def tool_result(result: ToolResult | ResultText) -> str:
    """The text of a result, with its type when it is not a success; its lines stay lines."""
    text = safe_text(result.text_result_for_llm)
    if result.success:
        return text
    return f"[{safe_cell(result.result_type)}] {text}"


def command_result(result: CommandResult) -> str:
    """One line for a run of a slash command: done, or how it failed and why."""
    where = f" in {safe_cell(result.owner)}" if result.owner else ""
    if result.ok:
        return f"/{safe_cell(result.command)}: done{where}"
    return f"/{safe_cell(result.command)}: {safe_cell(result.status)}{where}: {safe_cell(result.error or '')}"


def additional_context(text: str) -> str:
    """The context hooks added, as a block under its heading (``call --verbose``, ``prompt``)."""
    return f"additional context:\n{safe_text(text)}"


def context_note(text: str) -> str:
    """The context hooks added, as a parenthesised note after a result (``dev``)."""
    return f"(additional context: {safe_text(text)})"


def prompt_rejection(outcome: PromptResult) -> str:
    """Who rejected a prompt, and why."""
    return f"rejected by {safe_cell(str(outcome.rejected_by))}: {safe_text(str(outcome.reason))}"


def prompt_result(outcome: PromptResult) -> str:
    """What the prompt hooks made of a prompt: the rejection, or the prompt and its context."""
    if outcome.rejected:
        return prompt_rejection(outcome)
    text = safe_text(outcome.prompt)
    if outcome.additional_context:
        text += "\n\n" + additional_context(outcome.additional_context)
    return text


def origin_line(origin: Mapping[str, Any]) -> str:
    """Where an installed extension came from, for ``extensions inspect`` (``list --json``'s ``origin``)."""
    if origin.get("error"):
        return f"  origin:  {safe_cell(str(origin['error']))}"
    parts = [str(origin.get("kind")), str(origin.get("source"))]
    if origin.get("subdir"):
        parts.append(f"--subdir {origin['subdir']}")
    if origin.get("ref"):
        parts.append(f"ref {origin['ref']}")
    if origin.get("commit"):
        parts.append(f"at {str(origin['commit'])[:12]}")
    if origin.get("version"):
        parts.append(f"{origin.get('distribution')} {origin['version']}")
    return f"  origin:  {safe_cell(' '.join(parts))}, installed {safe_cell(str(origin.get('installed_at')))}"


def error_line(message: object) -> str:
    """``error: MESSAGE``; an exception's message can carry an extension's text (its name, its
    tools, what it wrote to stderr)."""
    return f"error: {safe_text(str(message))}"


def session_message(source: str, message: str, level: str = "") -> str:
    """A ``session.log`` message (or a warning or error: ``level``) of ``source`` (an extension
    id, or ``host``), with the prefix on every line.

    ``[project:a] line 1`` / ``[project:a] line 2``: a message cannot print a line that looks
    like another extension's, or like the host's.
    """
    prefix = f"[{safe_cell(source)}] " + (f"{safe_cell(level)}: " if level else "")
    return "\n".join(prefix + line for line in safe_text(message).split("\n"))


def trust_change(
    root: Path, trusted: bool, specs: Sequence[ExtensionSpec], record: Path, *, allow_failed_guards: bool = False
) -> str:
    """What ``extensions trust`` (or ``--revoke``, or ``--allow-failed-guards``) did, and which
    extensions it concerns."""
    if trusted:
        lines = [f"trusted {safe_cell(str(root))}"]
        if specs:
            lines.append("its extensions run from now on (in every command, and in a running host at its next change):")
        else:
            lines.append("it has no extensions yet; the ones you add will run")
    else:
        lines = [f"no longer trusted: {safe_cell(str(root))}"]
        if specs:
            lines.append("its extensions do not run any more:")
    lines.extend(
        f"  {safe_cell(spec.id)}  {safe_cell(str(spec.folder / spec.entry_name))}"
        + (f"  (links to {safe_cell(str(spec.link_target))})" if spec.link_target else "")
        for spec in specs
    )
    if allow_failed_guards:
        lines.append(
            "Claude Code and Gemini CLI calls go through, with a warning, while one of them cannot run "
            "(blocked again after plain 'extensions trust')"
        )
    undo = "extensions trust --revoke" if trusted else "extensions trust"
    lines.append(f"recorded in {safe_cell(str(record))}; undo with: {undo}")
    return "\n".join(lines)


def grants(extension: str, changed: Sequence[str], revoked: bool, granted: Sequence[str]) -> str:
    """What ``extensions grant`` did, and what the extension is granted now."""
    now = ", ".join(granted) or "nothing"
    if not changed:
        return f"{safe_cell(extension)} is granted: {now}"
    verb = "took back" if revoked else "granted"
    return f"{verb} {', '.join(changed)} {'from' if revoked else 'to'} {safe_cell(extension)}; it is granted: {now}"
