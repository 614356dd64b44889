"""``python -m bench --baseline REF``: the scenarios run by this checkout and by an earlier commit,
interleaved in one run, each figure reported as new/old (:mod:`bench.comparison`).

REF's checkout and venv are built once per commit (:mod:`bench.checkout`). For each round and
each scenario both benches know (the others are dropped, and named), each side's own bench runs
in its own interpreter and checkout: ``<python> -m bench [--quick|--smoke] --only S --json F``
with the checkout as working folder (only options every version of the bench has). The order
alternates by round (old new, new old, ...), so drift of the machine hits both. Each run leads
its own process group, killed with whatever it left behind when the run ends or runs out of
time. A scenario that fails on either side is not run again; the rounds both sides completed
are still compared.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .checkout import LIST_SCENARIOS, REPOSITORY, BaselineError, build, last_line, progress, resolve, venv_environment
from .comparison import Comparison, compare_scenario, table
from .procs import kill_group

__all__ = [
    "ROUNDS",
    "RUN_TIMEOUT",
    "Side",
    "compare",
    "interleave",
    "run_scenario",
]

ROUNDS: Final = {"full": 5, "quick": 3, "smoke": 1}
"""Rounds per mode unless ``--rounds`` says otherwise."""

RUN_TIMEOUT: Final = 1800.0
"""Seconds one side's run of one scenario may take; then its process group is killed."""

_MODE_FLAGS: Final = {"full": (), "quick": ("--quick",), "smoke": ("--smoke",)}


@dataclass(frozen=True, slots=True)
class Side:
    """One side of the comparison: a checkout, and the interpreter that has it installed."""

    name: str
    """``old`` or ``new``."""
    label: str
    root: Path
    python: Path
    environment: Mapping[str, str] = field(repr=False)


