"""Which pipeline calls are still running, so a replaced extension is stopped only when idle.

Each call (a tool call with its hooks, a prompt, a session or error hook run) is tagged with
the generation current when it started. Swapping an extension for a new version starts a new
generation; the old version is stopped once every call of an earlier generation has finished
(or a bound has passed). This module counts; it does not know extensions or calls.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Iterator

__all__ = ["ActivityTracker"]


class ActivityTracker:
    """Counts running calls per generation."""

    def __init__(self) -> None:
        self.generation = 0
        self._running: Counter[int] = Counter()
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []

    @contextlib.contextmanager
    def track(self) -> Iterator[None]:
        """Count the enclosed call in the current generation."""
        generation = self.generation
        self._running[generation] += 1
        try:
            yield
        finally:
            self._running[generation] -= 1
            if not self._running[generation]:
                del self._running[generation]
            self._wake()

    def advance(self) -> int:
        """Start a new generation (something was swapped); return the one that ended."""
        self.generation += 1
        return self.generation - 1

    def busy_until(self, generation: int) -> bool:
        """True while a call of ``generation`` or earlier is running."""
        return any(g <= generation for g in self._running)

    async def wait_idle(self, generation: int, timeout: float) -> bool:
        """Wait until no call of ``generation`` or earlier runs; False if ``timeout`` passed first."""
        if not self.busy_until(generation):
            return True
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((generation, future))
        try:
            async with asyncio.timeout(timeout):
                await future
            return True
        except TimeoutError:
            return False
        finally:
            self._waiters = [(g, f) for g, f in self._waiters if f is not future]

    def _wake(self) -> None:
        for generation, future in self._waiters:
            if not future.done() and not self.busy_until(generation):
                future.set_result(None)
