"""Unit tests for extension_protocol.tasks: background tasks kept until they end, failures reported
once, and waiting for or cancelling all of them bounded."""

from __future__ import annotations

import asyncio
import gc
import warnings
from typing import Any

from extension_protocol.tasks import BackgroundTasks
from helpers import run


def test_a_task_is_kept_while_it_runs_and_let_go_once_it_ends() -> None:
    async def scenario() -> None:
        tasks = BackgroundTasks("test")
        release = asyncio.Event()

        async def work() -> str:
            await release.wait()
            return "done"

        task = tasks.spawn(work())
        del task
        gc.collect()  # the loop holds tasks weakly: only the set keeps this one alive
        assert len(tasks) == 1 and tasks
        release.set()
        assert await tasks.wait(10)
        assert len(tasks) == 0 and not tasks

    run(scenario())


def test_whoever_awaits_a_task_gets_its_result() -> None:
    async def scenario() -> str:
        async def work() -> str:
            await asyncio.sleep(0)
            return "answer"

        return await BackgroundTasks("test").spawn(work())

    assert run(scenario()) == "answer"


def test_a_failing_task_is_reported_once_to_the_owner_and_its_awaiter_still_gets_the_exception() -> None:
    reports: list[tuple[asyncio.Task[Any], BaseException]] = []

    async def scenario() -> None:
        tasks = BackgroundTasks("test", on_error=lambda task, error: reports.append((task, error)))

        async def work() -> None:
            raise ValueError("broken")

        task = tasks.spawn(work())
        try:
            await task
        except ValueError as exc:
            assert str(exc) == "broken"
        else:
            raise AssertionError("the awaiter did not get the exception")
        assert reports == [(task, task.exception())]

    run(scenario())


def test_by_default_an_unexpected_failure_goes_to_the_loop_handler_and_asyncio_does_not_repeat_it() -> None:
    contexts: list[dict[str, Any]] = []

    async def scenario() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _loop, context: contexts.append(context))
        tasks = BackgroundTasks("extension demo")

        async def work() -> None:
            raise ValueError("broken")

        tasks.spawn(work())  # nobody awaits it
        assert await tasks.wait(10)
        await asyncio.sleep(0)  # the callback that marks the exception seen runs on this turn
        gc.collect()  # a task whose exception nobody saw would be reported now, as it is freed

    run(scenario())
    assert [(c["message"], type(c["exception"]).__name__) for c in contexts] == [
        ("a background task of extension demo failed", "ValueError")
    ]


def test_a_cancelled_task_is_no_failure() -> None:
    reports: list[BaseException] = []

    async def scenario() -> None:
        tasks = BackgroundTasks("test", on_error=lambda _task, error: reports.append(error))
        started = asyncio.Event()

        async def work() -> None:
            started.set()
            await asyncio.Event().wait()

        tasks.spawn(work())
        await started.wait()
        assert await tasks.cancel(10)
        assert not tasks

    run(scenario())
    assert reports == []


def test_wait_includes_tasks_started_while_it_waits() -> None:
    order: list[str] = []

    async def scenario() -> None:
        tasks = BackgroundTasks("test")

        async def second() -> None:
            await asyncio.sleep(0)
            order.append("second")

        async def first() -> None:
            tasks.spawn(second())
            order.append("first")

        tasks.spawn(first())
        assert await tasks.wait(10)
        order.append("waited")

    run(scenario())
    assert order == ["first", "second", "waited"]


def test_wait_gives_up_at_its_bound_and_says_so() -> None:
    async def scenario() -> bool:
        tasks = BackgroundTasks("test")
        tasks.spawn(asyncio.Event().wait())
        try:
            return await tasks.wait(0.05)
        finally:
            await tasks.cancel(10)

    assert run(scenario()) is False


def test_cancel_ends_every_task_and_one_that_refuses_is_left_at_the_bound() -> None:
    async def scenario() -> tuple[bool, bool]:
        tasks = BackgroundTasks("test")
        stubborn_may_end = asyncio.Event()

        async def stubborn() -> None:
            while not stubborn_may_end.is_set():
                try:
                    await stubborn_may_end.wait()
                except asyncio.CancelledError:
                    pass  # refuses to be cancelled until told

        plain = tasks.spawn(asyncio.Event().wait())
        tasks.spawn(stubborn())
        await asyncio.sleep(0)  # both have started
        all_ended = await tasks.cancel(0.05)
        plain_cancelled = plain.cancelled()
        stubborn_may_end.set()
        assert await tasks.wait(10)
        return all_ended, plain_cancelled

    assert run(scenario()) == (False, True)


def test_a_task_cancelled_before_it_started_is_let_go_without_a_never_awaited_warning() -> None:
    async def scenario() -> None:
        tasks = BackgroundTasks("test")
        tasks.spawn(asyncio.sleep(0)).cancel()  # cancelled before its first step
        await asyncio.sleep(0)
        assert not tasks
        assert await tasks.wait(10)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(scenario())
        gc.collect()
    assert [str(w.message) for w in caught if "never awaited" in str(w.message)] == []
