"""Process plumbing of the suite: start children in their own groups, stop them for sure, read memory.

Measures nothing by itself. Every child the suite starts directly runs in its own process
group, so that ``kill_group`` takes whatever it started too; ``reap_children`` is the safety
net run after every scenario, for children a failed scenario could not stop (an MCP server
whose client was cancelled, say).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

from extension_host.launch.interpreter import python_command
from extension_protocol.pipes import PipeReader

STOP_WAIT = 5.0
"""Seconds a child has to exit after its stdin closed before its group is killed."""


async def spawn_python(
    *args: str,
    stdout: int = asyncio.subprocess.PIPE,
    stderr: int | None = asyncio.subprocess.DEVNULL,
    env: Mapping[str, str] | None = None,
) -> asyncio.subprocess.Process:
    """Start ``<this python> -P ARGS`` with piped stdin (and stdout, unless given), in a new process
    group, in ``env`` (this process's environment if ``None``); like every Python process the
    project starts, it imports nothing from the working folder
    (:mod:`extension_host.launch.interpreter`)."""
    # This interpreter (sys.executable), not "python3": the python3 a PATH finds may be a shell
    # shim (a version manager's) that alone costs ~50 ms per spawn.
    return await asyncio.create_subprocess_exec(
        *python_command(*args),
        stdin=asyncio.subprocess.PIPE,
        stdout=stdout,
        stderr=stderr,
        env=env,
        start_new_session=True,
    )


def kill_group(pid: int) -> None:
    """SIGKILL a process group (a no-op if it is gone already)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def stop_child(process: asyncio.subprocess.Process, wait: float = STOP_WAIT) -> None:
    """Close the child's stdin, wait ``wait`` seconds at most, then kill its group."""
    if process.returncode is None:
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        try:
            async with asyncio.timeout(wait):
                await process.wait()
        except TimeoutError:
            kill_group(process.pid)
            await process.wait()
    # Whatever the child started in its group must not outlive it.
    kill_group(process.pid)


@contextlib.asynccontextmanager
async def child(*args: str) -> AsyncIterator[tuple[asyncio.subprocess.Process, asyncio.StreamReader]]:
    """A python child and its stdout for the length of a ``with`` block, stopped even on error.

    Its stdout is read the way the host reads an extension's (:class:`PipeReader`), so the
    floor and the host pay the same for each read.
    """
    async with piped_child(*args) as (process, stdout):
        yield process, stdout.stream


@contextlib.asynccontextmanager
async def piped_child(
    *args: str, env: Mapping[str, str] | None = None, wait: float = STOP_WAIT
) -> AsyncIterator[tuple[asyncio.subprocess.Process, PipeReader]]:
    """A python child (in ``env``) and the :class:`PipeReader` of its stdout for the length of a
    ``with`` block; stopped even on error, given ``wait`` seconds to exit after its stdin closed."""
    read_fd, write_fd = os.pipe()
    try:
        process = await spawn_python(*args, stdout=write_fd, env=env)
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)
    stdout = PipeReader(read_fd)
    try:
        yield process, stdout
    finally:
        await stop_child(process, wait)
        stdout.close()


def parent_pid(pid: int) -> int:
    """The parent of process ``pid``, from /proc (0 if it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    # The command name (field 2) may contain spaces and parentheses; fields resume after the last ')'.
    return int(stat[stat.rindex(")") + 2 :].split()[1])


def children_of(pid: int) -> list[int]:
    """The pids whose parent is ``pid``, from /proc."""
    pids = (int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit())
    return [child for child in pids if parent_pid(child) == pid]


def start_time(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks after boot, from /proc); ``None`` if it is gone.
    A pid and its start time name one process, even after the pid is reused."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2 :].split()[19])


def kill_if_same(pid: int, started: int | None) -> None:
    """SIGKILL process ``pid`` if it is still the one that started at ``started``."""
    if started is not None and start_time(pid) == started:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, theirs, ...), from one reading of /proc."""
    below: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            below.setdefault(parent_pid(int(entry.name)), []).append(int(entry.name))
    found, pending = [], list(below.get(pid, []))
    while pending:
        child = pending.pop()
        found.append(child)
        pending += below.get(child, [])
    return found


def command_line(pid: int) -> list[str]:
    """The argv of a process, ``[]`` if it is gone."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def reap_children() -> list[int]:
    """Kill every descendant of this process that is still alive, with its group; return their pids.

    Descendants, not only children: extensions forked by a host's fork server are its children,
    in groups of their own.
    """
    killed = []
    pending = children_of(os.getpid())
    while pending:
        pid = pending.pop()
        pending += children_of(pid)
        try:
            if os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        except (ProcessLookupError, PermissionError):
            pass
    return killed


def memory_mib(pid: int) -> dict[str, float]:
    """PSS and RSS of a process in MiB, from ``/proc/<pid>/smaps_rollup``.

    PSS shares each page among the processes that map it, so it is what one more such process
    costs; RSS counts shared pages in full.
    """
    values: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in ("Rss", "Pss") and rest.strip().endswith("kB"):
            values[name.lower()] = int(rest.split()[0]) / 1024
    if set(values) != {"rss", "pss"}:
        raise RuntimeError(f"no Rss/Pss in /proc/{pid}/smaps_rollup")
    return values
