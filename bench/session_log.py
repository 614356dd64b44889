"""The persisted session's side: what the log adds to a tool call, and how fast events append.

:func:`host_calls` times sequential ``host.call_tool("echo0")`` on a host that persists its
session or one that does not (``persist=False``), so a scenario can pit the two against each
other in the same run. :func:`append_rate` emits small events through an
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


async def host_calls(project: Path, home: Path, count: int, *, persist: bool) -> list[float]:
    """Seconds of each of ``count`` sequential ``host.call_tool("echo0")``, persisting or not."""
    async with ExtensionHost(project, home, trust=True, persist=persist) as host:
        _check_running(host)
        async with asyncio.timeout(CALL_TIMEOUT):
            return await timed_calls(lambda: _echo(host), count)


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
