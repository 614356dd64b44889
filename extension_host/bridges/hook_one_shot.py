"""A host started for one hook call, when none runs for the project.

The adapter (:mod:`.hook_adapter`) imports this only when the control socket finds no host:
it starts the project's extensions (as a one-shot command does: no session hooks, no watching,
nothing persisted, a short stop ladder), runs the one hook point, and stops them. Every such
call pays a cold start of every extension; a host kept running (``extensions dev``, ``serve``,
or an embedding application's ``ControlServer``) answers in milliseconds instead.
It owns that start and stop, nothing of the request.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Final

from ..host import ExtensionHost
from .hook_calls import parse_hook_call, run_hook_call

__all__ = ["HOOK_ONE_SHOT_STOP_GRACE", "run_once"]

HOOK_ONE_SHOT_STOP_GRACE: Final = 0.5
"""Seconds each step of the stop ladder waits (as one-shot commands do): nothing waits for the
extensions once the answer is in."""


def run_once(project_root: Path, params: dict[str, Any], home: Path | None = None) -> dict[str, Any]:
    """Start the extensions of ``project_root`` (user extensions from ``home``), run the
    ``host.hook`` request ``params``, stop them.

    Raises:
        ExtensionHostError: the host could not start (the project is not a folder, ...).
        RpcError: ``params`` are not a valid request.
    """
    call = parse_hook_call(params)

    async def run() -> dict[str, Any]:
        host = ExtensionHost(
            project_root, home, session_hooks=False, watch=False, persist=False, stop_grace=HOOK_ONE_SHOT_STOP_GRACE
        )
        await host.start()
        try:
            return await run_hook_call(host, call)
        finally:
            await host.stop()

    return asyncio.run(run())
