"""What the ``extensions`` command prints, and the exit codes it ends with.

Every print of the front ends goes through :func:`say` (people) or :func:`print_json` (scripts);
their text has been built by :mod:`.render`. This module knows streams, not what is said.

A table (:class:`.render.Table`) printed to a terminal is drawn by Rich: fitted to the
terminal's width (the NOTE column wraps at spaces, a word too long for its column is cut with
an ellipsis, never split) with its status column in colour (:data:`.render.STATUS_STYLES`);
``NO_COLOR`` leaves the colour out, as Rich reads it. Rich because it measures cells as the
terminal shows them (wide and combining characters) and wraps them by words, which a table of
our own would have to redo. It is imported only then: to a pipe, a file or ``--json`` the
text is printed as it is, and the command pays nothing for it. Every cell reaches Rich as a
``Text`` of text already made safe, so no markup, emoji code or highlighting is read in what
an extension wrote.
"""

from __future__ import annotations

import sys
from typing import Any, Final, TextIO

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
    if stream is None:  # the process was started without it; print would pick stdout
        return
    if isinstance(text, render.Table) and is_terminal(stream):
        _draw_table(text, stream)
    else:
        print(render.safe_text(text), file=stream, flush=err)


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (a person reads it as it is printed)."""
    try:
        return stream.isatty()
    except ValueError:  # closed
        return False


def _draw_table(table: render.Table, stream: TextIO) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    drawn = Table(box=None, show_header=table.header is not None, header_style="bold", pad_edge=False, padding=(0, 1))
    count = len(table.header if table.header is not None else table.rows[0] if table.rows else ())
    for column in range(count):
        drawn.add_column(
            Text(table.header[column]) if table.header is not None else "",
            overflow="ellipsis",
            no_wrap=column == 0 or column == table.status_column,
        )
    styles = render.STATUS_STYLES
    for row in table.rows:
        drawn.add_row(
            *(
                Text(cell, style=styles.get(cell, "") if column == table.status_column else "")
                for column, cell in enumerate(row)
            )
        )
    Console(file=stream, highlight=False, markup=False, emoji=False).print(drawn)


def indent(text: str) -> str:
    """``text`` indented under a numbered step of the demo."""
    return "\n".join(f"   {line}" if line else "" for line in text.splitlines())
