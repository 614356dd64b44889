"""Signalling and stopping a process that leads its own process group.

Every process the host starts (an extension, the fork server) leads a group of its own, so
that what it starts goes with it. This module owns the two things done to such a group:
sending it a signal (:func:`signal_group`: a group that is gone, or no longer ours, is no
error) and the stop ladder (:func:`stop_group`): close the process's input (an extension's
stdin, the fork server's request socket; either exits on end of input), wait, SIGTERM the
group, wait, SIGKILL the group, each wait bounded by the same grace; once the process is gone,
SIGKILL its group again for whatever it left behind. It knows processes and signals, not what
runs in them.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable
from typing import Final, Protocol

__all__ = ["STOP_GRACE_SECONDS", "GroupLeader", "signal_group", "stop_group"]

STOP_GRACE_SECONDS: Final = 5.0
"""How long each step of the stop ladder waits before the next, harsher one."""


class GroupLeader(Protocol):
    """A child that leads its process group: spawned by asyncio or forked by the fork server."""

    @property
    def pid(self) -> int: ...
    @property
    def returncode(self) -> int | None: ...
    async def wait(self) -> int: ...


def signal_group(pgid: int, sig: signal.Signals) -> None:
    """Send ``sig`` to process group ``pgid``; a group that is already gone (or, its id reused,
    is no longer one this user may signal) is no error."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


async def stop_group(
    process: GroupLeader, grace: float = STOP_GRACE_SECONDS, close_input: Callable[[], None] | None = None
) -> int:
    """Stop ``process`` and everything in its group; return its exit code.

    ``close_input()`` asks it to exit (it is called even if the process has exited, so its
    descriptor is released); then the ladder waits ``grace`` seconds, SIGTERMs the group, waits
    ``grace`` more and SIGKILLs it. A process that is already gone costs no wait.
    """
    if close_input is not None:
        close_input()
    if process.returncode is None:
        for next_signal in (signal.SIGTERM, signal.SIGKILL):
            try:
                async with asyncio.timeout(grace):
                    await process.wait()
                break
            except TimeoutError:
                signal_group(process.pid, next_signal)
        await process.wait()
    # The leader is gone; whatever it started in its group must not outlive it.
    signal_group(process.pid, signal.SIGKILL)
    code = process.returncode
    assert code is not None
    return code
