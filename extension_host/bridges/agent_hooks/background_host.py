"""The background host a hook command starts for its project: serve the control socket, exit when idle.

``python -m extension_host.bridges.agent_hooks.background_host ROOT --idle SECONDS [--home HOME] [--ready-fd FD]``
is what :mod:`.host_start` runs, detached, when a hook command finds no host for the
project. It starts the project's extensions as a watching host (an edited extension is
reloaded, as under ``extensions dev``; nothing is persisted, no session hooks of its own: the
agent's session events arrive as hook calls), opens the project's control socket, writes one
byte to ``--ready-fd`` once the socket answers (and closes it: a starter that reads end of file
without that byte knows the start failed), and serves hook calls (and ``extensions list``,
``inspect``, ``reload``) until no control connection has come for ``--idle`` seconds, or
SIGTERM/SIGINT (which also cut a start short: an extension slow to join does not hold it). Either
way it closes the socket and stops every extension (those still starting too) before it exits.

It owns the idle clock and that life cycle; the requests are the control server's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any, Final

from ...control.service import ControlServer
from ...errors import ExtensionHostError
from ...host import ExtensionHost
from ...runtime.options import Timeouts

__all__ = ["HOOK_HOST_STOP_GRACE", "IdleControlServer", "main", "serve_until_idle"]

HOOK_HOST_STOP_GRACE: Final = 2.0
"""Seconds each step of the background host's stop ladder waits: nobody waits for it, so the
extensions get the time to end cleanly."""


class IdleControlServer(ControlServer):
    """A :class:`~extension_host.control.service.ControlServer` that knows when it was last used.

    A connection counts as use from when it opens to when it closes, so a long hook call
    (a guard that takes its time) never lets the host fall idle under it.
    """

    def __init__(self, host: ExtensionHost, idle: float) -> None:
        super().__init__(host)
        self.idle: Final = idle
        self._active = 0
        self._touched = asyncio.Event()

    async def _serve_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._active += 1
        self._touched.set()
        try:
            await super()._serve_client(reader, writer)
        finally:
            self._active -= 1
            self._touched.set()

    async def wait_idle(self) -> None:
        """Return once no connection has been open for :attr:`idle` seconds."""
        while True:
            self._touched.clear()
            if self._active:
                await self._touched.wait()
                continue
            try:
                async with asyncio.timeout(self.idle):
                    await self._touched.wait()
            except TimeoutError:
                if not self._active:
                    return


async def serve_until_idle(root: Path, home: Path | None, idle: float, ready_fd: int | None = None) -> int:
    """Run the background host of ``root`` until idle for ``idle`` seconds or a stop signal;
    returns the exit code (1 when it could not start, with the reason on stderr)."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    host = ExtensionHost(
        root, home, session_hooks=False, persist=False, timeouts=Timeouts(stop_grace=HOOK_HOST_STOP_GRACE)
    )
    control = IdleControlServer(host, idle)
    try:
        # A stop signal during the start (an extension slow to join) stops it at once: what
        # started by then is stopped below.
        if not await _unless_stopped(host.start(), stop):
            print("extensions hook host: asked to stop while starting; stopping", flush=True)
            return 0
        try:
            await control.start()
        except ExtensionHostError as exc:
            print(f"extensions hook host: {exc}", file=sys.stderr, flush=True)
            return 1
        if ready_fd is not None:
            with contextlib.suppress(OSError):
                os.write(ready_fd, b"1")
            os.close(ready_fd)
        print(f"extensions hook host: serving {root} (pid {os.getpid()}, idle exit after {idle:g} s)", flush=True)
        went_idle = await _unless_stopped(control.wait_idle(), stop)
        print(f"extensions hook host: {'idle' if went_idle else 'asked to stop'}; stopping", flush=True)
        return 0
    finally:
        await control.close()
        await host.stop()


async def _unless_stopped(work: Coroutine[Any, Any, object], stop: asyncio.Event) -> bool:
    """Run ``work`` until it ends (``True``; its exception is raised) or ``stop`` is set first
    (``False``: ``work`` is cancelled)."""
    working = asyncio.ensure_future(work)
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({working, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (working, stopping):
            task.cancel()
        await asyncio.gather(working, stopping, return_exceptions=True)
    if working.cancelled():
        return False
    working.result()
    return True


def main(argv: Sequence[str] | None = None) -> int:
    """The background host's command line (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m extension_host.bridges.agent_hooks.background_host")
    parser.add_argument("root", type=Path)
    parser.add_argument("--idle", type=float, required=True)
    parser.add_argument("--home", type=Path)
    parser.add_argument("--ready-fd", type=int)
    args = parser.parse_args(argv)
    try:
        return asyncio.run(serve_until_idle(args.root, args.home, args.idle, args.ready_fd))
    except ExtensionHostError as exc:
        print(f"extensions hook host: {exc}", file=sys.stderr, flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
