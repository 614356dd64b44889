"""The persisted session's side: what the log adds to a tool call, and how fast events append.

:func:`persisted_blocks` times sequential ``host.call_tool("echo0")`` on one host in blocks
that alternate between a session log attached to its event log and none: the same processes on
the same CPUs serve both sides, so where the machine places them (which moves a call's time by
half from one host to the next) cannot pass for the log's cost. :func:`append_rate` emits small events through an
:class:`~extension_host.events.EventLog` whose sink is a session's ``events.jsonl``, as the host
does, yielding to the event loop every :data:`BURST` events (each yield ends a loop turn: one
write), and counts events per second up to the file's close (its fsync included).
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from extension_host import ExtensionHost
from extension_host.events import EventLog
from extension_host.session.log import SessionLog

from .host import CALL_TIMEOUT, _check_running, _echo
from .stats import timed_calls

BURST = 100
"""Events emitted between two yields to the event loop."""


async def persisted_blocks(project: Path, home: Path, blocks: int, block_calls: int) -> tuple[list[float], list[float]]:
    """Seconds of each sequential ``host.call_tool("echo0")``: (with the log, without), from
    ``blocks`` blocks of ``block_calls`` calls per side, alternating A B / B A."""
    with tempfile.TemporaryDirectory(prefix="bench-log-") as folder:
        log = SessionLog(Path(folder) / "events.jsonl")
        async with ExtensionHost(project, home, trust=True, persist=False, watch=False) as host:
            _check_running(host)
            kept: list[float] = []
            bare: list[float] = []
            async with asyncio.timeout(CALL_TIMEOUT * 4):
                await timed_calls(lambda: _echo(host), block_calls)  # warm-up
                for block in range(blocks):
                    for sink in (log.append, None) if block % 2 == 0 else (None, log.append):
                        host.events.begin(sink, host.events.last_event_id)
                        times = await timed_calls(lambda: _echo(host), block_calls)
                        (kept if sink is not None else bare).extend(times)
        log.close()
        return kept, bare


async def append_rate(count: int, *, persist: bool) -> float:
    """Small events per second through ``EventLog.emit``, to a session log or to none."""
    with tempfile.TemporaryDirectory(prefix="bench-log-") as folder:
        events = EventLog()
        log = SessionLog(Path(folder) / "events.jsonl") if persist else None
        events.begin(log.append if log is not None else None)
        started = time.perf_counter()
        for number in range(count):
            events.emit("tool.execution_start", {"toolCallId": f"call-{number}", "toolName": "echo", "arguments": {}})
            if number % BURST == BURST - 1:
                await asyncio.sleep(0)
        if log is not None:
            log.close()
        elapsed = time.perf_counter() - started
        if log is not None and log.written != count:
            raise RuntimeError(f"the log has {log.written} of {count} events")
        return count / elapsed
