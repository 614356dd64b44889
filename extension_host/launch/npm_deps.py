"""A JavaScript extension's own npm dependencies, installed once before its first start.

A JavaScript extension folder with a ``package.json`` that declares ``dependencies`` or
``optionalDependencies`` (other than ``@github/copilot-sdk``, which the host provides: see
:mod:`.node_sdk`) gets them installed into its own ``node_modules``, where Node's resolution
(ESM and CommonJS alike) looks for them: ``npm ci`` when a lockfile is there
(``npm-shrinkwrap.json``, else ``package-lock.json``), else ``npm install`` (which writes no
lockfile into the folder); always ``--omit=dev --no-audit --no-fund --no-update-notifier``, with
the folder as the prefix, never global. Its dependencies still import the host's pinned SDK: the
resolve hook redirects every ``@github/copilot-sdk`` specifier, whoever imports it.

Once: a marker in ``node_modules`` (:data:`MARKER`) records the hash of ``package.json``, the
lockfile and whether scripts ran; the next start with the same hash does nothing, a changed one
reinstalls. A ``node_modules`` without the marker is the author's own and is never touched.
Identical installs are not shared between folders; npm's own cache of packages makes a second one
quick. Dependency install scripts run only when :func:`scripts_allowed` says so, otherwise
``--ignore-scripts`` (and the returned note says so).

npm runs without a shell, in its own process group, with the given environment (the host's,
secrets stripped, plus the user's ``npm_config_*`` settings: :func:`npm_environment`); its
output goes to the extension's log (at most :data:`MAX_LOG_BYTES`), bounded in time. A failure
raises :class:`NpmInstallError` with npm's reason in one line and leaves no ``node_modules``
behind; an install cut short (the host killed) is found by its record in the cache folder and
redone. One install per folder at a time, across processes (a file lock in the cache folder).

This module knows npm, files and processes; not extensions' statuses or the protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import signal
from collections import deque
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO, Final

from ..errors import ExtensionHostError
from ..project.private_files import NotRegularFile, open_regular
from .logs import open_log
from .node_sdk import SDK_PACKAGE
from .process_groups import signal_group

__all__ = [
    "DEFAULT_INSTALL_TIMEOUT",
    "MARKER",
    "MAX_LOG_BYTES",
    "SCRIPTS_SKIPPED",
    "NpmInstallError",
    "NpmPlan",
    "install_dependencies",
    "npm_environment",
    "npm_plan",
    "npm_reason",
    "scripts_allowed",
]

DEFAULT_INSTALL_TIMEOUT: Final = 600.0
"""Seconds an install may take before it is stopped and the extension fails."""
MARKER: Final = ".extension-host.json"
"""The file in ``node_modules`` that says the host installed it, and from what."""
MAX_LOG_BYTES: Final = 1024 * 1024
"""npm output written to the extension's log per install; the rest is counted, not kept."""
MAX_PACKAGE_JSON_BYTES: Final = 1024 * 1024
"""A larger ``package.json`` is refused (it is read on every start)."""
MAX_LOCKFILE_BYTES: Final = 64 * 1024 * 1024
"""A larger lockfile is refused (it is hashed on every start)."""
LOCKFILES: Final = ("npm-shrinkwrap.json", "package-lock.json")
"""In npm's order of precedence."""
SCRIPT_SOURCES: Final = frozenset({"project", "user"})
"""The sources whose extensions' dependency scripts run (see :func:`scripts_allowed`)."""
SCRIPTS_SKIPPED: Final = (
    "npm dependency scripts were not run (--ignore-scripts): they run only for a trusted project's "
    "extensions and the user's own"
)
"""Said in the log and in the extension's note when an install left scripts out."""
_FLAGS: Final = ("--omit=dev", "--no-audit", "--no-fund", "--no-update-notifier", "--global=false")
_QUIET_KEYS: Final = frozenset({"code", "syscall", "path", "errno"})
"""The first words of npm error lines that carry no reason (``npm error code E404``, ``npm error
path ...``)."""
_QUIET_PHRASES: Final = ("A complete log of this run", "Log files were not written", "This is related to npm")
_STOP_GRACE: Final = 2.0


class NpmInstallError(ExtensionHostError):
    """The dependencies could not be installed; the message is one line saying why."""


@dataclass(frozen=True, slots=True)
class NpmPlan:
    """An install to do: where, with which command, and the hash it will be recorded under."""

    folder: Path
    lockfile: str | None
    """``npm-shrinkwrap.json`` or ``package-lock.json`` (``npm ci``), or ``None`` (``npm install``)."""
    digest: str
    scripts: bool
    """Whether dependency install scripts run."""

    @property
    def command(self) -> str:
        """``npm ci`` or ``npm install``."""
        return "npm ci" if self.lockfile else "npm install"

    def argv(self, npm: str) -> tuple[str, ...]:
        """npm's command line (no shell)."""
        verb = "ci" if self.lockfile else "install"
        extra = () if self.lockfile else ("--package-lock=false",)
        scripts = () if self.scripts else ("--ignore-scripts",)
        return (npm, verb, "--prefix", str(self.folder), *_FLAGS, *extra, *scripts, "--progress=false", "--color=false")


