"""A hook command's one request to the host running for its project, kept light to import.

An agent runs a hook command on every tool call, so its start-up is the price of each call.
This client imports no event loop, no pydantic and none of the host: a blocking Unix socket,
the project's socket path (:mod:`extension_host.paths`) and the same privacy checks the other
commands make (:mod:`extension_host.private_socket`: the runtime folder must be the user's
alone, and the listener must run as the user). It frames JSON-RPC as the extension protocol
does (``Content-Length`` header, UTF-8 JSON); the framing is written out here because the
shared framing module comes with the SDK package's imports.

It owns one request and its answer, and how long it waits for it (:func:`hook_request_timeout`:
50 s, or less through ``$EXTENSION_HOST_HOOK_TIMEOUT``), telling a host that did not answer in
time (:class:`HostTimeoutError`, with the listener's pid) from one that failed; what the request
means is :mod:`.hook_calls`'s, and what follows a timeout is :mod:`.hook_health`'s.
"""

from __future__ import annotations

import json
import math
import os
import socket
import stat
import time
from pathlib import Path
from typing import Any, Final

from ..errors import ExtensionHostError
from ..paths import control_socket_path
from ..private_socket import check_private_folder, peer_pid, peer_uid

__all__ = [
    "HOOK_REQUEST_TIMEOUT",
    "HOOK_TIMEOUT_ENV",
    "MAX_HOOK_ANSWER_BYTES",
    "METHOD_HOOK",
    "HostTimeoutError",
    "HostUnreachableError",
    "ask_running_host",
    "hook_request_timeout",
]

METHOD_HOOK: Final = "host.hook"
"""The control method that runs one hook point for another agent (:mod:`.hook_calls`)."""

HOOK_REQUEST_TIMEOUT: Final = 50.0
"""Seconds a hook command waits for the running host's answer: under the 60 s both agents give
a hook command by default, so a guard still denies in time rather than being killed."""
HOOK_TIMEOUT_ENV: Final = "EXTENSION_HOST_HOOK_TIMEOUT"
"""Seconds to wait instead of :data:`HOOK_REQUEST_TIMEOUT`; only a shorter wait is taken."""
MAX_HOOK_ANSWER_BYTES: Final = 16 * 1024 * 1024
"""Largest answer read from the host (the control socket's own message limit)."""
_MAX_HEADER_BYTES: Final = 1024


class HostUnreachableError(ExtensionHostError):
    """A host seems to run for the project (its socket is there) but did not answer usefully."""


class HostTimeoutError(HostUnreachableError):
    """The host listening on the project's socket (process ``pid``, where the kernel says) did
    not answer ``method`` within ``timeout`` seconds, or did not even take the connection."""

    def __init__(self, method: str, timeout: float, pid: int | None) -> None:
        who = f" (pid {pid})" if pid is not None else ""
        super().__init__(f"the host{who} did not answer {method} within {timeout:g} s")
        self.method = method
        self.timeout = timeout
        self.pid = pid


def hook_request_timeout() -> float:
    """The wait for a host's answer: ``$EXTENSION_HOST_HOOK_TIMEOUT`` seconds when that is a
    positive number below :data:`HOOK_REQUEST_TIMEOUT`, else that. Never longer: past the
    agents' own limit the command would be killed, which both read as "carry on"."""
    try:
        timeout = float(os.environ.get(HOOK_TIMEOUT_ENV, ""))
    except ValueError:
        return HOOK_REQUEST_TIMEOUT
    return timeout if math.isfinite(timeout) and 0 < timeout < HOOK_REQUEST_TIMEOUT else HOOK_REQUEST_TIMEOUT


def ask_running_host(project_root: Path, method: str, params: Any, timeout: float | None = None) -> Any:
    """Send one request to the host running for ``project_root``; returns its result, or
    ``None`` when no host runs for the project (no socket, or nobody listens on it).
    ``timeout``: seconds to wait (default :func:`hook_request_timeout`).

    Raises:
        HostTimeoutError: the host did not take the connection or answer within ``timeout``.
        HostUnreachableError: the socket is there but the host refused, failed or answered
            with an error.
        RuntimeFolderError: the runtime folder is not the user's own.
        ExtensionHostError: the listener is not the user's own.
    """
    if timeout is None:
        timeout = hook_request_timeout()
    path = control_socket_path(project_root)
    if not check_private_folder(path.parent):
        return None
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    if not stat.S_ISSOCK(mode):
        raise HostUnreachableError(f"{path} is not a control socket; remove it")
    deadline = time.monotonic() + timeout
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.connect(os.fspath(path))
        except (FileNotFoundError, ConnectionRefusedError):
            return None  # a socket left behind by a host that is gone
        except TimeoutError:
            raise HostTimeoutError(method, timeout, None) from None  # it does not even accept
        except OSError as exc:
            raise HostUnreachableError(f"cannot connect to the host's control socket {path}: {exc}") from exc
        pid = _check_listener(path, sock)
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        try:
            sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            answer = _read_message(sock, deadline)
        except TimeoutError:
            raise HostTimeoutError(method, timeout, pid) from None
        except OSError as exc:
            raise HostUnreachableError(f"the host's control connection broke during {method}: {exc}") from exc
    if not isinstance(answer, dict):
        raise HostUnreachableError(f"the host answered {method} with something that is not a JSON-RPC message")
    error = answer.get("error")
    if error is not None:
        message = error.get("message") if isinstance(error, dict) else error
        raise HostUnreachableError(f"the host answered {method} with an error: {message}")
    return answer.get("result")


def _check_listener(path: Path, sock: socket.socket) -> int | None:
    """Refuse a listener of another user; the listener's pid, where the kernel says."""
    try:
        uid = peer_uid(sock)
        pid = peer_pid(sock)
    except OSError as exc:
        raise ExtensionHostError(f"cannot tell who listens on the control socket {path}: {exc}") from exc
    if uid is not None and uid != os.geteuid():
        raise ExtensionHostError(
            f"the control socket {path} is served by a process of uid {uid}, not by you; remove {path}"
        )
    return pid


def _read_message(sock: socket.socket, deadline: float) -> Any:
    buffer = b""
    while b"\r\n\r\n" not in buffer:
        if len(buffer) > _MAX_HEADER_BYTES:
            raise HostUnreachableError("the host sent a message header that is too long")
        buffer += _receive(sock, deadline)
    header, _, rest = buffer.partition(b"\r\n\r\n")
    length = None
    for line in header.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length" and value.strip().isdigit():
            length = int(value.strip())
    if length is None or length > MAX_HOOK_ANSWER_BYTES:
        raise HostUnreachableError("the host sent a message without a usable Content-Length")
    chunks, size = [rest], len(rest)
    while size < length:
        chunk = _receive(sock, deadline)
        chunks.append(chunk)
        size += len(chunk)
    try:
        return json.loads(b"".join(chunks)[:length])
    except ValueError as exc:
        raise HostUnreachableError(f"the host sent a message that is not JSON: {exc}") from None


def _receive(sock: socket.socket, deadline: float) -> bytes:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError
    sock.settimeout(remaining)
    chunk = sock.recv(65536)
    if not chunk:
        raise HostUnreachableError("the host closed the control connection before answering")
    return chunk
