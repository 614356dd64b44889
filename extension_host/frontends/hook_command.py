"""``extensions hook``: the command hooks Claude Code and Gemini CLI run, and their installer.

- ``extensions hook claude EVENT`` / ``extensions hook gemini EVENT``: read the agent's JSON on
  stdin, answer on stdout in the agent's format, exit as the agent expects
  (:mod:`extension_host.bridges.agent_hooks.adapter`). :func:`run_hook` is also the fast path the
  ``extensions`` launcher (:mod:`.launcher`) takes for exactly ``hook AGENT EVENT``: it imports
  the adapter and nothing of the host unless no host runs for the project.
- ``extensions hook install claude|gemini [--user] [--dry-run] [--json]``: merge the hook
  entries into the agent's settings (:mod:`extension_host.bridges.agent_hooks.install`); for Gemini
  CLI's project settings, one line on what its trusted folders mean for them
  (:mod:`extension_host.bridges.agent_hooks.gemini_trust`).
- ``extensions hook check claude|gemini [--json]``: whether the agent will run the installed
  hooks (every event there, a command it finds, a folder Gemini CLI trusts); exit 1 with one
  line per problem when it will not.
- ``extensions hook stop [--json]``: stop the project's background host, the one hook calls
  start when no host runs (:mod:`extension_host.bridges.agent_hooks.host_start`).

It parses and prints; the mappings and the merge are the bridges'.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any, Final

from ..bridges.agent_hooks.adapter import MAX_HOOK_INPUT_BYTES, HookAgent, run_agent_hook
from ..bridges.agent_hooks.deadline import HookDeadline
from ..control.methods import METHOD_HOOK
from ..project.paths import find_project_root

__all__ = ["AGENT_NAMES", "add_hook_command", "agent", "run_hook"]

_AGENT_TABLES: Final = {"claude": ("claude", "CLAUDE"), "gemini": ("gemini", "GEMINI")}
AGENT_NAMES: Final = tuple(_AGENT_TABLES)
"""The agents whose hooks ``extensions hook`` answers, by the name the command takes."""


def agent(name: str) -> HookAgent:
    """The table of agent ``name`` (only its module is imported: a hook call pays for one)."""
    module, table = _AGENT_TABLES[name]
    found: HookAgent = getattr(importlib.import_module(f"..bridges.agent_hooks.{module}", __package__), table)
    return found


def run_hook(agent_name: str, event: str, root: Path | None = None, home: Path | None = None) -> int:
    """Answer one hook call: the agent's payload from stdin, the answer to stdout; the exit code.

    With no host running for the project, the project's background host is started (user
    extensions from ``home``; :mod:`extension_host.bridges.agent_hooks.host_start`) and asked; if it
    is turned off, does not come up, or the runtime folder cannot be used, a host is started
    for this call and stopped after it. All of it within one deadline from the start
    (:mod:`extension_host.bridges.agent_hooks.deadline`).
    """
    deadline = HookDeadline()  # from the command's start: reading stdin counts too
    hook_agent = agent(agent_name)
    stdin = sys.stdin.buffer.read(MAX_HOOK_INPUT_BYTES + 1) if sys.stdin is not None else b""

    def background(project_root: Path, params: dict[str, Any], deadline: HookDeadline) -> dict[str, Any] | None:
        from ..bridges.agent_hooks.host_start import ask_background_host

        answer: dict[str, Any] | None = ask_background_host(project_root, METHOD_HOOK, params, home, deadline)
        return answer

    def one_shot(project_root: Path, params: dict[str, Any], deadline: HookDeadline) -> dict[str, Any]:
        from ..bridges.agent_hooks.one_shot import run_once

        return run_once(project_root, params, home, deadline)

    # The root is resolved inside: a root that cannot be used is an answer (a guard blocks), not a crash.
    reply = run_agent_hook(
        hook_agent,
        event,
        stdin,
        Path(root) if root is not None else None,
        one_shot=one_shot,
        background=background,
        deadline=deadline,
    )
    if reply.stdout:
        sys.stdout.write(reply.stdout)
        sys.stdout.flush()
    if reply.stderr:
        sys.stderr.write(reply.stderr)
        sys.stderr.flush()
    return reply.exit_code


def add_hook_command(commands: Any) -> None:
    """Add ``hook`` (its agents and ``install``) to the ``extensions`` parser's subcommands."""
    text = "answer Claude Code or Gemini CLI hook calls with this project's extensions, or install the hooks"
    parser = commands.add_parser("hook", help=text, description=text)
    parser.set_defaults(run=lambda _args: _usage(parser))
    actions = parser.add_subparsers(dest="agent", metavar="AGENT")
    for name in AGENT_NAMES:
        table = agent(name)
        sub = actions.add_parser(
            name,
            help=f"answer one {table.display_name} hook call (its JSON on stdin)",
            description=f"answer one {table.display_name} hook call: its JSON on stdin, the answer on stdout",
        )
        sub.add_argument("event", help=f"the {table.display_name} event: {', '.join(table.events)}")
        sub.set_defaults(run=lambda args: run_hook(args.agent, args.event, args.root, args.home))
    sub = actions.add_parser(
        "install",
        help="merge the hook entries into Claude Code's or Gemini CLI's settings",
        description="merge the hook entries into the agent's settings file, keeping everything else in it",
    )
    sub.add_argument("target", choices=AGENT_NAMES, help="the agent")
    sub.add_argument("--user", action="store_true", help="the user's settings (default: the project's)")
    sub.add_argument("--dry-run", action="store_true", help="print the diff; change nothing")
    sub.add_argument("--json", action="store_true", help="print JSON for scripts")
    sub.set_defaults(run=_install)
    sub = actions.add_parser(
        "check",
        help="say whether Claude Code or Gemini CLI will run the installed hooks",
        description=(
            "read the agent's project and user settings back: which events have the hooks, and what would keep "
            "the agent from running them (a command it cannot find, a folder Gemini CLI does not trust); "
            "exit 1 when it will not run them"
        ),
    )
    sub.add_argument("target", choices=AGENT_NAMES, help="the agent")
    sub.add_argument("--json", action="store_true", help="print JSON for scripts")
    sub.set_defaults(run=_check)
    sub = actions.add_parser(
        "stop",
        help="stop the background host hook calls started for this project",
        description="stop the background host hook calls started for this project (it stops its extensions)",
    )
    sub.add_argument("--json", action="store_true", help="print JSON for scripts")
    sub.set_defaults(run=_stop)