def scripts_allowed(source: str) -> bool:
    """Whether dependency install scripts run for an extension of ``source``.

    The rule: scripts run for the extensions of a trusted project and for the user's own (those of
    an untrusted project never start, so they are never installed); any other source (such as an
    extension that came inside a Python distribution) installs with ``--ignore-scripts``. A user
    who wants no dependency scripts at all sets ``ignore-scripts=true`` in their ``.npmrc``.
    """
    return source in SCRIPT_SOURCES


def npm_environment(base: Mapping[str, str], host: Mapping[str, str]) -> dict[str, str]:
    """npm's environment: ``base`` (the host's with secrets stripped) plus every ``npm_config_*``
    variable of ``host`` (the user's npm settings, a registry token among them; ``.npmrc`` npm
    reads itself from the user's home)."""
    environment = dict(base)
    environment.update({name: value for name, value in host.items() if name.lower().startswith("npm_config_")})
    return environment


def npm_plan(folder: Path, *, scripts: bool, state_dir: Path) -> NpmPlan | None:
    """The install ``folder`` needs before it starts, or ``None``: no ``package.json``, no
    dependencies to install, a ``node_modules`` of the author's own, or one the host installed
    from the same files. Cheap when there is nothing to do (one small read). ``state_dir`` is
    where :func:`install_dependencies` records an install under way: one that was cut short is
    done again.

    Raises:
        NpmInstallError: ``package.json`` cannot be read or is not a JSON object.
    """
    package_json = folder / "package.json"
    raw = _read(package_json, MAX_PACKAGE_JSON_BYTES)
    if raw is None:
        return None
    try:
        package = json.loads(raw)
    except ValueError as exc:
        raise NpmInstallError(f"{package_json} is not valid JSON: {exc}") from None
    if not isinstance(package, dict):
        raise NpmInstallError(f"{package_json} is not a JSON object")
    if not _declares_dependencies(package):
        return None
    lockfile = next((name for name in LOCKFILES if (folder / name).is_file()), None)
    digest = hashlib.sha256(raw)
    if lockfile is not None:
        digest.update(b"\0" + lockfile.encode() + b"\0")
        digest.update(hashlib.sha256(_read(folder / lockfile, MAX_LOCKFILE_BYTES) or b"").digest())
    digest.update(b"\0scripts" if scripts else b"\0no-scripts")
    plan = NpmPlan(folder, lockfile, digest.hexdigest(), scripts)
    modules = folder / "node_modules"
    if modules.is_symlink():
        return None  # the author's own, wherever it leads
    if _pending(state_dir, folder).exists():
        return plan
    if modules.exists() and not (modules / MARKER).is_file():
        return None  # the author's own
    return None if _recorded(modules) == plan.digest else plan


async def install_dependencies(
    plan: NpmPlan,
    *,
    environment: Mapping[str, str],
    log_path: Path,
    state_dir: Path,
    timeout: float = DEFAULT_INSTALL_TIMEOUT,
) -> bool:
    """Carry out ``plan`` unless another process did it meanwhile; True if npm ran.

    npm is looked for on ``environment``'s ``PATH``; ``state_dir`` keeps the lock and the
    record of an install under way. npm's output is appended to ``log_path``.

    Raises:
        NpmInstallError: npm is missing, failed, or took longer than ``timeout``; nothing it
            installed is left.
    """
    npm = shutil.which("npm", path=environment.get("PATH"))
    if npm is None:
        raise NpmInstallError(
            f"npm not found on PATH: it is needed to install the dependencies in {plan.folder / 'package.json'} "
            "(it usually comes with Node.js)"
        )
    state_dir.mkdir(parents=True, exist_ok=True)
    pending = _pending(state_dir, plan.folder)
    async with _folder_lock(pending.with_suffix(".lock"), plan.folder, timeout):
        modules = plan.folder / "node_modules"
        current = npm_plan(plan.folder, scripts=plan.scripts, state_dir=state_dir)
        if current is None:
            return False
        pending.write_text(str(plan.folder), encoding="utf-8")
        _remove(modules)  # ours: an older install, or one cut short
        try:
            await _run(current, npm, environment, log_path, timeout)
            (modules / MARKER).write_text(
                json.dumps({"digest": current.digest, "command": current.command, "scripts": current.scripts}),
                encoding="utf-8",
            )
        except BaseException:
            _remove(modules)
            raise
        finally:
            pending.unlink(missing_ok=True)
        return True


