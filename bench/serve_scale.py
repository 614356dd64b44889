"""``extensions serve`` at scale: many sessions in one server process, one extension each.

:func:`sessions_run` starts ``extensions serve --stdio`` in a child (its own process group), and
this process, its one client, creates ``count`` sessions in one project whose only extension has
one tool, ``stamp``, which answers the machine's monotonic time. It reports:

- each session's ``createSession`` + ``subscribe``, one session after the other;
- ``count`` turns started at once, one per session (each one ``stamp`` call, then a reply): from
  dispatching the first to holding the last ``session/turnComplete``;
- the PSS of the server and every process below it (its fork server, every extension) after the
  turns and ``idle`` seconds, summed (``/proc/<pid>/smaps_rollup``; ``None`` where the kernel has
  none): PSS shares a page among the processes that map it, so forked extensions pay only for
  the pages they change;
- delivery latency: ``paced`` more turns, started one every :data:`PACE` seconds round-robin over
  the sessions; for each, the time from ``stamp`` answering (the time in its result, taken in
  the extension) to this client holding the decoded ``session/toolCallComplete`` that carries it.
  The clock is the machine's, shared by both processes; the latency includes the result's trip
  back from the extension, the server's mapping, folding and sending, and this client's decoding.

Every process it starts is stopped before it returns: the server by closing its stdin (it stops
its sessions), then its group and whatever is still below it by SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from extension_host.launch.interpreter import python_command
from extension_host.serve.capacity import FILE_RESERVE, SESSION_FILE_BUDGET
from extension_protocol.connection import Connection

from .host import CALL_TIMEOUT
from .procs import descendants, kill_if_same, start_time, stop_child

STAMP_EXTENSION = """
import time

from sdk_extension import join_session, tool

@tool(description="The machine's monotonic time")
async def stamp() -> str:
    return repr(time.monotonic())

join_session(tools=[stamp])
"""
"""An echo-sized extension whose tool answers the time it ran."""
TURN = [{"text": "Stamping.", "toolCalls": [{"name": "stamp", "arguments": {}}]}, {"text": "Done."}]
"""One prompt's script: a ``stamp`` call, then the answer."""
PACE = 0.002
"""Seconds between two paced turns (500 turns a second, over all sessions)."""
SERVER_STOP_WAIT = 120.0
"""Seconds the server has to stop its sessions and exit once its client is gone."""
_TRUSTING_DEPTH = 10**9
"""A nesting bound no body reaches: the client skips the depth walk a server must do."""


def make_stamp_project(root: Path) -> Path:
    """A project at ``root`` whose one extension is the ``stamp`` tool."""
    (root / ".git").mkdir(parents=True, exist_ok=True)
    folder = root / ".github" / "extensions" / "stamp"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "extension.py").write_text(STAMP_EXTENSION, encoding="utf-8")
    return root


@dataclass(slots=True)
class SessionsRun:
    """What one server with ``count`` sessions measured; seconds unless named otherwise."""

    count: int
    create: list[float] = field(default_factory=list)
    """Each session's ``createSession`` + ``subscribe``, in order."""
    burst: float = 0.0
    """``count`` one-tool turns started at once: first dispatched to last complete."""
    pss_mib: float | None = None
    """PSS of the server and every process below it, summed; ``None`` without smaps_rollup."""
    processes: int = 0
    """The processes that PSS was read from (the server included)."""
    latencies: list[float] = field(default_factory=list)
    """Of each paced turn: ``stamp`` answering to its ``toolCallComplete`` held here."""


class _Turns:
    """Counts finished turns and keeps ``stamp``'s latencies, as the actions arrive."""

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.complete = 0
        self.failures: list[str] = []
        self.changed = asyncio.Event()

    def on_action(self, envelope: Any) -> None:
        received = time.monotonic()
        action = envelope["action"]
        kind = action["type"]
        if kind == "session/toolCallComplete":
            result = action["result"]
            if not result["success"]:
                self.failures.append(json.dumps(result)[:300])
            else:
                self.latencies.append(received - float(result["content"][0]["text"]))
        elif kind == "session/turnComplete":
            self.complete += 1
        elif kind == "session/error":
            self.failures.append(json.dumps(action)[:300])
        else:
            return
        self.changed.set()

    async def until(self, complete: int) -> None:
        """Wait for ``complete`` finished turns in all (bounded by the caller)."""
        while self.complete < complete:
            if self.failures:
                raise RuntimeError(f"a served turn failed: {self.failures[0]}")
            self.changed.clear()
            await self.changed.wait()
        if self.failures:
            raise RuntimeError(f"a served turn failed: {self.failures[0]}")


