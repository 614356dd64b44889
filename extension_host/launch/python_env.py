"""An extension's own Python environment: built from its ``requires``, cached and shared.

An extension whose manifest lists requirements runs in a virtual environment of its own, made
from the host's interpreter, holding those requirements and nothing else but the SDK. Each
environment lives in ``<cache>/python-envs/<key>/``, where the key is a hash of the normalised
requirements (:func:`normalise`), the interpreter (implementation, version, the real path of
``sys.executable``) and the SDK (the host's version and the folder it is imported from): two
extensions with the same requirements share one, a changed requirement, a new interpreter or a
new host makes another.

**Building one** (:func:`ensure_environment`): with ``uv`` when it is on the ``PATH`` (``uv
venv``, then ``uv pip install --python <env>``), else with ``python -m venv --without-pip``
and the host's own pip pointed at it (``pip --python <env> install``; where the host has no pip
new enough, the environment gets one of its own from ``ensurepip``). :data:`INSTALLER_ENV` picks
one. Requirements are argv items after ``--``, never through a shell, and the manifest has
already refused options and multi-line strings. The build happens in a temporary folder beside
the cache's and is renamed into place once complete (the paths its ``bin/`` scripts name are
rewritten first); a lock file per key makes a second host wait for the first rather than build
the same environment again. A failed, timed-out or cancelled build removes its temporary
folder (and its installer's process group); one interrupted harder (the host killed) leaves a
``.building-<key>-*`` folder that the next build of that key removes, under the lock. Only a
folder with :data:`READY_FILE` is used.

**The SDK in it**: ``sdk_extension`` and ``extension_protocol`` (which import only the standard
library and, where installed, orjson) are symbolic links in the environment's site-packages to
the host's own copies: the host is not installed there, and nothing else of the host's
environment is visible (no ``--system-site-packages``; a venv has no user site either), so an
extension that forgets to declare ``pydantic`` fails at once, not on another machine.

**What the installer sees**: the host's stripped environment (no secrets: see
:mod:`extension_host.project.environment`), plus the user's index settings
(:data:`INDEX_SETTINGS`: where to install from, and how to log in there), minus the settings
that would send the install somewhere else (:data:`NOT_FOR_THE_INSTALLER`). Its output (stdout
and stderr) goes to the extension's log file; on failure the last meaningful line of it is the
reason (:func:`installer_reason`). It may take :data:`DEFAULT_INSTALL_TIMEOUT` seconds
(:data:`INSTALL_TIMEOUT_ENV` changes that).

This module builds and finds environments; it reads no manifest, starts no extension and
speaks no protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import importlib.metadata
import importlib.util
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
from typing import BinaryIO, Final, Literal

from ..errors import ExtensionHostError
from ..info import host_version
from ..project.environment import sdk_folder
from ..project.private_files import private_folder
from .interpreter import python_args
from .logs import open_log, rotate_log
from .process import tail_lines
from .process_groups import signal_group

__all__ = [
    "DEFAULT_INSTALL_TIMEOUT",
    "ENVIRONMENTS_FOLDER",
    "INDEX_SETTINGS",
    "INSTALLER_ENV",
    "INSTALL_TIMEOUT_ENV",
    "NOT_FOR_THE_INSTALLER",
    "READY_FILE",
    "SDK_PACKAGES",
    "Installer",
    "PythonEnvironment",
    "RequirementsFailed",
    "build_steps",
    "choose_installer",
    "ensure_environment",
    "environment_key",
    "install_timeout",
    "installer_environment",
    "installer_reason",
    "normalise",
]

Installer = Literal["uv", "pip"]

ENVIRONMENTS_FOLDER: Final = "python-envs"
"""The folder of the host's cache that holds the environments, one folder per key."""
READY_FILE: Final = "extension-host-env.json"
"""Written last into a complete environment: what it was built from, by what, when."""
SDK_PACKAGES: Final = ("sdk_extension", "extension_protocol")
"""The host's packages an extension imports, linked into every environment."""
INSTALL_TIMEOUT_ENV: Final = "EXTENSION_HOST_INSTALL_TIMEOUT"
"""Seconds one environment may take to build (a number; the default is :data:`DEFAULT_INSTALL_TIMEOUT`)."""
DEFAULT_INSTALL_TIMEOUT: Final = 600.0
INSTALLER_ENV: Final = "EXTENSION_HOST_PYTHON_INSTALLER"
"""``uv`` or ``pip``: build environments with that one (default: uv when it is on the ``PATH``)."""
INDEX_SETTINGS: Final = re.compile(
    r"PIP_(INDEX_URL|EXTRA_INDEX_URL|FIND_LINKS|NO_INDEX|TRUSTED_HOST|CERT|CLIENT_CERT|KEYRING_PROVIDER|CONFIG_FILE)"
    r"|UV_\w+"
)
"""The user's installer settings that reach the installer as they are, even those the stripped
environment withholds (an index URL with a token in it, ``UV_INDEX_<NAME>_PASSWORD``): where to
install from, and how to log in there, are the user's."""
NOT_FOR_THE_INSTALLER: Final = re.compile(
    r"PIP_(TARGET|PREFIX|ROOT|PYTHON|USER|REQUIREMENT|EDITABLE|SRC)"
    r"|UV_(PYTHON|SYSTEM_PYTHON|BREAK_SYSTEM_PACKAGES|PROJECT_ENVIRONMENT)"
    r"|PYTHONPATH|PYTHONHOME|VIRTUAL_ENV|CONDA_PREFIX"
)
"""Settings that would install somewhere else than the environment being built, or run the
installer on another interpreter: left out, whoever set them."""
_PIP_WITH_PYTHON_OPTION: Final = (22, 3)
"""The first pip with ``--python`` (install into another interpreter's environment)."""
_LOCK_POLL: Final = 0.1
_REASON_MAX: Final = 300
_NAME: Final = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._-]*")
_SPACES: Final = re.compile(r"\s+")
_DECORATION: Final = " \t×╰─▶│|╭╮╯·•-"
"""What uv draws around its messages (``  × No solution found``, ``  ╰─▶ Because ...``)."""
_ASIDE: Final = re.compile(r"(?i)^(hint|help|note|warning|notice|\[notice\])\b")


