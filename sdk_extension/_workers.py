"""Worker threads for sync handlers, usable for the whole life of the extension.

``concurrent.futures`` refuses new work once the main thread has finished, and a plain
extension script finishes its main thread right after ``join_session`` returns. These workers
have no such rule: daemon threads fed from a queue, added while every existing one is busy.

Tools and hooks have pools of their own (:data:`TOOL_WORKERS`, :data:`HOOK_WORKERS`): a hook
stuck forever in a plain ``def`` holds a thread it never gives back, and such threads must not
be the ones tools wait for. A job whose caller gave up before a thread took it is dropped, not
run. This module knows threads and event loops, not tools or hooks.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from typing import Any, Final

__all__ = ["HOOK_WORKERS", "TOOL_WORKERS", "WorkerPool", "hook_workers", "run_in_worker", "tool_workers"]

TOOL_WORKERS: Final = 32
"""Threads for sync tool handlers at most; more concurrent calls than this wait their turn."""

HOOK_WORKERS: Final = 8
"""Threads for sync hook handlers at most, apart from the tools' threads; more wait their turn."""

_Job = tuple[Callable[..., Any], tuple[Any, ...], asyncio.AbstractEventLoop, "asyncio.Future[Any]"]


def _deliver(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


class WorkerPool:
    """Daemon threads, at most ``max_workers``, running jobs from one queue in order."""

    def __init__(self, name: str, max_workers: int) -> None:
        self._name = name
        self._max_workers = max_workers
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._workers = 0
        self._idle = 0

    @property
    def workers(self) -> int:
        """Threads started so far (they never end)."""
        return self._workers

    def _work(self) -> None:
        while True:
            function, args, loop, future = self._jobs.get()
            if future.cancelled():
                # Its caller gave up (a timeout, a cancel) before the job began: running it
                # now would only hold a thread for an answer nobody reads.
                value, error = None, None
            else:
                try:
                    value, error = function(*args), None
                except BaseException as exc:
                    value, error = None, exc
                try:
                    loop.call_soon_threadsafe(_deliver, future, value, error)
                except RuntimeError:
                    pass  # the loop is closed: nobody waits for this result any more
            with self._lock:
                self._idle += 1

    def run(self, function: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        """Run ``function(*args)`` on a worker thread; await the returned future for its result.

        Cancelling the future before a thread took the job drops the job.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        with self._lock:
            # Each job reserves an idle worker when it is queued, so jobs queued together never
            # wait for one another while the pool may still grow.
            if self._idle == 0 and self._workers < self._max_workers:
                self._workers += 1
                threading.Thread(
                    target=self._work, name=f"sdk-extension-{self._name}-{self._workers}", daemon=True
                ).start()
            else:
                self._idle -= 1
        self._jobs.put((function, args, loop, future))
        return future


tool_workers: Final = WorkerPool("worker", TOOL_WORKERS)
"""The pool of sync tool handlers (and anything else that is not a hook)."""

hook_workers: Final = WorkerPool("hook", HOOK_WORKERS)
"""The pool of sync hook handlers."""


def run_in_worker(function: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
    """Run ``function(*args)`` on a tool worker thread; await the returned future for its result."""
    return tool_workers.run(function, *args)
