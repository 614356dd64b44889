"""``python -m bench.hook_adapter`` runs end to end: every side answers, every hook call is a deny.

Nothing about speed is asserted (see test_bench_smoke.py): only that each side is measured.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[2]


def test_the_hook_adapter_bench_measures_every_side() -> None:
    env = {name: value for name, value in os.environ.items() if name != "EXTENSION_HOST_RUNTIME_DIR"}
    completed = subprocess.run(
        [sys.executable, "-m", "bench.hook_adapter", "2", "1"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    counts = re.findall(r"ms \([\d.]+-[\d.]+, (\d+) calls\)", completed.stdout)
    assert counts == ["2", "2", "2", "1", "1"], completed.stdout
