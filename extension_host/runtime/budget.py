"""How often a long-running host restarts a crashed extension, and reloads a changing one.

Two budgets, each a count in a sliding window per extension:

- :class:`CrashBudget`: an extension that crashes after joining is restarted after a backoff
  that doubles each time, at most ``restarts`` times in ``window`` seconds; the crash after
  that quarantines it (its supervisor stops restarting it).
- :class:`ReloadBudget`: at most ``reloads`` reloads of one extension caused by its files
  changing in ``window`` seconds; past that its watching is paused (an extension that writes
  into its own folder would otherwise reload forever).

This module only counts; what a restart, a quarantine or a pause does is
:mod:`extension_host.runtime.supervisor`'s business.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

__all__ = [
    "CRASH_BACKOFF_SECONDS",
    "CRASH_RESTARTS",
    "CRASH_WINDOW_SECONDS",
    "RELOAD_STORM_RELOADS",
    "RELOAD_STORM_WINDOW_SECONDS",
    "CrashBudget",
    "ReloadBudget",
    "SlidingCount",
]

CRASH_RESTARTS: Final = 3
"""Restarts of one crashed extension allowed within :data:`CRASH_WINDOW_SECONDS`."""
CRASH_WINDOW_SECONDS: Final = 300.0
"""The window the restarts are counted in (s)."""
CRASH_BACKOFF_SECONDS: Final = 1.0
"""The wait before the first restart (s); it doubles for each further one (1, 2, 4 s)."""
RELOAD_STORM_RELOADS: Final = 5
"""Reloads of one extension caused by its files allowed within :data:`RELOAD_STORM_WINDOW_SECONDS`."""
RELOAD_STORM_WINDOW_SECONDS: Final = 10.0
"""The window those reloads are counted in (s)."""


@dataclass(frozen=True, slots=True)
class CrashBudget:
    """How a long-running host restarts an extension that crashed after joining."""

    restarts: int = CRASH_RESTARTS
    window: float = CRASH_WINDOW_SECONDS
    backoff: float = CRASH_BACKOFF_SECONDS

    def delay(self, attempt: int) -> float:
        """The wait before restart number ``attempt`` (1-based)."""
        return self.backoff * float(2 ** (attempt - 1))


@dataclass(frozen=True, slots=True)
class ReloadBudget:
    """How many reloads caused by file changes one extension may have before its watching pauses."""

    reloads: int = RELOAD_STORM_RELOADS
    window: float = RELOAD_STORM_WINDOW_SECONDS


class SlidingCount:
    """Per key, how many times something happened in the last ``window`` seconds."""

    def __init__(self, limit: int, window: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit: Final = limit
        self.window: Final = window
        self._clock = clock
        self._times: dict[str, deque[float]] = {}

    def take(self, key: str) -> int:
        """Count one more for ``key`` and return its count in the window, or 0 (not counted)
        when the window already holds ``limit``."""
        now = self._clock()
        times = self._times.setdefault(key, deque())
        while times and times[0] <= now - self.window:
            times.popleft()
        if len(times) >= self.limit:
            return 0
        times.append(now)
        return len(times)

    def reset(self, key: str | None = None) -> None:
        """Forget ``key``'s history (every key's with ``None``)."""
        if key is None:
            self._times.clear()
        else:
            self._times.pop(key, None)