def npm_reason(lines: list[str]) -> tuple[str, str | None]:
    """The line of npm's output that says why it failed (``npm error 404 Not Found - GET ...``),
    else its last line (``no output`` when there is none), and npm's error code (``E404``) if it
    gave one."""
    errors = [line.strip() for line in lines if line.startswith(("npm error ", "npm ERR! "))]
    code = next((line.split()[3] for line in errors if len(line.split()) == 4 and line.split()[2] == "code"), None)
    for line in errors:
        words = line.split()
        if len(words) > 3 and words[2] not in _QUIET_KEYS and not any(phrase in line for phrase in _QUIET_PHRASES):
            return line, code
    meaningful = [line.strip() for line in lines if line.strip()]
    return (errors or meaningful or ["no output"])[-1], code


async def _run(plan: NpmPlan, npm: str, environment: Mapping[str, str], log_path: Path, timeout: float) -> None:
    argv = plan.argv(npm)
    with open_log(log_path) as log:
        started = datetime.now(UTC).isoformat(timespec="seconds")
        # A start line (logs.current_run_tail reads from the last one): a failed install is the run.
        log.write(f"=== {started} starting npm dependencies of {plan.folder}: {' '.join(argv)}\n".encode())
        if not plan.scripts:
            log.write(f"{SCRIPTS_SKIPPED}\n".encode())
        log.flush()
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            cwd=plan.folder,
            env=dict(environment),
            start_new_session=True,
        )
        tail: deque[str] = deque(maxlen=200)
        try:
            async with asyncio.timeout(timeout):
                await _copy_output(process, log, tail)
                code = await process.wait()
        except BaseException as exc:
            await _kill(process)
            if isinstance(exc, TimeoutError):
                log.write(f"{plan.command} stopped: it took over {timeout:g} s\n".encode())
                raise NpmInstallError(
                    f"installing npm dependencies ({plan.command}) took over {timeout:g} s; "
                    "is the registry reachable? (npm's output is in the extension's log)"
                ) from None
            raise
        if code == 0:
            log.write(f"npm dependencies installed ({plan.command})\n".encode())
            return
        reason, error_code = npm_reason(list(tail))
        exit_line = f"{error_code}, " if error_code else ""
        raise NpmInstallError(
            f"could not install npm dependencies: {reason} "
            f"({exit_line}{plan.command} exit {code}; its output is in the extension's log)"
        )


async def _copy_output(process: asyncio.subprocess.Process, log: BinaryIO, tail: deque[str]) -> None:
    assert process.stdout is not None
    written = dropped = 0
    write = log.write
    async for line in process.stdout:
        tail.append(line.decode("utf-8", "replace").rstrip("\r\n"))
        if written + len(line) <= MAX_LOG_BYTES:
            write(line)
            written += len(line)
        else:
            dropped += len(line)
    if dropped:
        write(f"[{dropped} more bytes of npm output not kept]\n".encode())


async def _kill(process: asyncio.subprocess.Process) -> None:
    """End npm and whatever it started (its process group), and reap it."""
    signal_group(process.pid, signal.SIGTERM)
    try:
        async with asyncio.timeout(_STOP_GRACE):
            await process.wait()
    except TimeoutError:
        pass
    signal_group(process.pid, signal.SIGKILL)
    await process.wait()


@contextlib.asynccontextmanager
async def _folder_lock(path: Path, folder: Path, timeout: float) -> AsyncIterator[None]:
    """An exclusive lock on ``path`` (across processes) for ``folder``'s install, waited for at most ``timeout``."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        try:
            async with asyncio.timeout(timeout):
                while True:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        await asyncio.sleep(0.1)
        except TimeoutError:
            raise NpmInstallError(
                f"another install of the npm dependencies of {folder} did not finish within {timeout:g} s"
            ) from None
        yield
    finally:
        os.close(fd)  # releases the lock


def _declares_dependencies(package: dict[str, object]) -> bool:
    for field in ("dependencies", "optionalDependencies"):
        declared = package.get(field)
        if isinstance(declared, dict) and any(name != SDK_PACKAGE for name in declared):
            return True
    return False


def _read(path: Path, limit: int) -> bytes | None:
    """The bytes of ``path`` (``None``: there is none), never waiting on a fifo nor reading more than ``limit``."""
    try:
        with open_regular(path) as (file, _):
            data = file.read(limit + 1)
    except FileNotFoundError:
        return None
    except NotRegularFile:
        raise NpmInstallError(f"{path} is not a regular file") from None
    except OSError as exc:
        raise NpmInstallError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise NpmInstallError(f"{path} is larger than {limit // 1024 // 1024 or 1} MiB")
    return data


def _pending(state_dir: Path, folder: Path) -> Path:
    """The record of an install of ``folder`` under way (its lock beside it, ``.lock``)."""
    return state_dir / (hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:32] + ".installing")


def _recorded(modules: Path) -> str | None:
    try:
        marker = json.loads((modules / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    digest = marker.get("digest") if isinstance(marker, dict) else None
    return digest if isinstance(digest, str) else None


def _remove(modules: Path) -> None:
    """Remove a ``node_modules`` the host made (a link is never followed, only removed)."""
    if modules.is_symlink() or modules.is_file():
        modules.unlink(missing_ok=True)
    elif modules.exists():
        shutil.rmtree(modules, ignore_errors=True)
