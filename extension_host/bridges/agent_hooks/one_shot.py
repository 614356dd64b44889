"""A host started for one hook call, when none runs for the project.

The adapter (:mod:`.adapter`) imports this only when no host answers the call: none on
the control socket and the background host off or not up in time, or a runtime folder that
cannot be used. It starts the project's extensions (as a one-shot command does: no session hooks, no watching,
nothing persisted, a short stop ladder), runs the one hook point, and stops them. Every such
call pays a cold start of every extension; a host kept running (``extensions dev``, ``serve``,
or an embedding application's ``ControlServer``) answers in milliseconds instead.
The start and the hooks draw from the hook command's deadline (:mod:`.deadline`); the
stop comes after, bounded by its own short ladder. It owns that start and stop, nothing of
the request.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Final

from ...control.hook_calls import parse_hook_call, run_hook_call
from ...host import ExtensionHost
from ...runtime.options import Timeouts
from .deadline import HookDeadline, HookDeadlineError

__all__ = ["HOOK_ONE_SHOT_STOP_GRACE", "run_once"]

HOOK_ONE_SHOT_STOP_GRACE: Final = 0.5
"""Seconds each step of the stop ladder waits (as one-shot commands do): nothing waits for the
extensions once the answer is in."""


def run_once(
    project_root: Path, params: dict[str, Any], home: Path | None = None, deadline: HookDeadline | None = None
) -> dict[str, Any]:
    """Start the extensions of ``project_root`` (user extensions from ``home``), run the
    ``host.hook`` request ``params``, stop them. Starting them and running the hooks end at
    ``deadline`` (the hook command's); stopping them follows, whatever happened.

    Raises:
        ExtensionHostError: the host could not start (the project is not a folder, ...).
        HookDeadlineError: ``deadline`` passed before the hooks answered.
        RpcError: ``params`` are not a valid request.
    """
    call = parse_hook_call(params)
    what = "starting the project's extensions for this call and running its hooks"
    seconds = deadline.left_for(what) if deadline is not None else None

    async def run() -> dict[str, Any]:
        host = ExtensionHost(
            project_root,
            home,
            session_hooks=False,
            watch=False,
            persist=False,
            timeouts=Timeouts(stop_grace=HOOK_ONE_SHOT_STOP_GRACE),
        )
        try:
            async with asyncio.timeout(seconds) as scope:
                await host.start()
                return await run_hook_call(host, call)
        except TimeoutError:
            if deadline is not None and scope.expired():
                raise HookDeadlineError(what, deadline.seconds) from None
            raise
        finally:
            await host.stop()

    return asyncio.run(run())
