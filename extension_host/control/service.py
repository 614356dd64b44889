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
from collections.abc import Callable, Coroutine, Iterable
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from extension_protocol.connection import Connection, Handler, QueueOverflow, RpcError, error_to_wire
from extension_protocol.framing import FramingError, encode_message
from extension_protocol.protocol import INVALID_PARAMS, TOO_MANY_CONNECTIONS, UNKNOWN_EXTENSION
from extension_protocol.tasks import BackgroundTasks

from ..errors import ExtensionHostError, UnknownExtensionError, UnknownToolError
from ..host import ExtensionHost
from ..info import ExtensionInfo
from ..launch.logs import current_run_tail
from ..outcomes import ReloadOutcome, ToolCallResult
from ..project.origins import origin_json
from ..project.paths import control_socket_path
from .client import (
    DEFAULT_REQUEST_TIMEOUT,
    MAX_CONTROL_MESSAGE_BYTES,
    ControlClient,
    StaleHandler,
    connect_to_every_host,
    connect_to_host,
    connect_to_socket,
)
from .methods import (
    METHOD_CALL,
    METHOD_HOOK,
    METHOD_INSPECT,
    METHOD_LIST,
    METHOD_REFRESH,
    METHOD_RELOAD,
    METHOD_STATUS,
)
from .private_socket import bind_private, check_private_folder, make_private_folder, same_user

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
    "describe_call",
    "describe_extension",
    "describe_extensions",
]

MAX_CLIENTS: Final = 64
"""Connections a server serves at once; one more is refused with ``TOO_MANY_CONNECTIONS``.
The CLI needs one per command, so only something gone wrong (or hostile) reaches it."""
MAX_CONTROL_QUEUED_BYTES: Final = 2 * MAX_CONTROL_MESSAGE_BYTES
"""Answers queued towards a client that does not read them before it is disconnected."""
_LOG_TAIL_LINES: Final = 20


# -- the answers ---------------------------------------------------------------------------


def describe_extensions(host: ExtensionHost) -> dict[str, Any]:
    """``host.list``, and what ``extensions list --json`` prints."""
    return {"root": str(host.project_root), "extensions": [_with_origin(host, info) for info in host.extensions]}


def _with_origin(host: ExtensionHost, info: ExtensionInfo) -> dict[str, Any]:
    """``info.to_json()`` and where the extension came from (``origin``: ``None`` for a folder
    made by hand; see :mod:`extension_host.project.origins`)."""
    return {**info.to_json(), "origin": origin_json(info.source, info.name, info.path, host.user_home)}


def describe_call(host: ExtensionHost, tool: str, result: ToolCallResult) -> dict[str, Any]:
    """What ``extensions call --json`` prints: the tool, its owner and the result."""
    offered = host.tools.get(tool)
    return {"tool": tool, "owner": offered.owner if offered else None, **result.to_json()}


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
        **_with_origin(host, info),
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
        # Imported by the server alone: a command that only describes extensions (a one-shot
        # list) neither builds the host.hook validator nor reads the hook models.
        from .hook_calls import parse_hook_call, run_hook_call

        self._hook_call: Final = (parse_hook_call, run_hook_call)
        self._handlers: dict[str, Handler] = {
            METHOD_STATUS: self._status,
            METHOD_LIST: lambda _params: describe_extensions(self.host),
            METHOD_INSPECT: self._inspect,
            METHOD_RELOAD: self._reload,
            METHOD_REFRESH: self._refresh,
            METHOD_HOOK: self._hook,
            METHOD_CALL: self._call,
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
        running = await connect_to_socket(self.path, on_stale=None)
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

    async def _call(self, params: Any) -> dict[str, Any]:
        tool, arguments = _call_params(params)
        ends: list[Any] = []

        def hook_end(event: Any) -> None:
            if event["type"] == "hook.end":
                ends.append(event["data"])

        stop = self.host.events.subscribe(hook_end)
        try:
            result = await self.host.call_tool(tool, arguments)
        except UnknownToolError as exc:
            raise RpcError(INVALID_PARAMS, str(exc), {"tool": tool, "available": exc.available}) from None
        finally:
            stop()
        decided_before = result.decision == "deny"
        return describe_call(self.host, tool, result) | {
            "hook_ends": ends,
            "skipped_hooks": [
                [hook, owner]
                for hook, owner in self.host.skipped_hooks(tool)
                if not (hook == "on_post_tool_use" and decided_before)  # denied first: no post hook was due
            ],
        }

    async def _hook(self, params: Any) -> dict[str, Any]:
        parse, run = self._hook_call
        return await run(self.host, parse(params))

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


# -- internals -----------------------------------------------------------------------------


def _refuse(writer: asyncio.StreamWriter, code: int, message: str, data: Any) -> None:
    """Tell a new client why it is not served (id ``null``: it asked nothing yet) and close."""
    error = {"jsonrpc": "2.0", "id": None, "error": error_to_wire(RpcError(code, message, data))}
    with contextlib.suppress(OSError):
        writer.write(encode_message(error))
    writer.close()  # sends what was written first


def _call_params(params: Any) -> tuple[str, dict[str, Any]]:
    """``params["name"]`` and ``params["arguments"]`` (an object); anything else is INVALID_PARAMS."""
    name = params.get("name") if isinstance(params, dict) else None
    arguments = params.get("arguments", {}) if isinstance(params, dict) else None
    if isinstance(name, str) and name and isinstance(arguments, dict):
        return name, arguments
    raise RpcError(INVALID_PARAMS, f'{METHOD_CALL} takes {{"name": "<tool name>", "arguments": {{...}}}}')


def _name_param(params: Any, method: str, *, required: bool) -> str | None:
    """``params["name"]`` (``None`` when it may be left out); anything else is INVALID_PARAMS."""
    name = params.get("name") if isinstance(params, dict) else None
    if isinstance(name, str) and name:
        return name
    if name is None and not required and (params is None or isinstance(params, dict)):
        return None
    raise RpcError(INVALID_PARAMS, f'{method} takes {{"name": "<extension name or id>"}}')