def _start(connection: Connection, uri: str, turn: int) -> None:
    action = {"type": "session/turnStarted", "session": uri, "turnId": f"t{turn}", "userMessage": {"text": "go"}}
    connection.notify("dispatchAction", {"clientSeq": turn + 1, "action": action})


def _room_for(count: int) -> None:
    """Raise this process's soft limit of open files (the server inherits it) to what ``count``
    sessions take, as far as the hard limit allows: the bench measures sessions, not ``ulimit``."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = FILE_RESERVE + count * SESSION_FILE_BUDGET
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(
            resource.RLIMIT_NOFILE, (wanted if hard == resource.RLIM_INFINITY else min(wanted, hard), hard)
        )


def pss_mib(pids: list[int]) -> float | None:
    """PSS of ``pids`` summed, in MiB (those gone meanwhile count nothing); ``None`` when the
    kernel has no ``/proc/<pid>/smaps_rollup`` (before Linux 4.14, or not Linux)."""
    if not Path(f"/proc/{os.getpid()}/smaps_rollup").exists():
        return None
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
                    break
    return total / 1024


async def sessions_run(project: Path, home: Path, count: int, paced: int, idle: float) -> SessionsRun:
    """One server, ``count`` sessions; see the module's docstring."""
    home.mkdir(parents=True, exist_ok=True)
    _room_for(count)
    per_session = 1 + -(-paced // count)  # the burst's turn, then its share of the paced ones
    script = home / f"bench-sessions-{count}.json"
    script.write_text(json.dumps([TURN] * per_session), encoding="utf-8")
    env = {**os.environ, "EXTENSION_HOST_TRUST_PROJECT": "1"}
    command = python_command("-m", "extension_host", "--root", str(project), "--home", str(home), "serve")
    with open(home / f"bench-sessions-{count}.stderr", "wb") as stderr:
        process = await asyncio.create_subprocess_exec(
            *command,
            "--agent",
            f"scripted:{script}",
            "--max-sessions",
            str(count),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env=env,
            start_new_session=True,
        )
    assert process.stdin is not None and process.stdout is not None
    turns = _Turns()
    connection = Connection(
        process.stdout, process.stdin, notification_handlers={"action": turns.on_action}, max_depth=_TRUSTING_DEPTH
    )
    serving = asyncio.ensure_future(connection.serve())
    below: dict[int, int | None] = {}
    run = SessionsRun(count)
    try:
        async with asyncio.timeout(CALL_TIMEOUT * 4 + count):
            await connection.request("initialize", {"protocolVersions": ["0.1.0"], "clientId": "bench"})
            uris = [f"copilot:/bench-{number}" for number in range(count)]
            for uri in uris:
                started = time.perf_counter()
                await connection.request("createSession", {"session": uri, "workingDirectory": project.as_uri()})
                await connection.request("subscribe", {"resource": uri})
                run.create.append(time.perf_counter() - started)

            started = time.perf_counter()
            for uri in uris:
                _start(connection, uri, 0)
            await turns.until(count)
            run.burst = time.perf_counter() - started

            await asyncio.sleep(idle)
            below = {pid: start_time(pid) for pid in descendants(process.pid)}
            run.processes = 1 + len(below)
            run.pss_mib = pss_mib([process.pid, *below])

            turns.latencies.clear()
            for number in range(paced):
                _start(connection, uris[number % count], 1 + number // count)
                await asyncio.sleep(PACE)
            await turns.until(count + paced)
            run.latencies = list(turns.latencies)
        return run
    finally:
        below = below or {pid: start_time(pid) for pid in descendants(process.pid)}
        await stop_child(process, SERVER_STOP_WAIT)  # its only client is gone: it stops its sessions
        for pid, birth in below.items():  # forked extensions run in groups of their own
            kill_if_same(pid, birth)
        serving.cancel()
        await asyncio.gather(serving, return_exceptions=True)
