"""The ACP agent of ``extensions acp``: one client on stdio, its sessions, each method of the table.

:class:`AcpServer` binds every method of :data:`~extension_host.acp.protocol.AGENT_METHODS` on
a :class:`~extension_protocol.connection.Connection` and keeps the connection's sessions
(:class:`~extension_host.acp.session.AcpSession`, by ``sessionId``): at most
:data:`~extension_host.acp.protocol.MAX_SESSIONS`, all stopped when the client goes. Sessions
share one fork server. ``initialize`` comes first (anything else before it is refused);
requests in flight are bounded (:data:`MAX_IN_FLIGHT`); every error is one JSON-RPC error whose
message names what is at fault. :func:`serve_stdio` serves the process's own stdin and stdout
(:mod:`extension_host.acp.wire`).

The client's ``fs`` and ``terminal`` capabilities are read and kept, and used by nothing: the
host's agent has no file or shell tools of its own (extensions' tools do their own work). The
``mcpServers`` a client names are not connected (the host has no MCP client); a line on stderr
says so. This module knows the protocol's methods and sessions; not events or lines.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from extension_protocol.connection import Connection, RpcError
from extension_protocol.framing import MAX_DEPTH
from extension_protocol.pipes import PipeReader, open_pipe_writer
from extension_protocol.protocol import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST

from ..errors import ExtensionHostError
from ..launch.forkserver import ForkServer, fork_server_wanted
from ..launch.logs import rotate_log
from ..project.environment import scrub, sdk_environment
from ..project.paths import logs_dir, user_home
from ..project.private_files import private_folder
from ..runtime.options import DEFAULT_READINESS_TIMEOUT
from ..session.agents import Agent
from ..version import __version__
from .protocol import (
    AGENT_METHODS,
    MAX_SESSIONS,
    PROTOCOL_VERSION,
    CancelParams,
    InitializeParams,
    LoadSessionParams,
    NewSessionParams,
    PromptParams,
    parse,
)
from .session import AcpSession
from .wire import MAX_LINE_BYTES, LineDecoder, claimed_stdio, line

__all__ = [
    "MAX_IN_FLIGHT",
    "MAX_QUEUED_BYTES",
    "UPDATE_DELAY",
    "AcpOptions",
    "AcpServer",
    "AgentFactory",
    "pipe_connection",
    "serve_stdio",
]

MAX_IN_FLIGHT: Final = 64
"""Requests of the client handled at once; one more is refused until one ends."""
MAX_QUEUED_BYTES: Final = 128 * 1024 * 1024
"""Bytes waiting for a client that does not read before it is dropped."""
MAX_OUTBOUND_BYTES: Final = 64 * 1024 * 1024
"""Largest message sent (an update carries at most a cut tool result; this is a backstop)."""
UPDATE_DELAY: Final = 0.008
"""Seconds a ``session/update`` waits at most for the next message to the client, to go out in
the same write: half a frame of an editor drawing at 60 Hz, so a streamed answer looks no later,
while the updates of a turn shorter than that go with the prompt's answer (the client is woken
once per turn, not once per tool call)."""

AgentFactory = Callable[[], Awaitable[Agent]]
"""Makes one session's agent; raises :class:`ExtensionHostError` with a one-line reason."""


@dataclass(frozen=True)
class AcpOptions:
    """How the server's sessions are made."""

    make_agent: AgentFactory
    user_home: Path | None = None
    readiness_timeout: float = DEFAULT_READINESS_TIMEOUT
    watch: bool = True
    fork_server: ForkServer | bool = True


