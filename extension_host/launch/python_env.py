"""An extension's own Python environment: built from its ``requires``, cached and shared.

An extension whose manifest lists requirements runs in a virtual environment of its own, made
from the host's interpreter, holding those requirements and nothing else but the SDK. Each
environment lives in ``<cache>/python-envs/<key>/``, where the key is a hash of the normalised
requirements (:func:`normalise`), the interpreter (implementation, version, the real path of
``sys.executable``) and the SDK (the host's version and the folder it is imported from): two
extensions with the same requirements share one, a changed requirement, a new interpreter or a
new host makes another.

**Building one** (:func:`ensure_environment`) is the installer's job (uv or pip: see
:mod:`.python_installer`), its output going to the extension's log file, bounded in time. It
happens in a temporary folder beside the cache's and is renamed into place once complete (the
paths its ``bin/`` scripts name are rewritten first); a lock file per key makes a second host
wait for the first rather than build the same environment again. A failed, timed-out or
cancelled build removes its temporary folder (and its installer's process group); one
interrupted harder (the host killed) leaves a ``.building-<key>-*`` folder that the next build
of that key removes, under the lock. Only a folder with :data:`READY_FILE` is used.

**The SDK in it**: ``sdk_extension`` and ``extension_protocol`` (which import only the standard
library and, where installed, orjson) are symbolic links in the environment's site-packages to
the host's own copies: the host is not installed there, and nothing else of the host's
environment is visible (no ``--system-site-packages``; a venv has no user site either), so an
extension that forgets to declare ``pydantic`` fails at once, not on another machine.

This module builds and finds environments; it reads no manifest, starts no extension and
speaks no protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import signal
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO, Final

from ..info import host_version
from ..project.environment import sdk_folder
from ..project.packages import normalise_distribution
from ..project.private_files import private_folder
from .logs import open_log, rotate_log
from .process import tail_lines
from .process_groups import signal_group
from .python_installer import (
    Installer,
    RequirementsFailed,
    build_steps,
    choose_installer,
    host_pip_has_python_option,
    installer_environment,
    installer_reason,
)

__all__ = [
    "ENVIRONMENTS_FOLDER",
    "READY_FILE",
    "SDK_PACKAGES",
    "PythonEnvironment",
    "ensure_environment",
    "environment_key",
    "normalise",
]

ENVIRONMENTS_FOLDER: Final = "python-envs"
"""The folder of the host's cache that holds the environments, one folder per key."""
READY_FILE: Final = "extension-host-env.json"
"""Written last into a complete environment: what it was built from, by what, when."""
SDK_PACKAGES: Final = ("sdk_extension", "extension_protocol")
"""The host's packages an extension imports, linked into every environment."""
_LOCK_POLL: Final = 0.1
_NAME: Final = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._-]*")
_SPACES: Final = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class PythonEnvironment:
    """A complete environment."""

    folder: Path
    built: bool
    """Whether this call built it (``False``: it was there already, or another built it meanwhile)."""

    @property
    def python(self) -> Path:
        """Its interpreter."""
        return self.folder / "bin" / "python"


def normalise(requires: Iterable[str]) -> tuple[str, ...]:
    """The requirements as one set, in one spelling: runs of white space made one space, the
    project name lower-cased with ``-``, ``_`` and ``.`` runs made ``-`` (as pip compares them),
    repeats dropped, sorted. ``Requests >= 2`` and ``requests >= 2`` are the same environment."""
    spelled = set()
    for requirement in requires:
        text = _SPACES.sub(" ", requirement.strip())
        name = _NAME.match(text)
        if name is not None:
            text = normalise_distribution(name[0]) + text[name.end() :]
        spelled.add(text)
    return tuple(sorted(spelled))


def _interpreter() -> list[str]:
    return [sys.implementation.name, sys.version, os.path.realpath(sys.executable)]


def _sdk_identity() -> list[str]:
    return [host_version(), str(sdk_folder().parent)]


def environment_key(requires: Iterable[str]) -> str:
    """The name of the environment ``requires`` get with this interpreter and this host's SDK."""
    inputs = {"requires": list(normalise(requires)), "python": _interpreter(), "sdk": _sdk_identity()}
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:20]


def _ready(folder: Path) -> bool:
    return (folder / READY_FILE).is_file() and (folder / "bin" / "python").exists()


async def ensure_environment(
    requires: tuple[str, ...],
    cache: Path,
    stripped: Mapping[str, str],
    host: Mapping[str, str],
    log: Path,
    *,
    timeout: float,
    extension_id: str = "",
    on_build: Callable[[Installer], None] | None = None,
) -> PythonEnvironment:
    """The environment holding ``requires``, built first if there is none yet.

    ``stripped`` and ``host`` are the host's environment without and with its secrets (see
    :func:`installer_environment`); the build writes to the file ``log`` (a start line naming
    ``extension_id``, then the installer's output) and may take ``timeout`` seconds; ``on_build`` is
    told when a build (or the wait for another's) begins.

    Raises:
        RequirementsFailed: the installer failed (its reason), took too long, or is missing.
    """
    envs = cache / ENVIRONMENTS_FOLDER
    key = environment_key(requires)
    target = envs / key
    if _ready(target):
        return PythonEnvironment(target, built=False)
    installer, uv = choose_installer(stripped)
    if on_build is not None:
        on_build(installer)
    deadline = time.monotonic() + timeout
    try:
        private_folder(envs)
    except OSError as exc:
        raise RequirementsFailed(f"cannot use the cache folder {envs}: {exc.strerror or exc}") from None
    with _locked(envs / f"{key}.lock") as lock:
        await _acquire(lock, deadline, timeout)
        if _ready(target):
            return PythonEnvironment(target, built=False)
        _remove_leftovers(envs, key, target)
        rotate_log(log)
        with open_log(log) as out:
            env = installer_environment(stripped, host)
            await _build(requires, target, installer, uv, env, out, log, deadline, timeout, extension_id)
    return PythonEnvironment(target, built=True)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[int]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        yield fd
    finally:
        os.close(fd)  # releases the lock


