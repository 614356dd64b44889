"""The client side of the control socket: connect to the host running for a project and ask it.

What the ``extensions`` command uses when a host runs (``list``, ``inspect``, ``reload``,
``call``, decisions just recorded): :func:`connect_to_host`, :func:`connect_to_every_host` and
:class:`ControlClient`. It imports the connection and the socket rules, not the host, so a
command that asks a running host pays for neither the host nor its extensions. The server
and its answers are :mod:`.service`'s; who may connect is :mod:`.private_socket`'s rule.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from extension_protocol.connection import Connection, ConnectionClosed, RpcError
from extension_protocol.protocol import INVALID_PARAMS, TOO_MANY_CONNECTIONS, UNKNOWN_EXTENSION

from ..errors import ExtensionHostError, UnknownExtensionError, UnknownToolError
from ..project.paths import control_socket_path, control_socket_paths, find_project_root
from .methods import METHOD_STATUS
from .private_socket import check_listener, check_private_folder

__all__ = [
    "DEFAULT_REQUEST_TIMEOUT",
    "MAX_CONTROL_MESSAGE_BYTES",
    "ControlClient",
    "StaleHandler",
    "connect_to_every_host",
    "connect_to_host",
    "connect_to_socket",
]

DEFAULT_REQUEST_TIMEOUT: Final = 30.0
"""Seconds a control request may take unless the caller says otherwise."""
MAX_CONTROL_MESSAGE_BYTES: Final = 16 * 1024 * 1024
"""Largest message either side of a control connection accepts: requests are a few bytes, and
the largest answer (``host.list`` of many extensions) is far below it."""
_STATUS_TIMEOUT: Final = 10.0
"""A live socket's host has this long to say who it is; the answer needs no extension."""
StaleHandler = Callable[[Path], object]
"""Told the path of a stale control socket that :func:`connect_to_host` has just removed."""


class ControlClient:
    """A connection to a running host; made by :func:`connect_to_host`.

    ``status`` is the host's ``host.status`` answer, asked when connecting.
    """

    def __init__(
        self, path: Path, connection: Connection, writer: asyncio.StreamWriter, serving: asyncio.Task[None]
    ) -> None:
        self.path: Final = path
        self.status: dict[str, Any] = {}
        self._connection = connection
        self._writer = writer
        self._serving = serving

    @property
    def pid(self) -> int:
        """The process id of the host."""
        return int(self.status["pid"])

    async def request(self, method: str, params: Any = None, timeout: float | None = DEFAULT_REQUEST_TIMEOUT) -> Any:
        """Ask the host; returns the result. ``timeout=None`` waits as long as the host works.

        Raises:
            UnknownExtensionError: the host discovered no extension of the name asked about.
            ExtensionHostError: the host answered with another error, went away, or did not
                answer within ``timeout`` seconds.
        """
        try:
            return await self._connection.request(method, params, timeout=timeout)
        except RpcError as exc:
            if exc.code == UNKNOWN_EXTENSION and isinstance(exc.data, dict):
                raise UnknownExtensionError(str(exc.data.get("extension")), list(exc.data.get("known") or ())) from exc
            if exc.code == INVALID_PARAMS and isinstance(exc.data, dict) and "tool" in exc.data:
                available = [str(name) for name in exc.data.get("available") or ()]
                raise UnknownToolError(str(exc.data["tool"]), available, reason=exc.message) from exc
            raise ExtensionHostError(f"the host answered {method} with an error: {exc}") from exc
        except (ConnectionClosed, ConnectionError) as exc:
            raise ExtensionHostError(f"the host closed the control connection during {method}: {exc}") from exc
        except TimeoutError as exc:
            raise ExtensionHostError(f"the host did not answer {method} within {timeout:g} s") from exc

    async def close(self) -> None:
        """Close the connection; idempotent."""
        self._connection.close()
        self._serving.cancel()
        await asyncio.gather(self._serving, return_exceptions=True)
        with contextlib.suppress(ConnectionError):
            await self._writer.wait_closed()