class RequirementsFailed(ExtensionHostError):
    """An extension's environment could not be built; the message is one line saying why."""

    def __init__(self, message: str, installer: str | None = None) -> None:
        super().__init__(message)
        self.installer = installer


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
            text = re.sub(r"[-_.]+", "-", name[0]).lower() + text[name.end() :]
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


def choose_installer(environment: Mapping[str, str]) -> tuple[Installer, str | None]:
    """Which installer builds environments, and the ``uv`` executable when it is uv.

    Raises:
        RequirementsFailed: :data:`INSTALLER_ENV` asks for something else, or for uv when it
            is not on the ``PATH``.
    """
    wanted = environment.get(INSTALLER_ENV, "").strip().lower()
    if wanted not in ("", "uv", "pip"):
        raise RequirementsFailed(f"{INSTALLER_ENV} is {wanted!r}: give uv or pip (or leave it unset)")
    uv = shutil.which("uv", path=environment.get("PATH")) if wanted != "pip" else None
    if wanted == "uv" and uv is None:
        raise RequirementsFailed(f"{INSTALLER_ENV} asks for uv, and uv is not on the PATH: install it, or unset it")
    return ("uv", uv) if uv is not None else ("pip", None)


def install_timeout(environment: Mapping[str, str]) -> float:
    """Seconds a build may take (:data:`INSTALL_TIMEOUT_ENV`, else :data:`DEFAULT_INSTALL_TIMEOUT`).

    Raises:
        RequirementsFailed: the variable is set and is not a positive number.
    """
    text = environment.get(INSTALL_TIMEOUT_ENV, "").strip()
    if not text:
        return DEFAULT_INSTALL_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds < float("inf"):
        raise RequirementsFailed(f"{INSTALL_TIMEOUT_ENV} is {text[:40]!r}: give a number of seconds, such as 600")
    return seconds


