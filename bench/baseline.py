"""``python -m bench --baseline REF``: the scenarios run by this checkout and by an earlier commit,
interleaved in one run, each figure reported as new/old (:mod:`bench.comparison`).

Building the baseline. REF is resolved to a commit (``git rev-parse --verify REF^{commit}``);
its tree is written to ``<cache>/bench-baselines/<commit>/src`` (``<cache>`` is the host's cache
folder, :func:`extension_host.project.paths.cache_dir`), and a venv beside it, ``venv``, gets the
project installed as its README says (``pip install -e`` with those of the extras ``bench``,
``mcp`` and ``serve`` its ``pyproject.toml`` offers), with this interpreter's Python. The entry
is complete once ``built.json`` is written, last, after the baseline's bench imported: later runs
start at once. A build that fails or is interrupted removes its folder; one killed outright is
found without ``built.json`` and built anew. The entry is built in place rather than in a
temporary folder renamed at the end, since a venv cannot be moved (an editable install and the
scripts' ``#!`` lines name absolute paths); a lock file per commit keeps two runs from building
one entry at once. ``--rebuild-baseline`` builds it anew, and so does a change of interpreter.

Git. Every git command has :func:`extension_host.launch.git.git_command`'s hardening (no hooks,
no fsmonitor, no pager, no transport, the inherited ``GIT_*`` variables dropped), and only
commands that convert no content run: ``rev-parse``, ``ls-tree`` and ``cat-file --batch``, whose
blobs are written out as stored. ``git archive`` would not do: it converts each file for the
work tree, which runs the ``filter.<name>.smudge`` command the repository's configuration names
for a ``filter`` attribute.

Running. For each round and each scenario both benches know (the others are dropped, and
named), each side's own bench runs in its own interpreter and checkout: ``<python> -m bench
[--quick|--smoke] --only S --json F`` with the checkout as working folder (only options every
version of the bench has). The order alternates by round (old new, new old, ...), so drift of
the machine hits both. Each run leads its own process group, killed with whatever it left
behind when the run ends or runs out of time. A scenario that fails on either side is not run
again; the rounds both sides completed are still compared.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from extension_host.launch.git import git_command
from extension_host.project.paths import cache_dir

from .comparison import Comparison, compare_scenario, table
from .procs import kill_group

__all__ = [
    "BUILD_TIMEOUT",
    "EXTRAS",
    "ROUNDS",
    "RUN_TIMEOUT",
    "BaselineError",
    "Checkout",
    "build",
    "compare",
    "resolve",
    "run_scenario",
    "venv_environment",
    "write_tree",
]

EXTRAS: Final = ("bench", "mcp", "serve")
"""Extras installed in the baseline's venv, those of them its ``pyproject.toml`` offers."""

ROUNDS: Final = {"full": 5, "quick": 3, "smoke": 1}
"""Rounds per mode unless ``--rounds`` says otherwise."""

BUILD_TIMEOUT: Final = 900.0
"""Seconds each step of a build (the venv, the install) may take."""

RUN_TIMEOUT: Final = 1800.0
"""Seconds one side's run of one scenario may take; then its process group is killed."""

_MODE_FLAGS: Final = {"full": (), "quick": ("--quick",), "smoke": ("--smoke",)}
_CHECKOUT: Final = Path(__file__).resolve().parent.parent
_MARKER: Final = "built.json"
_ASIDES: Final = ("note:", "hint:")
_LIST_SCENARIOS: Final = "import json, bench.scenarios as s; print(json.dumps(list(s.SCENARIOS)))"


class BaselineError(Exception):
    """Why the comparison cannot start, in one line."""


@dataclass(frozen=True, slots=True)
class Checkout:
    """One side of the comparison: a checkout and the interpreter that has it installed."""

    name: str
    """``old`` or ``new``."""
    label: str
    root: Path
    python: Path
    environment: Mapping[str, str] = field(repr=False)


def _say(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def _last_line(text: str) -> str:
    """What a failed command said last: pip's last ``ERROR:`` line that names the error, else its
    last line that is not a note or a hint (a traceback's exception, say)."""
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith(_ASIDES)]
    errors = [line for line in lines if line.startswith("ERROR:") and line != "ERROR: Exception:"]
    return (errors or lines or [""])[-1]


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> bytes:
    argv, environment = git_command(repo, *args)
    try:
        done = subprocess.run(argv, input=stdin, capture_output=True, env=environment, timeout=120, check=False)
    except FileNotFoundError as exc:
        raise BaselineError("git is not installed") from exc
    except subprocess.TimeoutExpired as exc:
        raise BaselineError(f"git {args[0]} took more than {exc.timeout:.0f} s") from exc
    if done.returncode != 0:
        said = _last_line(done.stderr.decode(errors="replace"))
        raise BaselineError(f"git {args[0]} failed: {said}" if said else f"git {args[0]} failed")
    return done.stdout


