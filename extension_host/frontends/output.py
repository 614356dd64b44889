"""What the ``extensions`` command prints, and the exit codes it ends with.

Every print of the front ends goes through :func:`say` (people) or :func:`print_json` (scripts);
their text has been built by :mod:`.render`. This module knows streams, not what is said.
"""

from __future__ import annotations

import sys
from typing import Any, Final

from . import render

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "indent", "print_json", "say"]

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
EXIT_USAGE: Final = 2


def print_json(value: Any) -> None:
    """Every ``--json`` print: the data exact, no character a terminal would act on."""
    print(render.json_text(value))


def say(text: str, *, err: bool = False) -> None:
    """Every human print, on stdout or (``err``) stderr.

    What is printed has been built by ``render``; the last pass of ``render.safe_text`` (a
    no-op on such text) keeps that true for a message composed here around a path or an
    exception.
    """
    stream = sys.stderr if err else sys.stdout
    if stream is not None:  # None: the process was started without it; print would pick stdout
        print(render.safe_text(text), file=stream, flush=err)


def indent(text: str) -> str:
    """``text`` indented under a numbered step of the demo."""
    return "\n".join(f"   {line}" if line else "" for line in text.splitlines())
