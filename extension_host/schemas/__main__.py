"""``python -m extension_host.schemas [--check]``: write the schema files from the models, or
(``--check``) only say whether the shipped ones are up to date (exit 1 if not)."""

from __future__ import annotations

import argparse
import sys

from extension_host.schemas.generate import stale_files, write_files

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Write (or check) the shipped schema files; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m extension_host.schemas",
        description="Generate session-events.schema.json and api.schema.json from the models.",
    )
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file is out of date")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files()
        for name in stale:
            print(f"{name} is out of date; run: python -m extension_host.schemas", file=sys.stderr)
        return 1 if stale else 0
    for path in write_files():
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