class AcpServer:
    """The agent side of one ACP connection (see the module)."""

    def __init__(self, options: AcpOptions) -> None:
        self.options: Final = options
        self.sessions: Final[dict[str, AcpSession]] = {}
        self.client_capabilities: dict[str, Any] = {}
        """What the client said it offers in ``initialize`` (``fs``, ``terminal``)."""
        self._connection: Connection | None = None
        self._initialized = False
        self._in_flight = 0
        self._opening = 0
        self._fork_server: ForkServer | bool = options.fork_server
        self._own_fork_server: ForkServer | None = None
        self.handlers: Final[dict[str, Callable[[Any], Awaitable[Any]]]] = {
            "initialize": self._initialize,
            "session/new": self._new_session,
            "session/load": self._load_session,
            "session/prompt": self._prompt,
        }
        """Every request, by method name (with ``session/cancel``: :data:`AGENT_METHODS`)."""
        if {*self.handlers, "session/cancel"} != AGENT_METHODS.keys():
            raise AssertionError("the server and AGENT_METHODS name different methods")

    async def serve(self, connection: Connection) -> None:
        """Answer the client on ``connection`` until it closes; then stop every session."""
        self._connection = connection
        for method, handler in self.handlers.items():
            connection.on_request(method, self._bounded(method, handler))
        connection.on_notification("session/cancel", self._cancel)
        try:
            await connection.serve()
        finally:
            await self.close()

    async def close(self) -> None:
        """Stop every session and the fork server they shared."""
        sessions = list(self.sessions.values())
        self.sessions.clear()
        await asyncio.gather(*(session.stop() for session in sessions), return_exceptions=True)
        if self._own_fork_server is not None:
            await self._own_fork_server.stop()
            self._own_fork_server = None

    def _bounded(self, method: str, handler: Callable[[Any], Awaitable[Any]]) -> Callable[[Any], Awaitable[Any]]:
        async def run(params: Any) -> Any:
            if method != "initialize" and not self._initialized:
                raise RpcError(INVALID_REQUEST, f"{method}: call initialize first")
            if self._in_flight >= MAX_IN_FLIGHT:
                raise RpcError(INVALID_REQUEST, f"{method}: {MAX_IN_FLIGHT} requests are in flight already")
            self._in_flight += 1
            try:
                return await handler(params)
            except ExtensionHostError as exc:
                raise RpcError(INTERNAL_ERROR, f"{method}: {exc}") from None
            finally:
                self._in_flight -= 1

        return run

    # -- the methods ------------------------------------------------------------------

    async def _initialize(self, params: Any) -> dict[str, Any]:
        given = parse(InitializeParams, params, "initialize")
        self.client_capabilities = given.client_capabilities.model_dump(by_alias=True)
        self._initialized = True
        return {
            "protocolVersion": min(given.protocol_version, PROTOCOL_VERSION) or PROTOCOL_VERSION,
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
                "mcpCapabilities": {"http": False, "sse": False},
                "sessionCapabilities": {},
            },
            "agentInfo": {"name": "extension-host", "title": "extension-host", "version": __version__},
            "authMethods": [],
        }

    async def _new_session(self, params: Any) -> dict[str, Any]:
        given = parse(NewSessionParams, params, "session/new")
        session = await self._open(Path(given.cwd), None, len(given.mcp_servers))
        return {"sessionId": session.session_id}

    async def _load_session(self, params: Any) -> dict[str, Any]:
        given = parse(LoadSessionParams, params, "session/load")
        if given.session_id in self.sessions:
            raise RpcError(INVALID_PARAMS, f"session/load: session {given.session_id} is open already")
        session = await self._open(Path(given.cwd), given.session_id, len(given.mcp_servers))
        await session.replay()
        return {}

    async def _open(self, cwd: Path, resume: str | None, mcp_servers: int) -> AcpSession:
        method = "session/load" if resume else "session/new"
        if len(self.sessions) + self._opening >= MAX_SESSIONS:
            raise RpcError(INVALID_REQUEST, f"{method}: {MAX_SESSIONS} sessions are open already on this connection")
        if not cwd.is_dir():
            raise RpcError(INVALID_PARAMS, f"{method}: cwd {cwd} is not a folder")
        if mcp_servers:
            print(
                f"extensions acp: {mcp_servers} MCP server(s) of the client not connected (not supported)",
                file=sys.stderr,
            )
        connection = self._connection
        assert connection is not None
        self._opening += 1
        try:
            agent = await self.options.make_agent()
            try:
                session = AcpSession(
                    cwd,
                    agent,
                    connection.notify_later,  # updates go with the next answer, or within UPDATE_DELAY
                    connection.send_request,
                    user_home=self.options.user_home,
                    readiness_timeout=self.options.readiness_timeout,
                    watch=self.options.watch,
                    fork_server=self._shared_fork_server(),
                    resume=resume,
                )
            except ExtensionHostError as exc:
                await _close(agent)
                raise RpcError(INVALID_PARAMS, f"{method}: {exc}") from None
            try:
                await session.start()
            except BaseException:
                await session.stop()
                raise
        finally:
            self._opening -= 1
        self.sessions[session.session_id] = session
        asyncio.get_running_loop().call_soon(session.announce_commands)  # after the answer
        return session

    async def _prompt(self, params: Any) -> dict[str, Any]:
        given = parse(PromptParams, params, "session/prompt")
        return await self._session(given.session_id, "session/prompt").prompt(given.prompt)

    def _cancel(self, params: Any) -> None:
        try:
            given = parse(CancelParams, params, "session/cancel")
        except RpcError:
            return  # a notification has no answer to carry the error
        session = self.sessions.get(given.session_id)
        if session is not None:
            session.cancel()

    def _session(self, session_id: str, method: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RpcError(
                INVALID_PARAMS,
                f"{method}: no session {session_id} here; open it with session/new or session/load",
            )
        return session

    def _shared_fork_server(self) -> ForkServer | bool:
        """The fork server every session uses: made with the first session, stopped at the end."""
        if self._fork_server is not True:
            return self._fork_server
        if self._own_fork_server is None:
            if not fork_server_wanted():
                self._fork_server = False
                return False
            home = user_home(self.options.user_home)
            log = private_folder(logs_dir(home), within=home) / "acp-fork-server.log"
            rotate_log(log)
            self._own_fork_server = ForkServer(sdk_environment(scrub(dict(os.environ))), log)
        return self._own_fork_server


async def _close(agent: Agent) -> None:
    close = getattr(agent, "close", None)
    if callable(close):
        await close()


async def pipe_connection(read_fd: int, write_fd: int) -> Connection:
    """A client's connection on the pipes ``read_fd`` and ``write_fd`` (it owns them), with the
    bounds of :mod:`extension_host.acp.wire` and of this module."""
    writer = await open_pipe_writer(write_fd)

    def refuse(answer: bytes) -> None:
        if not writer.is_closing():
            writer.write(answer)

    return Connection(
        PipeReader(read_fd),
        writer,
        decoder=LineDecoder(refuse, MAX_LINE_BYTES),
        framer=line,
        max_outbound_bytes=MAX_OUTBOUND_BYTES,
        max_outbound_depth=MAX_DEPTH,
        max_queued_bytes=MAX_QUEUED_BYTES,
        progress_delay=UPDATE_DELAY,
    )


async def serve_stdio(server: AcpServer) -> None:
    """Serve the client on this process's stdin and stdout (claimed: see
    :func:`~extension_host.acp.wire.claimed_stdio`) until it closes stdin."""
    with claimed_stdio() as (read_fd, write_fd):
        connection = await pipe_connection(read_fd, write_fd)
        try:
            await server.serve(connection)
        finally:
            connection.close()
