"""Starting Python extensions by forking a warm interpreter instead of starting a new one.

A :class:`ForkServer` runs ``sdk_extension._forkserver`` (one per host, started on first use)
and asks it for each Python extension process. A forked extension is the same process as a
spawned one, as far as the extension and the host can tell: the host's interpreter running
its file as ``__main__`` in its own session, with the protocol on stdin/stdout and stderr in
its log, in the project root, with its own environment. It just skips the interpreter's
start-up and the SDK's imports, and shares their memory with the server.

The server is the forked processes' parent, so it reports their exit codes; a
:class:`ForkedChild` turns those reports into ``returncode``/``wait()``. When the server cannot
start, the caller spawns directly (:class:`ForkServerUnavailable`). The server is not a single
point of failure: its children hold the host's lifeline, not the server's, so when it dies they
keep running (adopted by init); the host watches each through a pidfd opened when the server
reported its pid (Linux; elsewhere by polling its pid once the server is gone), learns when it
exits, with :data:`EXIT_CODE_UNKNOWN` as its code since nobody can report it any more, and the
next request starts a new server. This module knows processes and descriptors, not the protocol
or extensions.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import struct
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from extension_protocol.pipes import PipeReader

from ..project.environment import sdk_environment
from .interpreter import python_command
from .lifeline import lifeline_fd
from .logs import open_log, rotate_log
from .process_groups import STOP_GRACE_SECONDS, stop_group

__all__ = [
    "EXIT_CODE_UNKNOWN",
    "FORK_SERVER_ENV",
    "ForkServer",
    "ForkServerUnavailable",
    "ForkedChild",
    "fork_server_supported",
    "fork_server_wanted",
    "host_fork_server",
]

START_TIMEOUT: Final = 15.0
"""Seconds the server has to import the SDK and say it is ready."""

REQUEST_TIMEOUT: Final = 10.0
"""Seconds the server has to answer one fork request."""

EXIT_CODE_UNKNOWN: Final = -256
"""The ``returncode`` of a forked process that exited after its server died (never a real code:
those are 0 to 255, or minus a signal number)."""

ORPHAN_POLL_SECONDS: Final = 0.5
"""Where there is no pidfd: how often the host looks for a forked process whose server died."""

_LENGTH: Final = struct.Struct("!I")

FORK_SERVER_ENV: Final = "EXTENSION_HOST_FORK_SERVER"
"""Set to ``0`` to start every Python extension as a new interpreter instead of forking it."""

_pidfd_open: Callable[[int], int] | None = getattr(os, "pidfd_open", None)
"""Linux's way to wait for any process's end (``None`` elsewhere: polled instead)."""


def fork_server_supported() -> bool:
    """Whether this platform can fork (POSIX) and pass descriptors over Unix sockets."""
    return hasattr(os, "fork") and hasattr(socket, "send_fds")


def fork_server_wanted(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether a host should start Python extensions through a fork server: the platform can,
    and :data:`FORK_SERVER_ENV` is not ``0``."""
    return fork_server_supported() and environ.get(FORK_SERVER_ENV) != "0"


def host_fork_server(logs_dir: Path, base_environment: Mapping[str, str], *, one_shot: bool = False) -> ForkServer:
    """The fork server of a host whose extensions log into ``logs_dir`` and start from
    ``base_environment`` (already stripped of what extensions may not see): the SDK importable,
    its log ``fork-server.log`` there, rotated now (it appends to it for its whole life).
    ``one_shot``: see :class:`ForkServer`."""
    log_path = logs_dir / "fork-server.log"
    rotate_log(log_path)
    return ForkServer(sdk_environment(base_environment), log_path, one_shot=one_shot)


class ForkServerUnavailable(Exception):
    """The fork server could not start or answer; start the process directly instead."""


