"""A hook command's one request to the host running for its project, kept light to import.

An agent runs a hook command on every tool call, so its start-up is the price of each call
(``extensions call`` asks a running host through it too, for the same reason).
This client imports no event loop, no pydantic and none of the host: a blocking Unix socket,
the project's socket path (:mod:`extension_host.project.paths`) and the same privacy checks the other
commands make (:mod:`extension_host.control.private_socket`: the runtime folder must be the user's
alone, and the listener must run as the user). It frames JSON-RPC with the protocol's own
framing (:mod:`extension_protocol.framing`, which needs no event loop for that), so the host's
answer meets the same rules as any peer's: one ``Content-Length`` in plain digits, a header
block of at most 64 KiB ending its lines in ``\r\n``, a body nested at most 100 levels.

It owns one request and its answer, waited for until the hook command's deadline
(:mod:`.deadline`) or a time of the caller's, telling a host that did not answer in time
(:class:`HostTimeoutError`, with the listener's pid) from one that failed; what the request
means is :mod:`.hook_calls`'s, and what follows a timeout is :mod:`.health`'s.
"""

from __future__ import annotations

import os
import socket
import stat
import time
from pathlib import Path
from typing import Any, Final

from extension_protocol.framing import MAX_DEPTH, FrameDecoder, FramingError, encode_message

from ...control.private_socket import check_private_folder, peer_pid, refuse_other_listener
from ...errors import ExtensionHostError
from ...project.paths import control_socket_path
from .deadline import HookDeadline

__all__ = [
    "MAX_HOOK_ANSWER_BYTES",
    "HostTimeoutError",
    "HostUnreachableError",
    "ask_running_host",
]

MAX_HOOK_ANSWER_BYTES: Final = 16 * 1024 * 1024
"""Largest answer read from the host (the control socket's own message limit)."""
_READ_CHUNK: Final = 65536


class HostUnreachableError(ExtensionHostError):
    """A host seems to run for the project (its socket is there) but did not answer usefully."""


class HostTimeoutError(HostUnreachableError):
    """The host listening on the project's socket (process ``pid``, where the kernel says) did
    not answer ``method`` within ``timeout`` seconds (the hook command's whole time when
    ``deadline``), or did not even take the connection."""

    def __init__(self, method: str, timeout: float, pid: int | None, *, deadline: bool = False) -> None:
        who = f" (pid {pid})" if pid is not None else ""
        within = f"the {timeout:g} s a hook command has" if deadline else f"{timeout:g} s"
        super().__init__(f"the host{who} did not answer {method} within {within}")
        self.method = method
        self.timeout = timeout
        self.pid = pid


def ask_running_host(project_root: Path, method: str, params: Any, timeout: float | HookDeadline | None = None) -> Any:
    """Send one request to the host running for ``project_root``; returns its result, or
    ``None`` when no host runs for the project (no socket, or nobody listens on it).
    ``timeout``: seconds to wait, or the hook command's deadline to wait until (default: a
    whole deadline from now, :mod:`.deadline`).

    Raises:
        HostTimeoutError: the host did not take the connection or answer in time.
        HookDeadlineError: the deadline had passed before the request was sent.
        HostUnreachableError: the socket is there but the host refused, failed, answered with
            an error or with bytes that are not a message; or ``params`` nest deeper than it reads.
        RuntimeFolderError: the runtime folder is not the user's own.
        ExtensionHostError: the listener is not the user's own.
    """
    if timeout is None:
        timeout = HookDeadline()
    path = control_socket_path(project_root)
    if not check_private_folder(path.parent):
        return None
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    if not stat.S_ISSOCK(mode):
        raise HostUnreachableError(f"{path} is not a control socket; remove it")
    if isinstance(timeout, HookDeadline):
        seconds, wait = timeout.seconds, timeout.left_for(f"asking the host for {method}")
    else:
        seconds = wait = timeout
    until = time.monotonic() + wait

    def timed_out(pid: int | None) -> HostTimeoutError:
        return HostTimeoutError(method, seconds, pid, deadline=isinstance(timeout, HookDeadline))

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(wait)
        try:
            sock.connect(os.fspath(path))
        except (FileNotFoundError, ConnectionRefusedError):
            return None  # a socket left behind by a host that is gone
        except TimeoutError:
            raise timed_out(None) from None  # it does not even accept
        except OSError as exc:
            raise HostUnreachableError(f"cannot connect to the host's control socket {path}: {exc}") from exc
        pid = _listener_pid(path, sock)
        try:
            request = encode_message({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, None, MAX_DEPTH)
        except ValueError as exc:  # nested deeper than the host reads: it would only refuse it
            raise HostUnreachableError(f"the {method} request cannot be sent: {exc}") from None
        try:
            sock.sendall(request)
            answer = _read_message(sock, until)
        except TimeoutError:
            raise timed_out(pid) from None
        except OSError as exc:
            raise HostUnreachableError(f"the host's control connection broke during {method}: {exc}") from exc
    error = answer.get("error")
    if error is not None:
        message = error.get("message") if isinstance(error, dict) else error
        raise HostUnreachableError(f"the host answered {method} with an error: {message}")
    return answer.get("result")


def _listener_pid(path: Path, sock: socket.socket) -> int | None:
    """Refuse a listener of another user; the listener's pid, where the kernel says."""
    refuse_other_listener(path, sock)
    try:
        return peer_pid(sock)
    except OSError:
        return None


def _read_message(sock: socket.socket, until: float) -> dict[str, Any]:
    decoder = FrameDecoder(MAX_HOOK_ANSWER_BYTES)
    while True:
        try:
            messages = decoder.feed(_receive(sock, until))
        except FramingError as exc:
            raise HostUnreachableError(f"the host sent bytes that are not a message: {exc}") from None
        if messages:
            return messages[0]


def _receive(sock: socket.socket, until: float) -> bytes:
    remaining = until - time.monotonic()
    if remaining <= 0:
        raise TimeoutError
    sock.settimeout(remaining)
    chunk = sock.recv(_READ_CHUNK)
    if not chunk:
        raise HostUnreachableError("the host closed the control connection before answering")
    return chunk
