"""``extensions config NAME [KEY [VALUE]] [--user | --project] [--unset] [--json]``.

Shows an extension's settings (each with its type, its value or default, where it is set and
its description; a secret only as ``set`` or ``unset``), one of them, or sets or unsets one at
a scope: this project (the default for a project's extension) or the user's (every project; the
default for the others). A value is read by the setting's type; a secret's is read from stdin
(``-``, or left out at a terminal: a prompt that does not echo), and one given on the command
line works but gets a warning, since it is in the shell's history now. A running host is told:
the extension restarts with its new settings, or, when a secret it holds is gone, it stops.

The values are :mod:`extension_host.project.settings_store`'s, which one wins
:mod:`extension_host.project.settings`'s; this module reads the command line and prints. Its
imports wait for the command to run, so ``--help`` costs nothing.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from ..outcomes import ReloadOutcome
    from ..project.discovery import ExtensionSpec
    from ..project.manifest import Manifest, Setting
    from ..project.settings import Resolved
    from ..project.settings_store import Scope, SettingsStore

__all__ = ["add_config_command", "config"]


def add_config_command(commands: Any) -> None:
    """Add ``config`` to the ``extensions`` parser's subcommands."""
    from .parser import COMMANDS

    summary = COMMANDS["config"].summary
    parser = commands.add_parser("config", help=summary, description=summary)
    parser.add_argument("name", help="extension name or id (project:NAME, user:NAME)")
    parser.add_argument("key", nargs="?", metavar="KEY", help="one setting (none: every setting)")
    parser.add_argument(
        "value",
        nargs="?",
        metavar="VALUE",
        help="its new value; '-' reads it from stdin (for a secret, leaving it out at a terminal prompts for it)",
    )
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument(
        "--project", dest="scope", action="store_const", const="project", help="set it for this project only"
    )
    scope.add_argument("--user", dest="scope", action="store_const", const="user", help="set it for every project")
    parser.add_argument("--unset", action="store_true", help="remove the value set at the scope")
    parser.add_argument("--json", action="store_true", help="print the result as JSON (never a secret's value)")
    parser.set_defaults(run=config)


def config(args: argparse.Namespace) -> int:
    """Run ``extensions config``."""
    from ..project.paths import find_project_root, user_home
    from ..project.settings import settings_of
    from ..project.settings_store import SettingsStore
    from .output import EXIT_OK, EXIT_USAGE, say
    from .render import error_line
    from .trust_commands import find_extension

    if args.key is None and (args.unset or args.scope):
        say(error_line("name the setting to change: extensions config NAME KEY ..."), err=True)
        return EXIT_USAGE
    if args.unset and args.value is not None:
        say(error_line("--unset takes no VALUE"), err=True)
        return EXIT_USAGE
    root = find_project_root(args.root)
    spec = find_extension(root, user_home(args.home), args.name)
    store = SettingsStore(user_home(args.home))
    manifest, resolved = settings_of(store, root, spec)
    if args.key is None:
        _show_all(args, spec, manifest, resolved)
        return EXIT_OK
    item = _find(spec, manifest, resolved, args.key)
    setting = item.setting
    scope: Scope = args.scope or ("project" if spec.source == "project" else "user")
    if args.unset:
        return _unset(args, store, root, spec, setting, scope)
    if args.value is None and not (setting.secret and _stdin_is_terminal() and not args.json):
        return _show_one(args, spec, item)
    return _set(args, store, root, spec, setting, scope)


def _find(spec: ExtensionSpec, manifest: Manifest, resolved: tuple[Resolved, ...], key: str) -> Resolved:
    import difflib

    from ..errors import SettingsError

    for item in resolved:
        if item.setting.name == key:
            return item
    if not manifest.settings:
        where = f" ({manifest.path} has no [settings])" if manifest.path else " (it has no extension.toml)"
        raise SettingsError(f"{spec.id} has no settings{where}")
    names = [item.setting.name for item in resolved]
    close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise SettingsError(f"{spec.id} has no setting {key!r}; {hint}its settings: {', '.join(names)}")


def _stdin_is_terminal() -> bool:
    import sys

    return sys.stdin is not None and sys.stdin.isatty()


def _read_secret_text(args: argparse.Namespace, setting: Setting) -> str:
    """The value as typed: from argv, from stdin (``-``), or from a prompt that does not echo."""
    import getpass
    import sys

    from ..project.manifest import MAX_SETTING_TEXT

    if args.value not in (None, "-"):
        text: str = args.value
        return text
    if _stdin_is_terminal():
        return getpass.getpass(f"{setting.name} (not echoed): ")
    text = sys.stdin.read(MAX_SETTING_TEXT + 2) if sys.stdin is not None else ""
    return text[:-1] if text.endswith("\n") else text


def _set(
    args: argparse.Namespace, store: SettingsStore, root: Path, spec: ExtensionSpec, setting: Setting, scope: Scope
) -> int:
    from ..control.methods import METHOD_RELOAD
    from ..errors import SettingsError
    from ..project.manifest import parse_value
    from .output import EXIT_OK, say

    text = _read_secret_text(args, setting)
    if setting.secret and args.value not in (None, "-"):
        say(
            f"warning: the secret {setting.name} was given on the command line, so it is in your shell's history "
            "now; next time pass '-' and type it (or pipe it) instead",
            err=True,
        )
    if setting.secret and not text:
        raise SettingsError(f"no value was given for the secret {setting.name}; nothing changed")
    try:
        value = parse_value(setting.type, text.removesuffix("\r") if args.value in (None, "-") else text)
    except ValueError as exc:
        raise SettingsError(f"{spec.id}: setting {setting.name} is of type {setting.type}: {exc}") from None
    store.set(root, spec.name, setting.name, value, scope=scope, secret=setting.secret)
    outcomes = _tell_host(args, METHOD_RELOAD, {"name": spec.id})
    _report(args, spec, setting, scope, "set", None if setting.secret else value, store.path(setting.secret), outcomes)
    return EXIT_OK


