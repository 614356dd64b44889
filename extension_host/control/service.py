"""The control socket: how another process (the ``extensions`` command) talks to a running host.

A host that serves a project can open one Unix socket for it, at
:func:`~extension_host.project.paths.control_socket_path`, and answer these JSON-RPC 2.0 methods on it
(framed as the extension protocol is: :class:`extension_protocol.connection.Connection` over the
streams of ``asyncio.start_unix_server`` / ``open_unix_connection``):

the methods of :data:`~extension_host.control.methods.CONTROL_METHODS` (one table: the names,
their params and their results).

An extension nobody discovered is answered with :data:`~extension_protocol.protocol.UNKNOWN_EXTENSION`.

This module owns the socket file, the answers above, and the client side
(:func:`connect_to_host`; :func:`connect_to_every_host` for a decision that holds in every
project). Who may use the socket is :mod:`extension_host.control.private_socket`'s
rule, applied by both sides:

- the runtime folder must be the user's own (mode 0700, in a parent nobody else may write to
  without the sticky bit); a folder found otherwise is refused by the server and the client
  alike, and never repaired. The socket is 0600.
- each side asks the kernel who the other is: the server drops a client of another user at
  once, and the client refuses a listener of another user before believing anything it says.
- a live host is never replaced; a stale socket whose host is gone is removed.
- the server is bounded: at most :data:`MAX_CLIENTS` connections at once (one more is told
  :data:`~extension_protocol.protocol.TOO_MANY_CONNECTIONS` and closed), messages of at most
  :data:`MAX_CONTROL_MESSAGE_BYTES` nested at most :data:`~extension_protocol.framing.MAX_DEPTH`
  levels either way (a client that breaks this is told ``PARSE_ERROR`` and loses its
  connection only; an answer over the limit becomes an error), and at most
  :data:`MAX_CONTROL_QUEUED_BYTES` of answers waiting for a client that does not read them
  (past that it is disconnected).

It ignores what the answers are used for (the CLI renders them) and never starts or stops the
host: whoever runs the host opens and closes the server beside it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import stat
from collections.abc import Callable, Coroutine, Iterable
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from extension_protocol.connection import Connection, ConnectionClosed, Handler, QueueOverflow, RpcError, error_to_wire
from extension_protocol.framing import FramingError, encode_message
from extension_protocol.protocol import INVALID_PARAMS, TOO_MANY_CONNECTIONS, UNKNOWN_EXTENSION
from extension_protocol.tasks import BackgroundTasks

from ..errors import ExtensionHostError, UnknownExtensionError
from ..host import ExtensionHost
from ..launch.logs import current_run_tail
from ..outcomes import ReloadOutcome
from ..project.paths import control_socket_path, control_socket_paths, find_project_root
from .hook_calls import parse_hook_call, run_hook_call
from .methods import METHOD_HOOK, METHOD_INSPECT, METHOD_LIST, METHOD_REFRESH, METHOD_RELOAD, METHOD_STATUS
from .private_socket import bind_private, check_listener, check_private_folder, make_private_folder, same_user

__all__ = [
    "DEFAULT_REQUEST_TIMEOUT",
    "MAX_CLIENTS",
    "MAX_CONTROL_MESSAGE_BYTES",
    "MAX_CONTROL_QUEUED_BYTES",
    "ControlClient",
    "ControlServer",
    "StaleHandler",
    "connect_to_every_host",
    "connect_to_host",
    "describe_extension",
    "describe_extensions",
]

DEFAULT_REQUEST_TIMEOUT: Final = 30.0
"""Seconds a control request may take unless the caller says otherwise."""
MAX_CLIENTS: Final = 64
"""Connections a server serves at once; one more is refused with ``TOO_MANY_CONNECTIONS``.
The CLI needs one per command, so only something gone wrong (or hostile) reaches it."""
MAX_CONTROL_MESSAGE_BYTES: Final = 16 * 1024 * 1024
"""Largest message either side of a control connection accepts: requests are a few bytes, and
the largest answer (``host.list`` of many extensions) is far below it."""
MAX_CONTROL_QUEUED_BYTES: Final = 2 * MAX_CONTROL_MESSAGE_BYTES
"""Answers queued towards a client that does not read them before it is disconnected."""
_STATUS_TIMEOUT: Final = 10.0
"""A live socket's host has this long to say who it is; the answer needs no extension."""
_LOG_TAIL_LINES: Final = 20
StaleHandler = Callable[[Path], object]
"""Told the path of a stale control socket that :func:`connect_to_host` has just removed."""


# -- the answers ---------------------------------------------------------------------------


def describe_extensions(host: ExtensionHost) -> dict[str, Any]:
    """``host.list``, and what ``extensions list --json`` prints."""
    return {"root": str(host.project_root), "extensions": [info.to_json() for info in host.extensions]}


