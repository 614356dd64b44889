"""The fast lane, ``pytest -m fast`` (tests/conftest.py): it exists, leaves out every test that
starts processes or runs real agents, and still takes tests from every folder of the suite."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest

from helpers import REPO_ROOT

pytestmark = pytest.mark.subprocess

PACKAGE_FOLDERS = ("extension_host", "extension_protocol", "sdk_extension", "sample_extensions", "bench")
"""The folders that mirror a package (or the bench): the lane must exercise each of them."""
MIN_PER_PACKAGE = 20
MIN_SHARE = 0.6
"""Of the tests that run without real agents, the share the fast lane keeps at least."""
COLLECT_TIMEOUT = 120


MARKERS = """
import json, sys, pytest

class Markers:
    def pytest_collection_finish(self, session):
        print(json.dumps({item.nodeid: sorted({mark.name for mark in item.iter_markers()}) for item in session.items}))

sys.exit(pytest.main(sys.argv[1:], plugins=[Markers()]))
"""
"""A pytest run that collects the whole suite and prints each test's markers, as JSON, once the
collection hooks (tests/conftest.py's among them) have given them."""


def collected_markers() -> dict[str, set[str]]:
    """Each test of the whole suite, with the names of its markers (as ``-m`` reads them)."""
    completed = subprocess.run(
        [sys.executable, "-c", MARKERS, "--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=COLLECT_TIMEOUT,
    )
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    [line] = [line for line in completed.stdout.splitlines() if line.startswith("{")]
    return {node_id: set(names) for node_id, names in json.loads(line).items()}


def folder_of(node_id: str) -> str:
    """``tests/<folder>/...`` gives the folder; a module directly under ``tests/`` gives ``tests``."""
    parts = node_id.split("::")[0].split("/")
    return parts[1] if len(parts) > 2 else "tests"


def test_the_fast_lane_takes_tests_from_every_folder_and_none_that_start_processes() -> None:
    markers = collected_markers()
    fast = {node_id for node_id, names in markers.items() if "fast" in names}
    without_agents = {node_id for node_id, names in markers.items() if "real_agent" not in names}
    slow = {node_id for node_id, names in markers.items() if names & {"subprocess", "slow", "real_agent"}}
    folders = {path.relative_to(REPO_ROOT / "tests").parts[0] for path in (REPO_ROOT / "tests").glob("*/**/test_*.py")}

    per_folder = Counter(folder_of(node_id) for node_id in fast)
    assert not slow & fast, sorted(slow & fast)[:5]
    assert fast <= without_agents
    assert len(fast) >= MIN_SHARE * len(without_agents), (len(fast), len(without_agents))
    assert {folder for folder in folders | {"tests"} if not per_folder[folder]} == set(), per_folder
    assert all(per_folder[folder] >= MIN_PER_PACKAGE for folder in PACKAGE_FOLDERS), per_folder