def _scenarios_of(side: Side) -> list[str]:
    done = subprocess.run(
        [str(side.python), "-c", LIST_SCENARIOS],
        cwd=side.root,
        env=side.environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise BaselineError(f"the {side.name} bench does not list its scenarios: {last_line(done.stderr)}")
    return list(json.loads(done.stdout))


def run_scenario(side: Side, scenario: str, mode: str, folder: Path) -> tuple[dict[str, Any] | None, str | None]:
    """One run of ``scenario`` by ``side``'s bench: its figures and notes, or why there are none."""
    output, log = folder / f"{side.name}-{scenario}.json", folder / f"{side.name}-{scenario}.log"
    output.unlink(missing_ok=True)
    argv = [str(side.python), "-m", "bench", *_MODE_FLAGS[mode], "--only", scenario, "--json", str(output)]
    with log.open("wb") as sink:
        process = subprocess.Popen(
            argv,
            cwd=side.root,
            env=side.environment,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        code: int | None = None
        try:
            code = process.wait(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            pass
        finally:
            kill_group(process.pid)  # the run, if it is still going, and whatever it left behind
            process.wait()
    if code is None:
        return None, f"took more than {RUN_TIMEOUT:.0f} s"
    try:
        report: dict[str, Any] = json.loads(output.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, f"exited with {code}: {last_line(log.read_text(encoding='utf-8', errors='replace'))}"
    error = report.get("errors", {}).get(scenario)
    if error or code != 0 or scenario not in report.get("scenarios", {}):
        return None, error or f"exited with {code} and no figures"
    scenario_report: dict[str, Any] = report["scenarios"][scenario]
    return scenario_report, None


def _load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def _this_side() -> Side:
    try:
        head = resolve("HEAD")[:12]
    except BaselineError:
        head = "?"
    return Side("new", f"this checkout (HEAD {head})", REPOSITORY, Path(sys.executable), dict(os.environ))


Runs = dict[str, dict[str, list[dict[str, Any]]]]
"""Per side (``old``, ``new``) and scenario, what each completed round reported."""


def interleave(old: Side, new: Side, names: list[str], mode: str, rounds: int) -> tuple[Runs, dict[str, str]]:
    """Run each scenario by both sides, ``rounds`` times, alternating which goes first; return
    what each run reported and, per failed scenario, why (it is not run again)."""
    runs: Runs = {side.name: {name: [] for name in names} for side in (old, new)}
    errors: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="extension-host-baseline-") as temp:
        for round_ in range(rounds):
            for name in names:
                for side in (old, new) if round_ % 2 == 0 else (new, old):
                    if name in errors:
                        break
                    started = time.perf_counter()
                    progress(f"round {round_ + 1}/{rounds}: {name} by the {side.name} side, {side.label} ...")
                    result, error = run_scenario(side, name, mode, Path(temp))
                    if result is None:
                        errors[name] = f"on the {side.name} side, {side.label}: {error}"
                    else:
                        runs[side.name][name].append(result)
                    took = time.perf_counter() - started
                    progress(f"round {round_ + 1}/{rounds}: {name} by the {side.name} side took {took:.1f} s")
    return runs, errors


def _compared(runs: Runs) -> dict[str, tuple[list[Comparison], list[str]]]:
    """Each scenario's comparison over the rounds both sides completed, with both sides' notes."""
    results: dict[str, tuple[list[Comparison], list[str]]] = {}
    for name, old_runs in runs["old"].items():
        done = min(len(old_runs), len(runs["new"][name]))
        if not done:
            continue
        sides = {"baseline": old_runs[:done], "new": runs["new"][name][:done]}
        comparisons, notes = compare_scenario(*([run["figures"] for run in side] for side in sides.values()))
        for who, side in sides.items():
            notes += [f"{who}: {note}" for note in dict.fromkeys(n for run in side for n in run["notes"])]
        results[name] = comparisons, notes
    return results


def compare(
    ref: str,
    names: list[str],
    mode: str,
    rounds: int | None,
    *,
    rebuild: bool,
    json_path: Path | None,
    fail_on_worse: bool,
) -> int:
    """The whole comparison; the exit code: 0, 1 if a scenario failed on either side (or, with
    ``fail_on_worse``, a figure is WORSE), 2 if the comparison could not start."""
    rounds = ROUNDS[mode] if rounds is None else rounds
    try:
        commit = resolve(ref)
        entry = build(commit, rebuild=rebuild)
        label = commit[:12] if commit.startswith(ref) else f"{commit[:12]} ({ref})"
        venv = entry / "venv"
        old = Side("old", label, entry / "src", venv / "bin" / "python", venv_environment(venv))
        new = _this_side()
        known = _scenarios_of(old)
    except BaselineError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    dropped = [name for name in names if name not in known]
    if dropped:
        progress(f"not in the baseline's bench, dropped: {', '.join(dropped)}")
    meta: dict[str, Any] = {
        "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "mode": mode,
        "rounds": rounds,
        "baseline": {"ref": ref, "commit": commit, "checkout": str(old.root)},
        "new": {"label": new.label, "checkout": str(new.root)},
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_at_start": _load(),
        "dropped": dropped,
    }
    runs, errors = interleave(old, new, [name for name in names if name in known], mode, rounds)
    results = _compared(runs)
    meta["load_at_end"] = _load()
    print(
        f"{mode} run, {rounds} round(s): baseline {old.label} against {new.label}; {meta['cpus']} CPUs, "
        f"Python {meta['python']}, load {meta['load_at_start']} -> {meta['load_at_end']}"
    )
    if dropped:
        print(f"(not in the baseline's bench, dropped: {', '.join(dropped)})")
    print(table(results, errors))
    if json_path is not None:
        scenarios = {
            name: {"figures": [c.as_json() for c in comparisons], "notes": notes}
            for name, (comparisons, notes) in results.items()
        }
        json_path.write_text(json.dumps({"meta": meta, "scenarios": scenarios, "errors": errors}, indent=2), "utf-8")
    worse = any(c.verdict == "WORSE" for comparisons, _ in results.values() for c in comparisons)
    return 1 if errors or (fail_on_worse and worse) else 0
