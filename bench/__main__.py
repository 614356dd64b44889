"""``python -m bench``: measure the host against the raw pipe floor and the MCP SDK, in one run, interleaved.

Each comparison runs its two sides alternately (A B, B A, ...) so that drift of a shared,
noisy machine hits both. Figures are medians with the min-max over runs; ratios are computed
per run and then summarised. Every process started here is stopped before the next run, and
any child a failed scenario left behind is killed before the next scenario.

    python -m bench [--quick | --smoke] [--only NAME[,NAME]] [--json FILE]
    python -m bench --baseline REF [--rounds N] [--rebuild-baseline] [--fail-on-worse] [same options]

``--baseline REF`` runs the same scenarios by this checkout and by commit REF, interleaved, and
reports each figure as new/old (:mod:`bench.baseline`).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import platform
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from . import baseline, mcp_sdk
from .procs import reap_children
from .scenarios import MODES, SCENARIOS, Context, Outcome
from .stats import Figure, readable

_OPS = {"<=": "≤", ">=": "≥", "<": "<", ">": ">"}


def _value(fig: Figure) -> str:
    unit = fig.unit if fig.unit == "x" else f" {fig.unit}"
    spread = "" if fig.runs == 1 else f" ({readable(fig.min)}–{readable(fig.max)})"
    return f"{readable(fig.median)}{unit}{spread}"


def _target(fig: Figure) -> str:
    if fig.target is None:
        return ""
    unit = fig.unit if fig.unit == "x" else f" {fig.unit}"
    return f"{_OPS[fig.target.op]} {fig.target.value:,g}{unit}"


def table(outcomes: dict[str, Outcome], errors: dict[str, str]) -> str:
    """The report: one line per figure, its target and whether the median meets it."""
    rows = [("what", "median (min–max over runs)", "target", "met")]
    for outcome in outcomes.values():
        for fig in outcome.figures:
            met = "" if fig.met is None else ("yes" if fig.met else "NO")
            rows.append((fig.label, _value(fig), _target(fig), met))
    widths = [max(len(row[column]) for row in rows) for column in range(3)]

    def line(row: tuple[str, str, str, str]) -> str:
        return f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]:<{widths[2]}}  {row[3]}".rstrip()

    lines = [line(rows[0])]
    figures = iter(rows[1:])
    for name, outcome in outcomes.items():
        lines.append(f"[{name}]")
        lines += [line(next(figures)) for _ in outcome.figures]
        lines += [f"  ({note})" for note in outcome.notes]
    lines += [f"[{name}] FAILED: {error}" for name, error in errors.items()]
    return "\n".join(lines)


def _load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


async def run(mode: str, names: list[str]) -> tuple[dict[str, Outcome], dict[str, str]]:
    """Run the named scenarios in order; a failing one is reported and the others still run."""
    settings = MODES[mode]
    outcomes: dict[str, Outcome] = {}
    errors: dict[str, str] = {}
    missing = mcp_sdk.unavailable()
    if missing:
        print(f"bench: MCP comparisons skipped: {missing}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="extension-host-bench-") as temp:
        base = Path(temp)
        ctx = Context(settings, base, base / "home", missing)
        for name in names:
            started = time.perf_counter()
            print(f"bench: {name} ...", file=sys.stderr, flush=True)
            try:
                outcomes[name] = await SCENARIOS[name](ctx)
            except Exception as exc:  # one broken scenario must not hide the others' figures
                errors[name] = f"{type(exc).__name__}: {exc}"
                traceback.print_exc()
            finally:
                leftovers = reap_children()
                if leftovers:
                    print(f"bench: {name} left {len(leftovers)} process(es) behind; killed them", file=sys.stderr)
            print(f"bench: {name} took {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    return outcomes, errors


def as_json(mode: str, outcomes: dict[str, Outcome], errors: dict[str, str], meta: dict[str, Any]) -> dict[str, Any]:
    """Everything the table shows, as data."""
    return {
        "meta": meta | {"mode": mode},
        "scenarios": {
            name: {"figures": [fig.as_json() for fig in outcome.figures], "notes": outcome.notes}
            for name, outcome in outcomes.items()
        },
        "errors": errors,
    }


def _compile_project() -> None:
    """Give the project's packages their bytecode, as an installed package has it.

    pip compiles a package's bytecode when it installs it; a source checkout run with
    PYTHONDONTWRITEBYTECODE=1 has none, which would charge every extension start with
    compiling the SDK and make start-up figures describe the checkout, not the product.
    """
    import compileall

    import extension_host
    import sdk_extension

    for package in (sdk_extension, extension_host):
        assert package.__file__ is not None  # regular packages, not namespace ones
        compileall.compile_dir(str(Path(package.__file__).parent), quiet=1)


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit code (1 if a scenario failed, 2 on bad usage)."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=(__doc__ or "").splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="few runs, for a look")
    size.add_argument("--smoke", action="store_true", help="one run of a handful of calls, for the tests")
    parser.add_argument("--only", metavar="NAME[,NAME]", help=f"run only these scenarios: {', '.join(SCENARIOS)}")
    parser.add_argument("--json", type=Path, help="also write the figures (or the comparison) to this file")
    parser.add_argument("--baseline", metavar="REF", help="compare with the same scenarios run by git commit REF")
    parser.add_argument("--rounds", type=int, metavar="N", help="rounds of each side with --baseline (3 quick, 5 full)")
    parser.add_argument("--rebuild-baseline", action="store_true", help="rebuild REF's cached checkout and venv")
    parser.add_argument("--fail-on-worse", action="store_true", help="exit 1 when a figure is WORSE than REF's")
    options = parser.parse_args(argv)
    alone = [flag for flag in ("rounds", "rebuild_baseline", "fail_on_worse") if getattr(options, flag)]
    if alone and not options.baseline:
        parser.error(f"--{alone[0].replace('_', '-')} needs --baseline")
    if options.rounds is not None and options.rounds < 1:
        parser.error("--rounds must be at least 1")
    names = list(SCENARIOS)
    if options.only:
        names = [name.strip() for name in options.only.split(",") if name.strip()]
        unknown = [name for name in names if name not in SCENARIOS]
        if unknown or not names:
            parser.error(
                f"unknown scenario(s) {', '.join(unknown) or '(none given)'}; choose from {', '.join(SCENARIOS)}"
            )
    mode = "smoke" if options.smoke else "quick" if options.quick else "full"
    if options.baseline:
        return baseline.compare(
            options.baseline,
            names,
            mode,
            options.rounds,
            rebuild=options.rebuild_baseline,
            json_path=options.json,
            fail_on_worse=options.fail_on_worse,
        )
    _compile_project()
    meta = {
        "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "machine": platform.processor() or platform.machine(),
        "mcp": mcp_sdk.mcp_version(),
        "load_at_start": _load(),
    }
    outcomes, errors = asyncio.run(run(mode, names))
    meta["load_at_end"] = _load()
    print(
        f"{mode} run, {meta['cpus']} CPUs, Python {meta['python']}, mcp {meta['mcp'] or '-'}, "
        f"load {meta['load_at_start']} -> {meta['load_at_end']}"
    )
    print(table(outcomes, errors))
    if options.json:
        options.json.write_text(json.dumps(as_json(mode, outcomes, errors, meta), indent=2), encoding="utf-8")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
