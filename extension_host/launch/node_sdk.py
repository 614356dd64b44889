"""JavaScript extensions: finding Node.js, and the one copy of the Copilot SDK they import.

An unmodified Copilot CLI extension (``extension.mjs``) imports ``@github/copilot-sdk/extension``
without installing it. The host keeps one installed copy of the published package, pinned to
:data:`SDK_VERSION`, in its user cache (installed with npm on first need, optional platform
packages and install scripts left out), and runs the extension as
``node --import <register.mjs> extension.mjs``, where ``register.mjs`` (shipped in this package)
makes the SDK's specifiers resolve to that copy. 1.0.14 is the newest stable release; Copilot CLI
injects a newer build of its own, unpacked from its binary. Like the CLI's
``--extension-sdk-path``, the host can be given such a build instead (:func:`sdk_build`: a folder
with ``index.js`` and ``extension.js``; ``ExtensionHost(extension_sdk_path=...)``,
``extensions --extension-sdk-path DIR`` or :data:`SDK_PATH_ENV`), and nothing is installed.

This module owns that install and the command line; it does not speak the protocol.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from ..errors import ExtensionHostError

__all__ = [
    "SDK_PACKAGE",
    "SDK_PATH_ENV",
    "SDK_VERSION",
    "NodeUnavailable",
    "ensure_sdk",
    "find_node",
    "node_argv",
    "sdk_build",
]

SDK_PACKAGE: Final = "@github/copilot-sdk"
SDK_VERSION: Final = "1.0.14"
"""The SDK version JavaScript extensions get; raise it deliberately, after running the tests."""
SDK_PATH_ENV: Final = "EXTENSION_HOST_SDK_PATH"
"""Set this to a folder with ``index.js`` and ``extension.js`` (an SDK build, such as the one
Copilot CLI unpacks under ``~/.cache/copilot/pkg/<platform>/<version>/copilot-sdk``) to run
JavaScript extensions on it instead of the pinned package."""
INSTALL_TIMEOUT: Final = 300.0
"""Seconds npm may take to install the SDK (a slow registry, not a hang, should fit)."""
_REGISTER: Final = Path(__file__).resolve().parent / "node" / "register.mjs"
_MARKER: Final = "installed.json"
_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Path, asyncio.Lock]] = weakref.WeakKeyDictionary()
"""One install at a time per cache folder; an asyncio lock belongs to one event loop."""


class NodeUnavailable(ExtensionHostError):
    """Node.js or the SDK cannot be had; the message says what is missing and what to do."""


def find_node(environment: Mapping[str, str]) -> str:
    """The ``node`` executable on the extension environment's PATH.

    Raises:
        NodeUnavailable: there is none.
    """
    node = shutil.which("node", path=environment.get("PATH"))
    if node is None:
        raise NodeUnavailable("node not found on PATH: install Node.js 20 or newer to run JavaScript extensions")
    return node


def sdk_build(folder: Path) -> Path:
    """``folder`` as an SDK build JavaScript extensions import (resolved).

    Raises:
        NodeUnavailable: it lacks ``index.js`` or ``extension.js``.
    """
    resolved = folder.expanduser().resolve()
    for name in ("index.js", "extension.js"):
        if not (resolved / name).is_file():
            raise NodeUnavailable(
                f"the extension SDK path {resolved} has no {name}: give a folder with index.js and extension.js "
                "(as Copilot CLI's --extension-sdk-path)"
            )
    return resolved


def node_argv(node: str, entry: Path) -> tuple[str, ...]:
    """The command line that runs a JavaScript extension with the SDK resolvable."""
    return (node, "--import", _REGISTER.as_uri(), str(entry))


async def ensure_sdk(cache: Path, environment: Mapping[str, str]) -> Path:
    """The folder whose ``node_modules`` holds the pinned SDK, installing it on first use.

    Concurrent callers share one install; a failed install leaves nothing half-done behind.

    Raises:
        NodeUnavailable: npm is missing, or the install failed (offline, registry error); the
            message carries npm's own last lines.
    """
    target = cache / "node-sdk" / SDK_VERSION
    lock = _locks.setdefault(asyncio.get_running_loop(), {}).setdefault(target, asyncio.Lock())
    async with lock:
        if _installed(target):
            return target
        npm = shutil.which("npm", path=environment.get("PATH"))
        if npm is None:
            raise NodeUnavailable(
                f"npm not found on PATH: it is needed once, to install {SDK_PACKAGE}@{SDK_VERSION} "
                "for JavaScript extensions"
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".installing-", dir=target.parent))
        try:
            await _npm_install(npm, staging, environment)
            (staging / _MARKER).write_text(
                json.dumps({"package": SDK_PACKAGE, "version": SDK_VERSION}), encoding="utf-8"
            )
            shutil.rmtree(target, ignore_errors=True)
            staging.rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return target


def _installed(target: Path) -> bool:
    try:
        marker = json.loads((target / _MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    package_json = target / "node_modules" / "@github" / "copilot-sdk" / "package.json"
    return bool(marker.get("version") == SDK_VERSION and package_json.is_file())


async def _npm_install(npm: str, prefix: Path, environment: Mapping[str, str]) -> None:
    process = await asyncio.create_subprocess_exec(
        npm,
        "install",
        "--prefix",
        str(prefix),
        "--omit=optional",
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        f"{SDK_PACKAGE}@{SDK_VERSION}",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=dict(environment),
        start_new_session=True,
    )
    try:
        async with asyncio.timeout(INSTALL_TIMEOUT):
            output, _ = await process.communicate()
    except TimeoutError:
        process.kill()
        await process.wait()
        raise NodeUnavailable(
            f"installing {SDK_PACKAGE}@{SDK_VERSION} with npm took over {INSTALL_TIMEOUT:g} s; "
            "is the registry reachable?"
        ) from None
    if process.returncode != 0:
        tail = " | ".join(line for line in output.decode("utf-8", "replace").splitlines()[-3:] if line.strip())
        raise NodeUnavailable(
            f"could not install {SDK_PACKAGE}@{SDK_VERSION} with npm (exit {process.returncode}): {tail or 'no output'}"
        )
