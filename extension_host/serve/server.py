"""The client protocol server: clients, their commands and actions, and the sessions they drive.

A :class:`ProtocolServer` hosts many :class:`~extension_host.serve.served_session.ServedSession`\\ s
and serves any number of client connections (:meth:`ProtocolServer.serve_client`, given a
:class:`~extension_protocol.connection.Connection`'s reader and writer by a transport). Every
command a client may send is in one table, :attr:`ProtocolServer.commands` (method name →
``async (client, params) -> result``): wiring another command is one entry there.

- ``initialize`` must come first (anything else before it is ``INVALID_REQUEST``). One whose
  params name a ``channel`` is AHP 1.0's and makes the client a 1.0 client, served by the
  command table of :mod:`extension_host.serve.ahp1.server` from then on; one without is the seed
  protocol's: it picks the first of the client's ``protocolVersions`` the seed table speaks
  (``0.1.0``) or fails with ``UNSUPPORTED_PROTOCOL_VERSION``. A method the client's version
  lacks is ``METHOD_NOT_FOUND``. The sessions are the same for both.
- Every state change is an action envelope (:mod:`extension_host.serve.actions`), folded into
  its session's state and sent as an ``action`` notification to the session's subscribers, in
  ``serverSeq`` order; ``notify/sessionAdded`` / ``notify/sessionRemoved`` go to every client.
- What a client sees in answer to ``initialize``, ``reconnect`` and ``subscribe`` and what it
  sees live never overlap or leave a gap: live envelopes wait until the answer is written.
- A client whose queue grows past the transport's bound, or that cannot be sent a notification
  (larger or deeper than its connection carries), is dropped; the others go on, and get it.
  An action is never too deep for a client: what lies deeper is marked before it is numbered.
- A client that says in ``initialize`` that it shows canvases (``capabilities: {canvases: true}``)
  is, while subscribed to a session, one of that session's canvas clients
  (:meth:`~extension_host.calls.canvases.Canvases.attach_client`): its extensions' canvases can open.
  A ``reconnect`` may say it again; without ``capabilities`` it keeps what that ``clientId`` said
  last on this server (the last :data:`MAX_REMEMBERED_CLIENTS` ids are remembered).
  ``invokeCanvasAction`` and ``closeCanvas`` are :mod:`extension_host.serve.canvas_routes`'.
- ``dispatchAction`` (a notification; as a request it is answered ``null`` or an error) runs
  a client's action (:mod:`extension_host.serve.client_actions`).
- ``createSession`` past :attr:`ProtocolServer.max_sessions` (given, or derived from memory and
  open files by :mod:`extension_host.serve.capacity`) is refused, naming the setting; with
  ``freeze_sessions`` a started session's objects leave the collector's walks, and a stopped
  one's are collected at once.

This module knows the protocol's commands and who is subscribed to what; not bytes or
sockets (:mod:`extension_host.serve.transports`).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote, urlparse

from extension_protocol.connection import Connection, ConnectionClosed, QueueOverflow
from extension_protocol.framing import FramingError
from extension_protocol.nesting import MAX_DEPTH, nests_deeper
from extension_protocol.protocol import INVALID_PARAMS, INVALID_REQUEST, METHOD_PING
from extension_protocol.tasks import BackgroundTasks

from ..calls.canvases import Canvases
from ..errors import ExtensionHostError
from ..events import cut_strings
from ..launch.forkserver import ForkServer, fork_server_wanted
from ..launch.logs import rotate_log
from ..project.environment import scrub, sdk_environment
from ..project.paths import logs_dir, user_home
from ..project.private_files import private_folder
from ..session.custom_agents import agents_from_wire
from ..validation import validate
from . import params as shapes
from .actions import ActionLog
from .ahp1.server import AHP1_VERSION, Ahp1, method_not_found, speaks_ahp1
from .canvas_routes import CanvasCommands
from .capacity import Collector, checked_max_sessions, derived_max_sessions
from .client_actions import dispatch
from .clients import Client, CommandHandler
from .content_routes import ContentCommands
from .errors import (
    SESSION_ALREADY_EXISTS,
    SESSION_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    ServeError,
)
from .extension_routes import ExtensionCommands
from .providers import ProviderOptions, make_agent
from .served_session import MAX_FETCH_TURNS, HostOptions, ServedSession, fetch_turns, fork_session
from .state import PROGRESS_ACTIONS

__all__ = [
    "DEFAULT_FETCH_TURNS",
    "MAX_ACTION_DEPTH",
    "MAX_REMEMBERED_CLIENTS",
    "PROTOCOL_VERSIONS",
    "ProtocolServer",
    "ServerOptions",
]

SEED_VERSION: Final = "0.1.0"
PROTOCOL_VERSIONS: Final = (AHP1_VERSION, SEED_VERSION)
"""The protocol versions this server speaks, most preferred first: AHP 1.0 (an ``initialize``
naming its ``channel``) and the seed protocol's 0.1.0 (one naming none)."""
DEFAULT_FETCH_TURNS: Final = 50
"""Turns a ``fetchTurns`` without ``limit`` returns."""
MAX_REMEMBERED_CLIENTS: Final = 4096
"""Client ids whose capabilities the server remembers for their ``reconnect``."""
MAX_ACTION_DEPTH: Final = MAX_DEPTH - 4
"""How deeply an action may nest: it travels inside an envelope inside a message (and, in a
``reconnect`` replay, inside a list inside a result), and a client reads
:data:`~extension_protocol.nesting.MAX_DEPTH` levels in all."""