def _unset(
    args: argparse.Namespace, store: SettingsStore, root: Path, spec: ExtensionSpec, setting: Setting, scope: Scope
) -> int:
    from ..control.methods import METHOD_REFRESH, METHOD_RELOAD
    from ..project.settings import settings_of
    from .output import EXIT_OK

    found = store.unset(root, spec.name, setting.name, scope=scope, secret=setting.secret)
    outcomes = None
    if found:
        _, after = settings_of(store, root, spec)
        still = next(item for item in after if item.setting.name == setting.name)
        if setting.secret and not still.is_set:
            # It holds the value no longer set: every host where it runs stops it, as a revoked grant.
            outcomes = _tell_host(args, METHOD_REFRESH, None, every_project=scope == "user")
        else:
            outcomes = _tell_host(args, METHOD_RELOAD, {"name": spec.id})
    _report(args, spec, setting, scope, "unset" if found else "not set", None, store.path(setting.secret), outcomes)
    return EXIT_OK


def _tell_host(
    args: argparse.Namespace, method: str, params: Any, *, every_project: bool = False
) -> list[ReloadOutcome] | None:
    import asyncio

    from .one_shot import tell_running_host

    return asyncio.run(tell_running_host(args, method, params, every_project=every_project))


def _shown(value: Any) -> str:
    from ..project.manifest import format_value

    return format_value(value)


def _report(
    args: argparse.Namespace,
    spec: ExtensionSpec,
    setting: Setting,
    scope: Scope,
    action: str,
    value: Any,
    record: Path,
    outcomes: list[ReloadOutcome] | None,
) -> None:
    from . import render
    from .output import print_json, say

    where = "this project" if scope == "project" else "every project (user)"
    if args.json:
        print_json(
            {
                "extension": spec.id,
                "setting": setting.name,
                "scope": scope,
                "action": action,
                "value": value,
                "secret": setting.secret,
                "record": str(record),
                "host_outcomes": None if outcomes is None else [outcome.to_json() for outcome in outcomes],
            }
        )
        return
    if action == "set":
        shown = "(secret, not shown)" if setting.secret else render.safe_cell(_shown(value))
        say(f"set {setting.name} of {render.safe_cell(spec.id)} for {where}: {shown}")
    elif action == "unset":
        say(f"unset {setting.name} of {render.safe_cell(spec.id)} for {where}")
    else:
        other = "--user" if scope == "project" else "--project"
        say(f"{setting.name} of {render.safe_cell(spec.id)} was not set for {where} (nothing changed; try {other})")
    if outcomes:
        say("the running host applied it:\n" + render.reload_outcomes(outcomes))


def _show_all(
    args: argparse.Namespace, spec: ExtensionSpec, manifest: Manifest, resolved: tuple[Resolved, ...]
) -> None:
    from . import render
    from .output import print_json, say

    if args.json:
        print_json({"extension": spec.id, "manifest": _path(manifest), "settings": [_json(item) for item in resolved]})
        return
    if not resolved:
        say(f"{render.safe_cell(spec.id)} has no settings")
        return
    rows = [
        (
            item.setting.name,
            item.setting.type + (" (secret)" if item.setting.secret else ""),
            _value_cell(item),
            item.where or "-",
            render.note_lines(item.setting.description),
        )
        for item in resolved
    ]
    say(render.table(("SETTING", "TYPE", "VALUE", "SET AT", "DESCRIPTION"), rows))


def _show_one(args: argparse.Namespace, spec: ExtensionSpec, item: Resolved) -> int:
    """The value (a secret: ``set`` or ``unset``); a plain setting without one exits 1, as
    ``git config`` does, saying how to set it."""
    from ..project.settings import config_command
    from . import render
    from .output import EXIT_FAILED, EXIT_OK, print_json, say

    if args.json:
        print_json({"extension": spec.id, **_json(item)})
    elif item.setting.secret:
        say("set" if item.is_set else "unset")
    elif item.value is not None:
        say(render.safe_text(_shown(item.value)))
    else:
        command = config_command(spec, item.setting.name, secret=False)
        say(f"{item.setting.name} has no value and no default; to set it: {command}", err=True)
        return EXIT_FAILED
    return EXIT_OK


def _value_cell(item: Resolved) -> str:
    if item.setting.secret:
        return "set" if item.is_set else "unset"
    return "unset" if item.value is None else _shown(item.value)


def _json(item: Resolved) -> dict[str, Any]:
    setting = item.setting
    data: dict[str, Any] = {
        "name": setting.name,
        "type": setting.type,
        "secret": setting.secret,
        "set": item.is_set,
        "where": item.where,
        "env": setting.env_name,
        "description": setting.description,
    }
    if not setting.secret:
        data["value"] = item.value
        data["default"] = setting.default
    return data


def _path(manifest: Manifest) -> str | None:
    return str(manifest.path) if manifest.path else None