def installer_environment(stripped: Mapping[str, str], host: Mapping[str, str]) -> dict[str, str]:
    """The installer's environment: ``stripped`` (the host's, without secrets) plus the user's
    :data:`INDEX_SETTINGS` from ``host``, without :data:`NOT_FOR_THE_INSTALLER`; the user's
    pip ``user = true`` cannot apply (a virtual environment has no user site)."""
    env = {name: value for name, value in stripped.items() if not NOT_FOR_THE_INSTALLER.fullmatch(name)}
    for name, value in host.items():
        if INDEX_SETTINGS.fullmatch(name) and not NOT_FOR_THE_INSTALLER.fullmatch(name):
            env[name] = value
    env["PIP_USER"] = "0"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _host_pip_has_python_option() -> bool:
    if importlib.util.find_spec("pip") is None:
        return False
    try:
        version = importlib.metadata.version("pip")
    except importlib.metadata.PackageNotFoundError:
        return False
    numbers = tuple(int(part) for part in re.findall(r"\d+", version)[:2])
    return numbers >= _PIP_WITH_PYTHON_OPTION


def build_steps(
    installer: Installer, uv: str | None, venv: Path, requires: tuple[str, ...], *, host_pip: bool = True
) -> list[tuple[str, ...]]:
    """The command lines that build an environment at ``venv`` holding ``requires``: make it,
    then install into it (requirements after ``--``, one argv item each). ``host_pip``: the
    host's pip can install into another interpreter's environment (else the environment gets a
    pip of its own first)."""
    python = str(venv / "bin" / "python")
    if installer == "uv":
        assert uv is not None
        return [
            (uv, "venv", "--python", sys.executable, str(venv)),
            (uv, "pip", "install", "--python", python, "--", *requires),
        ]
    pip_options = ("install", "--disable-pip-version-check", "--no-input", "--", *requires)
    if host_pip:
        return [
            (sys.executable, *python_args("-m", "venv", "--without-pip", str(venv))),
            (sys.executable, *python_args("-m", "pip", "--python", python, *pip_options)),
        ]
    return [
        (sys.executable, *python_args("-m", "venv", str(venv))),
        (python, *python_args("-m", "pip", *pip_options)),
    ]


def installer_reason(lines: list[str]) -> str | None:
    """What the installer's output says went wrong, in one line: pip's last ``ERROR:`` line
    (``No matching distribution found for nosuchpkg==9``), else the last line that is not an
    aside (a hint, a note), without uv's box drawing or an ``error:`` prefix."""
    for line in reversed(lines):
        if line.startswith("ERROR: "):
            return _cut(line.removeprefix("ERROR: "))
    for line in reversed(lines):
        text = line.strip().lstrip(_DECORATION).strip()
        if text and not text.startswith("===") and not _ASIDE.match(text):
            return _cut(re.sub(r"(?i)^error:\s*", "", text))
    return None


def _cut(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _REASON_MAX else text[: _REASON_MAX - 1] + "…"


def _ready(folder: Path) -> bool:
    return (folder / READY_FILE).is_file() and (folder / "bin" / "python").exists()


async def ensure_environment(
    requires: tuple[str, ...],
    cache: Path,
    stripped: Mapping[str, str],
    host: Mapping[str, str],
    log: Path,
    *,
    extension_id: str = "",
    on_build: Callable[[Installer], None] | None = None,
) -> PythonEnvironment:
    """The environment holding ``requires``, built first if there is none yet.

    ``stripped`` and ``host`` are the host's environment without and with its secrets (see
    :func:`installer_environment`); the build writes to the file ``log`` (a start line naming
    ``extension_id``, then the installer's output); ``on_build`` is told when a build (or the wait
    for another's) begins.

    Raises:
        RequirementsFailed: the installer failed (its reason), took too long, or is missing.
    """
    envs = cache / ENVIRONMENTS_FOLDER
    key = environment_key(requires)
    target = envs / key
    if _ready(target):
        return PythonEnvironment(target, built=False)
    installer, uv = choose_installer(stripped)
    timeout = install_timeout(stripped)
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
        steps = build_steps(installer, uv, venv, requires, host_pip=_host_pip_has_python_option())
        for argv in steps:
            code = await _run(argv, env, out, target.parent, deadline)
            if code is None:
                raise RequirementsFailed(
                    f"installing its requirements with {installer} took over {timeout:g} s "
                    f"(set {INSTALL_TIMEOUT_ENV} to allow longer)",
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
