"""A hook command's one request to the host running for its project, kept light to import.

An agent runs a hook command on every tool call, so its start-up is the price of each call.
This client imports no event loop, no pydantic and none of the host: a blocking Unix socket,
the project's socket path (:mod:`extension_host.paths`) and the same privacy checks the other
commands make (:mod:`extension_host.private_socket`: the runtime folder must be the user's
alone, and the listener must run as the user). It frames JSON-RPC as the extension protocol
does (``Content-Length`` header, UTF-8 JSON); the framing is written out here because the
shared framing module comes with the SDK package's imports.

It owns one request and its answer; what the request means is :mod:`.hook_calls`'s.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import time
from pathlib import Path
from typing import Any, Final

from ..errors import ExtensionHostError
from ..paths import control_socket_path
from ..private_socket import check_private_folder, peer_uid

__all__ = [
    "HOOK_REQUEST_TIMEOUT",
    "MAX_HOOK_ANSWER_BYTES",
    "METHOD_HOOK",
    "HostUnreachableError",
    "ask_running_host",
]

METHOD_HOOK: Final = "host.hook"
"""The control method that runs one hook point for another agent (:mod:`.hook_calls`)."""

HOOK_REQUEST_TIMEOUT: Final = 50.0
"""Seconds a hook command waits for the running host's answer: under the 60 s both agents give
a hook command by default, so a guard still denies in time rather than being killed."""
MAX_HOOK_ANSWER_BYTES: Final = 16 * 1024 * 1024
"""Largest answer read from the host (the control socket's own message limit)."""
_MAX_HEADER_BYTES: Final = 1024


class HostUnreachableError(ExtensionHostError):
    """A host seems to run for the project (its socket is there) but did not answer usefully."""


def ask_running_host(project_root: Path, method: str, params: Any, timeout: float = HOOK_REQUEST_TIMEOUT) -> Any:
    """Send one request to the host running for ``project_root``; returns its result, or
    ``None`` when no host runs for the project (no socket, or nobody listens on it).

    Raises:
        HostUnreachableError: the socket is there but the host refused, failed, answered with
            an error, or did not answer within ``timeout`` seconds.
        ExtensionHostError: the runtime folder or the listener is not the user's own.
    """
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
        except OSError as exc:
            raise HostUnreachableError(f"cannot connect to the host's control socket {path}: {exc}") from exc
        _check_listener(path, sock)
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        try:
            sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            answer = _read_message(sock, deadline)
        except TimeoutError:
            raise HostUnreachableError(f"the host did not answer {method} within {timeout:g} s") from None
        except OSError as exc:
            raise HostUnreachableError(f"the host's control connection broke during {method}: {exc}") from exc
    if not isinstance(answer, dict):
        raise HostUnreachableError(f"the host answered {method} with something that is not a JSON-RPC message")
    error = answer.get("error")
    if error is not None:
        message = error.get("message") if isinstance(error, dict) else error
        raise HostUnreachableError(f"the host answered {method} with an error: {message}")
    return answer.get("result")


def _check_listener(path: Path, sock: socket.socket) -> None:
    try:
        uid = peer_uid(sock)
    except OSError as exc:
        raise ExtensionHostError(f"cannot tell who listens on the control socket {path}: {exc}") from exc
    if uid is not None and uid != os.geteuid():
        raise ExtensionHostError(
            f"the control socket {path} is served by a process of uid {uid}, not by you; remove {path}"
        )


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
