"""How a one-shot command reaches extensions: the host running for the project, or one of its own.

A command asks the running host over the control socket when there is one (:func:`running_host`,
:func:`ask_host_or_load`); else it starts a host just for itself (:func:`with_host`), without
session hooks or watching, and stops it soon after (:data:`ONE_SHOT_STOP_QUIET`) with a short ladder
(:data:`ONE_SHOT_STOP_GRACE` per step).
A decision just recorded (trust, grants) is passed on to a running host by
:func:`tell_running_host`. A start that takes a while shows which extensions are still starting
(:mod:`.progress`). This module knows hosts and the control socket, not the commands. The host
is imported only when a command starts one: asking a running host takes the control client alone.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..control.client import ControlClient, connect_to_every_host, connect_to_host
from ..errors import ExtensionHostError, UnknownExtensionError, UnknownToolError
from ..outcomes import ReloadOutcome
from . import render
from .output import EXIT_FAILED, say
from .progress import host_starting

if TYPE_CHECKING:  # a command that asks a running host never imports the host
    from ..host import ExtensionHost
    from ..info import ExtensionInfo
    from ..launch.forkserver import ForkServer

__all__ = [
    "ONE_SHOT_STOP_GRACE",
    "ONE_SHOT_STOP_QUIET",
    "ask_host_or_load",
    "load_outcome",
    "running_host",
    "tell_running_host",
    "with_host",
]

ONE_SHOT_STOP_GRACE: Final = 0.5
"""Seconds each step of the stop ladder waits in a one-shot command (a long-running host: 5 s).
A well-behaved extension exits on end of stream in milliseconds."""

ONE_SHOT_STOP_QUIET: Final = 0.025
"""Seconds of quiet on an extension's connection before a one-shot command closes its stdin (a
long-running host: 0.1 s): what it asks right after joining takes it a millisecond or two, and
what it sends later, until it exits, is still handled."""


async def with_host(args: argparse.Namespace, run: Callable[[ExtensionHost], Any], **options: Any) -> int:
    """Start the project's extensions, ``run(host)``, stop them; the exit code ``run`` gives.
    ``options`` go to :class:`ExtensionHost` (the demo's agent).

    The fork server starts first, so that it boots on another core while the host is imported;
    the host uses it and this stops it after the host (used or not). The cyclic collector is off
    until the host has started (:class:`_StartWithoutCollections`)."""
    with _StartWithoutCollections() as start_over:
        fork_server = _early_fork_server(args)
        starting = asyncio.ensure_future(fork_server.start()) if fork_server is not None else None
        await asyncio.sleep(0)  # the start's first step spawns the server
        try:
            from ..host import ExtensionHost
            from ..runtime.options import Timeouts

            # A one-shot command is not a session: the session hooks are for the agents that embed the host.
            host = ExtensionHost(
                args.root,
                args.home,
                timeouts=Timeouts(
                    readiness=args.readiness_timeout, stop_grace=ONE_SHOT_STOP_GRACE, stop_quiet=ONE_SHOT_STOP_QUIET
                ),
                session_hooks=False,
                watch=False,
                persist=False,  # nor is it a conversation worth keeping
                fork_server=fork_server if fork_server is not None else True,
                **options,
            )
            async with host_starting(host):
                await host.start()
            start_over()
            try:
                code: int = await run(host)
                return code
            except (UnknownToolError, UnknownExtensionError) as exc:
                say(render.error_line(exc), err=True)
                return EXIT_FAILED
            finally:
                await host.stop()
        finally:
            if fork_server is not None and starting is not None:
                await starting
                await fork_server.stop(ONE_SHOT_STOP_GRACE)


class _StartWithoutCollections:
    """No cyclic collection while a one-shot host is imported and started; then what that made
    is frozen until the command is done.

    What the start makes (modules, classes, validators, the host) lives until the command ends,
    so the collections its allocations would set off (about fifty, each walking more of it) free
    nothing. Frozen (``gc.freeze``) once the start is over (calling the context's value), it is
    not walked by the collections the command's own work sets off either; it is unfrozen when
    the command is done, so a process that runs commands in turn (a test) still collects it
    later. The collector is turned back on only if it was on: an embedding process's choice
    stands."""

    def __init__(self) -> None:
        self._enabled = gc.isenabled()
        self._frozen = False

    def __enter__(self) -> Callable[[], None]:
        gc.disable()
        return self._start_over

    def _start_over(self) -> None:
        gc.freeze()
        self._frozen = True
        if self._enabled:
            gc.enable()

    def __exit__(self, *_exc: object) -> None:
        if self._frozen:
            gc.unfreeze()
        if self._enabled:
            gc.enable()


def _early_fork_server(args: argparse.Namespace) -> ForkServer | None:
    """The fork server the host of ``args`` would make, made before the rest of the host is
    imported; ``None`` when that host would start no Python extension (none there, none trusted)
    or would have no server (see :func:`~extension_host.launch.forkserver.fork_server_wanted`)."""
    from ..launch.forkserver import fork_server_wanted, host_fork_server

    if not fork_server_wanted():
        return None
    from ..project.discovery import discover
    from ..project.environment import scrub
    from ..project.paths import find_project_root, project_logs_dir, user_home
    from ..project.trust import TrustStore, decide_project_trust

    root, home = find_project_root(args.root), user_home(args.home)
    untrusted = decide_project_trust(root, TrustStore(home)).withheld
    if not any(
        found.startable and found.spec.runtime == "python" for found in discover(root, home, untrusted=untrusted)
    ):
        return None
    return host_fork_server(project_logs_dir(home, root), scrub(os.environ), one_shot=True)


async def running_host(args: argparse.Namespace) -> ControlClient | None:
    """The host running for the project, if there is one; says so (or that its socket was stale) on stderr."""

    def stale(_path: Path) -> None:
        say("removed a stale control socket (its host is gone)", err=True)

    client = await connect_to_host(args.root, on_stale=stale)
    if client is not None:
        say(f"(from the running host, pid {client.pid})", err=True)
    return client


async def ask_host_or_load(
    args: argparse.Namespace,
    method: str,
    params: Any,
    load: Callable[[ExtensionHost], dict[str, Any]],
    show: Callable[[dict[str, Any]], int],
) -> int:
    """``show`` the running host's answer to ``method``; with no host running, ``show`` the same
    answer built by ``load`` from a host started just for this command."""
    client = await running_host(args)
    if client is None:

        async def run(host: ExtensionHost) -> int:
            return show(load(host))

        return await with_host(args, run)
    try:
        return show(await client.request(method, params))
    finally:
        await client.close()


async def tell_running_host(
    args: argparse.Namespace, method: str, params: Any, *, every_project: bool = False
) -> list[ReloadOutcome] | None:
    """Ask the host running for the project, if any, to apply a decision just recorded (with
    ``every_project``, the host of every project that has one: a user extension's grants hold
    in every project); their outcomes (``None``: no host runs, or none could be told, which is
    said on stderr)."""

    def unreachable(exc: ExtensionHostError) -> None:
        say(render.error_line(f"the decision is recorded, but a running host cannot be told: {exc}"), err=True)

    try:
        if every_project:
            clients = await connect_to_every_host(lambda _path, exc: unreachable(exc))
        else:
            clients = [client for client in [await connect_to_host(args.root)] if client is not None]
    except ExtensionHostError as exc:
        unreachable(exc)
        return None

    async def tell(client: ControlClient) -> list[ReloadOutcome] | None:
        try:
            answer = await client.request(method, params, timeout=None)
        except ExtensionHostError as exc:
            say(render.error_line(f"the decision is recorded, but the running host did not apply it: {exc}"), err=True)
            return None
        finally:
            await client.close()
        return [ReloadOutcome.from_json(item) for item in answer["outcomes"]]

    answers = [answer for answer in await asyncio.gather(*(tell(client) for client in clients)) if answer is not None]
    return [outcome for answer in answers for outcome in answer] if answers else None


def load_outcome(info: ExtensionInfo) -> ReloadOutcome:
    """What a fresh load did to one extension, in the shape a running host's reload reports."""
    action = {"running": "started", "failed": "failed"}.get(info.status, info.status)
    return ReloadOutcome(info.id, action, info.status, info.error, info.tools)
