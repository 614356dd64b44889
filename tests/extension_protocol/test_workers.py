"""Unit tests for extension_protocol.workers: bounded pools, dropped jobs, abandoned calls."""

from __future__ import annotations

import asyncio
import threading

import pytest

from extension_protocol.workers import AbandonableRunner, StillRunning, WorkerPool


def test_a_pool_never_starts_more_threads_than_its_bound_and_runs_the_rest_in_turn() -> None:
    """Six blocking jobs on a pool of two: two threads, and all six finish once released."""
    pool = WorkerPool("test-bound", 2)
    release = threading.Event()

    def job(n: int) -> int:
        release.wait(10)
        return n

    async def main() -> list[int]:
        futures = [pool.run(job, n) for n in range(6)]
        assert pool.workers == 2
        release.set()
        async with asyncio.timeout(10):
            return list(await asyncio.gather(*futures))

    assert asyncio.run(main()) == list(range(6))


def test_a_job_given_up_on_before_a_thread_took_it_is_never_run() -> None:
    """Queued behind a busy thread and cancelled: the function is not called."""
    pool = WorkerPool("test-drop", 1)
    release = threading.Event()
    ran: list[str] = []

    async def main() -> None:
        busy = pool.run(release.wait, 10)
        dropped = pool.run(ran.append, "dropped")
        dropped.cancel()
        release.set()
        async with asyncio.timeout(10):
            await busy
            assert await pool.run(ran.append, "after") is None

    asyncio.run(main())
    assert ran == ["after"]


def test_a_key_with_its_abandoned_calls_still_running_is_refused_until_one_returns() -> None:
    """A call cancelled mid-run is remembered; with max_stuck=1 the same key is refused at once,
    another key runs, and once the stuck call returns the key runs again."""
    runner = AbandonableRunner(WorkerPool("test-abandon", 4), max_stuck=1)
    entered, release = threading.Event(), threading.Event()

    def hang() -> str:
        entered.set()
        release.wait(10)
        return "late"

    async def main() -> None:
        task = asyncio.ensure_future(runner.run("hook", hang))
        assert await asyncio.to_thread(entered.wait, 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert runner.stuck("hook") == 1
        with pytest.raises(StillRunning):
            await runner.run("hook", lambda: "again")
        assert await runner.run("other", lambda: "other runs") == "other runs"
        release.set()
        async with asyncio.timeout(10):
            while runner.stuck("hook"):
                await asyncio.sleep(0.01)  # the thread hands the removal to this loop
        assert await runner.run("hook", lambda: "again") == "again"

    asyncio.run(main())
