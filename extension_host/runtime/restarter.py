"""The crash-restart policy of a long-running host: a running extension that crashes is started
again after a backoff, a few times in a window (its :class:`~.budget.CrashBudget`), then
``quarantined`` until its files change or it is reloaded by name.

The restarter decides *whether* and *when*, and says so on the session; *how* an instance is
replaced (under the supervisor's lock, its tools re-announced) is the supervisor's, which it
hands in as ``restart``. It knows nothing of discovery, registries or reloads.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Final

from extension_protocol.tasks import BackgroundTasks

from .budget import CrashBudget, SlidingCount
from .instance import ExtensionInstance

__all__ = ["Restarter"]


class Restarter:
    """Restarts crashed instances within a :class:`~.budget.CrashBudget`."""

    def __init__(
        self,
        budget: CrashBudget,
        restart: Callable[[ExtensionInstance, int], Awaitable[None]],
        say: Callable[[ExtensionInstance, str], None],
    ) -> None:
        """``restart(instance, attempt)`` replaces a crashed instance once its backoff is over;
        ``say(instance, text)`` warns on the session about it."""
        self.budget: Final = budget
        self._restart = restart
        self._say = say
        self._crashes = SlidingCount(budget.restarts, budget.window)
        self._tasks = BackgroundTasks("the supervisor (restarts)")
        self._waiting: set[ExtensionInstance] = set()
        """Crashed instances whose restart is waiting for its backoff."""
        self._closing = asyncio.Event()

    def crashed(self, instance: ExtensionInstance) -> None:
        """``instance`` (the current one of its extension) crashed: restart it after a backoff,
        or quarantine it once its budget is spent."""
        if self._closing.is_set():
            return
        attempt = self._crashes.take(instance.id)
        if not attempt:
            instance.quarantine()
            self._say(
                instance,
                f"crashed again after {self.budget.restarts} restarts {self._within()}; quarantined: it is not "
                f"restarted until its files change or 'extensions reload {instance.spec.reload_name}'",
            )
            return
        delay = self.budget.delay(attempt)
        self._say(instance, f"crashed ({instance.error}); restarting it in {delay:g} s ({self.describe(attempt)})")
        self._waiting.add(instance)
        self._tasks.spawn(self._after_backoff(instance, delay, attempt))

    def waiting(self, instance: ExtensionInstance) -> bool:
        """Whether ``instance`` crashed and waits for its restart."""
        return instance in self._waiting

    def describe(self, attempt: int) -> str:
        """``restart 2 of 3 within 5 min``."""
        return f"restart {attempt} of {self.budget.restarts} {self._within()}"

    def reset(self, extension_id: str | None = None) -> None:
        """A fresh budget for one extension (new code, or asked for by name), or for all."""
        self._crashes.reset(extension_id)

    def close(self) -> None:
        """No more restarts: one waiting for its backoff gives up at once."""
        self._closing.set()

    async def wait(self) -> None:
        """Wait for the restarts under way to end."""
        await self._tasks.wait()

    async def _after_backoff(self, instance: ExtensionInstance, delay: float, attempt: int) -> None:
        try:
            async with asyncio.timeout(delay):
                await self._closing.wait()
            return  # the host is stopping
        except TimeoutError:
            pass
        self._waiting.discard(instance)
        if not self._closing.is_set():
            await self._restart(instance, attempt)

    def _within(self) -> str:
        window = self.budget.window
        return f"within {window / 60:g} min" if window >= 60 else f"within {window:g} s"
