"""The tier's runner: every process a run starts is accounted for and gone afterwards, even one
that left the run's process group and session, and a run past its time is killed."""

from __future__ import annotations

import signal

import pytest

from helpers import process_exists
from real_agents.runner import Workspace

pytestmark = pytest.mark.subprocess


def test_a_process_that_left_the_runs_session_is_reported_and_killed(workspace: Workspace) -> None:
    run = workspace.run(["/bin/sh", "-c", "setsid sleep 300 & echo $!"], env=workspace.env(), timeout=30, linger=0.5)
    assert run.exit_code == 0, run.describe()
    assert [leftover["command"] for leftover in run.leftovers] == ["sleep 300"], run.leftovers
    assert not process_exists(int(run.stdout)), "the leftover still runs"


def test_processes_that_end_with_the_agent_are_not_reported(workspace: Workspace) -> None:
    run = workspace.run(["/bin/sh", "-c", "sleep 0.1 & wait"], env=workspace.env(), timeout=30)
    assert (run.exit_code, run.leftovers) == (0, []), run.describe()


def test_a_run_past_its_time_is_killed_with_its_process_group(workspace: Workspace) -> None:
    run = workspace.run(["/bin/sh", "-c", "sleep 300 & echo $!; wait"], env=workspace.env(), timeout=0.5)
    assert run.timed_out and run.exit_code == -signal.SIGKILL, run.describe()
    assert run.leftovers == [], run.leftovers
    assert not process_exists(int(run.stdout))
