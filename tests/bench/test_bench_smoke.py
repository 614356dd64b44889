"""Smoke test of ``python -m bench``: every scenario runs once, with a handful of calls, and
reports figures of the right shape.

Nothing about speed is asserted: the machines this runs on are noisy, and a smoke run's
numbers mean nothing. The MCP comparisons need the ``bench`` or ``mcp`` extra (the ``test``
extra has it, so CI runs them); without it they must be skipped with a note, and the rest must
still run.
"""

from __future__ import annotations

import importlib.metadata
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from bench_figures import FIGURES, figure_keys

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[2]
SMOKE_TIMEOUT = 100
"""Seconds the whole smoke run may take (it takes ~20 s with mcp installed)."""


def _has_mcp() -> bool:
    try:
        return int(importlib.metadata.version("mcp").split(".")[0]) >= 2
    except importlib.metadata.PackageNotFoundError:
        return False


HAS_MCP = _has_mcp()


def run_bench(*args: str, output: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m bench ARGS`` from the project root, bounded in time."""
    command = [sys.executable, "-m", "bench", *args]
    if output is not None:
        command += ["--json", str(output)]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=SMOKE_TIMEOUT)


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The JSON of one ``--smoke`` run of every scenario."""
    output = tmp_path_factory.mktemp("bench") / "smoke.json"
    completed = run_bench("--smoke", output=output)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    report: dict[str, Any] = json.loads(output.read_text(encoding="utf-8"))
    report["stdout"] = completed.stdout
    return report


def test_every_scenario_ran_without_error(smoke: dict[str, Any]) -> None:
    assert smoke["errors"] == {}
    assert list(smoke["scenarios"]) == list(FIGURES)
    assert smoke["meta"]["mode"] == "smoke"


@pytest.mark.parametrize("name", list(FIGURES))
def test_scenario_figures_have_the_right_shape(smoke: dict[str, Any], name: str) -> None:
    always, with_mcp = FIGURES[name]
    if not always and not HAS_MCP:
        pytest.skip("mcp>=2 is not installed (the bench extra)")
    scenario = smoke["scenarios"][name]
    assert {figure["key"] for figure in scenario["figures"]} == figure_keys(name, with_mcp=HAS_MCP)
    if with_mcp and not HAS_MCP:
        assert any("skipped" in note and "mcp" in note for note in scenario["notes"])
    for figure in scenario["figures"]:
        values = [figure["median"], figure["min"], figure["max"]]
        assert all(isinstance(value, (int, float)) and math.isfinite(value) for value in values), figure
        assert figure["min"] <= figure["median"] <= figure["max"], figure
        assert figure["runs"] >= 1
        assert figure["unit"] in {"µs", "ms", "x", "calls/s", "events/s", "MiB"}
        if figure["target"] is None:
            assert figure["met"] is None
        else:
            assert figure["target"]["op"] in {"<=", ">=", "<", ">"}
            assert isinstance(figure["met"], bool)
        if not figure["key"].endswith("difference_us"):
            # Everything but a difference of two timings is a positive quantity.
            assert figure["median"] > 0, figure


def test_table_has_one_line_per_figure(smoke: dict[str, Any]) -> None:
    lines = smoke["stdout"].splitlines()
    for scenario in smoke["scenarios"].values():
        for figure in scenario["figures"]:
            matching = [line for line in lines if line.startswith(figure["label"] + " ")]
            assert matching, figure["label"]
            if figure["target"] is not None:
                assert matching[0].rstrip().endswith(("yes", "NO"))


def test_only_runs_a_subset(tmp_path: Path) -> None:
    output = tmp_path / "only.json"
    completed = run_bench("--smoke", "--only", "hook_point", output=output)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert list(json.loads(output.read_text(encoding="utf-8"))["scenarios"]) == ["hook_point"]


def test_only_refuses_an_unknown_scenario() -> None:
    completed = run_bench("--only", "round_trip,nope")
    assert completed.returncode == 2
    assert "nope" in completed.stderr and "round_trip" in completed.stderr
