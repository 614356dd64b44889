"""Folders and files only their user can read: the home folder, logs, sessions, pid files.

What the host keeps under ``<home>`` holds what extensions print on stderr (tokens a failing
tool echoed, say) and every event of a session, so none of it is for other users of the
machine:

- :func:`make_folders` makes a folder, and every missing one on the way, with mode 0700
  whatever the umask, and leaves one that exists as it is; :func:`private_folder` also takes
  group and other permissions away from a folder of the user's own that already exists (made
  by an older version, or under a loose umask).
- :func:`open_private` opens a file as ``os.open`` does, creating it with mode 0600; an
  existing file of the user's own loses its group and other permissions; a symbolic link is
  refused, never followed. :func:`write_private` replaces a file atomically with a 0600 one.
- :func:`tighten_file` takes group and other permissions away from an existing file,
  :func:`tighten_files_in` from every file in a folder.
- :func:`open_regular` opens a file for reading only when it is a regular file, and never waits
  on what else may stand in its place (a fifo would hang an ordinary open until written to):
  the way every record, token file and settings file that someone else may have put there is
  read.

Only what the user owns is changed, and nothing through a symbolic link: a linked folder, and
what is below it, is left as it is (its target is the user's to set), and what belongs to
another user (root's, say) is never touched. This module knows modes and owners; not what the files hold.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Final

__all__ = [
    "PRIVATE_FILE_MODE",
    "PRIVATE_FOLDER_MODE",
    "NotRegularFile",
    "make_folders",
    "open_private",
    "open_regular",
    "private_folder",
    "tighten_file",
    "tighten_files_in",
    "write_private",
]

PRIVATE_FOLDER_MODE: Final = 0o700
"""What a private folder allows: its owner in, nobody else."""
PRIVATE_FILE_MODE: Final = 0o600
"""What a private file allows: its owner reads and writes, nobody else."""
_GROUP_AND_OTHER: Final = 0o077
_FOLDER_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def make_folders(folder: Path) -> None:
    """Create ``folder`` and every missing folder on the way (such as ``/tmp/runtime-1000``)
    with mode 0700 whatever the umask; a folder that exists is left as it is.

    Raises:
        OSError: a folder cannot be created (its ``filename`` names it).
    """
    if folder.is_dir():
        return  # the common case (every log opened, every session made): one stat, not one per ancestor
    missing = [path for path in (folder, *folder.parents) if not path.exists()]
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=PRIVATE_FOLDER_MODE)
            path.chmod(PRIVATE_FOLDER_MODE)  # mkdir's mode is filtered by the umask


def private_folder(folder: Path, *, within: Path | None = None) -> Path:
    """Make ``folder`` a folder only its user can enter, and return it.

    Missing folders on the way are created with mode 0700. ``folder`` itself, and with
    ``within`` (an ancestor such as ``<home>``) every folder from ``within`` down to it, loses
    its group and other permissions when it is the user's own. The walk down stops at a
    symbolic link: neither it nor anything below it is changed.

    Raises:
        OSError: a folder cannot be created.
        ValueError: ``folder`` is not under ``within``.
    """
    make_folders(folder)
    top = folder if within is None else within
    parts = folder.relative_to(top).parts
    try:
        fd = os.open(top, _FOLDER_FLAGS)
    except OSError:
        return folder  # a symbolic link (left as it is), or gone meanwhile
    try:
        _tighten(fd)
        for part in parts:
            below = os.open(part, _FOLDER_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = below
            _tighten(fd)
    except OSError:
        pass  # a symbolic link on the way down, or a folder gone meanwhile
    finally:
        os.close(fd)
    return folder


def open_private(path: Path, flags: int) -> int:
    """``os.open(path, flags)`` for a file only its user may read: a missing file is created
    with mode 0600, an existing one of the user's own loses its group and other permissions.

    Raises:
        OSError: it cannot be opened; ``ELOOP`` when ``path`` is a symbolic link.
    """
    fd = os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, PRIVATE_FILE_MODE)
    try:
        _tighten(fd)
    except BaseException:
        os.close(fd)
        raise
    return fd


class NotRegularFile(OSError):
    """Something else than a regular file (a folder, a fifo, a device) stands at ``filename``."""

    def __init__(self, path: Path) -> None:
        super().__init__(errno.EINVAL, "not a regular file", str(path))


@contextlib.contextmanager
def open_regular(path: Path, *, follow_symlinks: bool = True) -> Iterator[tuple[BinaryIO, os.stat_result]]:
    """``path`` open for reading, with what ``fstat`` says of it, when it is a regular file.

    Opened without blocking (a fifo's open would wait for a writer) and judged by what was
    opened, not by its name; with ``follow_symlinks`` false a symbolic link is refused (``ELOOP``).

    Raises:
        FileNotFoundError: nothing is there.
        NotRegularFile: something else than a regular file is there.
        OSError: it cannot be opened.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow_symlinks else os.O_NOFOLLOW)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(path)  # before fdopen, which refuses a folder in words of its own
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with handle:
        yield handle, info


def write_private(path: Path, data: bytes) -> None:
    """Replace ``path`` with a 0600 file holding ``data``: written and synced under a temporary
    name beside it, then renamed into place, so a reader never meets half of it.

    Raises:
        OSError: it cannot be written (the temporary file is removed).
    """
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with os.fdopen(open_private(temporary, os.O_WRONLY | os.O_TRUNC), "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def tighten_file(path: Path) -> None:
    """Take group and other permissions away from the file ``path`` if it is the user's own;
    a missing file or a symbolic link is left as it is."""
    _tighten_file(os.fspath(path))


def tighten_files_in(folder: Path) -> None:
    """:func:`tighten_file` for every file directly in ``folder`` (what an older version, or
    a process under a loose umask, left there); a missing or linked folder is left as it is."""
    try:
        fd = os.open(folder, _FOLDER_FLAGS)
    except OSError:
        return
    try:
        for entry in os.scandir(fd):
            if entry.is_file(follow_symlinks=False):
                _tighten_file(entry.name, fd)
    finally:
        os.close(fd)


def _tighten_file(path: str, folder_fd: int | None = None) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder_fd)
    except OSError:
        return
    try:
        _tighten(fd)
    finally:
        os.close(fd)


def _tighten(fd: int) -> None:
    info = os.fstat(fd)
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)) or info.st_uid != os.geteuid():
        return
    mode = stat.S_IMODE(info.st_mode)
    if mode & _GROUP_AND_OTHER:
        os.fchmod(fd, mode & ~_GROUP_AND_OTHER)
