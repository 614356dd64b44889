"""The fork server: a warm interpreter that forks Python extensions on request.

The host starts one per session as ``python -P -m sdk_extension._forkserver REQUESTS REPLIES``
(two inherited file descriptors), with ``--one-shot`` after them for a host that starts its
extensions once and stops soon after (a one-shot command): that server skips the idle preload
(:data:`_LATER`), which no later start would use and which would hold up the reports of its
children's exits. Every request names an extension's entry file, working
directory and environment, and carries its stdin, stdout and stderr as file descriptors; the
server forks, and the child becomes the extension just as ``python -P -m sdk_extension PATH``
would make it: a new session, those three streams, that directory and environment, the file
run as ``__main__``, and the interpreter's usual exit. What the fork saves is the interpreter's
start and the SDK's imports, done once here and shared with every child.

Requests arrive on a Unix stream socket: a 4-byte big-endian length, sent together with the
three descriptors, then that many bytes of JSON. Replies are JSON lines: ``{"ready": pid}``
once, ``{"id": n, "pid": pid}`` (or ``{"id": n, "error": text}``) per request, and
``{"exited": pid, "code": code}`` when a child ends (negative: killed by that signal).

The server stays single-threaded, because forking a process with threads is unsafe, and exits
when the host's end of the socket closes or on SIGTERM (the host's stop ladder, see
``extension_host.launch.process_groups``), either way after ending what it still has (below). Its
children do not depend on it: they watch the host's lifeline (inherited from the server, see
``extension_host.launch.lifeline``), so they outlive a server that was killed. On Linux the server is
a child subreaper: a process an extension started that left its process group (``setsid``) and
lost its parent is adopted by the server rather than by init, and the server kills whatever it
still has (its children's groups and the processes it adopted) when it exits. It knows
processes and file descriptors, not the protocol.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import select
import signal
import socket
import struct
import sys
import time
from pathlib import Path
from typing import Any, Final

_LENGTH: Final = struct.Struct("!I")
_STREAMS: Final = 3
"""Descriptors per request: the child's stdin, stdout and stderr."""

_LATER: Final[tuple[str, ...]] = (
    "extension_protocol.hook_points",
    "extension_protocol.hook_models",
    "extension_protocol.commands",
    "sdk_extension.hooks",
    "sdk_extension.canvases",
    "sdk_extension.permissions",
    "sdk_extension.event_log",
)
"""Modules only some extensions need (hooks, commands, canvases, permission answers, reading
the event log; ``sdk_extension.join`` loads them when an extension uses them): imported once
the first children are on their way (as is the collection and freeze of the server's objects),
so the first start waits for none of it, and later forks find them loaded."""

_IDLE_SECONDS: Final = 0.05
"""How long the server waits for more requests before it does the :data:`_LATER` work."""

_END_SECONDS: Final = 2.0
"""How long an exiting server keeps killing and reaping what is left (a process stuck in the
kernel may not die at once; the server does not wait for it forever)."""
_END_POLL_SECONDS: Final = 0.01

_PR_SET_CHILD_SUBREAPER: Final = 36
"""``prctl`` option (Linux): orphaned descendants are reparented to this process, not init."""


def _become_subreaper() -> bool:
    """Adopt this process's orphaned descendants (Linux); ``True`` if it now does."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # only here: no other platform needs it

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _children() -> list[int]:
    """The pids of this process's children (Linux); ``[]`` where that cannot be read."""
    pid = os.getpid()
    try:
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


def _end_children() -> None:
    """Kill every child left, with its process group, and reap it, until none is left (killing
    one can orphan more, which a subreaper adopts) or :data:`_END_SECONDS` have passed."""
    deadline = time.monotonic() + _END_SECONDS
    while True:
        while True:
            try:
                pid, _status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                break
        children = _children()
        if not children or time.monotonic() > deadline:
            return
        for child in children:
            # Forked extensions lead their group; an adopted process may lead one too.
            for kill in (os.killpg, os.kill):
                try:
                    kill(child, signal.SIGKILL)
                except OSError:
                    pass
        time.sleep(_END_POLL_SECONDS)  # SIGKILL is not instant; there is no event to wait on


def _preload(*modules: str, freeze: bool = False) -> None:
    # Imported once here, these are already loaded in every child, in pages it shares.
    for module in modules:
        importlib.import_module(module)
    if freeze:
        gc.collect()
        # Objects that exist now live as long as the server: keeping them out of the
        # collector's reach stops each child's first collection from copying their pages.
        gc.freeze()


def _reply(replies: int, message: dict[str, Any]) -> None:
    """Send one reply line (raises ``BrokenPipeError`` once the host is gone)."""
    data = (json.dumps(message) + "\n").encode()
    while data:
        data = data[os.write(replies, data) :]


