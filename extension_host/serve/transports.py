"""How clients reach ``extensions serve``: stdio, the project's Unix socket, a loopback WebSocket.

Each transport makes a :class:`~extension_protocol.connection.Connection` per client and hands
it to :meth:`~extension_host.serve.server.ProtocolServer.serve_client`; every one bounds a
message (:data:`MAX_SERVE_MESSAGE_BYTES` in, the replay-sized :data:`MAX_SERVE_OUTBOUND_BYTES`
out, :data:`~extension_protocol.framing.MAX_DEPTH` levels deep), what waits for a client that
does not read (:data:`MAX_CLIENT_QUEUED_BYTES`: past it that client is dropped) and, on the
socket and the WebSocket, the number of clients (:data:`MAX_CLIENTS`: one more is told
``TOO_MANY_CONNECTIONS`` and closed).

- **stdio** (:func:`serve_stdio`): one client, Content-Length framing on stdin/stdout, as
  extensions speak to the host; the server ends when stdin does.
- **socket** (:func:`serve_socket`): :func:`serve_socket_path`, beside the project's control
  socket, with its rules (:mod:`extension_host.control.private_socket`): a private folder, a 0600
  socket, clients of other users dropped at once. Same framing.
- **WebSocket** (:func:`serve_websocket`): one JSON-RPC message per text message. Loopback
  only unless ``allow_remote`` (with a token of the user's choosing); the token
  (:mod:`extension_host.control.tokens`) is required as ``?token=``, AHP 1.0's ``?tkn=`` or
  ``Authorization: Bearer``.
  A browser's WebSocket from a page of another origin is refused (403); a plain ``GET`` with
  the token gets the web page (:mod:`extension_host.serve.web_page`).
  Needs the ``websockets`` package (``pip install 'extension-host[serve]'``), imported only
  here and only then.

This module knows bytes, sockets and framing; the protocol is the server's.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qs, quote, urlparse

from extension_protocol.connection import Connection
from extension_protocol.framing import encode_message
from extension_protocol.nesting import MAX_DEPTH
from extension_protocol.pipes import PipeReader, open_pipe_writer
from extension_protocol.protocol import TOO_MANY_CONNECTIONS

from ..control.private_socket import bind_private, check_private_folder, make_private_folder, same_user
from ..control.tokens import TOKEN_ENV, ServerToken, bearer_token, token_matches
from ..errors import ExtensionHostError
from ..project.paths import control_socket_path
from .server import ProtocolServer
from .web_page import origin_allowed, refused, web_reply

__all__ = [
    "LOOPBACK_HOSTS",
    "MAX_CLIENTS",
    "MAX_CLIENT_QUEUED_BYTES",
    "MAX_SERVE_MESSAGE_BYTES",
    "MAX_SERVE_OUTBOUND_BYTES",
    "WebSocketUnavailable",
    "WebSocketWriter",
    "check_bind",
    "client_connection",
    "serve_socket",
    "serve_socket_path",
    "serve_stdio",
    "serve_websocket",
]

MAX_SERVE_MESSAGE_BYTES: Final = 16 * 1024 * 1024
"""Largest message a client may send (a prompt of a million characters fits)."""
MAX_SERVE_OUTBOUND_BYTES: Final = 64 * 1024 * 1024
"""Largest message the server sends: a ``reconnect`` replaying the whole buffer fits."""
MAX_CLIENT_QUEUED_BYTES: Final = 2 * MAX_SERVE_OUTBOUND_BYTES
"""Bytes waiting for one client that does not read before it is dropped."""
MAX_CLIENTS: Final = 64
"""Clients served at once on the socket or the WebSocket."""
LOOPBACK_HOSTS: Final = frozenset({"127.0.0.1", "::1", "localhost"})
_CLOSE_TIMEOUT: Final = 5.0
"""Seconds a closing WebSocket client has to take what was queued for it."""

Ready = Callable[[str], None]
"""Told where the server listens, once it does (the CLI prints it)."""


def client_connection(reader: Any, writer: Any) -> Connection:
    """A client's connection: nothing larger or deeper goes to it than a client of the protocol
    reads (a result that would be is answered with an error saying so)."""
    return Connection(
        reader,
        writer,
        max_message_bytes=MAX_SERVE_MESSAGE_BYTES,
        max_outbound_bytes=MAX_SERVE_OUTBOUND_BYTES,
        max_outbound_depth=MAX_DEPTH,
        max_queued_bytes=MAX_CLIENT_QUEUED_BYTES,
    )


async def serve_stdio(server: ProtocolServer, read_fd: int = 0, write_fd: int = 1) -> None:
    """Serve one client on ``read_fd``/``write_fd`` until it closes its end."""
    connection = client_connection(PipeReader(read_fd), await open_pipe_writer(write_fd))
    await server.serve_client(connection)


def serve_socket_path(project_root: Path) -> Path:
    """The project's serve socket: beside its control socket, in the private runtime folder."""
    return control_socket_path(project_root).with_name(f"serve-{control_socket_path(project_root).name}")


