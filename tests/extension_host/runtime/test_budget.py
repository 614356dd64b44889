"""The crash and reload budgets: counts in a sliding window, and the restart backoff."""

from __future__ import annotations

from extension_host.runtime.budget import CRASH_BACKOFF_SECONDS, CRASH_RESTARTS, CrashBudget, SlidingCount


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_default_crash_budget_restarts_three_times_after_one_two_and_four_seconds() -> None:
    budget = CrashBudget()
    assert (budget.restarts, CRASH_RESTARTS, CRASH_BACKOFF_SECONDS) == (3, 3, 1.0)
    assert [budget.delay(attempt) for attempt in (1, 2, 3)] == [1.0, 2.0, 4.0]
    assert budget.window == 300.0


def test_a_sliding_count_refuses_past_its_limit_until_the_window_moves_on() -> None:
    clock = Clock()
    count = SlidingCount(3, 10.0, clock)
    assert [count.take("a") for _ in range(3)] == [1, 2, 3]
    assert count.take("a") == 0  # a fourth within 10 s is refused, and not counted
    assert count.take("b") == 1  # keys are counted apart
    clock.now += 9.9
    assert count.take("a") == 0
    clock.now += 0.2  # the first three are now older than the window
    assert count.take("a") == 1


def test_resetting_a_key_gives_it_a_fresh_budget() -> None:
    count = SlidingCount(1, 10.0, Clock())
    assert count.take("a") == 1 and count.take("a") == 0
    count.reset("a")
    assert count.take("a") == 1
    count.take("b")
    count.reset()
    assert count.take("a") == 1 and count.take("b") == 1
