"""Worker threads for sync handlers, usable for the whole life of the extension.

``concurrent.futures`` refuses new work once the main thread has finished, and a plain
extension script finishes its main thread right after ``join_session`` returns. These workers
have no such rule: daemon threads fed from a queue, added while every existing one is busy.

Tools and hooks have pools of their own (:data:`TOOL_WORKERS`, :data:`HOOK_WORKERS`): a hook
stuck forever in a plain ``def`` holds a thread it never gives back, and such threads must not
be the ones tools wait for. A job whose caller gave up before a thread took it is dropped, not
run. A call whose caller gave up while it ran cannot be stopped: :class:`AbandonableRunner`
remembers it until it returns, and refuses to start more calls under the same key while
:data:`STUCK_CALLS_PER_KEY` such calls are still running. This module knows threads and event
loops, not tools or hooks.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from typing import Any, Final

__all__ = [
    "HOOK_WORKERS",
    "STUCK_CALLS_PER_KEY",
    "TOOL_WORKERS",
    "AbandonableRunner",
    "StillRunning",
    "WorkerPool",
    "hook_workers",
    "run_in_worker",
    "tool_workers",
]

TOOL_WORKERS: Final = 32
"""Threads for sync tool handlers at most; more concurrent calls than this wait their turn."""

HOOK_WORKERS: Final = 16
"""Threads for sync hook handlers at most, apart from the tools' threads; more wait their turn."""

STUCK_CALLS_PER_KEY: Final = 2
"""Calls of one hook that may still be running after the host gave up on them; while that many
are, that hook is refused at once. Six hook points times two stay under :data:`HOOK_WORKERS`,
so hooks that hang call after call never hold every hook thread. (A burst of concurrent calls
to a hook that hangs can: each started before any was given up on. Then only hooks wait;
tools have threads of their own.)"""

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


class StillRunning(Exception):
    """A call under this key was abandoned by its caller and is still running on its thread."""


class AbandonableRunner:
    """Runs functions on a pool, keyed (e.g. by hook name), and keeps track of abandoned calls.

    A call is abandoned when its awaiting task is cancelled (a timeout, a cancel request) while
    the function runs: the thread cannot be stopped, so the call is remembered until it returns.
    While ``max_stuck`` calls under one key are, :meth:`run` with that key raises
    :class:`StillRunning` at once instead of taking another thread (one stuck call still lets
    the next one try: a hook may hang on one input only). A call abandoned before a thread took
    it is never run.
    """

    def __init__(self, pool: WorkerPool, max_stuck: int = STUCK_CALLS_PER_KEY) -> None:
        self._pool = pool
        self._max_stuck = max_stuck
        self._stuck: dict[str, set[_Call]] = {}

    def stuck(self, key: str) -> int:
        """How many abandoned calls under ``key`` are still running."""
        return len(self._stuck.get(key, ()))

    async def run(self, key: str, function: Callable[..., Any], *args: Any) -> Any:
        """Run ``function(*args)`` on the pool and return its result (or raise its exception).

        Raises:
            StillRunning: ``max_stuck`` abandoned calls under ``key`` have not returned yet.
        """
        stuck = self._stuck.setdefault(key, set())
        if len(stuck) >= self._max_stuck:
            raise StillRunning(key)
        loop = asyncio.get_running_loop()
        call = _Call()

        def run() -> Any:
            with call.lock:
                if call.abandoned:
                    return None  # given up on before a thread was free: nobody waits
                call.started = True
            try:
                return function(*args)
            finally:
                with call.lock:
                    call.finished = True
                    if call.abandoned:
                        loop.call_soon_threadsafe(stuck.discard, call)

        try:
            return await self._pool.run(run)
        except asyncio.CancelledError:
            with call.lock:
                call.abandoned = True
                if call.started and not call.finished:
                    stuck.add(call)
            raise


class _Call:
    """One call: whether its thread began and ended it, and whether its caller gave up.

    The three change under ``lock``, so the thread and the loop always agree on who removes
    the call from the stuck set."""

    __slots__ = ("abandoned", "finished", "lock", "started")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.started = False
        self.finished = False
        self.abandoned = False