async def serve_socket(
    server: ProtocolServer, path: Path, project_root: Path, ready: Ready, stop: asyncio.Event
) -> None:
    """Serve clients of this user on the Unix socket ``path`` until ``stop`` is set.

    Raises:
        ExtensionHostError: the folder is not private, or something listens there already.
    """
    folder = path.parent
    make_private_folder(folder)
    if not check_private_folder(folder):
        raise ExtensionHostError(f"the socket folder {folder} was removed as it was made; try again")
    if path.is_socket():
        if await _answers(path):
            raise ExtensionHostError(f"a server already serves {project_root} on {path}; stop it first")
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # left by a server that is gone
    sock = bind_private(path, project_root)
    clients: set[asyncio.Task[Any]] = set()

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not same_user(writer):
            writer.close()  # told nothing: the folder should have kept it out already
            return
        if len(clients) >= MAX_CLIENTS:
            _refuse(writer)
            return
        task = asyncio.current_task()
        if task is not None:
            clients.add(task)
        try:
            await server.serve_client(client_connection(reader, writer))
        finally:
            if task is not None:
                clients.discard(task)

    listener = await asyncio.start_unix_server(client, sock=sock)
    try:
        ready(str(path))
        await stop.wait()
    finally:
        listener.close()
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


async def _answers(path: Path) -> bool:
    try:
        _reader, writer = await asyncio.open_unix_connection(os.fspath(path))
    except OSError:
        return False
    writer.close()
    return True


def _refuse(writer: Any) -> None:
    message = f"the server takes at most {MAX_CLIENTS} clients at once; try again when one has gone"
    error = {"code": TOO_MANY_CONNECTIONS, "message": message, "data": {"limit": MAX_CLIENTS}}
    writer.write(encode_message({"jsonrpc": "2.0", "id": None, "error": error}))
    writer.close()


# -- WebSocket ---------------------------------------------------------------------------


class WebSocketUnavailable(ExtensionHostError):
    """The ``websockets`` package is not installed."""


def check_bind(host: str, *, allow_remote: bool, token: ServerToken) -> None:
    """Refuse a bind address that is not loopback unless remote clients are allowed with a token
    of the user's choosing (not one made for this start).

    Raises:
        ExtensionHostError: what is wrong and what to do.
    """
    if _is_loopback(host):
        return
    if not allow_remote:
        raise ExtensionHostError(
            f"--listen {host}: only loopback addresses (127.0.0.1, ::1) are served; "
            f"add --allow-remote and a token (--token-file FILE or ${TOKEN_ENV}) to accept other machines"
        )
    if token.source == "start":
        raise ExtensionHostError(
            f"--listen {host} with --allow-remote needs a token of your choosing, --token-file FILE or "
            f"${TOKEN_ENV}: remote clients must authenticate"
        )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def serve_websocket(
    server: ProtocolServer, host: str, port: int, token: str, ready: Ready, stop: asyncio.Event
) -> None:
    """Serve WebSocket clients that give ``token`` on ``host:port`` until ``stop`` is set.

    Raises:
        WebSocketUnavailable: ``websockets`` is not installed.
        ExtensionHostError: the address cannot be bound.
    """
    try:
        from websockets.asyncio.server import serve
        from websockets.datastructures import Headers
        from websockets.http11 import Response
    except ImportError:
        raise WebSocketUnavailable(
            "the WebSocket transport needs the websockets package: pip install 'extension-host[serve]'"
        ) from None
    clients: set[Any] = set()
    bound_port = port

    def answer(status: int, reason: str, text: str) -> Any:
        reply = refused(status, reason, text)
        return Response(reply.status, reply.reason, Headers(reply.headers), reply.body)

    def authenticate(connection: Any, request: Any) -> Any:
        offered = bearer_token(request.headers.get("Authorization"))
        if offered is None:
            query = parse_qs(urlparse(request.path).query)
            offered = next(iter(query.get("token", query.get("tkn", ()))), None)  # tkn: AHP 1.0's name
        if not token_matches(offered, token):
            return answer(401, "Unauthorized", "a valid token is required (?token=...)")
        host_header = request.headers.get("Host")
        if request.headers.get("Upgrade", "").lower() != "websocket":
            reply = web_reply(request.path, host_header, token)  # the page, for a browser
            return Response(reply.status, reply.reason, Headers(reply.headers), reply.body)
        if not origin_allowed(request.headers.get("Origin"), bound_port, host, host_header):
            return answer(403, "Forbidden", "a page of another origin may not connect here")
        if len(clients) >= MAX_CLIENTS:
            return answer(503, "Service Unavailable", "too many clients")
        return None

    async def client(websocket: Any) -> None:
        clients.add(websocket)
        try:
            await _serve_websocket_client(server, websocket)
        finally:
            clients.discard(websocket)

    try:
        listener = await serve(
            client,
            host,
            port,
            process_request=authenticate,
            max_size=MAX_SERVE_MESSAGE_BYTES,
            max_queue=16,
            write_limit=MAX_CLIENT_QUEUED_BYTES,
        )
    except OSError as exc:
        raise ExtensionHostError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    try:
        bound = next(iter(listener.sockets)).getsockname()
        bound_port = bound[1]
        shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
        ready(f"ws://{shown}:{bound[1]}/?token={quote(token, safe='')}")
        await stop.wait()
    finally:
        listener.close()
        await listener.wait_closed()


