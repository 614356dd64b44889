"""Starting, finding and stopping the background host that answers a project's hook calls.

When a hook command finds no host on the project's control socket, :func:`ask_background_host`
starts one (:mod:`.background_host`, detached: its own session, stdin ``/dev/null``, its output in
``hook-host.log`` in the project's logs folder), waits until its socket answers (at most
:data:`HOOK_HOST_START_TIMEOUT`, and never past the hook command's deadline, which the lock and
the call draw from too: :mod:`.deadline`), and sends the call there. Only the first call
pays the start; the host exits by itself after :data:`DEFAULT_HOOK_HOST_IDLE` seconds without a
control connection (``$EXTENSION_HOST_HOOK_IDLE`` changes it; ``0`` or ``off`` turns the
background host off, and every call then starts a host of its own).

Hook commands that race for the first call take a lock (``flock`` on a file beside the control
socket, in the private runtime folder): one starts the host, the others find it answering.
The pid of the host it started is written beside the lock, for :func:`stop_background_host`
(``extensions hook stop``), which stops only the host that is both named there and answering
the project's socket with that pid (never an ``extensions dev`` or a recycled pid), and for
:func:`stop_hung_background_host`, which ends it when it takes connections but stopped
answering (:mod:`.health`), again only when the kernel names it as the socket's listener.

It owns the start, the lock, the pid file and the stop; imports stay light (no event loop, no
host), as everything a hook command imports is paid per call.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

from ...control.methods import METHOD_STATUS
from ...control.private_socket import check_private_folder, make_private_folder
from ...launch.interpreter import python_command
from ...launch.logs import open_log
from ...project.paths import control_socket_path, project_logs_dir, user_home
from ...project.private_files import write_private
from .client import ask_running_host
from .deadline import HookDeadline, seconds_from_env

__all__ = [
    "DEFAULT_HOOK_HOST_IDLE",
    "HOOK_HOST_IDLE_ENV",
    "HOOK_HOST_LOG_NAME",
    "HOOK_HOST_START_TIMEOUT",
    "HOOK_HOST_STOP_TIMEOUT",
    "HUNG_HOST_STOP_GRACE",
    "ask_background_host",
    "background_host_pid",
    "hook_host_idle",
    "start_background_host",
    "stop_background_host",
    "stop_hung_background_host",
]

HOOK_HOST_IDLE_ENV: Final = "EXTENSION_HOST_HOOK_IDLE"
"""Seconds the background host waits without a control connection before it exits."""
DEFAULT_HOOK_HOST_IDLE: Final = 600.0
"""Ten minutes: an agent session calls hooks far more often than that, and a host left over
from a session that ended goes away on its own."""
HOOK_HOST_START_TIMEOUT: Final = 20.0
"""Seconds a hook command waits for the background host it started (or another command is
starting) to answer; past it the call runs in a host of its own, in what is left of the
command's deadline."""
HOOK_HOST_STOP_TIMEOUT: Final = 15.0
"""Seconds ``extensions hook stop`` waits for the background host to exit."""
HUNG_HOST_STOP_GRACE: Final = 2.0
"""Seconds a background host that stopped answering gets to exit after SIGTERM, then again
after SIGKILL: the hook command that found it waits for that within the agents' limit."""
HOOK_HOST_LOG_NAME: Final = "hook-host.log"
"""The background host's own output, in the project's logs folder."""
_POLL: Final = 0.05


def hook_host_idle() -> float | None:
    """The idle period from ``$EXTENSION_HOST_HOOK_IDLE`` (default :data:`DEFAULT_HOOK_HOST_IDLE`);
    ``None`` when the background host is turned off (``0``, ``off``). A value that is not a
    number is ignored (a hook call must not fail over it)."""
    if os.environ.get(HOOK_HOST_IDLE_ENV, "").strip().lower() in ("off", "no", "false"):
        return None
    idle = seconds_from_env(HOOK_HOST_IDLE_ENV)
    if idle is None:
        return DEFAULT_HOOK_HOST_IDLE
    return idle if idle > 0 else None


def _files(project_root: Path) -> tuple[Path, Path]:
    sock = control_socket_path(project_root)
    return sock.with_suffix(".hook-host.lock"), sock.with_suffix(".hook-host.pid")


def ask_background_host(
    project_root: Path, method: str, params: Any, home: Path | None = None, deadline: HookDeadline | None = None
) -> Any:
    """Start the background host of ``project_root`` if none answers, and ask it, all within
    ``deadline`` (default: a whole one from now).

    Returns the answer, or ``None`` when the background host is turned off or could not be
    started within :data:`HOOK_HOST_START_TIMEOUT` (the caller then runs the call itself).

    Raises:
        HostUnreachableError: the host is up but failed the request (as for any running host).
        HookDeadlineError: ``deadline`` passed while waiting for the lock or the start.
    """
    if deadline is None:
        deadline = HookDeadline()
    if not start_background_host(project_root, home, deadline):
        return None
    return ask_running_host(project_root, method, params, deadline)


