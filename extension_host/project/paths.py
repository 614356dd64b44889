"""Where things live on disk: the project root, the user's extension home, log files, and the
control sockets of running hosts (one project's, or every one in the runtime folder).

A project root that is named explicitly must be an existing folder: a typo is an error
(:class:`~extension_host.errors.ProjectRootError`), never a silent fall-back to the working
directory's project. Logs are kept per project, in a folder named by :func:`project_key`. A
runtime folder platformdirs refuses (a ``runtime-<uid>`` another user made first) is a
:class:`~extension_host.errors.RuntimeFolderError` naming it and its owner; whether a folder is
private enough is :mod:`extension_host.control.private_socket`'s question.

The only module that asks platformdirs anything. Everything else receives ``Path`` objects,
so tests pass temporary folders instead of patching globals.
"""

from __future__ import annotations

import hashlib
import os
import re
import warnings
from pathlib import Path
from typing import Final

import platformdirs

from ..errors import ProjectRootError, RuntimeFolderError

__all__ = [
    "APP_NAME",
    "CACHE_ENV",
    "HOME_ENV",
    "PROJECT_AGENT_DIRS",
    "PROJECT_EXTENSIONS_DIR",
    "RUNTIME_ENV",
    "agents_dir",
    "cache_dir",
    "control_socket_path",
    "control_socket_paths",
    "extensions_dir",
    "find_project_root",
    "history_path",
    "logs_dir",
    "project_key",
    "project_logs_dir",
    "runtime_dir",
    "sessions_dir",
    "user_home",
]

APP_NAME: Final = "extension-host"
HOME_ENV: Final = "EXTENSION_HOST_HOME"
"""Set this to put the user's extensions and logs somewhere else (tests, CI, portable setups)."""
PROJECT_EXTENSIONS_DIR: Final = Path(".github") / "extensions"
PROJECT_AGENT_DIRS: Final = (Path(".github") / "agents", Path(".claude") / "agents")
"""Where a project's custom agent files live, the first winning a name both give (as GitHub
Copilot CLI reads them)."""
RUNTIME_ENV: Final = "EXTENSION_HOST_RUNTIME_DIR"
"""Set this to put control sockets somewhere else than the platform's user runtime folder."""
CACHE_ENV: Final = "EXTENSION_HOST_CACHE_DIR"
"""Set this to keep downloaded things (the Copilot SDK for JavaScript extensions) elsewhere."""

_SOCKET_DIGITS: Final = 16
_SOCKET_SUFFIX: Final = ".sock"
_SOCKET_NAME: Final = re.compile(f"[0-9a-f]{{{_SOCKET_DIGITS}}}{re.escape(_SOCKET_SUFFIX)}")
"""The name of a control socket (and of nothing else in the runtime folder)."""

_UNSAFE_IN_NAME: Final = re.compile(r"[^A-Za-z0-9._-]")
"""What a project's folder name may not bring into a log folder's name."""
_REFUSED_FOLDER: Final = re.compile(r"runtime directory (/.*?) (?:is|has|cannot) ")
"""Where platformdirs' refusal of a runtime folder names it."""

# platformdirs warns when XDG_RUNTIME_DIR is unset and falls back to a private folder of its
# own, which suits us. Versions older than the warning have nothing to filter.
_RUNTIME_DIR_WARNING: Final[type[Warning] | None] = getattr(platformdirs, "RuntimeDirWarning", None)


def find_project_root(start: Path | str | None = None) -> Path:
    """The git root that contains ``start`` (default: the working directory), else ``start`` itself.

    A ``.git`` file counts too (worktrees and submodules use one).

    Raises:
        ProjectRootError: ``start`` is given but is not an existing folder.
    """
    if start is not None and not Path(start).expanduser().is_dir():
        raise ProjectRootError(start)
    here = Path(start if start is not None else os.getcwd()).expanduser().resolve()
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