async def _serve_websocket_client(server: ProtocolServer, websocket: Any) -> None:
    reader = asyncio.StreamReader(limit=MAX_SERVE_MESSAGE_BYTES)
    writer = WebSocketWriter(websocket)

    async def pump() -> None:
        try:
            async for message in websocket:
                data = message.encode() if isinstance(message, str) else message
                # One WebSocket message is one JSON-RPC message: framed for the connection's decoder.
                reader.feed_data(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        except Exception:
            pass
        finally:
            reader.feed_eof()

    pumping = asyncio.ensure_future(pump())
    try:
        await server.serve_client(client_connection(reader, writer))
    finally:
        pumping.cancel()
        writer.close()
        await writer.finished()


class WebSocketWriter:
    """The writer a :class:`Connection` wants, over a WebSocket: each frame it writes becomes
    one text message, sent in order by one task; more than ``max_queued`` bytes waiting
    (:data:`MAX_CLIENT_QUEUED_BYTES`) cut the WebSocket (the client stopped reading)."""

    def __init__(self, websocket: Any, max_queued: int = MAX_CLIENT_QUEUED_BYTES) -> None:
        self._websocket = websocket
        self._max_queued = max_queued
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._queued = 0
        self._closing = False
        self._buffer = b""
        self._sender = asyncio.ensure_future(self._send())

    def write(self, data: bytes) -> None:
        if self._closing:
            return
        buffer = self._buffer + data if self._buffer else data
        at = 0
        # The connection writes whole frames (one, or several in one write); each body is one message.
        while (end := buffer.find(b"\r\n\r\n", at)) >= 0:
            length = int(buffer[at:end].split(b":", 1)[1])
            start = end + 4
            if len(buffer) < start + length:
                break
            body = buffer[start : start + length]
            at = start + length
            self._queued += len(body)
            if self._queued > self._max_queued:
                self.abort()
                return
            self._queue.put_nowait(body)
        self._buffer = buffer[at:]

    async def drain(self) -> None:
        return

    def close(self) -> None:
        if not self._closing:
            self._closing = True
            self._queue.put_nowait(None)

    def abort(self) -> None:
        """Drop the client now: what is queued is thrown away, the WebSocket cut."""
        self._closing = True
        self._sender.cancel()
        transport = getattr(self._websocket, "transport", None)
        if transport is not None:
            transport.abort()

    def is_closing(self) -> bool:
        return self._closing

    async def finished(self) -> None:
        """Wait until what was queued before :meth:`close` is sent, at most
        :data:`_CLOSE_TIMEOUT` seconds (a client that does not read is then cut)."""
        try:
            async with asyncio.timeout(_CLOSE_TIMEOUT):
                await asyncio.shield(self._sender)
        except TimeoutError:
            self.abort()
        except (asyncio.CancelledError, Exception):
            pass

    async def _send(self) -> None:
        try:
            while (body := await self._queue.get()) is not None:
                self._queued -= len(body)
                await self._websocket.send(body.decode())
        finally:
            await _close(self._websocket.close())


async def _close(closing: Awaitable[Any]) -> None:
    with contextlib.suppress(Exception):
        await closing