def resolve(ref: str, repo: Path = _CHECKOUT) -> str:
    """The full commit id ``ref`` names in ``repo``."""
    failure = f"--baseline {ref}: not a commit of the repository at {repo}"
    if not ref or ref.startswith("-"):
        raise BaselineError(failure)
    try:
        return _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").decode().strip()
    except BaselineError as exc:
        raise BaselineError(failure if str(exc).endswith("failed") else f"{failure} ({exc})") from exc


def write_tree(commit: str, dest: Path, repo: Path = _CHECKOUT) -> None:
    """Write the files of ``commit`` to ``dest`` as stored (submodules left out)."""
    entries: list[tuple[bytes, bytes, Path]] = []
    for record in _git(repo, "ls-tree", "-r", "-z", "--full-tree", commit).split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, kind, oid = meta.split(b" ")
        relative = Path(os.fsdecode(raw_path))
        if relative.is_absolute() or {"..", ".git"} & set(relative.parts):
            raise BaselineError(f"the tree of {commit[:12]} has a path no checkout may have: {relative}")
        if kind == b"blob":
            entries.append((mode, oid, dest / relative))
    batch = _git(repo, "cat-file", "--batch", stdin=b"".join(oid + b"\n" for _, oid, _ in entries))
    at = 0
    for mode, oid, path in entries:
        header_end = batch.index(b"\n", at)
        found, _kind, size = batch[at:header_end].split(b" ")
        if found != oid:
            raise BaselineError(f"git cat-file answered {found.decode()} for {oid.decode()}")
        content = batch[header_end + 1 : header_end + 1 + int(size)]
        at = header_end + 1 + int(size) + 1
        path.parent.mkdir(parents=True, exist_ok=True)
        if mode == b"120000":
            path.symlink_to(os.fsdecode(content))
        else:
            path.write_bytes(content)
            path.chmod(0o755 if mode == b"100755" else 0o644)