async def _acquire(fd: int, deadline: float, timeout: float) -> None:
    """Take the build lock, waiting (polling: an asyncio loop must not block) until ``deadline``."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise RequirementsFailed(
                    f"another start was still building the same Python environment after {timeout:g} s"
                ) from None
            await asyncio.sleep(_LOCK_POLL)


def _remove_leftovers(envs: Path, key: str, target: Path) -> None:
    """What an interrupted build of ``key`` left: its temporary folders, an incomplete target."""
    for leftover in envs.glob(f".building-{key}-*"):
        shutil.rmtree(leftover, ignore_errors=True)
    if target.exists() or target.is_symlink():
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target, ignore_errors=True)
        else:
            target.unlink(missing_ok=True)


async def _build(
    requires: tuple[str, ...],
    target: Path,
    installer: Installer,
    uv: str | None,
    env: dict[str, str],
    out: BinaryIO,
    log: Path,
    deadline: float,
    timeout: float,
    extension_id: str,
) -> None:
    started = datetime.now(UTC).isoformat(timespec="seconds")
    out.write(
        f"=== {started} starting {extension_id or 'an extension'}: building its Python environment with {installer}: "
        f"{' '.join(requires)} -> {target}\n".encode()
    )
    out.flush()
    start_of_output = out.tell()
    staging = Path(tempfile.mkdtemp(prefix=f".building-{target.name}-", dir=target.parent))
    venv = staging / "env"
    try:
        steps = build_steps(installer, uv, venv, requires, host_pip=host_pip_has_python_option())
        for argv in steps:
            code = await _run(argv, env, out, target.parent, deadline)
            if code is None:
                raise RequirementsFailed(
                    f"installing its requirements with {installer} took over {timeout:g} s "
                    "(set EXTENSION_HOST_INSTALL_TIMEOUT to allow longer)",
                    installer,
                )
            if code != 0:
                out.flush()
                reason = installer_reason(tail_lines(log, 40, start=start_of_output))
                step = "install its requirements" if argv is steps[-1] else "make its environment"
                raise RequirementsFailed(
                    f"{installer} could not {step}: {reason or f'it exited with code {code}'}", installer
                )
        _link_sdk(venv)
        _rename_paths(venv, target)
        record = {
            "requires": list(requires),
            "python": _interpreter(),
            "sdk": _sdk_identity(),
            "installer": installer,
            "built": started,
        }
        (venv / READY_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        os.rename(venv, target)
        out.write(f"=== the Python environment {target.name} is ready\n".encode())
    finally:
        shutil.rmtree(staging, ignore_errors=True)


async def _run(argv: tuple[str, ...], env: Mapping[str, str], out: BinaryIO, cwd: Path, deadline: float) -> int | None:
    """Run one step, its output to ``out``; its exit code, or ``None`` when ``deadline`` passed
    first. Cancelled or out of time, its whole process group is killed."""
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
        )
    except OSError as exc:
        raise RequirementsFailed(f"could not run {argv[0]}: {exc.strerror or exc}") from None
    try:
        async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
            return await process.wait()
    except TimeoutError:
        return None
    finally:
        if process.returncode is None:
            signal_group(process.pid, signal.SIGKILL)
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(process.wait())
        signal_group(process.pid, signal.SIGKILL)  # whatever it left behind in its group


def _link_sdk(venv: Path) -> None:
    """Make the host's SDK importable in ``venv``: a link per package in its site-packages."""
    site_packages = Path(sysconfig.get_paths(scheme="venv", vars={"base": str(venv), "platbase": str(venv)})["purelib"])
    if not site_packages.is_dir():
        raise RequirementsFailed(f"the new environment has no {site_packages.relative_to(venv)}")
    source = sdk_folder().parent
    for package in SDK_PACKAGES:
        link = site_packages / package
        if link.exists() or link.is_symlink():
            raise RequirementsFailed(f"a requirement installed a package named {package}, which is the host's SDK")
        link.symlink_to(source / package, target_is_directory=True)


def _rename_paths(venv: Path, target: Path) -> None:
    """Make the scripts in ``venv``'s ``bin`` (console scripts' ``#!`` lines, ``activate``)
    and its ``pyvenv.cfg`` name ``target``, where it is about to move."""
    old, new = str(venv).encode(), str(target).encode()
    candidates = [venv / "pyvenv.cfg", *(venv / "bin").iterdir()]
    for path in candidates:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > 1024 * 1024:
            continue
        data = path.read_bytes()
        if old in data:
            path.write_bytes(data.replace(old, new))