def describe_extension(host: ExtensionHost, name: str) -> dict[str, Any]:
    """``host.inspect``, and what ``extensions inspect --json`` prints: the extension's
    :meth:`~extension_host.ExtensionInfo.to_json` with its tools in full (schemas included) and
    its commands with their descriptions,
    its recent hook calls and the tail of its log.

    Raises:
        UnknownExtensionError: nothing of that name or id was discovered.
    """
    info = host.extension(name)
    tools = [tool for tool in host.tools.values() if tool.owner == info.id]
    commands = [command for command in host.commands.values() if command.owner == info.id]
    return {
        **info.to_json(),
        "tools": [tool.to_json() for tool in tools],
        "commands": [command.to_json() for command in commands],
        "recent_hook_calls": [dataclasses.asdict(call) for call in host.recent_hook_calls(info.id)],
        "log_tail": current_run_tail(info.log_path, _LOG_TAIL_LINES) if info.log_path else [],
    }


# -- the server ----------------------------------------------------------------------------


class ControlServer:
    """Answers control requests for ``host`` on its project's socket (or ``path``).

    ::

        async with ExtensionHost(root) as host, ControlServer(host):
            ...   # `extensions list` in another shell now asks this host

    Every client has its own connection; one that disconnects mid-request loses only its
    answer (a reload it asked for still runs to its end), and one that breaks the protocol
    loses only its connection. Only clients of the user running the host are served, at most
    :data:`MAX_CLIENTS` at once.
    """

    def __init__(
        self, host: ExtensionHost, path: Path | None = None, *, peers: Callable[[], Iterable[ExtensionHost]] = tuple
    ) -> None:
        """``peers()`` are other hosts of this process that no socket reaches (the other sessions
        of ``extensions serve``): a recorded decision (``host.refresh``) applies to those of the
        same project too."""
        self.host: Final = host
        self.path: Final = path if path is not None else control_socket_path(host.project_root)
        self._peers = peers
        self._server: asyncio.Server | None = None
        self._identity: tuple[int, int] | None = None
        self._clients: dict[asyncio.Task[Any], Connection] = {}
        # A change's failure is its client's answer; a client that went away asked for no more.
        self._work = BackgroundTasks("the control server", on_error=lambda _task, _error: None)
        self._handlers: dict[str, Handler] = {
            METHOD_STATUS: self._status,
            METHOD_LIST: lambda _params: describe_extensions(self.host),
            METHOD_INSPECT: self._inspect,
            METHOD_RELOAD: self._reload,
            METHOD_REFRESH: self._refresh,
            METHOD_HOOK: self._hook,
        }

    async def __aenter__(self) -> ControlServer:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    async def start(self) -> None:
        """Create the socket and start answering.

        Raises:
            ExtensionHostError: a host already answers on this socket (the message names its
                pid), something that is not a host listens there, the path is unusable, or its
                folder is not private to the user (the message says what is wrong with it).
        """
        if self._server is not None:
            raise ExtensionHostError("this ControlServer was already started")
        folder = self.path.parent
        make_private_folder(folder)
        if not check_private_folder(folder):
            raise ExtensionHostError(f"the control socket folder {folder} was removed as it was made; try again")
        running = await _connect(self.path, on_stale=None)
        if running is not None:
            await running.close()
            raise ExtensionHostError(
                f"a host is already running for {self.host.project_root} (pid {running.pid}); stop it first"
            )
        sock = bind_private(self.path, self.host.project_root)
        try:
            info = os.lstat(self.path)
            self._identity = (info.st_dev, info.st_ino)
            self._server = await asyncio.start_unix_server(self._serve_client, sock=sock)
        except BaseException:
            sock.close()
            self._unlink_if_ours()
            raise

    async def close(self) -> None:
        """Stop answering and remove the socket (unless another host has replaced it); idempotent.

        Waits for a reload that is under way to end, so that no extension is left half swapped.
        """
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        self._unlink_if_ours()
        # Closed, not cancelled: the stream machinery reports a cancelled client task as an error.
        for connection in self._clients.values():
            connection.close("the host is closing its control socket")
        await asyncio.gather(*self._clients, return_exceptions=True)
        await self._work.wait()
        await server.wait_closed()

    # -- serving ------------------------------------------------------------------------

    async def _serve_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not same_user(writer):
            # Told nothing, not even why: the folder should have kept it out already.
            writer.close()
            return
        if len(self._clients) >= MAX_CLIENTS:
            _refuse(
                writer,
                TOO_MANY_CONNECTIONS,
                f"the host serves at most {MAX_CLIENTS} control connections at once; "
                "try again when one of them has closed",
                {"limit": MAX_CLIENTS},
            )
            return
        task = asyncio.current_task()
        connection = Connection(
            reader,
            writer,
            handlers=self._handlers,
            max_message_bytes=MAX_CONTROL_MESSAGE_BYTES,
            max_outbound_bytes=MAX_CONTROL_MESSAGE_BYTES,
            max_queued_bytes=MAX_CONTROL_QUEUED_BYTES,
        )
        if task is not None:
            self._clients[task] = connection
        try:
            await connection.serve()
        except (FramingError, QueueOverflow):
            pass  # a bad frame is answered with PARSE_ERROR; either way the client loses only its own connection
        finally:
            connection.close()
            if task is not None:
                self._clients.pop(task, None)

    def _status(self, _params: Any) -> dict[str, Any]:
        return {"root": str(self.host.project_root), "pid": os.getpid(), "sessionId": self.host.session_id}

    def _inspect(self, params: Any) -> dict[str, Any]:
        name = _name_param(params, METHOD_INSPECT, required=True)
        return describe_extension(self.host, self._known(name or ""))

    async def _reload(self, params: Any) -> dict[str, Any]:
        name = _name_param(params, METHOD_RELOAD, required=False)
        if name is not None:
            name = self._known(name)
        return await self._outcomes_of(self.host.reload(name))

    async def _hook(self, params: Any) -> dict[str, Any]:
        return await run_hook_call(self.host, parse_hook_call(params))

    async def _refresh(self, _params: Any) -> dict[str, Any]:
        return await self._outcomes_of(self._apply_everywhere())

    async def _apply_everywhere(self) -> list[ReloadOutcome]:
        """The recorded decisions applied by the host and its peers; the host's outcomes (each
        peer announces its own to its session)."""
        root = self.host.project_root
        peers = [peer for peer in self._peers() if peer is not self.host and peer.project_root == root]
        results = await asyncio.gather(
            self.host.apply_changes(set()), *(peer.apply_changes(set()) for peer in peers), return_exceptions=True
        )
        for result in results:
            if isinstance(result, BaseException):
                raise result  # once every host is done: one failing leaves none of the others half done
        outcomes = results[0]
        assert not isinstance(outcomes, BaseException)
        return outcomes

    async def _outcomes_of(self, change: Coroutine[Any, Any, list[ReloadOutcome]]) -> dict[str, Any]:
        # The change runs as a task of the server, not of this request: a client that goes
        # away (or cancels) must not cut a reload in half and leave an extension half swapped.
        outcomes = await asyncio.shield(self._work.spawn(change))
        return {"outcomes": [outcome.to_json() for outcome in outcomes]}

    def _known(self, name: str) -> str:
        """The id of extension ``name``, or the UNKNOWN_EXTENSION error a client can rebuild."""
        try:
            return self.host.extension(name).id
        except UnknownExtensionError as exc:
            known = [info.id for info in self.host.extensions]
            raise RpcError(UNKNOWN_EXTENSION, str(exc), {"extension": name, "known": known}) from exc

    def _unlink_if_ours(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            info = os.lstat(self.path)
            if self._identity is None or (info.st_dev, info.st_ino) == self._identity:
                self.path.unlink()


# -- the client ----------------------------------------------------------------------------


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
    return await _connect(control_socket_path(find_project_root(project_root)), on_stale=on_stale)


async def connect_to_every_host(on_error: Callable[[Path, ExtensionHostError], object]) -> list[ControlClient]:
    """A connection to the host of every project that has one running (every control socket of
    the runtime folder): what a decision that holds in every project (a user extension's grant)
    is told to. Stale sockets are removed; one that cannot be used (see :func:`connect_to_host`)
    is passed to ``on_error`` and skipped."""

    async def connect(path: Path) -> ControlClient | None:
        try:
            return await _connect(path, on_stale=None)
        except ExtensionHostError as exc:
            on_error(path, exc)
            return None

    found = await asyncio.gather(*(connect(path) for path in control_socket_paths()))
    return [client for client in found if client is not None]


# -- internals -----------------------------------------------------------------------------


async def _connect(path: Path, *, on_stale: StaleHandler | None) -> ControlClient | None:
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


def _refuse(writer: asyncio.StreamWriter, code: int, message: str, data: Any) -> None:
    """Tell a new client why it is not served (id ``null``: it asked nothing yet) and close."""
    error = {"jsonrpc": "2.0", "id": None, "error": error_to_wire(RpcError(code, message, data))}
    with contextlib.suppress(OSError):
        writer.write(encode_message(error))
    writer.close()  # sends what was written first


def _name_param(params: Any, method: str, *, required: bool) -> str | None:
    """``params["name"]`` (``None`` when it may be left out); anything else is INVALID_PARAMS."""
    name = params.get("name") if isinstance(params, dict) else None
    if isinstance(name, str) and name:
        return name
    if name is None and not required and (params is None or isinstance(params, dict)):
        return None
    raise RpcError(INVALID_PARAMS, f'{method} takes {{"name": "<extension name or id>"}}')