def _receive_exactly(sock: socket.socket, size: int) -> bytes | None:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(size - len(chunks))
        if not chunk:
            return None
        chunks += chunk
    return bytes(chunks)


def _receive(sock: socket.socket) -> tuple[dict[str, Any], list[int]] | None:
    """One request and its descriptors; ``None`` once the host has gone."""
    head, fds, _flags, _address = socket.recv_fds(sock, _LENGTH.size, _STREAMS)
    if not head:
        return None
    if len(head) < _LENGTH.size:
        rest = _receive_exactly(sock, _LENGTH.size - len(head))
        if rest is None:
            return None
        head += rest
    body = _receive_exactly(sock, _LENGTH.unpack(head)[0])
    if body is None:
        return None
    return json.loads(body), fds


def _reap(replies: int) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _reply(replies, {"exited": pid, "code": os.waitstatus_to_exitcode(status)})


class _Terminated(Exception):
    """SIGTERM reached the server: it stops serving as if the host had closed its socket."""


def _terminate(signum: int, frame: object) -> None:
    raise _Terminated


def _become(request: dict[str, Any], fds: list[int], keep_closed: list[int]) -> None:
    """In the child: take on the extension's session, streams, directory and environment."""
    # What the server holds lives as long as the child: kept out of the collector's reach, it
    # is neither copied by the child's collections nor walked by the final one at its exit
    # (the server's whole heap: most of an extension's exit on end of stream).
    gc.freeze()
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    for fd in keep_closed:
        os.close(fd)
    os.setsid()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])


def serve(requests: socket.socket, replies: int, later: tuple[str, ...] = _LATER) -> dict[str, Any] | None:
    """Fork a child per request until the host goes; in a child, return its request. ``later``:
    the modules preloaded once the server is idle after its first fork (:data:`_LATER`)."""
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    # A handler (rather than the default, ignore) so that SIGCHLD reaches the wake-up pipe.
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    signal.signal(signal.SIGTERM, _terminate)
    _become_subreaper()
    _reply(replies, {"ready": os.getpid()})
    request_fd = requests.fileno()
    forked = False
    while True:
        idle = _IDLE_SECONDS if forked and later else None
        readable, _, _ = select.select([request_fd, wake_read], [], [], idle)
        if not readable:
            _preload(*later, freeze=True)
            later = ()
            continue
        if wake_read in readable:
            while True:
                try:
                    if not os.read(wake_read, 512):
                        break
                except BlockingIOError:
                    break
            _reap(replies)
        if request_fd not in readable:
            continue
        received = _receive(requests)
        if received is None:
            return None
        request, fds = received
        if len(fds) != _STREAMS:
            for fd in fds:
                os.close(fd)
            _reply(replies, {"id": request.get("id"), "error": f"expected {_STREAMS} descriptors, got {len(fds)}"})
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            pid = os.fork()
        except OSError as exc:
            _reply(replies, {"id": request["id"], "error": f"fork failed: {exc}"})
            pid = -1
        if pid == 0:
            _become(request, fds, [requests.detach(), replies, wake_read, wake_write])
            return request
        for fd in fds:
            os.close(fd)
        if pid > 0:
            _reply(replies, {"id": request["id"], "pid": pid})
            forked = True


def main() -> None:
    requests = socket.socket(fileno=int(sys.argv[1]))
    replies = int(sys.argv[2])
    # sdk_extension's names load on first use: join (and with it the session, tools, commands and
    # the wire) is named, as every extension asks for it.
    _preload("asyncio", "runpy", "sdk_extension.join", "sdk_extension.__main__")
    from extension_protocol.json_codec import use_orjson

    use_orjson()  # a few milliseconds here, with asyncio loaded, instead of in every extension
    try:
        request = serve(requests, replies, () if "--one-shot" in sys.argv[3:] else _LATER)
    except BrokenPipeError:
        request = None  # the host is gone: nobody reads the replies any more
    except _Terminated:
        request = None
    if request is None:
        # Ending what is left is not cut short by a second SIGTERM; SIGKILL still can.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        # The host has stopped its extensions first, or it is gone; either way nothing the
        # server started or adopted may outlive it.
        _end_children()
        # Nothing is left to do: no interpreter teardown (the server's whole heap, not frozen
        # when it never went idle), which its host would wait for.
        sys.stderr.flush()
        os._exit(0)
    from sdk_extension.__main__ import run_extension

    # The server's pid: a fallback lifeline for a child that was given no lifeline descriptor.
    run_extension(request["path"], request.get("parent"))


if __name__ == "__main__":
    main()
