"""Which pipeline calls are still running, so a replaced extension is stopped only when idle.

Each call (a tool call with its hooks, a prompt, a session or error hook run) is tagged with
the generation current when it started. Swapping an extension for a new version starts a new
generation; the old version is stopped once every call of an earlier generation has finished
(or a bound has passed). A call that itself swaps every extension (the agent's
``extensions_reload``) steps out of the count meanwhile (:meth:`ActivityTracker.released`), or it
would wait for itself, and says so afterwards (:meth:`ActivityTracker.was_released`: its post-tool
hooks are the new extensions'). This module counts; it does not know extensions or calls.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

__all__ = ["ActivityTracker"]

_TRACKED: ContextVar[list[Any] | None] = ContextVar("tracked_call", default=None)
"""``[tracker, generation, released]`` of the call the current task runs in, if any."""


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
        token = _TRACKED.set([self, generation, False])
        try:
            yield
        finally:
            _TRACKED.reset(token)
            self._release(generation)

    @contextlib.contextmanager
    def released(self) -> Iterator[None]:
        """Leave the count for the enclosed block, when the current task runs in a call this
        tracker counts; it counts again afterwards."""
        tracked = _TRACKED.get()
        if tracked is None or tracked[0] is not self:
            yield
            return
        generation = tracked[1]
        tracked[2] = True
        self._release(generation)
        try:
            yield
        finally:
            self._running[generation] += 1

    def was_released(self) -> bool:
        """Whether the call the current task runs in left the count at some point."""
        tracked = _TRACKED.get()
        return tracked is not None and tracked[0] is self and bool(tracked[2])

    def _release(self, generation: int) -> None:
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
