"""``extensions schema events|api [--output FILE]``: print (or write) a shipped JSON Schema.

It reads the file shipped in :mod:`extension_host.schemas`, so it is as fast as ``cat`` and
never builds the models; ``python -m extension_host.schemas`` is what writes the files.
"""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from pathlib import Path

from ..schemas import SCHEMA_FILES
from . import render
from .output import EXIT_FAILED, EXIT_OK, say

__all__ = ["add_schema_arguments", "schema"]


def add_schema_arguments(sub: argparse.ArgumentParser) -> None:
    """The arguments of ``extensions schema``."""
    sub.add_argument(
        "which",
        choices=tuple(SCHEMA_FILES),
        metavar="SCHEMA",
        help="events: session-events.schema.json; api: api.schema.json",
    )
    sub.add_argument("--output", type=Path, metavar="FILE", help="write the schema to FILE instead of printing it")


def schema(args: argparse.Namespace) -> int:
    """``extensions schema events|api [--output FILE]``."""
    name = SCHEMA_FILES[args.which]
    try:
        text = resources.files("extension_host.schemas").joinpath(name).read_text(encoding="utf-8")
    except OSError as exc:
        say(
            render.error_line(f"the shipped {name} cannot be read ({exc.strerror or exc}); reinstall extension-host"),
            err=True,
        )
        return EXIT_FAILED
    if args.output is None:
        sys.stdout.write(text)
        return EXIT_OK
    try:
        args.output.write_text(text, encoding="utf-8")
    except OSError as exc:
        say(render.error_line(f"cannot write {args.output}: {exc.strerror or exc}"), err=True)
        return EXIT_FAILED
    say(f"wrote {name} to {args.output}", err=True)
    return EXIT_OK
