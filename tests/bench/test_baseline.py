"""``python -m bench --baseline REF`` (bench.baseline): a real run against a commit of this
repository, interleaved, and the reuse of its build; refusals.

The run builds the baseline's venv for real (``pip install -e`` of the commit, into a cache
folder of the test's own), so it needs pip to find the project's dependencies; where pip cannot
(no network, no local copies), the test is skipped with pip's last line.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from bench_figures import figure_keys

from bench.checkout import BaselineError, resolve
from bench.procs import children_of
from helpers import REPO_ROOT

pytestmark = pytest.mark.subprocess

RUN_TIMEOUT = 600
"""Seconds a baseline run may take here, its build included (about 30 s on two cores)."""

_NETWORK = (
    "Could not find a version",
    "No matching distribution",
    "Failed to establish a new connection",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "Max retries exceeded",
)


def bench(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    """``python -m bench ARGS`` from this checkout with its own cache folder, bounded in time;
    on time-out the run and everything it started are killed."""
    process = subprocess.Popen(
        [sys.executable, "-m", "bench", *args],
        cwd=REPO_ROOT,
        env=os.environ | {"EXTENSION_HOST_CACHE_DIR": str(cache)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        for pid in _descendants(process.pid):  # found while the run lives: then they would be init's
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        process.kill()
        process.communicate()
        raise
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def _descendants(pid: int) -> list[int]:
    found, pending = [], [pid]
    while pending:
        children = children_of(pending.pop())
        found += children
        pending += children
    return found


def needs_git_checkout() -> str:
    try:
        return resolve("HEAD")
    except BaselineError as exc:
        pytest.skip(f"this copy of the project is not a git checkout: {exc}")


@pytest.mark.timeout(2 * RUN_TIMEOUT)
def test_a_baseline_run_compares_each_figure_of_both_checkouts_and_the_second_run_reuses_the_build(
    tmp_path: Path,
) -> None:
    head = needs_git_checkout()
    cache, output = tmp_path / "cache", tmp_path / "comparison.json"
    first = bench("--baseline", "HEAD", "--smoke", "--only", "round_trip", "--json", str(output), cache=cache)
    if first.returncode == 2 and "pip install failed" in first.stderr and any(m in first.stderr for m in _NETWORK):
        pytest.skip(f"pip cannot fetch the baseline's dependencies here: {first.stderr.strip().splitlines()[-1]}")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "pip install -e '.[bench,mcp,serve]'" in first.stderr
    report = json.loads(output.read_text(encoding="utf-8"))
    assert report["meta"]["baseline"]["commit"] == head
    assert report["meta"]["rounds"] == 1 and report["errors"] == {}
    figures = report["scenarios"]["round_trip"]["figures"]
    assert {f["key"] for f in figures} == figure_keys("round_trip", with_mcp=False)
    for figure in figures:
        (old,), (new,) = figure["old"]["values"], figure["new"]["values"]
        assert old > 0 and new > 0
        assert figure["ratio"]["values"] == [pytest.approx(new / old)]
        assert figure["verdict"] == ""  # one round: no spread to judge by
        assert figure["label"] in first.stdout
    assert (cache / "bench-baselines" / head / "built.json").is_file()

    second = bench("--baseline", head[:12], "--smoke", "--rounds", "2", "--only", "hook_point", cache=cache)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "built already" in second.stderr and "building it" not in second.stderr
    order = [line.removeprefix("bench: ").split(",")[0] for line in second.stderr.splitlines() if line.endswith(" ...")]
    assert order == [
        "round 1/2: hook_point by the old side",
        "round 1/2: hook_point by the new side",
        "round 2/2: hook_point by the new side",
        "round 2/2: hook_point by the old side",
    ]
    assert "(0." in second.stdout or "(1." in second.stdout  # a min–max over the two rounds


def test_a_ref_that_names_no_commit_is_refused_in_one_line(tmp_path: Path) -> None:
    needs_git_checkout()
    done = bench("--baseline", "no-such-ref-anywhere", "--smoke", "--only", "round_trip", cache=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"bench: --baseline no-such-ref-anywhere: not a commit of the repository at {REPO_ROOT}"
    ]
    assert not (tmp_path / "bench-baselines").exists()


def test_the_baseline_options_need_baseline(tmp_path: Path) -> None:
    done = bench("--smoke", "--fail-on-worse", cache=tmp_path)
    assert done.returncode == 2 and "--fail-on-worse needs --baseline" in done.stderr
