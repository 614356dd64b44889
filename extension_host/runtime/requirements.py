"""A Python extension's requirements, before it starts: which interpreter runs it.

An extension without a manifest, or whose manifest lists no ``requires``, runs on the host's
interpreter (forked by the fork server, the fast start); the manifest is read once when it
starts (:class:`~extension_host.runtime.instance.ExtensionInstance`), the builder imported only
when there are requirements. One with
requirements runs its own environment's interpreter (:mod:`extension_host.launch.python_env`),
built on its first start, with the extension's status still ``starting``: meanwhile its
:attr:`~extension_host.info.ExtensionInfo.activity` says ``installing 2 requirements`` (the
status line shows it) and a ``session.info`` event says what is installed with what. Its process
then sees that environment as an activated one would (``VIRTUAL_ENV``, its ``bin`` first on
``PATH``), and not the folder the host adds to ``PYTHONPATH`` for the SDK, which would bring the
host's own packages in.

This module decides and prepares; starting the process is the instance's job.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..project.discovery import ExtensionSpec
from .context import SessionContext

if TYPE_CHECKING:
    from ..launch.python_installer import Installer

__all__ = ["installing", "own_interpreter"]


def installing(requires: tuple[str, ...]) -> str:
    """What a starting extension is doing while its environment builds: ``installing 2 requirements``."""
    return f"installing {len(requires)} requirement{'' if len(requires) == 1 else 's'}"


async def own_interpreter(
    spec: ExtensionSpec,
    requires: tuple[str, ...],
    context: SessionContext,
    env: dict[str, str],
    log: Path,
    on_activity: Callable[[str | None], None],
) -> Path | None:
    """The interpreter of the extension's own environment, holding ``requires`` (its manifest's;
    ``None`` when there are none: it runs on the host's), built first if need be; ``env``, its
    process's environment, is made that environment's. ``on_activity`` is told what it is doing
    while the build runs, and ``None`` when that is over.

    Raises:
        RequirementsFailed: the environment could not be built (the installer's reason).
    """
    if not requires:
        return None
    from ..launch.python_env import ensure_environment  # only for an extension with requirements

    def building(installer: Installer) -> None:
        on_activity(installing(requires))
        message = f"extension {spec.id}: {installing(requires)} ({', '.join(requires)}) with {installer}"
        context.events.emit("session.info", {"infoType": "extension", "message": message, "extensionId": spec.id})

    try:
        environment = await ensure_environment(
            requires,
            context.cache_dir,
            context.environment,
            context.host_environment,
            log,
            timeout=context.install_timeout,
            extension_id=spec.id,
            on_build=building,
        )
    finally:
        on_activity(None)
    _activate(env, environment.folder, context.environment.get("PYTHONPATH"))
    return environment.python


def _activate(env: dict[str, str], folder: Path, python_path: str | None) -> None:
    """``env`` as the environment at ``folder`` activated would have it, with the user's own
    ``PYTHONPATH`` (``python_path``) and nothing the host added to it."""
    if python_path is None:
        env.pop("PYTHONPATH", None)
    else:
        env["PYTHONPATH"] = python_path
    env["VIRTUAL_ENV"] = str(folder)
    path = env.get("PATH")
    env["PATH"] = str(folder / "bin") + (os.pathsep + path if path else "")
