"""Where things live on disk: the project root, the user's extension home, log files.

The only module that asks platformdirs anything. Everything else receives ``Path`` objects,
so tests pass temporary folders instead of patching globals.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

import platformdirs

__all__ = [
    "APP_NAME",
    "HOME_ENV",
    "PROJECT_EXTENSIONS_DIR",
    "extensions_dir",
    "find_project_root",
    "logs_dir",
    "user_home",
]

APP_NAME: Final = "extension-host"
HOME_ENV: Final = "EXTENSION_HOST_HOME"
"""Set this to put the user's extensions and logs somewhere else (tests, CI, portable setups)."""
PROJECT_EXTENSIONS_DIR: Final = Path(".github") / "extensions"


def find_project_root(start: Path | str | None = None) -> Path:
    """The git root that contains ``start`` (default: the working directory), else ``start`` itself.

    A ``.git`` file counts too (worktrees and submodules use one).
    """
    here = Path(start if start is not None else os.getcwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
    return here


def user_home(explicit: Path | str | None = None) -> Path:
    """The user's extension-host folder: ``explicit``, else ``$EXTENSION_HOST_HOME``, else the
    platform's user config folder for ``extension-host``."""
    if explicit is not None:
        return Path(explicit).expanduser().resolve()
    configured = os.environ.get(HOME_ENV)
    if configured:
        return Path(configured).expanduser().resolve()
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def extensions_dir(home: Path) -> Path:
    """Where user-scope extensions live under a home folder."""
    return home / "extensions"


def logs_dir(home: Path) -> Path:
    """Where per-extension log files live under a home folder."""
    return home / "logs"