def agents_dir(home: Path) -> Path:
    """Where user-scope custom agent files live under a home folder."""
    return home / "agents"


def logs_dir(home: Path) -> Path:
    """Where log folders live under a home folder (one per project, see :func:`project_logs_dir`)."""
    return home / "logs"


def sessions_dir(home: Path) -> Path:
    """Where persisted sessions live under a home folder: ``<home>/sessions/<session id>/``."""
    return home / "sessions"


def history_path(home: Path, loop: str) -> Path:
    """The line history of an interactive loop (``dev``, ``chat``) under a home folder."""
    return home / "history" / f"{loop}.jsonl"


def project_key(project_root: Path) -> str:
    """A short, stable name for a project: its folder name (for people) and a hash of its real
    path (so that two projects of the same name never share), e.g. ``shop-3f2a9c1d0b7e``."""
    resolved = Path(project_root).resolve()
    digest = hashlib.sha256(os.fsencode(resolved)).hexdigest()[:12]
    name = _UNSAFE_IN_NAME.sub("_", resolved.name)[:40] or "root"
    return f"{name}-{digest}"


def project_logs_dir(home: Path, project_root: Path) -> Path:
    """Where the extension logs of one project live: ``<home>/logs/<project key>/``.

    Per project, so that ``extensions inspect`` in one project never shows another's errors,
    even for extensions of the same name (user-scope ones included).
    """
    return logs_dir(home) / project_key(project_root)


def cache_dir() -> Path:
    """Where the host keeps what it downloads: ``$EXTENSION_HOST_CACHE_DIR``, else the
    platform's user cache folder for ``extension-host``."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured).expanduser().resolve()
    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def runtime_dir() -> Path:
    """Where control sockets live: ``$EXTENSION_HOST_RUNTIME_DIR`` if set, else the platform's
    user runtime folder for ``extension-host`` (e.g. ``/run/user/1000/extension-host``).

    Raises:
        RuntimeFolderError: platformdirs refused the folder it would fall back to (without
            ``XDG_RUNTIME_DIR``, ``runtime-<uid>`` in the temporary folder, a name another user
            can take first).
    """
    configured = os.environ.get(RUNTIME_ENV)
    if configured:
        return Path(configured).expanduser().resolve()
    with warnings.catch_warnings():
        if _RUNTIME_DIR_WARNING is not None:
            warnings.simplefilter("ignore", _RUNTIME_DIR_WARNING)
        try:
            return Path(platformdirs.user_runtime_dir(APP_NAME, appauthor=False))
        except OSError as exc:
            raise _refused(exc) from None


def _refused(exc: OSError) -> RuntimeFolderError:
    why = str(exc).split("; set XDG_RUNTIME_DIR")[0]
    found = _REFUSED_FOLDER.search(why)
    folder = Path(found.group(1)) if found else None
    owner = None
    if folder is not None:
        try:
            owner = os.lstat(folder).st_uid
        except OSError:
            pass
    remove = f", or have {folder} removed" if folder is not None else ""
    return RuntimeFolderError(
        f"the runtime folder for control sockets cannot be used ({why}); set {RUNTIME_ENV} or XDG_RUNTIME_DIR "
        f"to a folder of your own{remove}",
        folder,
        owner,
    )


def control_socket_path(project_root: Path) -> Path:
    """The control socket of the host running for ``project_root`` (one per resolved root).

    The name is a short hash of the root, not the root itself: a socket path must fit in
    about 107 bytes.
    """
    digest = hashlib.sha256(os.fsencode(Path(project_root).resolve())).hexdigest()
    return runtime_dir() / f"{digest[:_SOCKET_DIGITS]}{_SOCKET_SUFFIX}"


def control_socket_paths() -> list[Path]:
    """The control sockets in the runtime folder, of whichever projects (none if it is missing
    or unreadable); whether a host still answers on each is the caller's question."""
    folder = runtime_dir()
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(folder / name for name in names if _SOCKET_NAME.fullmatch(name))