def _usage(parser: Any) -> int:
    from .output import EXIT_USAGE

    parser.print_help()
    return EXIT_USAGE


def _stop(args: Any) -> int:
    from ..bridges.agent_hooks.host_start import stop_background_host
    from ..errors import ExtensionHostError
    from .output import EXIT_OK, print_json, say

    root = find_project_root(args.root)
    try:
        pid = stop_background_host(root)
    except TimeoutError as exc:
        raise ExtensionHostError(str(exc)) from None
    if args.json:
        print_json({"root": str(root), "stopped": pid})
    elif pid is None:
        say(f"no background host runs for {root}")
    else:
        say(f"stopped the background host of {root} (pid {pid})")
    return EXIT_OK


def _install(args: Any) -> int:
    from ..bridges.agent_hooks.install import find_extensions_command, plan_install, settings_path
    from .output import EXIT_OK, print_json, say

    hook_agent = agent(args.target)
    root = find_project_root(args.root)
    path = settings_path(hook_agent, root, user=args.user)
    # No extensions command to name, an unusable file, or a place that may not be written raises
    # ExtensionHostError: exit 1, one line.
    program = find_extensions_command()
    change = plan_install(hook_agent, path, program, None if args.user else root)
    if change.changed and not args.dry_run:
        change.write()
    note = None
    if hook_agent.name == "gemini" and not args.user:
        from ..bridges.agent_hooks.gemini_trust import gemini_trust, trust_note

        note = trust_note(root, gemini_trust(root))
    if args.json:
        print_json(
            {
                "agent": hook_agent.name,
                "path": str(path),
                "note": note,
                "command": str(program),
                "added": list(change.added),
                "updated": list(change.updated),
                "changed": change.changed,
                "dry_run": bool(args.dry_run),
                "diff": change.diff,
            }
        )
        return EXIT_OK
    add, update = ("would add", "would update") if args.dry_run else ("added", "updated")
    done = "; ".join(
        [
            *([f"{add} hooks for {', '.join(change.added)}"] if change.added else []),
            *([f"{update} the command of {', '.join(change.updated)}"] if change.updated else []),
        ]
    )
    if args.dry_run:
        if change.diff:
            say(change.diff.rstrip("\n"))
        say(f"{path}: {done or 'already has every hook'} (dry run)")
    elif change.changed:
        say(f"{path}: {done}, running {program}")
    else:
        say(f"{path}: already has every hook; nothing changed")
    if note is not None:
        say(f"note: {note}")
    return EXIT_OK


def _check(args: Any) -> int:
    from ..bridges.agent_hooks.install import check_hooks
    from .output import EXIT_FAILED, EXIT_OK, print_json, say

    hook_agent = agent(args.target)
    root = find_project_root(args.root)
    scopes = check_hooks(hook_agent, root)
    ready = any(len(scope.events) == len(hook_agent.events) and not scope.problems for scope in scopes)
    if args.json:
        print_json(
            {
                "agent": hook_agent.name,
                "root": str(root),
                "ready": ready,
                "scopes": [
                    {
                        "scope": scope.scope,
                        "path": str(scope.path),
                        "events": list(scope.events),
                        "problems": list(scope.problems),
                    }
                    for scope in scopes
                ],
            }
        )
        return EXIT_OK if ready else EXIT_FAILED
    for scope in scopes:
        say(f"{scope.path}: hooks for {', '.join(scope.events)}" if scope.events else f"{scope.path}:")
        for problem in scope.problems:
            say(f"  problem: {problem}")
    if not scopes:
        say(
            f"no hooks of this project's extensions in {hook_agent.display_name}'s settings: "
            f"run extensions hook install {hook_agent.name}"
        )
    elif ready:
        say(f"{hook_agent.display_name} runs the hooks of {root}'s extensions")
    return EXIT_OK if ready else EXIT_FAILED
