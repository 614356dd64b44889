"""The crash-restart policy on its own: restarts within the budget after a backoff, quarantine
past it, and no restart once the host closes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import cast

from extension_host.project.discovery import ExtensionSpec
from extension_host.runtime.budget import CrashBudget
from extension_host.runtime.instance import ExtensionInstance
from extension_host.runtime.restarter import Restarter


class Crashing:
    """What the restarter reads of an instance, without a process."""

    def __init__(self) -> None:
        self.spec = ExtensionSpec("flaky", "user", Path("/nowhere/flaky"))
        self.id = self.spec.id
        self.error = "it exited with code 1"
        self.quarantined = False

    def quarantine(self) -> None:
        self.quarantined = True


def run_restarter(
    budget: CrashBudget, crashes: int, *, close_after: float | None = None
) -> tuple[Crashing, list[int], list[str]]:
    """Crash one instance ``crashes`` times in a row; the restarts made and what was said."""
    instance = Crashing()
    restarted: list[int] = []
    said: list[str] = []

    async def scenario() -> None:
        async def restart(instance: ExtensionInstance, attempt: int) -> None:
            restarted.append(attempt)

        restarter = Restarter(budget, restart, lambda instance, text: said.append(text))
        for _ in range(crashes):
            restarter.crashed(cast(ExtensionInstance, instance))
        if close_after is not None:
            await asyncio.sleep(close_after)
            restarter.close()
        async with asyncio.timeout(10):
            await restarter.wait()

    asyncio.run(scenario())
    return instance, restarted, said


def test_a_crash_within_the_budget_is_restarted_after_its_backoff_and_said_so() -> None:
    instance, restarted, said = run_restarter(CrashBudget(restarts=2, window=60, backoff=0.01), crashes=1)
    assert restarted == [1]
    assert not instance.quarantined
    assert said == ["crashed (it exited with code 1); restarting it in 0.01 s (restart 1 of 2 within 1 min)"]


def test_a_crash_past_the_budget_quarantines_the_extension_and_names_the_reload_that_lifts_it() -> None:
    instance, restarted, said = run_restarter(CrashBudget(restarts=1, window=30, backoff=0.01), crashes=2)
    assert instance.quarantined
    assert restarted == [1]
    assert said[-1] == (
        "crashed again after 1 restarts within 30 s; quarantined: it is not restarted until its files change "
        "or 'extensions reload user:flaky'"
    )


def test_closing_drops_a_restart_still_waiting_for_its_backoff() -> None:
    _, restarted, said = run_restarter(CrashBudget(restarts=3, window=60, backoff=30), crashes=1, close_after=0.01)
    assert restarted == []
    assert len(said) == 1
