"""The real agent programs, pinned, installed with npm into a cache folder shared by test runs.

Each :class:`Program` is an npm package at a pinned version, installed once into its own prefix,
``<cache>/npm/<package>@<version>`` (``<cache>``: ``$EXTENSION_HOST_TESTS_CACHE``, else the user
cache folder's ``extension-host-tests``). The install runs under an exclusive lock on
``<cache>/npm/.lock``, so test processes that start together install each package once; it goes
to a temporary folder renamed into place when npm succeeded, so a half-done install is never
used. npm runs with ``--omit=optional --ignore-scripts`` (no install script runs); a package
whose program is a native binary in a per-platform optional package (Claude Code, Copilot CLI)
gets that one package named explicitly instead.

Without ``node`` or ``npm`` on the PATH the tier is skipped, in one line
(:func:`skip_without_node`); a failed install is an error that quotes npm, never a skip.
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import platformdirs
import pytest

__all__ = [
    "ACP_SDK",
    "CACHE_ENV",
    "CLAUDE_CODE",
    "COPILOT_CLI",
    "GEMINI_CLI",
    "INSTALL_TIMEOUT",
    "MCP_INSPECTOR",
    "InstallError",
    "Program",
    "cache_root",
    "install",
    "missing_tools",
    "skip_without_node",
]

CACHE_ENV: Final = "EXTENSION_HOST_TESTS_CACHE"
"""Overrides the folder the programs are installed under."""
INSTALL_TIMEOUT: Final = 100.0
"""Seconds one npm install (or the wait for another process's install) may take: under the
suite's 120 s per test, so a slow install fails with npm's words rather than a bare timeout."""
_MARKER: Final = "installed.json"


class InstallError(RuntimeError):
    """npm could not install a program (the message quotes npm's last lines)."""


def _platform_key(musl_key: str) -> str:
    """The platform part of a per-platform package's name (``linux-x64``; on musl, ``musl_key``)."""
    system = {"Linux": "linux", "Darwin": "darwin", "Windows": "win32"}.get(
        platform.system(), platform.system().lower()
    )
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)
    if system == "linux" and platform.libc_ver()[0] != "glibc":
        return musl_key.format(arch=arch)
    return f"{system}-{arch}"


@dataclass(frozen=True)
class Program:
    """A pinned npm package and how to run what it installs.

    ``platform_package`` names the per-platform package that holds a native binary (``{key}``
    is replaced by the platform, e.g. ``linux-x64``, or on musl ``musl_key``); ``entry`` is the executable, relative to
    the prefix's ``node_modules``; ``node`` says it is a script run with ``node``.
    """

    package: str
    version: str
    entry: str
    node: bool = False
    platform_package: str | None = None
    musl_key: str = "linux-{arch}-musl"
    extra: tuple[str, ...] = ()

    @property
    def folder_name(self) -> str:
        return f"{self.package.replace('/', '+')}@{self.version}"

    def packages(self) -> list[str]:
        """What npm installs: the package, its platform package, and the extras, all pinned."""
        specs = [f"{self.package}@{self.version}", *self.extra]
        if self.platform_package is not None:
            key = _platform_key(self.musl_key)
            specs.append(f"{self.platform_package.format(key=key)}@{self.version}")
        return specs

    def entry_path(self, prefix: Path) -> Path:
        key = _platform_key(self.musl_key)
        return prefix / "node_modules" / self.entry.format(key=key)

    def command(self, prefix: Path) -> list[str]:
        """The argv that runs the program installed in ``prefix``."""
        path = str(self.entry_path(prefix))
        return [_which("node"), path] if self.node else [path]


CLAUDE_CODE: Final = Program(
    "@anthropic-ai/claude-code",
    "2.1.197",
    entry="@anthropic-ai/claude-code-{key}/claude",
    platform_package="@anthropic-ai/claude-code-{key}",
)
GEMINI_CLI: Final = Program("@google/gemini-cli", "0.61.0", entry="@google/gemini-cli/bundle/gemini.js", node=True)
COPILOT_CLI: Final = Program(
    "@github/copilot",
    "1.0.102",
    entry="@github/copilot-{key}/copilot",
    platform_package="@github/copilot-{key}",
    musl_key="linuxmusl-{arch}",
    extra=("@github/copilot-sdk@1.0.14",),
)
"""The CLI's own binary (its ``npm-loader.js`` only finds and starts it), with the SDK beside it."""
MCP_INSPECTOR: Final = Program(
    "@modelcontextprotocol/inspector", "0.15.0", entry="@modelcontextprotocol/inspector/cli/build/cli.js", node=True
)

ACP_SDK: Final = Program(
    "@agentclientprotocol/sdk", "2.4.0", entry="@agentclientprotocol/sdk/dist/v1/stable/acp.js", extra=("zod@4.6.7",)
)
"""The official TypeScript SDK of the Agent Client Protocol (a library: its client drives ACP
agents), with its one required peer pinned."""


def _which(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise InstallError(f"{name} is not on the PATH")
    return found


def missing_tools() -> str | None:
    """Why the real programs cannot run here (one line), or ``None`` when node and npm are there."""
    missing = [name for name in ("node", "npm") if shutil.which(name) is None]
    if missing:
        return f"the real-agent tests need {' and '.join(missing)} on the PATH"
    return None


def skip_without_node() -> None:
    """Skip the calling test module where node or npm is missing. Every module that calls this
    is skipped from this one line, so the summary says it once."""
    reason = missing_tools()
    if reason is not None:
        pytest.skip(reason, allow_module_level=True)


def cache_root() -> Path:
    """Where the programs are installed: ``$EXTENSION_HOST_TESTS_CACHE`` or the user cache folder."""
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else Path(platformdirs.user_cache_dir("extension-host-tests"))


def install(program: Program, timeout: float = INSTALL_TIMEOUT) -> Path:
    """The prefix ``program`` is installed in, installing it first if needed.

    Raises:
        InstallError: npm failed or took longer than ``timeout``, or another process held the
            lock that long.
    """
    root = cache_root() / "npm"
    prefix = root / program.folder_name
    if _installed(program, prefix):
        return prefix
    root.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout
    with open(root / ".lock", "a+b") as lock:
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise InstallError(f"another process held {root / '.lock'} for over {timeout:g} s") from None
                time.sleep(0.2)
        if not _installed(program, prefix):  # another process may have installed it meanwhile
            _npm_install(program, prefix, max(1.0, deadline - time.monotonic()))
    return prefix


def _installed(program: Program, prefix: Path) -> bool:
    try:
        marker = json.loads((prefix / _MARKER).read_text())
    except (OSError, ValueError):
        return False
    return bool(marker.get("packages") == program.packages() and program.entry_path(prefix).exists())


def _npm_install(program: Program, prefix: Path, timeout: float) -> None:
    staging = prefix.with_name(prefix.name + f".installing-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    packages = program.packages()
    argv: Sequence[str] = [
        _which("npm"),
        "install",
        "--prefix",
        str(staging),
        "--no-save",
        "--no-package-lock",
        "--no-audit",
        "--no-fund",
        "--omit=optional",
        "--ignore-scripts",
        "--loglevel=error",
        *packages,
    ]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        shutil.rmtree(staging, ignore_errors=True)
        raise InstallError(f"npm install {' '.join(packages)} took over {timeout:.0f} s") from None
    if done.returncode != 0 or not program.entry_path(staging).exists():
        shutil.rmtree(staging, ignore_errors=True)
        said = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
        raise InstallError(f"npm install {' '.join(packages)} failed (exit {done.returncode}):\n{said}")
    (staging / _MARKER).write_text(json.dumps({"packages": packages}))
    shutil.rmtree(prefix, ignore_errors=True)
    os.replace(staging, prefix)
