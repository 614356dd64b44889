"""A commit of this repository checked out and installed in a venv of its own, once, for
``python -m bench --baseline`` (:mod:`bench.baseline`).

The commit's tree is written to ``<cache>/bench-baselines/<commit>/src`` (``<cache>`` is the
host's cache folder, :func:`extension_host.project.paths.cache_dir`), and a venv beside it,
``venv``, gets the project installed as its README says (``pip install -e`` with those of the
extras ``bench``, ``mcp`` and ``serve`` its ``pyproject.toml`` offers), with this interpreter's
Python. The venv is made without a pip of its own when this interpreter has one: this pip
installs into it (``pip --python``), which spares unpacking and compiling a pip per build. The
entry is complete once ``built.json`` is written, last, after its bench imported: later runs
start at once. A build that fails or is interrupted removes its folder; one killed
outright is found without ``built.json`` and built anew. The entry is built in place rather
than in a temporary folder renamed at the end, since a venv cannot be moved (an editable
install and the scripts' ``#!`` lines name absolute paths); a lock file per commit keeps two
runs from building one entry at once. A change of interpreter builds it anew.

Git. Every git command has :func:`extension_host.launch.git.git_command`'s hardening (no hooks,
no fsmonitor, no pager, no transport, the inherited ``GIT_*`` variables dropped), and only
commands that convert no content run: ``rev-parse``, ``ls-tree`` and ``cat-file --batch``, whose
blobs are written out as stored. ``git archive`` would not do: it converts each file for the
work tree, which runs the ``filter.<name>.smudge`` command the repository's configuration names
for a ``filter`` attribute. This module knows nothing of what the bench measures.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Final

from extension_host.launch.git import git_command
from extension_host.project.paths import cache_dir

__all__ = [
    "BUILD_TIMEOUT",
    "EXTRAS",
    "HOST_PIP",
    "LIST_SCENARIOS",
    "REPOSITORY",
    "BaselineError",
    "build",
    "last_line",
    "progress",
    "resolve",
    "venv_environment",
    "write_tree",
]

EXTRAS: Final = ("bench", "mcp", "serve")
"""Extras installed in the venv, those of them the commit's ``pyproject.toml`` offers."""

BUILD_TIMEOUT: Final = 900.0
"""Seconds each step of a build (the venv, the install) may take."""

REPOSITORY: Final = Path(__file__).resolve().parent.parent
"""This checkout, whose repository the commits come from."""

LIST_SCENARIOS: Final = "import json, bench.scenarios as s; print(json.dumps(list(s.SCENARIOS)))"
"""``python -c`` code that prints the scenarios a checkout's bench knows, as a JSON list."""

HOST_PIP: Final = importlib.util.find_spec("pip") is not None
"""Whether this interpreter has a pip, to install into a venv made without one."""

_MARKER: Final = "built.json"
_ASIDES: Final = ("note:", "hint:")


class BaselineError(Exception):
    """Why a commit cannot be built, or the comparison cannot start, in one line."""


def progress(message: str) -> None:
    """A line of progress on stderr."""
    print(f"bench: {message}", file=sys.stderr, flush=True)


def last_line(text: str) -> str:
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
        said = last_line(done.stderr.decode(errors="replace"))
        raise BaselineError(f"git {args[0]} failed: {said}" if said else f"git {args[0]} failed")
    return done.stdout


def resolve(ref: str, repo: Path = REPOSITORY) -> str:
    """The full commit id ``ref`` names in ``repo``."""
    failure = f"--baseline {ref}: not a commit of the repository at {repo}"
    if not ref or ref.startswith("-"):
        raise BaselineError(failure)
    try:
        return _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").decode().strip()
    except BaselineError as exc:
        raise BaselineError(failure if str(exc).endswith("failed") else f"{failure} ({exc})") from exc


def write_tree(commit: str, dest: Path, repo: Path = REPOSITORY) -> None:
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
        said = last_line(done.stderr or done.stdout)
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


def _venv_and_pip(venv: Path) -> tuple[list[str], list[str]]:
    """The command that creates ``venv``, and the pip command that installs into it: this
    interpreter's pip aimed at the venv when it has one, else the venv's own."""
    if HOST_PIP:
        own = [sys.executable, "-I", "-m", "pip", "--python", str(venv / "bin" / "python")]
        return [sys.executable, "-I", "-m", "venv", "--without-pip", str(venv)], own
    return [sys.executable, "-I", "-m", "venv", str(venv)], [str(venv / "bin" / "python"), "-I", "-m", "pip"]


def build(commit: str, *, rebuild: bool = False, repo: Path = REPOSITORY) -> Path:
    """The cache entry of ``commit`` (its ``src`` and ``venv``), built if it is not there."""
    root = cache_dir() / "bench-baselines"
    root.mkdir(parents=True, exist_ok=True)
    entry = root / commit
    with _locked(root / f"{commit}.lock"):
        if not rebuild and _complete(entry):
            progress(f"baseline {commit[:12]}: built already, {entry}")
            return entry
        shutil.rmtree(entry, ignore_errors=True)
        started = time.monotonic()
        progress(f"baseline {commit[:12]}: building it in {entry} (once per commit)")
        try:
            src, venv = entry / "src", entry / "venv"
            progress(f"baseline {commit[:12]}: writing its files")
            write_tree(commit, src, repo)
            extras = _extras(src)
            progress(f"baseline {commit[:12]}: creating its venv")
            python = str(venv / "bin" / "python")
            # -I: run in the written-out files, ``-m`` would otherwise find a venv or pip of theirs first.
            create, pip = _venv_and_pip(venv)
            _run_step("creating the venv", create, src, venv_environment(venv))
            spec = f".[{','.join(extras)}]" if extras else "."
            progress(f"baseline {commit[:12]}: pip install -e '{spec}'")
            install = [*pip, "install", "--quiet", "--disable-pip-version-check", "-e", spec]
            _run_step("pip install", install, src, venv_environment(venv))
            _run_step("importing its bench", [python, "-c", LIST_SCENARIOS], src, venv_environment(venv))
            marker = _stamp() | {"commit": commit, "extras": ",".join(extras)}
            (entry / _MARKER).write_text(json.dumps(marker, indent=2), encoding="utf-8")
        except BaseException:
            shutil.rmtree(entry, ignore_errors=True)
            raise
        progress(f"baseline {commit[:12]}: built in {time.monotonic() - started:.0f} s")
    return entry