class ForkedChild:
    """A process the fork server forked: its pid and, once it has exited, its exit code.

    The server reports the code; once the server is gone, the process's end is seen through
    its pidfd (or by polling) and its code is :data:`EXIT_CODE_UNKNOWN`.
    """

    def __init__(self, pid: int) -> None:
        self.pid: Final = pid
        self.returncode: int | None = None
        self._exited = asyncio.Event()
        self._ended = False
        """Seen to end (its pidfd), its code not reported yet."""
        self._orphaned = False
        """Its server is gone: nobody will report its code."""
        self._poller: asyncio.Task[None] | None = None
        self._pidfd: int | None = None
        if _pidfd_open is None:
            return  # polled once orphaned
        try:
            # Opened now, while the pid cannot be reused: the server has not reaped it.
            self._pidfd = _pidfd_open(pid)
        except ProcessLookupError:
            self._ended = True
        except OSError:
            pass  # no pidfds in this kernel: polled once orphaned
        else:
            asyncio.get_running_loop().add_reader(self._pidfd, self._on_end)

    def _on_end(self) -> None:
        self._close_pidfd()
        self._ended = True
        if self._orphaned:
            self._exit(EXIT_CODE_UNKNOWN)

    def _orphan(self) -> None:
        """Its server died: from now on its end is all the host can learn."""
        self._orphaned = True
        if self._ended:
            self._exit(EXIT_CODE_UNKNOWN)
        elif self._pidfd is None and self.returncode is None:
            self._poller = asyncio.ensure_future(self._poll())

    async def _poll(self) -> None:
        while True:
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                break
            except PermissionError:
                break  # the pid belongs to someone else now: ours is long gone
            await asyncio.sleep(ORPHAN_POLL_SECONDS)
        self._exit(EXIT_CODE_UNKNOWN)

    def _close_pidfd(self) -> None:
        if self._pidfd is not None:
            asyncio.get_running_loop().remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None

    def _exit(self, code: int) -> None:
        self._close_pidfd()
        if self.returncode is None:
            self.returncode = code
            self._exited.set()

    async def wait(self) -> int:
        """Wait until the process has exited; return its exit code."""
        await self._exited.wait()
        assert self.returncode is not None
        return self.returncode


