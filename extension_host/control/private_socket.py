"""A Unix socket only its user can use: the private folder it lives in, how it is bound, and
who is at the other end.

- the folder must be the user's own: owned by them with mode 0700 (no symbolic link), in a
  parent owned by them or root that nobody else may write to unless it has the sticky bit
  (like ``/tmp``): otherwise another user could rename the folder away and put theirs in its
  place. A folder made here is made so; one found otherwise is refused, never repaired.
- a socket is bound under a temporary name, made 0600 and listening, and only then linked into
  place, so a client never meets it half made and a live socket is never replaced.
- :func:`peer_uid` asks the kernel who is at the other end, so a server can drop a client of
  another user and a client can refuse a listener of another user
  (:func:`refuse_other_listener`, the one check every client makes); :func:`peer_pid`, which
  process it is (so a client can say which host stopped answering).

This module knows sockets, files and users; not the messages that travel on the socket.
"""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import struct
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ..errors import ExtensionHostError, RuntimeFolderError
from ..project.paths import RUNTIME_ENV
from ..project.private_files import make_folders

if TYPE_CHECKING:
    import asyncio  # for annotations only: a hook command connects without the event loop's import cost

__all__ = [
    "bind_private",
    "check_listener",
    "check_private_folder",
    "make_private_folder",
    "peer_pid",
    "peer_uid",
    "refuse_other_listener",
    "same_user",
]

_MAX_SOCKET_PATH_BYTES: Final = 104
"""``sun_path`` holds 108 bytes on Linux and 104 on macOS, the terminating NUL included."""
_GROUP_OR_OTHER_BITS: Final = 0o077
_GROUP_OR_OTHER_WRITE: Final = 0o022
_ROOT_UID: Final = 0

# How to ask the kernel who is at the other end of a Unix socket.
# Linux: SO_PEERCRED gives struct ucred {pid_t pid; uid_t uid; gid_t gid}.
_SO_PEERCRED: Final[int | None] = getattr(socket, "SO_PEERCRED", None) if sys.platform.startswith("linux") else None
_UCRED: Final = struct.Struct("3i")
# macOS and FreeBSD: LOCAL_PEERCRED at level SOL_LOCAL (0) gives struct xucred
# {u_int cr_version; uid_t cr_uid; short cr_ngroups; gid_t cr_groups[16]}, version 0.
_LOCAL_PEERCRED: Final[int | None] = (
    getattr(socket, "LOCAL_PEERCRED", 0x001) if sys.platform == "darwin" or sys.platform.startswith("freebsd") else None
)
_SOL_LOCAL: Final = 0
_XUCRED: Final = struct.Struct("IIh16I")
_XUCRED_VERSION: Final = 0


def peer_uid(sock: socket.socket) -> int | None:
    """The user id of the process at the other end of the Unix socket ``sock``, as the kernel
    recorded it: for a connected client's socket, who called ``listen``; for an accepted one,
    who called ``connect``.

    Linux answers with ``SO_PEERCRED``, macOS and FreeBSD with ``LOCAL_PEERCRED``. Elsewhere
    the answer is ``None``, and both sides go on without asking: the runtime folder, which
    must be private to the user, is then all that keeps other users away.

    Raises:
        OSError: the kernel would not tell (``sock`` is not a Unix socket, or is closed).
    """
    if _SO_PEERCRED is not None:
        _pid, uid, _gid = _UCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, _SO_PEERCRED, _UCRED.size))
        return int(uid)
    if _LOCAL_PEERCRED is not None:
        raw = sock.getsockopt(_SOL_LOCAL, _LOCAL_PEERCRED, _XUCRED.size)
        version, uid = struct.unpack_from("II", raw)
        return int(uid) if version == _XUCRED_VERSION else None
    return None


def peer_pid(sock: socket.socket) -> int | None:
    """The process id at the other end of the Unix socket ``sock`` as the kernel recorded it
    (see :func:`peer_uid`); ``None`` where the kernel does not say (anywhere but Linux).

    Raises:
        OSError: the kernel would not tell.
    """
    if _SO_PEERCRED is None:
        return None
    pid, _uid, _gid = _UCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, _SO_PEERCRED, _UCRED.size))
    return int(pid)


def same_user(writer: asyncio.StreamWriter) -> bool:
    """Whether the client at the other end of ``writer`` runs as the user running this server;
    a client the kernel cannot name is not."""
    sock = writer.get_extra_info("socket")
    if sock is None:
        return False
    try:
        uid = peer_uid(sock)
    except OSError:
        return False
    return uid is None or uid == os.geteuid()


def refuse_other_listener(path: Path, sock: socket.socket) -> None:
    """Refuse the control socket ``path`` when the process listening on it (the other end of the
    connected ``sock``) is another user's: whatever it would answer is not the user's host speaking.

    Raises:
        ExtensionHostError: it is another user's, or the kernel would not tell.
    """
    try:
        uid = peer_uid(sock)
    except OSError as exc:
        raise ExtensionHostError(f"cannot tell who listens on the control socket {path}: {exc}") from exc
    me = os.geteuid()
    if uid is not None and uid != me:
        raise ExtensionHostError(
            f"the control socket {path} is served by a process of uid {uid}, not by you (uid {me}), "
            f"so it is not your host; remove {path} and check who else can write to {path.parent}"
        )


