"""Statistics of the suite: per-run summaries, interleaving, and figures with their targets.

Nothing here measures anything. A *figure* is one line of the final table: the median and the
min-max over runs of one quantity (a per-call median, a rate, a ratio computed inside each run),
and, where the issue sets one, a target that the median is checked against.
"""

from __future__ import annotations

import asyncio
import operator
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

T = TypeVar("T")
U = TypeVar("U")

_CHECKS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    ">=": operator.ge,
    "<": operator.lt,
    ">": operator.gt,
}


@dataclass(frozen=True, slots=True)
class Target:
    """A goal for a figure's median, e.g. ``Target("<=", 2.0)``."""

    op: str
    value: float

    def met(self, median: float) -> bool:
        """Whether ``median`` meets the goal."""
        return _CHECKS[self.op](median, self.value)


@dataclass(frozen=True, slots=True)
class Figure:
    """One line of the table: median and min-max over runs, in ``unit``."""

    key: str
    label: str
    unit: str
    median: float
    min: float
    max: float
    runs: int
    target: Target | None = None

    @property
    def met(self) -> bool | None:
        """Whether the target is met; ``None`` when the figure has none."""
        return None if self.target is None else self.target.met(self.median)

    def as_json(self) -> dict[str, Any]:
        """The figure as plain data, with ``met`` spelled out."""
        data = asdict(self)
        data["met"] = self.met
        return data


def readable(value: float) -> str:
    """Enough digits to read, no more: 12,345 / 123 / 12.3 / 1.23."""
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 100:
        return f"{value:.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def figure(key: str, label: str, unit: str, values: list[float], target: Target | None = None) -> Figure:
    """Summarise one value per run into a figure."""
    if not values:
        raise ValueError(f"figure {key} has no values")
    return Figure(key, label, unit, statistics.median(values), min(values), max(values), len(values), target)


def trimmed(run: list[float], warmup: int) -> list[float]:
    """The samples of one run after its warm-up (all of them if the run is shorter)."""
    return run[warmup:] if len(run) > warmup else run


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile (no interpolation: a tail value that really happened)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def run_medians(runs: list[list[float]], warmup: int, scale: float = 1.0) -> list[float]:
    """The median of each run's samples after warm-up, times ``scale``."""
    return [statistics.median(trimmed(run, warmup)) * scale for run in runs]


def run_p99s(runs: list[list[float]], warmup: int, scale: float = 1.0) -> list[float]:
    """The 99th percentile of each run's samples after warm-up, times ``scale``."""
    return [percentile(trimmed(run, warmup), 0.99) * scale for run in runs]


def ratios(numerators: list[float], denominators: list[float]) -> list[float]:
    """Per-run ratios: run i of one side over run i of the other (never across runs)."""
    return [a / b for a, b in zip(numerators, denominators, strict=True)]


async def interleaved(
    runs: int, a: Callable[[], Awaitable[T]], b: Callable[[], Awaitable[U]]
) -> tuple[list[T], list[U]]:
    """Run ``a`` and ``b`` alternately, A B then B A, so drift of the machine hits both sides."""
    first: list[T] = []
    second: list[U] = []
    for run in range(runs):
        if run % 2:
            second.append(await b())
            first.append(await a())
        else:
            first.append(await a())
            second.append(await b())
    return first, second


async def rotated(runs: int, sides: Sequence[Callable[[], Awaitable[T]]]) -> list[list[T]]:
    """Run every side once per run, the order turning by one each run (A B C, B C A, C A B, ...),
    so drift of the machine hits every side; each side's results in run order."""
    results: list[list[T]] = [[] for _ in sides]
    for run in range(runs):
        for step in range(len(sides)):
            side = (run + step) % len(sides)
            results[side].append(await sides[side]())
    return results


async def in_flight(call: Callable[[], Awaitable[Any]], total: int, width: int) -> float:
    """Make ``total`` calls with ``width`` of them in flight at any time; return the seconds taken."""
    remaining = total

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            await call()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(width)))
    return time.perf_counter() - started


async def timed_calls(call: Callable[[], Awaitable[Any]], count: int) -> list[float]:
    """Seconds of each of ``count`` sequential calls."""
    times = []
    for _ in range(count):
        started = time.perf_counter()
        await call()
        times.append(time.perf_counter() - started)
    return times