class ForkServer:
    """One warm interpreter that forks this host's Python extensions.

    ``one_shot``: the host starts its extensions once and stops soon after (a one-shot
    command), so the server does not preload, once idle, what only later starts would use: that
    work would only hold up the reports of its children's exits, and so the host's stop."""

    def __init__(self, environment: Mapping[str, str], log_path: Path, *, one_shot: bool = False) -> None:
        self._environment = dict(environment)
        self._log_path = log_path
        self._arguments: Final = ("--one-shot",) if one_shot else ()
        self._lock = asyncio.Lock()
        self._sending = asyncio.Lock()
        self._process: asyncio.subprocess.Process | None = None
        self._socket: socket.socket | None = None
        self._replies: PipeReader | None = None
        self._reader: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[int] | None = None
        self._requests: dict[int, asyncio.Future[ForkedChild]] = {}
        self._children: dict[int, ForkedChild] = {}
        self._next_id = 0
        self.failure: str | None = None
        """Why the server could not start or answer, once it could not (it is not tried again)."""

    @property
    def pid(self) -> int | None:
        """The server's process id while it runs."""
        return self._process.pid if self._process is not None and self._process.returncode is None else None

    async def start(self) -> None:
        """Start the server now rather than at the first :meth:`spawn` (which then waits for it),
        so that it boots while the caller does something else. A server that cannot start is
        not an error here: :attr:`failure` says why, and each spawn goes without it."""
        with contextlib.suppress(ForkServerUnavailable):
            await self._running()

    async def spawn(self, entry: Path, cwd: Path, env: Mapping[str, str], streams: tuple[int, int, int]) -> ForkedChild:
        """Fork a process that runs ``entry``; ``streams`` become its stdin, stdout and stderr.

        The descriptors stay the caller's (close them once this returns or raises). A server
        that does not take or answer the request in time is stopped, so that it cannot fork
        the process later, behind the caller's back.

        Raises:
            ForkServerUnavailable: the server cannot start, or did not answer.
        """
        server_pid = await self._running()
        self._next_id += 1
        request_id = self._next_id
        body = json.dumps(
            {"id": request_id, "path": str(entry), "cwd": str(cwd), "env": dict(env), "parent": server_pid}
        ).encode()
        future: asyncio.Future[ForkedChild] = asyncio.get_running_loop().create_future()
        self._requests[request_id] = future
        try:
            async with asyncio.timeout(REQUEST_TIMEOUT):
                try:
                    await self._send(_LENGTH.pack(len(body)), list(streams), body)
                except OSError as exc:
                    # It died before the host noticed: this start goes without it, the next
                    # one starts a new server.
                    await self.stop(grace=0)
                    raise ForkServerUnavailable(f"the fork server is gone: {exc}") from None
                child = await future
        except TimeoutError:
            # A server that cannot take one request is not trusted with the next either.
            self.failure = f"the fork server did not answer: nothing within {REQUEST_TIMEOUT:g} s"
            await self.stop(grace=0)  # it is stuck: no point waiting for it to exit by itself
            raise ForkServerUnavailable(self.failure) from None
        finally:
            self._requests.pop(request_id, None)
            if future.done() and not future.cancelled():
                future.exception()  # a server lost mid-request fails it too; that is said above
        return child

    async def _send(self, head: bytes, fds: list[int], body: bytes) -> None:
        # One request at a time: two interleaved on the stream would garble both.
        async with self._sending:
            sock = self._socket
            if sock is None:
                raise OSError("the fork server was stopped")
            loop = asyncio.get_running_loop()
            while True:
                try:
                    socket.send_fds(sock, [head], fds)
                    break
                except BlockingIOError:
                    writable = loop.create_future()
                    loop.add_writer(sock, writable.set_result, None)
                    try:
                        await writable
                    finally:
                        loop.remove_writer(sock)
            await loop.sock_sendall(sock, body)

    async def _running(self) -> int:
        async with self._lock:
            if self.failure is not None:
                raise ForkServerUnavailable(self.failure)
            pid = self.pid
            if pid is None or self._reader is None or self._reader.done():
                await self.stop()  # what is left of a server that died
                try:
                    pid = await self._start()
                except (OSError, TimeoutError, ForkServerUnavailable) as exc:
                    self.failure = f"the fork server could not start: {str(exc) or 'nothing within the start timeout'}"
                    await self.stop()
                    raise ForkServerUnavailable(self.failure) from None
            return pid

    async def _start(self) -> int:
        host_end, server_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        read_fd, write_fd = os.pipe()
        try:
            with open_log(self._log_path) as log:
                self._process = await asyncio.create_subprocess_exec(
                    *python_command(
                        "-m", "sdk_extension._forkserver", str(server_end.fileno()), str(write_fd), *self._arguments
                    ),
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=log,
                    # The lifeline goes to every child it forks, which outlive it if it dies.
                    pass_fds=(server_end.fileno(), write_fd, lifeline_fd()),
                    env=self._environment,
                    start_new_session=True,
                )
        except BaseException:
            host_end.close()
            os.close(read_fd)
            raise
        finally:
            server_end.close()
            os.close(write_fd)
        host_end.setblocking(False)
        self._socket = host_end
        self._replies = PipeReader(read_fd)
        self._ready = asyncio.get_running_loop().create_future()
        self._reader = asyncio.ensure_future(self._read_replies(self._replies.stream, self._ready))
        async with asyncio.timeout(START_TIMEOUT):
            return await asyncio.shield(self._ready)

    async def _read_replies(self, replies: asyncio.StreamReader, ready: asyncio.Future[int]) -> None:
        try:
            while line := await replies.readline():
                self._on_reply(json.loads(line), ready)
        except (OSError, ValueError):
            pass
        finally:
            self._lost(ready)

    def _close_socket(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    def _on_reply(self, reply: dict[str, Any], ready: asyncio.Future[int]) -> None:
        if "exited" in reply:
            child = self._children.pop(reply["exited"], None)
            if child is not None:
                child._exit(reply["code"])
        elif "ready" in reply:
            if not ready.done():
                ready.set_result(reply["ready"])
        elif "id" in reply:
            future = self._requests.get(reply["id"])
            if "pid" in reply:
                # Registered here, before anything else is read: its exit report comes later.
                child = self._children[reply["pid"]] = ForkedChild(reply["pid"])
                if future is not None and not future.done():
                    future.set_result(child)
            elif future is not None and not future.done():
                future.set_exception(ForkServerUnavailable(str(reply.get("error"))))

    def _lost(self, ready: asyncio.Future[int]) -> None:
        """The server is gone: its children live on, watched by the host from now on."""
        if not ready.done():
            ready.set_exception(ForkServerUnavailable("the fork server exited before it was ready"))
        for future in self._requests.values():
            if not future.done():
                future.set_exception(ForkServerUnavailable("the fork server exited"))
        children, self._children = self._children, {}
        for child in children.values():
            child._orphan()

    async def stop(self, grace: float = STOP_GRACE_SECONDS) -> None:
        """Stop the server (its children are the caller's to stop first); safe to call again.

        The stop ladder (:func:`~extension_host.launch.process_groups.stop_group`), starting by closing
        the request socket: the server exits once the host's end closes.
        """
        process, self._process = self._process, None
        if process is not None:
            await stop_group(process, grace, self._close_socket)
        self._close_socket()
        if self._reader is not None:
            try:
                async with asyncio.timeout(grace):
                    await asyncio.shield(self._reader)
            except TimeoutError:
                self._reader.cancel()
        if self._replies is not None:
            self._replies.close()
        self._reader = self._replies = None
