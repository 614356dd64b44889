"""``extensions enable`` and ``extensions disable``: switch one extension, or Copilot CLI's folder, on or off.

The decisions are :mod:`extension_host.project.enablement`'s record; these commands change it,
say what now counts (a project decision outranks a user one, so enabling for every project may
leave it disabled here, which is said), and tell the running host of the project (of every
project, for a user-wide decision), which stops or starts what the decision concerns at once.
Nothing here starts an extension or reads its code.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from ..control.methods import METHOD_REFRESH
from ..outcomes import ReloadOutcome
from ..project.discovery import Discovered, ExtensionSpec, discover
from ..project.enablement import Decision, EnablementStore, Scope, copilot_extensions_dir
from ..project.paths import find_project_root, user_home
from . import render
from .one_shot import tell_running_host
from .output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, print_json, say
from .trust_commands import find_extension

__all__ = ["disable", "enable"]


def enable(args: argparse.Namespace) -> int:
    """``extensions enable NAME [--user | --project]`` or ``extensions enable --copilot-folder``."""
    return _switch(args, True)


def disable(args: argparse.Namespace) -> int:
    """``extensions disable NAME [--user | --project]`` or ``extensions disable --copilot-folder``."""
    return _switch(args, False)


def _switch(args: argparse.Namespace, enabled: bool) -> int:
    verb = "enable" if enabled else "disable"
    if args.copilot_folder:
        if args.name is not None or args.user or args.project:
            say(render.error_line(f"'extensions {verb} --copilot-folder' takes no NAME, --user or --project"), err=True)
            return EXIT_USAGE
        return _switch_copilot_folder(args, enabled)
    if args.name is None:
        say(render.error_line(f"name the extension to {verb} (or give --copilot-folder)"), err=True)
        return EXIT_USAGE
    root = find_project_root(args.root)
    home = user_home(args.home)
    spec = find_extension(root, home, args.name)
    scope: Scope = "user" if args.user else "project" if args.project or spec.source == "project" else "user"
    store = EnablementStore(home)
    decision = store.set_enabled(root, spec.id, enabled, scope)
    outcomes = asyncio.run(tell_running_host(args, METHOD_REFRESH, None, every_project=scope == "user"))
    if args.json:
        print_json(
            {
                "extension": spec.id,
                "enabled": decision.enabled,
                "scope": scope,
                "decided_by": decision.scope,
                "project": str(root) if scope == "project" else None,
                "record": str(store.path),
                "host_outcomes": _outcomes_json(outcomes),
            }
        )
    else:
        say(_said(spec, enabled, scope, decision, store.path))
        if outcomes:
            say("the running host applied it:\n" + render.reload_outcomes(outcomes))
    return EXIT_OK if outcomes is None or all(outcome.ok for outcome in outcomes) else EXIT_FAILED


def _said(spec: ExtensionSpec, enabled: bool, scope: Scope, decision: Decision, record: Path) -> str:
    where = "in this project" if scope == "project" else "in every project"
    who = render.safe_cell(spec.id)
    lines = [f"{'enabled' if enabled else 'disabled'} {who} {where}"]
    if decision.enabled != enabled:
        state = "enabled" if decision.enabled else "disabled"
        command = f"extensions {'enable' if enabled else 'disable'} {render.safe_cell(spec.reload_name)} --project"
        lines.append(f"it stays {state} here: a project decision outranks a user one; '{command}' changes it")
    elif not enabled:
        lines.append("it is listed as disabled and never started; its folder is left as it is")
    undo = "disable" if enabled else "enable"
    flag = " --user" if scope == "user" else " --project" if spec.source != "project" else ""
    lines.append(
        f"recorded in {render.safe_cell(str(record))}; undo with: extensions {undo} "
        f"{render.safe_cell(spec.reload_name)}{flag}"
    )
    return "\n".join(lines)


def _switch_copilot_folder(args: argparse.Namespace, on: bool) -> int:
    root = find_project_root(args.root)
    home = user_home(args.home)
    store = EnablementStore(home)
    store.set_copilot_folder(on)
    folder = copilot_extensions_dir()
    found = [item for item in discover(root, home) if item.spec.source == "copilot"]
    outcomes = asyncio.run(tell_running_host(args, METHOD_REFRESH, None, every_project=True))
    if args.json:
        print_json(
            {
                "copilot_folder": on,
                "folder": str(folder),
                "extensions": [_found_json(item) for item in found],
                "record": str(store.path),
                "host_outcomes": _outcomes_json(outcomes),
            }
        )
    else:
        say(_copilot_said(on, folder, found, store.path))
        if outcomes:
            say("the running host applied it:\n" + render.reload_outcomes(outcomes))
    return EXIT_OK if outcomes is None or all(outcome.ok for outcome in outcomes) else EXIT_FAILED


def _copilot_said(on: bool, folder: Path, found: list[Discovered], record: Path) -> str:
    shown = render.safe_cell(str(folder))
    if not on:
        lines = [f"Copilot CLI's extension folder ({shown}) is no longer looked in"]
    elif not folder.is_dir():
        lines = [f"Copilot CLI's extension folder ({shown}) is looked in from now on; it does not exist yet"]
    else:
        lines = [f"the extensions in Copilot CLI's folder ({shown}) run here from now on, as copilot:NAME:"]
        for item in found:
            note = f"  (shadowed by {item.shadowed_by}: the host's own wins)" if item.shadowed_by else ""
            note = note or (f"  ({item.problem})" if item.problem else "")
            lines.append(f"  {render.safe_cell(item.spec.id)}{render.safe_cell(note)}")
        if not found:
            lines.append("  (none yet)")
    undo = "disable" if on else "enable"
    lines.append(f"recorded in {render.safe_cell(str(record))}; undo with: extensions {undo} --copilot-folder")
    return "\n".join(lines)


def _found_json(item: Discovered) -> dict[str, Any]:
    return {
        "id": item.spec.id,
        "path": str(item.spec.folder),
        "shadowed_by": item.shadowed_by,
        "problem": item.problem,
        "disabled": item.disabled,
    }


def _outcomes_json(outcomes: list[ReloadOutcome] | None) -> list[dict[str, Any]] | None:
    return None if outcomes is None else [outcome.to_json() for outcome in outcomes]