def check_listener(path: Path, writer: asyncio.StreamWriter) -> None:
    """:func:`refuse_other_listener` for a connection's ``writer``, closing it when refused."""
    sock = writer.get_extra_info("socket")
    if sock is None:
        return
    try:
        refuse_other_listener(path, sock)
    except ExtensionHostError:
        writer.close()
        raise


def check_private_folder(folder: Path) -> bool:
    """Whether the runtime folder ``folder`` exists (False when it does not); refuse it when
    another user could put a socket of theirs in it.

    It must be a real folder (not a symbolic link), owned by the user, with no permission for
    group or others; its parent must be owned by the user or root, and writable by nobody else
    unless it has the sticky bit (like ``/tmp``): otherwise someone else could rename the folder
    away and put theirs in its place. Nothing is changed: a folder found wanting is the user's
    to fix.

    Raises:
        RuntimeFolderError: what is wrong, and what to do.
    """
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return False
    me = os.geteuid()
    elsewhere = f"set {RUNTIME_ENV} to a folder of your own"
    what = f"the control socket folder {folder}"
    if stat.S_ISLNK(info.st_mode):
        raise RuntimeFolderError(
            f"{what} is a symbolic link, not a folder; remove it, or {elsewhere}", folder, info.st_uid
        )
    if not stat.S_ISDIR(info.st_mode):
        raise RuntimeFolderError(f"{what} is not a folder; remove it, or {elsewhere}", folder, info.st_uid)
    if info.st_uid != me:
        raise RuntimeFolderError(
            f"{what} belongs to uid {info.st_uid}, not you (uid {me}), so its owner could answer in place "
            f"of your host; remove it, or {elsewhere}",
            folder,
            info.st_uid,
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode & _GROUP_OR_OTHER_BITS:
        raise RuntimeFolderError(
            f"{what} has mode {mode:04o}, not 0700, so other users can reach what is in it; "
            f"run `chmod 700 {folder}` if it is yours, remove it, or {elsewhere}",
            folder,
        )
    parent = folder.parent
    above = os.stat(parent)
    if above.st_uid not in (me, _ROOT_UID):
        raise RuntimeFolderError(
            f"{what} is in {parent}, which belongs to uid {above.st_uid} (neither you nor root), so its owner "
            f"could put a folder of theirs in place of {folder.name}; {elsewhere}",
            parent,
            above.st_uid,
        )
    parent_mode = stat.S_IMODE(above.st_mode)
    if parent_mode & _GROUP_OR_OTHER_WRITE and not parent_mode & stat.S_ISVTX:
        raise RuntimeFolderError(
            f"{what} is in {parent}, which others may write to (mode {parent_mode:04o}, no sticky bit), so they "
            f"could put a folder of theirs in place of {folder.name}; run `chmod go-w {parent}` if it is yours, "
            f"or {elsewhere}",
            parent,
        )
    return True


def make_private_folder(folder: Path) -> None:
    """Create ``folder`` (and any missing parent, such as ``/tmp/runtime-1000``) readable by its
    owner only. An existing folder is left as it is, never chmod-ed: it is the user's to fix if
    :func:`check_private_folder` refuses it.

    Raises:
        RuntimeFolderError: a folder cannot be made (a parent of someone else's, say).
    """
    try:
        make_folders(folder)
    except OSError as exc:
        path = Path(exc.filename) if exc.filename else folder
        raise RuntimeFolderError(
            f"cannot create the control socket folder {path}: {exc.strerror or exc}; "
            f"set {RUNTIME_ENV} to a folder of your own",
            path,
        ) from None


def bind_private(path: Path, project_root: Path) -> socket.socket:
    """A listening socket at ``path`` that nobody but its owner could ever connect to.

    It is bound under a temporary name, made 0600 and listening, and only then linked into
    place: a client never meets it half made (with the umask's mode, or refusing connections
    and so looking stale), and ``link`` never replaces a socket another host put there meanwhile.
    """
    temporary = path.with_name(f"{path.stem}.{os.getpid()}.tmp")
    if len(os.fsencode(temporary)) >= _MAX_SOCKET_PATH_BYTES:
        raise ExtensionHostError(
            f"the control socket path {path} is too long for a Unix socket; "
            "set EXTENSION_HOST_RUNTIME_DIR to a shorter folder"
        )
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()  # left by an earlier attempt that was killed half way
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(os.fspath(temporary))
        try:
            temporary.chmod(0o600)
            sock.listen()
            os.link(temporary, path)
        finally:
            temporary.unlink()
    except FileExistsError:
        sock.close()
        raise ExtensionHostError(f"another host started for {project_root} at the same moment; stop it first") from None
    except OSError as exc:
        sock.close()
        raise ExtensionHostError(f"cannot create the control socket {path}: {exc}") from exc
    except BaseException:
        sock.close()
        raise
    return sock