def _run_step(what: str, argv: list[str], cwd: Path, environment: Mapping[str, str]) -> None:
    """One step of a build; a failure says which step and what it printed last."""
    try:
        done = subprocess.run(
            argv, cwd=cwd, env=environment, capture_output=True, text=True, timeout=BUILD_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise BaselineError(f"{what} took more than {BUILD_TIMEOUT:.0f} s") from exc
    if done.returncode != 0:
        said = _last_line(done.stderr or done.stdout)
        raise BaselineError(f"{what} failed (exit {done.returncode}): {said or 'it printed nothing'}")


def _extras(src: Path) -> list[str]:
    try:
        project = tomllib.loads((src / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    except (OSError, KeyError, tomllib.TOMLDecodeError) as exc:
        raise BaselineError(f"its pyproject.toml cannot be read: {exc}") from exc
    offered = project.get("optional-dependencies", {})
    return [extra for extra in EXTRAS if extra in offered]


def venv_environment(venv: Path) -> dict[str, str]:
    """This process's environment for a process of ``venv``: its ``bin`` first on ``PATH``, and
    nothing that would import this checkout instead (``PYTHONPATH``, ``PYTHONHOME``)."""
    environment = {name: value for name, value in os.environ.items() if name not in {"PYTHONPATH", "PYTHONHOME"}}
    environment["VIRTUAL_ENV"] = str(venv)
    environment["PATH"] = os.pathsep.join([str(venv / "bin"), os.environ.get("PATH", os.defpath)])
    return environment


def _stamp() -> dict[str, str]:
    """What makes a built entry usable: the interpreter its venv was made from."""
    return {"python": sys.version, "base_executable": getattr(sys, "_base_executable", sys.executable)}


def _complete(entry: Path) -> bool:
    try:
        built = json.loads((entry / _MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(built, dict) and all(built.get(name) == value for name, value in _stamp().items())


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold ``path``'s lock; wait (bounded) while another run holds it."""
    with path.open("a") as handle:
        deadline = time.monotonic() + 2 * BUILD_TIMEOUT
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError as exc:
                if time.monotonic() > deadline:
                    raise BaselineError(f"another run kept {path} locked too long") from exc
                time.sleep(1)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build(commit: str, *, rebuild: bool = False, repo: Path = _CHECKOUT) -> Path:
    """The cache entry of ``commit`` (its ``src`` and ``venv``), built if it is not there."""
    root = cache_dir() / "bench-baselines"
    root.mkdir(parents=True, exist_ok=True)
    entry = root / commit
    with _locked(root / f"{commit}.lock"):
        if not rebuild and _complete(entry):
            _say(f"baseline {commit[:12]}: built already, {entry}")
            return entry
        shutil.rmtree(entry, ignore_errors=True)
        started = time.monotonic()
        _say(f"baseline {commit[:12]}: building it in {entry} (once per commit)")
        try:
            src, venv = entry / "src", entry / "venv"
            _say(f"baseline {commit[:12]}: writing its files")
            write_tree(commit, src, repo)
            extras = _extras(src)
            _say(f"baseline {commit[:12]}: creating its venv")
            _run_step("creating the venv", [sys.executable, "-m", "venv", str(venv)], src, venv_environment(venv))
            spec = f".[{','.join(extras)}]" if extras else "."
            _say(f"baseline {commit[:12]}: pip install -e '{spec}'")
            python = str(venv / "bin" / "python")
            install = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-e", spec]
            _run_step("pip install", install, src, venv_environment(venv))
            _run_step("importing its bench", [python, "-c", _LIST_SCENARIOS], src, venv_environment(venv))
            marker = _stamp() | {"commit": commit, "extras": ",".join(extras)}
            (entry / _MARKER).write_text(json.dumps(marker, indent=2), encoding="utf-8")
        except BaseException:
            shutil.rmtree(entry, ignore_errors=True)
            raise
        _say(f"baseline {commit[:12]}: built in {time.monotonic() - started:.0f} s")
    return entry


def _scenarios_of(side: Checkout) -> list[str]:
    done = subprocess.run(
        [str(side.python), "-c", _LIST_SCENARIOS],
        cwd=side.root,
        env=side.environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise BaselineError(f"the {side.name} bench does not list its scenarios: {_last_line(done.stderr)}")
    return list(json.loads(done.stdout))


def run_scenario(side: Checkout, scenario: str, mode: str, folder: Path) -> tuple[dict[str, Any] | None, str | None]:
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
        return None, f"exited with {code}: {_last_line(log.read_text(encoding='utf-8', errors='replace'))}"
    error = report.get("errors", {}).get(scenario)
    if error or code != 0 or scenario not in report.get("scenarios", {}):
        return None, error or f"exited with {code} and no figures"
    scenario_report: dict[str, Any] = report["scenarios"][scenario]
    return scenario_report, None


def _load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def _this_checkout() -> Checkout:
    try:
        head = _git(_CHECKOUT, "rev-parse", "--short=12", "HEAD").decode().strip()
    except BaselineError:
        head = "?"
    return Checkout("new", f"this checkout (HEAD {head})", _CHECKOUT, Path(sys.executable), dict(os.environ))


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
        old = Checkout("old", label, entry / "src", venv / "bin" / "python", venv_environment(venv))
        new = _this_checkout()
        known = _scenarios_of(old)
    except BaselineError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    dropped = [name for name in names if name not in known]
    names = [name for name in names if name in known]
    if dropped:
        _say(f"not in the baseline's bench, dropped: {', '.join(dropped)}")
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {side.name: {name: [] for name in names} for side in (old, new)}
    errors: dict[str, str] = {}
    load_at_start = _load()
    with tempfile.TemporaryDirectory(prefix="extension-host-baseline-") as temp:
        for round_ in range(rounds):
            order = (old, new) if round_ % 2 == 0 else (new, old)
            for name in names:
                for side in order:
                    if name in errors:
                        break
                    started = time.perf_counter()
                    _say(f"round {round_ + 1}/{rounds}: {name} by the {side.name} side, {side.label} ...")
                    result, error = run_scenario(side, name, mode, Path(temp))
                    if result is None:
                        errors[name] = f"on the {side.name} side, {side.label}: {error}"
                    else:
                        runs[side.name][name].append(result)
                    took = time.perf_counter() - started
                    _say(f"round {round_ + 1}/{rounds}: {name} by the {side.name} side took {took:.1f} s")
    results: dict[str, tuple[list[Comparison], list[str]]] = {}
    for name in names:
        done = min(len(runs["old"][name]), len(runs["new"][name]))
        if not done:
            continue
        old_runs, new_runs = runs["old"][name][:done], runs["new"][name][:done]
        comparisons, notes = compare_scenario(
            [run["figures"] for run in old_runs], [run["figures"] for run in new_runs]
        )
        for who, side_runs in (("baseline", old_runs), ("new", new_runs)):
            notes += [f"{who}: {note}" for note in dict.fromkeys(n for run in side_runs for n in run["notes"])]
        results[name] = comparisons, notes
    meta = {
        "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "mode": mode,
        "rounds": rounds,
        "baseline": {"ref": ref, "commit": commit, "checkout": str(old.root)},
        "new": {"label": new.label, "checkout": str(new.root)},
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_at_start": load_at_start,
        "load_at_end": _load(),
        "dropped": dropped,
    }
    print(
        f"{mode} run, {rounds} round(s): baseline {old.label} against {new.label}; {meta['cpus']} CPUs, "
        f"Python {meta['python']}, load {load_at_start} -> {meta['load_at_end']}"
    )
    if dropped:
        print(f"(not in the baseline's bench, dropped: {', '.join(dropped)})")
    print(table(results, errors))
    if json_path is not None:
        data = {
            "meta": meta,
            "scenarios": {
                name: {"figures": [c.as_json() for c in comparisons], "notes": notes}
                for name, (comparisons, notes) in results.items()
            },
            "errors": errors,
        }
        json_path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    worse = any(c.verdict == "WORSE" for comparisons, _ in results.values() for c in comparisons)
    return 1 if errors or (fail_on_worse and worse) else 0
