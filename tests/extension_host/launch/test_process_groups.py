"""Signalling and stopping a process group, with real processes: the stop ladder's three steps,
what a process leaves in its group, and the fork server stopped by the same ladder."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from extension_host.launch.forkserver import ForkServer
from extension_host.launch.process_groups import signal_group, stop_group
from helpers import run, wait_for_exit

pytestmark = pytest.mark.subprocess

EXITS_AT_END_OF_INPUT = "import sys; print('ready', flush=True); sys.stdin.buffer.read()"
IGNORES_END_OF_INPUT = "import sys, time; print('ready', flush=True); sys.stdin.buffer.read(); time.sleep(600)"
IGNORES_SIGTERM = (
    "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); "
    "sys.stdin.buffer.read(); time.sleep(600)"
)
LEAVES_A_CHILD = (
    "import subprocess, sys; child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], "
    "stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL); print(child.pid, flush=True); sys.stdin.buffer.read()"
)
"""Its child keeps none of its pipes: asyncio's ``wait()`` would wait for those to close too."""


async def _start(code: str) -> tuple[asyncio.subprocess.Process, str]:
    """A Python process leading its own group, and the first line it printed."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        code,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stdout is not None
    line = await process.stdout.readline()
    return process, line.decode().strip()


async def _reap(process: asyncio.subprocess.Process) -> None:
    """Kill what is left of its group and read its output to the end, which releases its pipes."""
    signal_group(process.pid, signal.SIGKILL)
    assert process.stdout is not None
    await process.stdout.read()
    await process.wait()


def _close_stdin(process: asyncio.subprocess.Process) -> None:
    assert process.stdin is not None
    process.stdin.close()


@pytest.mark.parametrize(
    ("code", "grace", "exit_code"),
    [
        pytest.param(EXITS_AT_END_OF_INPUT, 30, 0, id="a process that exits at end of input is stopped by closing it"),
        pytest.param(
            IGNORES_END_OF_INPUT,
            0.2,
            -signal.SIGTERM,
            id="a process that ignores end of input gets SIGTERM after the grace",
        ),
        pytest.param(
            IGNORES_SIGTERM, 0.2, -signal.SIGKILL, id="a process that ignores SIGTERM gets SIGKILL after a second grace"
        ),
    ],
)
def test_the_stop_ladder_ends_a_process_at_the_first_step_it_heeds(code: str, grace: float, exit_code: int) -> None:
    async def scenario() -> int:
        process, ready = await _start(code)
        assert ready == "ready"  # what it ignores is ignored by now
        try:
            return await stop_group(process, grace, lambda: _close_stdin(process))
        finally:
            await _reap(process)

    assert run(scenario()) == exit_code


def test_what_a_stopped_process_left_in_its_group_is_killed_with_it() -> None:
    async def scenario() -> tuple[int, int]:
        process, child = await _start(LEAVES_A_CHILD)
        try:
            return await stop_group(process, 30, lambda: _close_stdin(process)), int(child)
        finally:
            await _reap(process)

    code, child = run(scenario())
    assert code == 0
    assert wait_for_exit(child), "the process left in the group outlived the stop"


def test_stopping_a_process_that_has_exited_already_does_not_wait_the_grace() -> None:
    async def scenario() -> int:
        process, _ = await _start(EXITS_AT_END_OF_INPUT)
        _close_stdin(process)
        await process.wait()
        try:
            async with asyncio.timeout(15):  # the grace is 30 s per step
                return await stop_group(process, 30, lambda: _close_stdin(process))
        finally:
            await _reap(process)

    assert run(scenario()) == 0


def test_signal_group_reaches_every_process_in_the_group() -> None:
    async def scenario() -> tuple[int, bool]:
        process, child = await _start(LEAVES_A_CHILD)
        try:
            signal_group(process.pid, signal.SIGKILL)
            async with asyncio.timeout(15):
                code = await process.wait()
            return code, await asyncio.to_thread(wait_for_exit, int(child))
        finally:
            await _reap(process)

    code, child_gone = run(scenario())
    assert code == -signal.SIGKILL
    assert child_gone, "the other process in the group was not signalled"


def test_signalling_a_group_that_is_gone_is_no_error() -> None:
    async def scenario() -> int:
        process, _ = await _start(EXITS_AT_END_OF_INPUT)
        _close_stdin(process)
        await _reap(process)
        return process.pid

    gone = run(scenario())
    signal_group(gone, signal.SIGTERM)  # reaped, and nothing else in its group: raises nothing


def test_a_group_that_is_no_longer_ours_is_no_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(pgid: int, sig: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    # A real one needs a group of another user: this suite may run as root.
    monkeypatch.setattr(os, "killpg", refused)
    signal_group(12345, signal.SIGTERM)


def test_the_fork_server_exits_when_its_socket_closes_before_any_signal(tmp_path: Path) -> None:
    async def scenario() -> int | None:
        server = ForkServer(os.environ, tmp_path / "forkserver.log")
        await server._running()
        process = server._process
        assert process is not None
        await server.stop(30)
        assert server.pid is None
        return process.returncode

    assert run(scenario()) == 0


def test_a_fork_server_that_cannot_exit_is_stopped_by_the_ladder_within_its_bound(tmp_path: Path) -> None:
    async def scenario() -> int | None:
        server = ForkServer(os.environ, tmp_path / "forkserver.log")
        pid = await server._running()
        process = server._process
        assert process is not None
        os.kill(pid, signal.SIGSTOP)  # it cannot see its socket close, nor act on SIGTERM
        try:
            await server.stop(0.2)
        finally:
            signal_group(pid, signal.SIGKILL)
        return process.returncode

    assert run(scenario()) == -signal.SIGKILL
