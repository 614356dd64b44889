"""``extensions sessions list|show ID|rm ID``: the persisted sessions under the user folder.

Parses its arguments, asks :class:`~extension_host.session.store.SessionStore`, prints through
:mod:`.render` and :mod:`.output`. It never starts a host or an extension. An id that is not a
session id (``../x``) is a usage error (exit 2); an unknown id, or removing a session a host
holds, fails (exit 1).

``show --json`` prints one JSON object per line (the persisted events, oldest first), so a log
of any size streams.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import Any, Final

from ..errors import SessionError, SessionIdError
from ..project.paths import user_home
from ..session.store import SessionStore, SessionSummary
from . import render
from .output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, print_json, say

__all__ = ["add_sessions_command", "event_line"]

_SUMMARY_CHARACTERS: Final = 160
"""How much of an event's text ``sessions show`` prints on its line."""


def add_sessions_command(commands: Any) -> None:
    """Add ``sessions`` and its subcommands to the ``extensions`` parser's subcommands."""
    text = "list, show or remove the persisted sessions (their events and workspaces)"
    parser = commands.add_parser("sessions", help=text, description=text)
    parser.set_defaults(run=lambda args: _usage(parser))
    actions = parser.add_subparsers(dest="action", metavar="ACTION")

    sub = actions.add_parser("list", help="every session: id, start, last event, turns, project")
    sub.add_argument("--json", action="store_true", help="print JSON for scripts")
    sub.set_defaults(run=_list)

    sub = actions.add_parser("show", help="one session's timeline, one line per persisted event")
    sub.add_argument("id", help="the session id")
    sub.add_argument("--json", action="store_true", help="print the events as JSON, one per line")
    sub.set_defaults(run=_show)

    sub = actions.add_parser("rm", help="delete a session: its events and its workspace")
    sub.add_argument("id", help="the session id")
    sub.add_argument("--json", action="store_true", help="print JSON for scripts")
    sub.set_defaults(run=_remove)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return EXIT_USAGE


def _store(args: argparse.Namespace) -> SessionStore:
    return SessionStore(user_home(args.home))


def _failed(exc: SessionError) -> int:
    say(render.error_line(exc), err=True)
    return EXIT_USAGE if isinstance(exc, SessionIdError) else EXIT_FAILED


def _list(args: argparse.Namespace) -> int:
    summaries = _store(args).summaries()
    for summary in summaries:
        _warn(summary.id, summary.problems)
    if args.json:
        print_json([summary.to_json() for summary in summaries])
    elif not summaries:
        say("no sessions yet; 'extensions dev' starts one")
    else:
        say(render.table(["SESSION", "STARTED", "LAST EVENT", "TURNS", "PROJECT"], [_row(s) for s in summaries]))
    return EXIT_OK


def _row(summary: SessionSummary) -> list[str]:
    session = summary.id + (" (in use)" if summary.in_use else "")
    return [
        session,
        _when(summary.started),
        _when(summary.last_event),
        str(summary.turns),
        summary.project or "?",
    ]


def _when(timestamp: str | None) -> str:
    # 2026-11-25T21:58:29.123+00:00 -> 2026-11-25 21:58:29 (UTC, as stored)
    return timestamp[:19].replace("T", " ") if timestamp else "-"


def _show(args: argparse.Namespace) -> int:
    store = _store(args)
    try:
        reader = store.events(args.id)
    except SessionError as exc:
        return _failed(exc)
    for event in reader:
        if args.json:
            say(render.json_line(event))
        else:
            say(event_line(event))
    _warn(args.id, reader.problems)
    return EXIT_OK


def _warn(session_id: str, problems: Iterable[str]) -> None:
    """Tell stderr which lines of a session's log were skipped, one line each."""
    for problem in problems:
        say(f"session {session_id}: events.jsonl: {problem}", err=True)


def _remove(args: argparse.Namespace) -> int:
    try:
        _store(args).remove(args.id)
    except SessionError as exc:
        return _failed(exc)
    if args.json:
        print_json({"removed": args.id})
    else:
        say(f"removed session {args.id}")
    return EXIT_OK


def event_line(event: Any) -> str:
    """One timeline line for a persisted event: time, type, and what it says, safe to print."""
    data = event.get("data") if isinstance(event.get("data"), dict) else {}
    when = str(event.get("timestamp", ""))[11:23]
    kind = str(event.get("type", "?"))
    agent = f" [{event['agentId']}]" if isinstance(event.get("agentId"), str) else ""
    text = _describe(kind, data)
    if len(text) > _SUMMARY_CHARACTERS:
        text = text[: _SUMMARY_CHARACTERS - 1] + "…"
    return render.safe_cell(f"{when}  {kind}{agent}  {text}".rstrip())


def _describe(kind: str, data: dict[str, Any]) -> str:
    """The part of an event's data a person wants on its timeline line."""
    if kind in ("session.info", "session.warning", "session.error"):
        source = data.get("extensionId")
        category = data.get("infoType") or data.get("warningType") or data.get("errorType")
        prefix = "".join(f"[{part}] " for part in (category, source) if isinstance(part, str))
        return prefix + str(data.get("message", ""))
    if kind == "tool.execution_start":
        return f"{data.get('toolName', '?')} {render.json_line(data.get('arguments'))}"
    if kind == "tool.execution_complete":
        outcome = "ok" if data.get("success") else "failed"
        result = data.get("result")
        content = result.get("content") if isinstance(result, dict) else None
        return f"{outcome}" + (f": {content}" if isinstance(content, str) and content else "")
    if kind == "subagent.started":
        return f"{data.get('agentName', '?')} for call {data.get('toolCallId', '?')}"
    if kind in ("subagent.completed", "subagent.failed"):
        how = "cancelled" if data.get("cancelled") else f"failed: {data.get('error')}" if "error" in data else "done"
        return f"{data.get('agentName', '?')} {how} ({data.get('totalToolCalls', 0)} tool calls)"
    if kind == "session.start":
        return f"new session {data.get('sessionId', '')} in {_cwd(data)}"
    if kind == "session.resume":
        return f"resumed ({data.get('eventCount', '?')} events) in {_cwd(data)}"
    if kind == "session.shutdown":
        return str(data.get("shutdownType", ""))
    content = data.get("content")
    if isinstance(content, str):
        return content
    return render.json_line(data) if data else ""


def _cwd(data: dict[str, Any]) -> str:
    context = data.get("context")
    return str(context.get("cwd", "?")) if isinstance(context, dict) else "?"
