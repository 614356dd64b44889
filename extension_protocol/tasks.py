"""Background tasks an owner starts and does not await itself: kept, reported, ended together.

Owns one thing: the set of tasks an object (a host's extension instance, its supervisor, the
control server, an extension's session) runs beside its own work. Each task is held by a strong
reference until it ends (the loop keeps only a weak one, so an untracked task can vanish
mid-run), an exception nobody expected is reported rather than lost, and the owner can wait for
all of them or cancel all of them, each bounded. It knows nothing of what the tasks do.

No done callback on the way to success: a task lets go of itself as it returns, which costs
no extra turn of the loop (an extension runs every tool call as one of these).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

__all__ = ["BackgroundTasks"]

_T = TypeVar("_T")


class BackgroundTasks:
    """A set of running tasks, each dropped once it ends.

    ``owner`` names whose tasks these are in a report. ``on_error(task, exception)`` is called
    when a task ends with an exception (not a cancellation); by default it goes to the loop's
    exception handler (asyncio logs it, with its traceback: it is a bug, for a developer). The
    exception stays the task's, so whoever awaits the task still gets it, and asyncio does not
    report it a second time.
    """

    def __init__(self, owner: str, on_error: Callable[[asyncio.Task[Any], BaseException], None] | None = None) -> None:
        self._owner = owner
        self._on_error = on_error
        self._tasks: dict[asyncio.Task[Any], Coroutine[Any, Any, Any]] = {}
        """Each running task, with the coroutine it runs (closed if the task is cancelled before
        it starts, which ends it without running a line of :meth:`_run`)."""

    def spawn(self, coroutine: Coroutine[Any, Any, _T]) -> asyncio.Task[_T]:
        """Run ``coroutine`` as a task kept until it ends; return the task (awaiting it is optional)."""
        task = asyncio.get_running_loop().create_task(self._run(coroutine))
        if not task.done():  # an eager task may have ended already, and let go of itself
            self._tasks[task] = coroutine
        return task

    async def _run(self, coroutine: Coroutine[Any, Any, _T]) -> _T:
        try:
            return await coroutine
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            task = asyncio.current_task()
            assert task is not None
            self._report(task, exc)
            # Marks the exception as seen once the task is done, so asyncio's own "never
            # retrieved" message does not repeat the report; only on this rare path.
            task.add_done_callback(_retrieve)
            raise
        finally:
            self._tasks.pop(asyncio.current_task(), None)  # type: ignore[arg-type]

    def _report(self, task: asyncio.Task[Any], exc: BaseException) -> None:
        if self._on_error is not None:
            self._on_error(task, exc)
            return
        task.get_loop().call_exception_handler(
            {"message": f"a background task of {self._owner} failed", "exception": exc, "task": task}
        )

    def _live(self) -> list[asyncio.Task[Any]]:
        """The tasks still running, after dropping any that ended without running (cancelled
        before their first step)."""
        for task, coroutine in list(self._tasks.items()):
            if task.done():
                del self._tasks[task]
                coroutine.close()
        return list(self._tasks)

    def __len__(self) -> int:
        return len(self._live())

    def __bool__(self) -> bool:
        return bool(self._live())

    def __iter__(self) -> Iterator[asyncio.Task[Any]]:
        return iter(self._live())

    async def wait(self, timeout: float | None = None) -> bool:
        """Wait until every task has ended, those started meanwhile included; ``True`` if they
        all did within ``timeout`` seconds (``None``: no bound). Their outcomes are their own."""
        try:
            async with asyncio.timeout(timeout):
                while tasks := self._live():
                    await asyncio.wait(tasks)
        except TimeoutError:
            return False
        return True

    async def cancel(self, timeout: float) -> bool:
        """Cancel every task and wait up to ``timeout`` seconds for them to end; ``True`` if all did.

        A task started while they end is cancelled too.
        """
        try:
            async with asyncio.timeout(timeout):
                while tasks := self._live():
                    for task in tasks:
                        task.cancel()
                    await asyncio.wait(tasks)
        except TimeoutError:
            return False
        return True


def _retrieve(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()
