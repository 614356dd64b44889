"""``extensions trust`` and ``extensions grant``: record what the user decided, and tell a running host.

Trust in a project and grants of sensitive variables are :mod:`extension_host.project.trust`'s records;
these commands change them, show what the project's extensions are, and pass the decision on to
the host running for the project (which starts, stops or restarts what the decision concerns):
a grant reloads the extension, so it asks again and gets the value; a revocation makes the host
look at every grant again, which stops whatever holds a value taken back.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path
from typing import Any

from ..control.methods import METHOD_REFRESH, METHOD_RELOAD
from ..errors import UnknownExtensionError
from ..project.discovery import ExtensionSpec, discover
from ..project.environment import VARIABLE_NAME, is_sensitive
from ..project.paths import find_project_root, user_home
from ..project.trust import TrustStore
from . import render
from .one_shot import tell_running_host
from .output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, print_json, say

__all__ = ["grant", "spec_json", "trust"]


def trust(args: argparse.Namespace) -> int:
    """``extensions trust [--revoke | --allow-failed-guards]``."""
    allow = bool(args.allow_failed_guards)  # never with --revoke: the parser refuses both
    root = find_project_root(args.root)
    home = user_home(args.home)
    store = TrustStore(home)
    store.set_project_trusted(root, not args.revoke, allow_failed_guards=allow)
    specs = [found.spec for found in discover(root, home) if found.spec.source == "project"]
    outcomes = asyncio.run(tell_running_host(args, METHOD_REFRESH, None))
    if args.json:
        print_json(
            {
                "project": str(root),
                "trusted": not args.revoke,
                "allow_failed_guards": allow,
                "record": str(store.path),
                "extensions": [spec_json(spec) for spec in specs],
                "host_outcomes": None if outcomes is None else [outcome.to_json() for outcome in outcomes],
            }
        )
    else:
        say(render.trust_change(root, not args.revoke, specs, store.path, allow_failed_guards=allow))
        if outcomes:
            say("the running host applied it:\n" + render.reload_outcomes(outcomes))
    return EXIT_OK if outcomes is None or all(outcome.ok for outcome in outcomes) else EXIT_FAILED


def grant(args: argparse.Namespace) -> int:
    """``extensions grant NAME [VAR...] [--revoke]``."""
    bad = [name for name in args.variables if not VARIABLE_NAME.fullmatch(name)]
    if bad:
        say(render.error_line(f"{bad[0]!r} is not an environment variable name"), err=True)
        return EXIT_USAGE
    root = find_project_root(args.root)
    home = user_home(args.home)
    spec = find_extension(root, home, args.name)
    store = TrustStore(home)
    if not args.variables:
        granted = store.granted(root, spec.source, spec.name)
    elif args.revoke:
        granted = store.revoke(root, spec.source, spec.name, args.variables)
    else:
        granted = store.grant(root, spec.source, spec.name, args.variables)
    notes = [
        f"{name} is not withheld from extensions: they have it without a grant"
        for name in args.variables
        if not args.revoke and not is_sensitive(name, os.environ.get(name))
    ]
    outcomes = None
    if args.revoke and args.variables:
        # The running host stops at once whatever holds a value no longer granted; a user
        # extension's grants hold in every project, so every running host is told.
        outcomes = asyncio.run(tell_running_host(args, METHOD_REFRESH, None, every_project=spec.source == "user"))
    elif args.variables:
        # It restarts the extension, so that it asks again and gets what it is granted now.
        outcomes = asyncio.run(tell_running_host(args, METHOD_RELOAD, {"name": spec.id}))
    if args.json:
        print_json(
            {
                "extension": spec.id,
                "project": str(root) if spec.source == "project" else None,
                "granted": sorted(granted),
                "record": str(store.path),
                "notes": notes,
                "host_outcomes": None if outcomes is None else [outcome.to_json() for outcome in outcomes],
            }
        )
    else:
        say(render.grants(spec.id, args.variables, args.revoke, sorted(granted)))
        for note in notes:
            say(f"note: {note}", err=True)
        if outcomes:
            say("the running host applied it:\n" + render.reload_outcomes(outcomes))
    return EXIT_OK


def find_extension(root: Path, home: Path, name: str) -> ExtensionSpec:
    """The extension ``name`` (or id) discovered in ``root`` and ``home``, without running any.

    A name is the project's extension of that name if it has one, else the user's.
    """
    specs = [found.spec for found in discover(root, home)]
    for spec in specs:
        if name in (spec.id, spec.name):
            return spec
    raise UnknownExtensionError(name, [spec.id for spec in specs])


def spec_json(spec: ExtensionSpec) -> dict[str, Any]:
    """A discovered extension in ``--json`` form."""
    return {
        "id": spec.id,
        "name": spec.name,
        "path": str(spec.folder),
        "entry": spec.entry_name,
        "runtime": spec.runtime,
        "link_target": str(spec.link_target) if spec.link_target else None,
    }