@dataclass(frozen=True)
class ServerOptions:
    """What every session of the server is made with."""

    provider: str = "scripted"
    """The agent provider of a ``createSession`` that names none."""
    provider_argument: str | None = None
    """The server's argument for that provider (``--agent scripted:FILE``: the file)."""
    hosts: HostOptions = field(default_factory=HostOptions)
    default_directory: Path | None = None
    """A session's working directory when ``createSession`` gives none."""
    max_sessions: int | None = None
    """Sessions the server hosts at once (each has its own extension processes); ``None``: derived
    from the memory available and the open-file limit when the server is made
    (:mod:`extension_host.serve.capacity`)."""
    freeze_sessions: bool = False
    """Keep started sessions' objects out of the garbage collector's full walks (``gc.freeze``;
    :mod:`extension_host.serve.capacity`): for a process that is the server alone."""

    def __post_init__(self) -> None:
        if self.max_sessions is not None:
            checked_max_sessions(self.max_sessions, "ServerOptions.max_sessions")


class ProtocolServer:
    """Hosts sessions for clients; see the module's docstring."""

    def __init__(self, options: ServerOptions = ServerOptions()) -> None:
        self.options: Final = options
        self.max_sessions: Final = options.max_sessions or derived_max_sessions()
        """Sessions this server hosts at once; ``createSession`` past it is refused."""
        self.log: Final = ActionLog()
        self.sessions: dict[str, ServedSession] = {}
        self.clients: set[Client] = set()
        self._creating: set[str] = set()
        self._shows_canvases: OrderedDict[str, bool] = OrderedDict()
        """What each client id said last of canvases (``capabilities.canvases``), newest last."""
        self._collector = Collector(options.freeze_sessions)
        self._work = BackgroundTasks("the protocol server", on_error=self._report)
        fork_server = options.hosts.fork_server
        self._own_fork_server: ForkServer | None = None
        if fork_server is True:
            # One warm interpreter forks the extensions of every session.
            self._own_fork_server = _shared_fork_server(options.hosts.user_home)
        hosts = options.hosts
        if self._own_fork_server is not None:
            hosts = HostOptions(hosts.user_home, hosts.readiness_timeout, hosts.watch, self._own_fork_server)
        self._hosts = hosts
        self.commands: Final[dict[str, CommandHandler]] = {
            "initialize": self._initialize,
            "reconnect": self._reconnect,
            "subscribe": self._subscribe,
            "createSession": self._create_session,
            "disposeSession": self._dispose_session,
            "listSessions": self._list_sessions,
            "fetchTurns": self._fetch_turns,
            "dispatchAction": self._dispatch_request,
        }
        """Every command, by method name: the one place a command is added."""
        self.content: Final = ContentCommands(self.session, options.default_directory)
        """``completions`` and the ``resource*`` commands, and the content kept by reference."""
        self.commands.update(self.content.commands())
        self.commands.update(ExtensionCommands(self.session).commands())  # listExtensions, reloadExtensions
        self.commands.update(CanvasCommands(self._canvases_of).commands())  # invokeCanvasAction, closeCanvas
        self.ahp1: Final = Ahp1(self)
        """AHP 1.0: its commands, channels and sequence, over the same sessions."""
        self._methods: Final = frozenset(self.commands) | frozenset(self.ahp1.commands)

    # -- connections ---------------------------------------------------------------------

    async def serve_client(self, connection: Connection) -> None:
        """Serve one client until its connection ends; its failure is its own."""
        client = Client(connection)
        for method in self._methods:
            connection.on_request(method, self._bind(client, method))
        connection.on_notification("dispatchAction", lambda params: self._dispatch_notification(client, params))
        connection.on_notification("unsubscribe", lambda params: self._unsubscribe(client, params))
        self.clients.add(client)
        try:
            await connection.serve()
        except (FramingError, QueueOverflow):
            pass  # answered with PARSE_ERROR, or it stopped reading: it loses its own connection only
        finally:
            self.clients.discard(client)
            client.subscriptions = set()
            self._sync_canvases(client)
            connection.close()

    def _bind(self, client: Client, method: str) -> Callable[[Any], Awaitable[Any]]:
        async def run(params: Any) -> Any:
            if client.client_id is not None:
                table = self.ahp1.commands if client.ahp1 else self.commands
            elif method in ("initialize", "reconnect"):
                table = self.ahp1.commands if speaks_ahp1(params) else self.commands
            elif method == METHOD_PING:
                table = self.ahp1.commands  # answered before initialize, as AHP 1.0 asks
            else:
                raise ServeError(INVALID_REQUEST, f"{method}: send initialize first")
            handler = table.get(method)
            if handler is None:
                raise method_not_found(method)
            return await handler(client, params)

        return run

    async def close(self) -> None:
        """Stop every session, close every client; idempotent."""
        for client in list(self.clients):
            client.connection.close("the server is stopping")
        sessions, self.sessions = list(self.sessions.values()), {}
        await asyncio.gather(*(session.stop() for session in sessions), return_exceptions=True)
        await self._work.wait()
        if self._own_fork_server is not None:
            await self._own_fork_server.stop()

    # -- publishing ----------------------------------------------------------------------

    def publish(self, session: ServedSession, action: dict[str, Any], origin: dict[str, Any] | None) -> None:
        """Number ``action`` of ``session``, fold it into its state, send it to its subscribers.
        What lies deeper in it than a client reads (:data:`MAX_ACTION_DEPTH`) is marked first, as
        the session's log marks it, so that every subscriber can read the action."""
        if nests_deeper(action, MAX_ACTION_DEPTH):
            action = cut_strings(action, sys.maxsize, MAX_ACTION_DEPTH)  # strings stay whole
        envelope = self.log.append(action, origin)
        session.apply(action)
        urgent = action["type"] not in PROGRESS_ACTIONS
        for client in [client for client in self.clients if session.uri in client.subscriptions and not client.ahp1]:
            self._send(client, "action", envelope, urgent=urgent)
        if self.ahp1.active:
            self.ahp1.publish(session, action, origin)

    def _broadcast(self, method: str, params: Any) -> None:
        for client in [client for client in self.clients if client.client_id is not None and not client.ahp1]:
            self._send(client, method, params)

    def _send(self, client: Client, method: str, params: Any, *, urgent: bool = True) -> None:
        try:
            client.send(method, params, urgent=urgent)
        except ConnectionClosed:
            # Gone, stopped reading, or unable to take this: it alone is dropped, the others go on.
            self.clients.discard(client)

    # -- commands ------------------------------------------------------------------------

    async def _initialize(self, client: Client, params: Any) -> dict[str, Any]:
        checked = validate("initialize", shapes.InitializeParams, params)
        version = next((v for v in checked["protocolVersions"] if v == SEED_VERSION), None)
        if version is None and AHP1_VERSION in checked["protocolVersions"]:
            raise ServeError(INVALID_PARAMS, "invalid params: missing field `channel` (AHP 1.0 names ahp-root://)")
        if version is None:
            offered = ", ".join(checked["protocolVersions"])
            raise ServeError(
                UNSUPPORTED_PROTOCOL_VERSION,
                f"this server speaks protocol {', '.join(PROTOCOL_VERSIONS)}, not {offered}",
                {"supportedVersions": list(PROTOCOL_VERSIONS)},
            )
        client.client_id = checked["clientId"]
        wanted = checked.get("initialSubscriptions", [])
        client.subscriptions = {uri for uri in wanted if uri in self.sessions}
        self._capabilities(client, checked.get("capabilities", {}))
        client.hold()
        result: dict[str, Any] = {
            "protocolVersion": version,
            "serverSeq": self.log.server_seq,
            "snapshots": [self.sessions[uri].snapshot(self.log.server_seq) for uri in sorted(client.subscriptions)],
        }
        if self.options.default_directory is not None:
            result["defaultDirectory"] = self.options.default_directory.as_uri()
        return result

    async def _reconnect(self, client: Client, params: Any) -> dict[str, Any]:
        checked = validate("reconnect", shapes.ReconnectParams, params)
        client.client_id = checked["clientId"]
        wanted = list(dict.fromkeys(checked["subscriptions"]))
        live = {uri for uri in wanted if uri in self.sessions}
        missing = [uri for uri in wanted if uri not in live]
        client.subscriptions = live
        self._capabilities(client, checked.get("capabilities"))
        client.hold()
        missed = self.log.since(checked["lastSeenServerSeq"])
        if missed is None:
            return {
                "type": "snapshot",
                "snapshots": [self.sessions[uri].snapshot(self.log.server_seq) for uri in sorted(live)],
                "missing": missing,
            }
        actions = [envelope for envelope in missed if envelope["action"].get("session") in live]
        return {"type": "replay", "actions": actions, "missing": missing}

    async def _subscribe(self, client: Client, params: Any) -> dict[str, Any]:
        uri = validate("subscribe", shapes.SubscribeParams, params)["resource"]
        session = self.session(uri)
        if len(client.subscriptions) >= shapes.MAX_SUBSCRIPTIONS:
            raise ServeError(INVALID_PARAMS, f"subscribe: at most {shapes.MAX_SUBSCRIPTIONS} subscriptions per client")
        client.subscriptions.add(uri)
        self._sync_canvases(client)
        client.hold()
        return {"snapshot": session.snapshot(self.log.server_seq)}

    def _unsubscribe(self, client: Client, params: Any) -> None:
        resource = params.get("resource", params.get("channel")) if isinstance(params, dict) else None
        if isinstance(resource, str):
            client.subscriptions.discard(resource)
            self._sync_canvases(client)

    async def _create_session(self, client: Client, params: Any) -> None:
        checked = validate("createSession", shapes.CreateSessionParams, params)
        uri = checked["session"]
        if uri in self.sessions or uri in self._creating:
            raise ServeError(SESSION_ALREADY_EXISTS, f"a session {uri} exists already; choose another URI")
        if len(self.sessions) + len(self._creating) >= self.max_sessions:
            raise ServeError(
                INVALID_REQUEST,
                f"this server hosts at most {self.max_sessions} session{'s' if self.max_sessions != 1 else ''}; "
                "dispose of one first, or start the server with a higher --max-sessions (ServerOptions.max_sessions)",
            )
        directory = self._working_directory(checked.get("workingDirectory"))
        provider = checked.get("provider", self.options.provider)
        model = checked.get("model")
        model_id = model["id"] if isinstance(model, dict) else model
        argument = self.options.provider_argument if provider == self.options.provider else None
        agent = make_agent(provider, ProviderOptions(argument, model_id))
        try:
            agents = agents_from_wire(checked.get("customAgents"), "client")
        except ValueError as exc:
            raise ServeError(INVALID_PARAMS, f"createSession {uri}: {exc}") from None
        fork = checked.get("fork")
        source = self.session(fork["session"]) if fork is not None else None
        self._creating.add(uri)
        try:
            forked = await fork_session(source, fork["turnId"]) if source is not None and fork is not None else None
            try:
                session = ServedSession(
                    uri,
                    directory,
                    provider,
                    agent,
                    model_id,
                    self._hosts,
                    self.publish,
                    resume=forked,
                    contents=self.content.contents,
                    peers=lambda: [served.host for served in self.sessions.values()],
                    custom_agents=agents,
                )
            except ExtensionHostError as exc:
                raise ServeError(INVALID_PARAMS, f"createSession {uri}: {exc}") from None
            if source is not None:
                session.turn_ids.update(source.turn_ids)  # the fork's turns keep the source's client ids
            try:
                await session.start()
            except BaseException as exc:
                # What started before the failure is stopped again.
                await asyncio.shield(session.stop())
                self._collector.failed()
                if isinstance(exc, ExtensionHostError):
                    raise ServeError(INVALID_PARAMS, f"createSession {uri}: {exc}") from None
                raise
            self.sessions[uri] = session
            self.content.session_added(uri, directory)
            self._collector.started()
        finally:
            self._creating.discard(uri)
        self._broadcast("notify/sessionAdded", {"summary": session.summary()})
        self.ahp1.session_added(session)

    async def _dispose_session(self, client: Client, params: Any) -> None:
        uri = validate("disposeSession", shapes.SessionParams, params)["session"]
        session = self.session(uri)
        del self.sessions[uri]
        self.content.session_removed(uri)
        for other in self.clients:
            other.subscriptions.discard(uri)
            self._sync_canvases(other)
        await session.stop()
        del session  # nothing holds it now: its cycles are garbage
        self._collector.stopped()
        self._broadcast("notify/sessionRemoved", {"session": uri})
        self.ahp1.session_removed(uri)

    async def _list_sessions(self, client: Client, params: Any) -> dict[str, Any]:
        return {"items": [session.summary() for session in self.sessions.values()]}

    async def _fetch_turns(self, client: Client, params: Any) -> dict[str, Any]:
        checked = validate("fetchTurns", shapes.FetchTurnsParams, params)
        session = self.session(checked["session"])
        limit = min(checked.get("limit", DEFAULT_FETCH_TURNS), MAX_FETCH_TURNS)
        return fetch_turns(session, checked.get("before"), limit)

    # -- client actions ------------------------------------------------------------------

    async def _dispatch_request(self, client: Client, params: Any) -> None:
        dispatch(self, client, params)

    def _dispatch_notification(self, client: Client, params: Any) -> None:
        if client.client_id is None:
            return  # before initialize: nobody to tell, nothing to do
        if client.ahp1:
            self.ahp1.dispatch_notification(client, params)
            return
        try:
            dispatch(self, client, params)
        except ServeError as exc:
            # A notification has no answer: the server's log says why it was dropped.
            print(f"extensions serve: dropped an action of client {client.client_id}: {exc}", file=sys.stderr)

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` in the background; the server waits for it when it closes, and reports
        its failure on stderr."""
        self._work.spawn(work)

    # -- helpers -------------------------------------------------------------------------

    def session(self, uri: str) -> ServedSession:
        """The session ``uri``.

        Raises:
            ServeError: ``SESSION_NOT_FOUND``, naming it.
        """
        session = self.sessions.get(uri)
        if session is None:
            raise ServeError(SESSION_NOT_FOUND, f"no session {uri} on this server; create it with createSession")
        return session

    def provider_name(self) -> str:
        """The provider of a session created without naming one."""
        return self.options.provider

    def default_directory_uri(self) -> str | None:
        """The working directory of a session created without one, as a ``file:`` URI."""
        directory = self.options.default_directory
        return directory.as_uri() if directory is not None else None

    def _working_directory(self, uri: str | None) -> Path:
        if uri is None:
            if self.options.default_directory is None:
                raise ServeError(INVALID_PARAMS, "createSession: give a workingDirectory (a file: URI)")
            return self.options.default_directory
        parsed = urlparse(uri)
        if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
            raise ServeError(INVALID_PARAMS, f"createSession: workingDirectory must be a file: URI, not {uri}")
        path = Path(unquote(parsed.path))
        if not path.is_dir():
            raise ServeError(INVALID_PARAMS, f"createSession: working directory {path} is not a folder")
        return path

    def _canvases_of(self, uri: str) -> Canvases:
        return self.session(uri).host.canvases

    def _capabilities(self, client: Client, capabilities: Mapping[str, Any] | None) -> None:
        """``client`` (its id known) shows canvases as ``capabilities`` say, or, when it says
        nothing (a ``reconnect`` without them), as its id said last; counted where it is
        subscribed."""
        assert client.client_id is not None
        remembered = self._shows_canvases
        if capabilities is None:
            client.shows_canvases = remembered.get(client.client_id, False)
        else:
            client.shows_canvases = bool(capabilities.get("canvases"))
        remembered[client.client_id] = client.shows_canvases
        remembered.move_to_end(client.client_id)
        while len(remembered) > MAX_REMEMBERED_CLIENTS:
            remembered.popitem(last=False)
        self._sync_canvases(client)

    def _sync_canvases(self, client: Client) -> None:
        """Count ``client`` as showing canvases in the sessions it is subscribed to, if it shows them."""
        if client.shows_canvases or client.canvas_views:
            client.sync_canvases(
                lambda uri: self.sessions[uri].host.canvases.attach_client() if uri in self.sessions else None
            )

    def _report(self, _task: Any, error: BaseException) -> None:
        print(f"extensions serve: {type(error).__name__}: {error}", file=sys.stderr)


def _shared_fork_server(home: Path | None) -> ForkServer | None:
    if not fork_server_wanted():
        return None
    home = user_home(home)
    log = private_folder(logs_dir(home), within=home) / "serve-fork-server.log"
    rotate_log(log)  # the server appends to it for its whole life
    return ForkServer(sdk_environment(scrub(dict(os.environ))), log)
