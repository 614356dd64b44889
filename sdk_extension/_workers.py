"""Worker threads for sync handlers, usable for the whole life of the extension.

``concurrent.futures`` refuses new work once the main thread has finished, and a plain
extension script finishes its main thread right after ``join_session`` returns. These workers
have no such rule: daemon threads fed from a queue, added while every existing one is busy.
This module knows threads and event loops, not tools or hooks.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from typing import Any, Final

__all__ = ["run_in_worker"]

_MAX_WORKERS: Final = 32
"""Upper bound on worker threads; more concurrent sync handlers than this wait their turn."""

_Job = tuple[Callable[..., Any], tuple[Any, ...], asyncio.AbstractEventLoop, "asyncio.Future[Any]"]

_jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
_lock = threading.Lock()
_workers = 0
_idle = 0


def _deliver(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


def _work() -> None:
    global _idle
    while True:
        function, args, loop, future = _jobs.get()
        try:
            value, error = function(*args), None
        except BaseException as exc:
            value, error = None, exc
        try:
            loop.call_soon_threadsafe(_deliver, future, value, error)
        except RuntimeError:
            pass  # the loop is closed: nobody waits for this result any more
        with _lock:
            _idle += 1


def run_in_worker(function: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
    """Run ``function(*args)`` on a worker thread; await the returned future for its result."""
    global _workers, _idle
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    with _lock:
        # Each job reserves an idle worker when it is queued, so jobs queued together never
        # wait for one another while the pool may still grow.
        if _idle == 0 and _workers < _MAX_WORKERS:
            _workers += 1
            threading.Thread(target=_work, name=f"sdk-extension-worker-{_workers}", daemon=True).start()
        else:
            _idle -= 1
    _jobs.put((function, args, loop, future))
    return future
