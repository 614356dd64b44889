"""The status line while extensions start: which are still starting, and for how long.

Starting takes milliseconds when all is well; an extension that hangs before joining can hold a
command up to its readiness timeout (30 s by default). :func:`starting_status` says nothing for
the first :data:`SHOW_AFTER` seconds; after that, on a terminal it keeps one line on stderr,
redrawn in place every :data:`REDRAW_EVERY` seconds (``starting project:slow, user:db ...
2.4 s``; one busy with more than its process says what: ``project:web (installing npm
dependencies…)``) and erased when the start is over, so what the command prints next begins on a clean
line; to a pipe or a file it writes one plain line, once. Names are made safe (:func:`.render.safe_cell`)
and the line is cut to the terminal's width, so it never wraps (a wrapped line cannot be
redrawn in place). :func:`host_starting` is the line for a host's :meth:`start
<extension_host.host.ExtensionHost.start>` (one-shot commands, ``dev``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Final, TextIO

from . import render
from .output import is_terminal

if TYPE_CHECKING:
    from ..host import ExtensionHost

__all__ = ["REDRAW_EVERY", "SHOW_AFTER", "host_starting", "starting_status", "status_text"]

SHOW_AFTER: Final = 0.5
"""Seconds of starting before the status line appears."""
REDRAW_EVERY: Final = 0.2
"""Seconds between two drawings of the line on a terminal (the elapsed time moves)."""
_ERASE: Final = "\r\x1b[2K"
"""Back to the start of the line, and clear it."""


def status_text(what: str, starting: Sequence[str], elapsed: float) -> str:
    """``starting project:a, project:b ... 1.2 s`` (``what`` when none is named yet)."""
    names = ", ".join(render.safe_cell(name) for name in starting) or render.safe_cell(what)
    return f"starting {names} ... {elapsed:.1f} s"


@contextlib.asynccontextmanager
async def starting_status(
    what: str, still_starting: Callable[[], Sequence[str]], stream: TextIO | None = None
) -> AsyncIterator[None]:
    """Show the status line on ``stream`` (default stderr) while the block runs longer than
    :data:`SHOW_AFTER`; ``still_starting()`` names what is still starting, ``what`` stands for
    them before any is named."""
    out = stream if stream is not None else sys.stderr
    began = time.monotonic()
    terminal = out is not None and is_terminal(out)
    drawn = False

    async def show() -> None:
        nonlocal drawn
        await asyncio.sleep(SHOW_AFTER)
        if out is None:
            return
        if not terminal:
            print(status_text(what, still_starting(), time.monotonic() - began), file=out, flush=True)
            return
        try:
            width = max(20, (os.get_terminal_size(out.fileno()).columns or 80) - 1)  # 0: size unknown
        except (OSError, ValueError):
            width = 79
        while True:
            line = status_text(what, still_starting(), time.monotonic() - began)
            if len(line) > width:
                line = line[: width - 1] + "…"
            out.write(_ERASE + line)
            out.flush()
            drawn = True
            await asyncio.sleep(REDRAW_EVERY)

    task = asyncio.create_task(show())
    try:
        yield
    finally:
        task.cancel()  # it writes nothing more: it runs only when this coroutine waits
        if drawn and out is not None:
            out.write(_ERASE)
            out.flush()


def host_starting(host: ExtensionHost) -> AbstractAsyncContextManager[None]:
    """The status line while ``host`` starts: the extensions whose status is still ``starting``,
    each with what it is doing when that takes a while (``project:greet (installing 2 requirements)``)."""
    return starting_status(
        f"the extensions of {host.project_root}",
        lambda: [
            f"{info.id} ({info.activity})" if info.activity else info.id
            for info in host.extensions
            if info.status == "starting"
        ],
    )