def start_background_host(project_root: Path, home: Path | None = None, deadline: HookDeadline | None = None) -> bool:
    """Make sure a host answers on the project's control socket, starting the background host
    if none does; ``False`` when it is turned off or did not come up within
    :data:`HOOK_HOST_START_TIMEOUT` (its reason is in its log).

    Raises:
        HookDeadlineError: ``deadline`` passed first, while another command held the lock or
            while the host was starting (it is then stopped).
    """
    idle = hook_host_idle()
    if idle is None:
        return False
    lock_path, pid_path = _files(project_root)
    folder = lock_path.parent
    make_private_folder(folder)
    if not check_private_folder(folder):
        return False
    wait = HOOK_HOST_START_TIMEOUT
    if deadline is not None:
        wait = min(wait, deadline.left_for("the background host's start"))
    until = time.monotonic() + wait
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        if not _lock(fd, until):
            _check(deadline, "waiting for another hook command to start the background host")
            return False
        if _answers(control_socket_path(project_root), until):
            return True  # another hook command started it while this one waited
        if _spawn(project_root, home, idle, pid_path, until):
            return True
        _check(deadline, "the background host's start")
        return False
    finally:
        os.close(fd)  # releases the lock


def _check(deadline: HookDeadline | None, what: str) -> None:
    """Raise :class:`HookDeadlineError` for ``what`` if it is ``deadline`` that ran out."""
    if deadline is not None:
        deadline.left_for(what)


def _lock(fd: int, until: float) -> bool:
    import fcntl

    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            # The holder is bounded by its own deadline; the kernel frees the lock if it dies.
            if time.monotonic() > until:
                return False
            time.sleep(_POLL)


def _answers(path: Path, until: float) -> bool:
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(max(0.001, min(1.0, until - time.monotonic())))
        try:
            sock.connect(os.fspath(path))
        except OSError:
            return False
    return True


def _spawn(project_root: Path, home: Path | None, idle: float, pid_path: Path, until: float) -> bool:
    import select
    import subprocess

    log_path = project_logs_dir(user_home(home), project_root) / HOOK_HOST_LOG_NAME
    # Isolated (-P): it runs in the project's folder, whose own extension_host/ it must not import.
    argv = [
        *python_command(
            "-m", "extension_host.bridges.agent_hooks.background_host", os.fspath(project_root), "--idle", repr(idle)
        )
    ]
    if home is not None:
        argv += ["--home", os.fspath(home)]
    read_end, write_end = os.pipe()
    try:
        with open_log(log_path) as log:  # what extensions print: the user's alone
            process = subprocess.Popen(
                [*argv, "--ready-fd", str(write_end)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                cwd=project_root,
                start_new_session=True,  # not the agent's: its Ctrl-C or exit does not stop the host
                pass_fds=(write_end,),
            )
        os.close(write_end)
        write_end = -1
        write_private(pid_path, f"{process.pid}\n".encode())
        ready = b""
        remaining = until - time.monotonic()
        if remaining > 0 and select.select([read_end], [], [], remaining)[0]:
            ready = os.read(read_end, 1)  # end of file without the byte: it failed to start
        if ready != b"1":
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGTERM)
            return False
        return True
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)


def background_host_pid(project_root: Path) -> int | None:
    """The pid of the project's background host if one runs and answers on its socket."""
    pid = _recorded_pid(project_root)
    if pid is None:
        return None
    try:
        status = ask_running_host(project_root, METHOD_STATUS, None, timeout=5.0)
    except Exception:
        return None
    if isinstance(status, dict) and status.get("pid") == pid:
        return pid
    return None


def stop_background_host(project_root: Path) -> int | None:
    """Stop the project's background host (SIGTERM: it stops its extensions) and wait for it
    to exit; returns its pid, or ``None`` when none runs.

    Raises:
        TimeoutError: it did not exit within :data:`HOOK_HOST_STOP_TIMEOUT`.
    """
    pid = background_host_pid(project_root)
    if pid is None:
        return None
    with _exit_of(pid) as exited:
        if exited is None:
            return pid
        os.kill(pid, signal.SIGTERM)
        if not exited(HOOK_HOST_STOP_TIMEOUT):
            raise TimeoutError(
                f"the background host (pid {pid}) did not exit within {HOOK_HOST_STOP_TIMEOUT:g} s; "
                f"see its log ({HOOK_HOST_LOG_NAME} in the project's logs folder), or end it with: kill -9 {pid}"
            )
    _forget_pid(project_root)
    return pid


def stop_hung_background_host(project_root: Path, pid: int | None) -> bool:
    """End the project's background host if it is process ``pid``, the listener that stopped
    answering: SIGTERM (with SIGCONT, so a stopped one can act on it), then SIGKILL to its
    process group; True once it has exited. Any other process (an ``extensions dev``, a server,
    an application's host, or a ``pid`` the pid file does not name) is left alone: False."""
    if pid is None or pid != _recorded_pid(project_root):
        return False
    with _exit_of(pid) as exited:
        if exited is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
                os.kill(pid, signal.SIGCONT)
            if not exited(HUNG_HOST_STOP_GRACE):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)  # its own session: it leads its process group
                if not exited(HUNG_HOST_STOP_GRACE):
                    return False
    _forget_pid(project_root)
    return True


def _recorded_pid(project_root: Path) -> int | None:
    """The pid the pid file names (the background host this project's hook commands started)."""
    try:
        return int(_files(project_root)[1].read_text().strip())
    except (OSError, ValueError):
        return None


def _forget_pid(project_root: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        _files(project_root)[1].unlink()


@contextlib.contextmanager
def _exit_of(pid: int) -> Iterator[Callable[[float], bool] | None]:
    """A wait for process ``pid`` to exit (``exited(seconds)``: True once it has, within them),
    through a pidfd: an event, not a polling loop, and never another process that took the pid
    later. ``None`` when it is gone already: nothing of it is left to signal."""
    import select

    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        yield None
        return
    try:
        yield lambda seconds: bool(select.select([pidfd], [], [], seconds)[0])
    finally:
        os.close(pidfd)
