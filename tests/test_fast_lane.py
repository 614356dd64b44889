"""The fast lane, ``pytest -m fast`` (tests/conftest.py): it exists, leaves out every test that
starts processes or runs real agents, and still takes tests from every folder of the suite."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from helpers import REPO_ROOT

pytestmark = pytest.mark.subprocess

PACKAGE_FOLDERS = ("extension_host", "extension_protocol", "sdk_extension", "sample_extensions", "bench")
"""The folders that mirror a package (or the bench): the lane must exercise each of them."""
MIN_PER_PACKAGE = 20
MIN_SHARE = 0.6
"""Of the tests that run without real agents, the share the fast lane keeps at least."""
COLLECT_TIMEOUT = 120


def collected(expression: str) -> list[str]:
    """The node ids ``pytest --collect-only -m EXPRESSION`` selects from the whole suite."""
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider", "-m", expression],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=COLLECT_TIMEOUT,
    )
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    return [line for line in completed.stdout.splitlines() if "::" in line]


def folder_of(node_id: str) -> str:
    """``tests/<folder>/...`` gives the folder; a module directly under ``tests/`` gives ``tests``."""
    parts = node_id.split("::")[0].split("/")
    return parts[1] if len(parts) > 2 else "tests"


def test_the_fast_lane_takes_tests_from_every_folder_and_none_that_start_processes() -> None:
    with ThreadPoolExecutor() as pool:  # three collections side by side
        fast, without_agents, slow_ids = pool.map(
            collected, ("fast", "not real_agent", "subprocess or slow or real_agent")
        )
    slow = set(slow_ids)
    folders = {path.relative_to(REPO_ROOT / "tests").parts[0] for path in (REPO_ROOT / "tests").glob("*/**/test_*.py")}

    per_folder = Counter(folder_of(node_id) for node_id in fast)
    assert not slow & set(fast), sorted(slow & set(fast))[:5]
    assert set(fast) <= set(without_agents)
    assert len(fast) >= MIN_SHARE * len(without_agents), (len(fast), len(without_agents))
    assert {folder for folder in folders | {"tests"} if not per_folder[folder]} == set(), per_folder
    assert all(per_folder[folder] >= MIN_PER_PACKAGE for folder in PACKAGE_FOLDERS), per_folder