async def connect_to_host(
    project_root: Path | str | None = None, *, on_stale: StaleHandler | None = None
) -> ControlClient | None:
    """Connect to the host running for the project that contains ``project_root`` (default:
    the working directory); ``None`` when no host runs for it.

    A socket whose host is gone (nobody listens, or it is not a socket) is removed, and
    ``on_stale(path)`` is called so the caller can say so; the answer is then ``None`` too.
    No runtime folder at all means no host either.

    Raises:
        ExtensionHostError: the runtime folder is not private to the user (checked before
            connecting), the process listening on the socket belongs to another user, it
            does not answer as a host, or the host refused the connection (too many clients).
    """
    return await connect_to_socket(control_socket_path(find_project_root(project_root)), on_stale=on_stale)


async def connect_to_every_host(on_error: Callable[[Path, ExtensionHostError], object]) -> list[ControlClient]:
    """A connection to the host of every project that has one running (every control socket of
    the runtime folder): what a decision that holds in every project (a user extension's grant)
    is told to. Stale sockets are removed; one that cannot be used (see :func:`connect_to_host`)
    is passed to ``on_error`` and skipped."""

    async def connect(path: Path) -> ControlClient | None:
        try:
            return await connect_to_socket(path, on_stale=None)
        except ExtensionHostError as exc:
            on_error(path, exc)
            return None

    found = await asyncio.gather(*(connect(path) for path in control_socket_paths()))
    return [client for client in found if client is not None]


# -- internals -----------------------------------------------------------------------------


async def connect_to_socket(path: Path, *, on_stale: StaleHandler | None) -> ControlClient | None:
    """A connection to the host listening on the control socket at ``path`` (see
    :func:`connect_to_host`); the server asks it too, to never replace a live host."""
    if not check_private_folder(path.parent):
        return None
    try:
        before = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(before.st_mode):
        raise ExtensionHostError(f"{path} is a folder, not a control socket; remove it")
    if stat.S_ISSOCK(before.st_mode):
        try:
            async with asyncio.timeout(_STATUS_TIMEOUT):
                reader, writer = await asyncio.open_unix_connection(os.fspath(path))
        except FileNotFoundError:
            return None  # its host removed it while we looked
        except ConnectionRefusedError:
            pass  # bound, but nobody listens: the host that made it is gone
        except (OSError, TimeoutError) as exc:
            raise ExtensionHostError(f"cannot connect to the control socket {path}: {exc}") from exc
        else:
            check_listener(path, writer)
            return await _greet(path, reader, writer)
    with contextlib.suppress(FileNotFoundError):
        now = os.lstat(path)
        # Only the file we judged: a host that started meanwhile has put a new one there.
        if (now.st_dev, now.st_ino) == (before.st_dev, before.st_ino):
            path.unlink()
    if on_stale is not None:
        on_stale(path)
    return None


async def _greet(path: Path, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> ControlClient:
    connection = Connection(reader, writer, max_message_bytes=MAX_CONTROL_MESSAGE_BYTES)
    client = ControlClient(path, connection, writer, asyncio.ensure_future(connection.serve()))
    try:
        status = await connection.request(METHOD_STATUS, timeout=_STATUS_TIMEOUT)
        problem = None if isinstance(status, dict) and isinstance(status.get("pid"), int) else f"it said {status!r}"
    except ConnectionClosed as exc:
        if exc.error is not None and exc.error.code == TOO_MANY_CONNECTIONS:
            await client.close()
            raise ExtensionHostError(
                f"the host listening on {path} refused the connection: {exc.error.message}"
            ) from None
        problem = str(exc)
    except (RpcError, ConnectionError) as exc:
        problem = str(exc)
    except TimeoutError:
        problem = f"no answer to {METHOD_STATUS} within {_STATUS_TIMEOUT:g} s"
    except BaseException:
        await client.close()
        raise
    if problem is not None:
        await client.close()
        raise ExtensionHostError(
            f"something listens on {path} but does not answer as an extension host ({problem}); "
            "stop it, or remove the file if nothing should be there"
        )
    client.status = status
    return client
