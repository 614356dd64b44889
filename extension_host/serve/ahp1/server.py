"""AHP 1.0's commands, channels and notifications, beside the seed protocol on one server.

A client speaks 1.0 when its first message (``initialize`` or ``reconnect``) names a
``channel``, as 1.0's do; the seed protocol's carry none. :class:`Ahp1` holds what 1.0 adds to
a :class:`~extension_host.serve.server.ProtocolServer`: its command table (:attr:`Ahp1.commands`),
a :class:`~extension_host.serve.ahp1.actions.ChatView` per served session, and its own action
sequence and replay buffer (1.0's ``serverSeq`` counts 1.0 envelopes ``{channel, serverSeq,
action, origin}``). The sessions underneath are the server's, shared with seed clients.

1.0 starts with the server's first 1.0 client (:attr:`Ahp1.active`): until one initializes (or
reconnects), the server keeps no 1.0 state and its actions cost 1.0 nothing but that flag's
check. Then each session's view is made from its seed state
(:mod:`extension_host.serve.ahp1.rebuild`), and 1.0 stays on for the server's life, so a 1.0
client coming back still gets its replay.

=======================  ==============================================================
command                  what it does
=======================  ==============================================================
``initialize``           picks ``1.0.0`` when the client offers a ``1.x.y`` (the highest it
                         offers, answered as offered) else fails with
                         ``UnsupportedProtocolVersion`` (``data.supportedVersions``)
``reconnect``            replays the 1.0 envelopes after ``lastSeenServerSeq`` of the
                         subscribed channels, or gives their snapshots
``ping``                 answers ``null`` (before ``initialize`` too)
``subscribe``            the snapshot of ``ahp-root://``, a session or a chat
``unsubscribe``          (notification) stops a channel
``dispatchAction``       (notification) ``chat/turnStarted``, ``chat/turnCancelled``,
                         ``chat/toolCallConfirmed`` on a chat's channel
``listSessions``         ``{items: [SessionSummary]}``
``createSession``        a session on ``channel`` (its first ``workingDirectories`` entry,
                         else the server's folder), announced by ``root/sessionAdded`` and
                         ``root/sessionSummaryChanged`` (its chats), as each later change
                         of its summary is
``disposeSession``       stops it, announced by ``root/sessionRemoved``
``createChat``,          refused: a session has one chat here (its agent advertises no
``disposeChat``          ``multipleChats``)
``fetchTurns``           loads a chat's turns before ``cursor`` (its state's
                         ``turnsNextCursor`` when none is given; nothing when it has none)
                         as ``chat/turnsLoaded`` to the chat's subscribers, then answers ``{}``
``authenticate``         refused: the server advertises no protected resource (the token
                         of ``serve --listen`` is the only credential)
=======================  ==============================================================

Of a session's host events it reads only a model call's usage (``assistant.usage``, for
``chat/usage``); a turn's start announces the session's offered tools when they changed. This
module knows 1.0's commands and who is subscribed to what channel; the seed protocol's
checks and effects do the work (:mod:`extension_host.serve.client_actions`).
"""

from __future__ import annotations

import sys
from collections.abc import Coroutine, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol

from extension_protocol.connection import ConnectionClosed, Framer
from extension_protocol.protocol import INVALID_PARAMS, METHOD_NOT_FOUND, METHOD_PING

from ...validation import validate
from ...version import __version__
from ..actions import ActionLog
from ..client_actions import dispatch
from ..clients import Client, CommandHandler
from ..errors import SESSION_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION, ServeError
from ..params import MAX_SUBSCRIPTIONS
from ..served_session import MAX_SNAPSHOT_TURNS, fetch_turns
from ..state import PROGRESS_ACTIONS as SEED_PROGRESS
from . import params as shapes
from .actions import ChatView, Shown, tool_definitions
from .params import ROOT
from .rebuild import Requests, requests_in, turns_of, view_of
from .turns import page, turn_of

if TYPE_CHECKING:
    from ..served_session import ServedSession

__all__ = ["AHP1_VERSION", "Ahp1", "Ahp1Server", "method_not_found", "negotiate", "speaks_ahp1"]

AHP1_VERSION: Final = "1.0.0"
"""The AHP 1.0 baseline: a client offering any ``1.x.y`` at or above it is served as 1.0."""
_PAGE: Final = MAX_SNAPSHOT_TURNS
"""Turns a ``fetchTurns`` without ``limit`` loads (before its cursor)."""


def speaks_ahp1(params: Any) -> bool:
    """Whether a first message's params are 1.0's: they name a ``channel``."""
    return isinstance(params, dict) and "channel" in params


class Ahp1Server(Protocol):
    """What 1.0 uses of the server (:class:`~extension_host.serve.server.ProtocolServer`)."""

    @property
    def sessions(self) -> Mapping[str, ServedSession]: ...

    @property
    def log(self) -> ActionLog: ...

    @property
    def clients(self) -> set[Client]: ...

    @property
    def commands(self) -> Mapping[str, CommandHandler]: ...

    def session(self, uri: str) -> ServedSession: ...

    def spawn(self, work: Coroutine[Any, Any, None]) -> None: ...

    def publish(self, session: ServedSession, action: dict[str, Any], origin: dict[str, Any] | None) -> None: ...

    def provider_name(self) -> str: ...

    def default_directory_uri(self) -> str | None: ...


class Ahp1:
    """AHP 1.0 on a server: see the module's docstring."""

    def __init__(self, server: Ahp1Server) -> None:
        self.server: Final = server
        self.active = False
        """A 1.0 client has initialized on this server: 1.0 keeps views of its sessions from then on."""
        self.log: Final = ActionLog()
        """1.0's sequence and replay buffer."""
        self.views: dict[str, ChatView] = {}
        """Each served session's 1.0 view, by session URI."""
        self.chats: dict[str, ChatView] = {}
        """The same views, by chat URI."""
        self.commands: Final[dict[str, CommandHandler]] = {
            "initialize": self._initialize,
            "reconnect": self._reconnect,
            METHOD_PING: self._ping,
            "subscribe": self._subscribe,
            "dispatchAction": self._dispatch_request,
            "listSessions": self._list_sessions,
            "createSession": self._create_session,
            "disposeSession": self._dispose_session,
            "createChat": self._one_chat,
            "disposeChat": self._one_chat,
            "fetchTurns": self._fetch_turns,
            "authenticate": self._authenticate,
        }
        """Every 1.0 command, by method name: the one place one is added."""

    # -- the server's hooks ----------------------------------------------------------------

    def start(self) -> None:
        """Begin 1.0 (once): a view of each session, made from its seed state."""
        if self.active:
            return
        self.active = True
        requests = requests_in(self.server.log.kept())
        for session in self.server.sessions.values():
            self._add(session, requests)

    def session_added(self, session: ServedSession) -> None:
        """Show a new served session to 1.0 clients, once 1.0 has started (``root/sessionAdded``,
        then its chat catalogue in ``root/sessionSummaryChanged``, as ``copilot --ahp-host``
        announces one)."""
        if self.active:
            view = self._add(session, {})
            self._broadcast("root/sessionAdded", {"channel": ROOT, "summary": view.summary()})
            self._summary_changed(view, {"chats": view.catalog()})

    def _add(self, session: ServedSession, requests: Requests) -> ChatView:
        """A view of ``session`` made from its seed state, following its model calls' usage."""
        view = view_of(session.summary(), session.state, requests, keep=MAX_SNAPSHOT_TURNS)
        state = session.state
        if len(state["turns"]) >= MAX_SNAPSHOT_TURNS and _older_turns(session, state["turns"][0]["id"]):
            view.older_turns()
        if state["turns"] or state.get("activeTurn") is not None:  # a turn's start would have told its tools
            view.server_tools(tool_definitions(session.host.tools.values()))
            view.take_changes()
        self.views[session.uri] = view
        self.chats[view.chat] = view
        # Held by the host's event bus only (never here), so a disposed session's host is freed at once.
        session.host.on_event(lambda event: self._on_event(view, event))
        return view

    def session_removed(self, uri: str) -> None:
        """A served session is gone: its channels end for every 1.0 client."""
        view = self.views.pop(uri, None)
        if view is None:
            return
        self.chats.pop(view.chat, None)
        for client in self.server.clients:
            client.subscriptions.discard(view.chat)
        self._broadcast("root/sessionRemoved", {"channel": ROOT, "session": uri})

    def publish(self, session: ServedSession, action: dict[str, Any], origin: dict[str, Any] | None) -> None:
        """Send the 1.0 actions of a seed action of ``session`` to the subscribers of their
        channels (the server calls it once 1.0 has started); a turn's start announces the
        session's tools when they changed (while any 1.0 client is connected: none, none is
        told, and the next turn's start after one connects tells)."""
        view = self.views.get(session.uri)
        if view is None:
            return
        shown = view.translate(action)
        if action["type"] == "session/turnStarted" and any(client.ahp1 for client in self.server.clients):
            shown += view.server_tools(tool_definitions(session.host.tools.values()))
        self._show(view, shown, origin, urgent=action["type"] not in SEED_PROGRESS)

    def dispatch_notification(self, client: Client, params: Any) -> None:
        """A 1.0 client's ``dispatchAction`` notification; what is refused is said on stderr."""
        try:
            self._dispatch(client, params)
        except ServeError as exc:
            print(f"extensions serve: dropped an action of client {client.client_id}: {exc}", file=sys.stderr)

    # -- commands --------------------------------------------------------------------------

    async def _initialize(self, client: Client, params: Any) -> dict[str, Any]:
        checked = validate("initialize", shapes.InitializeParams, params)
        version = negotiate(checked["protocolVersions"])
        if version is None:
            offered = ", ".join(checked["protocolVersions"])
            raise ServeError(
                UNSUPPORTED_PROTOCOL_VERSION,
                f"this server speaks AHP {AHP1_VERSION} with channels (and 0.1.0 without), not {offered}",
                {"supportedVersions": [AHP1_VERSION]},
            )
        client.client_id = checked["clientId"]
        client.ahp1 = True
        self.start()
        client.subscriptions = {channel for channel in checked.get("initialSubscriptions", []) if self._known(channel)}
        client.hold()
        result: dict[str, Any] = {
            "protocolVersion": version,
            "serverSeq": self.log.server_seq,
            "serverInfo": {"name": "extension-host", "version": __version__},
            "snapshots": [self._snapshot(channel) for channel in sorted(client.subscriptions)],
        }
        directory = self.server.default_directory_uri()
        if directory is not None:
            result["defaultDirectory"] = directory
        return result

    async def _reconnect(self, client: Client, params: Any) -> dict[str, Any]:
        checked = validate("reconnect", shapes.ReconnectParams, params)
        client.client_id = checked["clientId"]
        client.ahp1 = True
        self.start()
        wanted = list(dict.fromkeys(checked["subscriptions"]))
        live = {channel for channel in wanted if self._known(channel)}
        missing = [channel for channel in wanted if channel not in live]
        client.subscriptions = live
        client.hold()
        missed = self.log.since(checked["lastSeenServerSeq"])
        if missed is None:
            snapshots = [self._snapshot(channel) for channel in sorted(live)]
            return {"type": "snapshot", "snapshots": snapshots, "missing": missing}
        actions = [envelope for envelope in missed if envelope["channel"] in live]
        return {"type": "replay", "actions": actions, "missing": missing}

    async def _ping(self, client: Client, params: Any) -> None:
        return None

    async def _subscribe(self, client: Client, params: Any) -> dict[str, Any]:
        channel = validate("subscribe", shapes.ChannelParams, params)["channel"]
        if not self._known(channel):
            raise ServeError(SESSION_NOT_FOUND, f"no channel {channel} on this server; see listSessions")
        if channel not in client.subscriptions and len(client.subscriptions) >= MAX_SUBSCRIPTIONS:
            raise ServeError(INVALID_PARAMS, f"subscribe: at most {MAX_SUBSCRIPTIONS} subscriptions per client")
        client.subscriptions.add(channel)
        client.hold()
        return {"snapshot": self._snapshot(channel)}

    async def _dispatch_request(self, client: Client, params: Any) -> None:
        self._dispatch(client, params)

    async def _list_sessions(self, client: Client, params: Any) -> dict[str, Any]:
        return {"items": [view.summary() for view in self.views.values()]}

    async def _create_session(self, client: Client, params: Any) -> None:
        checked = validate("createSession", shapes.CreateSessionParams, params)
        seed: dict[str, Any] = {"session": checked["channel"]}
        if "provider" in checked:
            seed["provider"] = checked["provider"]
        directories = checked.get("workingDirectories")
        if directories:
            seed["workingDirectory"] = directories[0]
        elif self.server.default_directory_uri() is None:
            raise ServeError(INVALID_PARAMS, "createSession: give workingDirectories (file: URIs)")
        await self.server.commands["createSession"](client, seed)

    async def _dispose_session(self, client: Client, params: Any) -> None:
        channel = validate("disposeSession", shapes.ChannelParams, params)["channel"]
        await self.server.commands["disposeSession"](client, {"session": channel})

    async def _one_chat(self, client: Client, params: Any) -> None:
        validate("createChat", shapes.ChannelParams, params)
        raise ServeError(
            INVALID_PARAMS,
            "a session of this server has one chat, its defaultChat (the agent advertises no multipleChats)",
        )

    async def _fetch_turns(self, client: Client, params: Any) -> dict[str, Any]:
        """Load older turns into the chat (``chat/turnsLoaded``, to its subscribers) before
        answering ``{}``; with no cursor and none in the chat's state, nothing is older: no action."""
        checked = validate("fetchTurns", shapes.FetchTurnsParams, params)
        channel = checked["channel"]
        view = self.chats.get(channel)
        if view is None:
            raise ServeError(SESSION_NOT_FOUND, f"fetchTurns: no chat {channel} on this server; see listSessions")
        state = view.chat_state
        cursor = checked.get("cursor", state.get("turnsNextCursor"))
        if cursor is None:
            return {}
        before = turn_of(cursor)
        if before is None:
            raise _unknown_cursor(channel, cursor)
        history = fetch_turns(self.server.session(view.uri), None, sys.maxsize)["turns"]
        kept = [turn["id"] for turn in state["turns"]]
        try:
            found = page([turn["id"] for turn in history], kept, before, checked.get("limit", _PAGE))
        except KeyError:
            raise _unknown_cursor(channel, cursor) from None
        older = turns_of(view.uri, history[found.start : found.stop], requests_in(self.server.log.kept()))
        self._show(view, view.loaded(older, found.next_cursor), None, urgent=True)
        return {}

    async def _authenticate(self, client: Client, params: Any) -> None:
        resource = validate("authenticate", shapes.AuthenticateParams, params)["resource"]
        raise ServeError(
            INVALID_PARAMS,
            f"authenticate: this server advertises no protected resource ({resource} is not one); "
            "the token in its address is all it asks for",
        )

    # -- helpers ---------------------------------------------------------------------------

    def _dispatch(self, client: Client, params: Any) -> None:
        checked = validate("dispatchAction", shapes.DispatchParams, params)
        channel = checked["channel"]
        view = self.chats.get(channel) or self.views.get(channel)
        if view is None:
            raise ServeError(SESSION_NOT_FOUND, f"dispatchAction: no channel {channel} on this server")
        seed = view.to_seed(channel, checked["action"])
        dispatch(self.server, client, {"clientSeq": checked["clientSeq"], "action": seed})

    def _on_event(self, view: ChatView, event: Any) -> None:
        """A host event of ``view``'s session: a model call's usage (not a subagent's) becomes ``chat/usage``."""
        if event.get("type") == "assistant.usage" and not event.get("agentId") and self.views.get(view.uri) is view:
            self._show(view, view.usage(event.get("data")), None, urgent=False)  # chat/usage: progress

    def _show(self, view: ChatView, shown: Shown, origin: dict[str, Any] | None, *, urgent: bool) -> None:
        """Number each action, keep it for replay, send it to its channel's subscribers (the
        origin only on the client's own), then announce what changed in the session's summary.

        What one seed action makes reaches a client in one write, when that seed action would
        reach a seed client: at once when it is ``urgent``, else with the next write or within
        the progress delay (:data:`extension_host.serve.state.PROGRESS_ACTIONS`)."""
        made: list[tuple[str | None, str, dict[str, Any]]] = []
        """``(channel, method, params)``; channel ``None``: to every 1.0 client."""
        for channel, translated, own in shown:
            envelope = self.log.append(translated, origin if own else None)
            if envelope["origin"] is None:
                del envelope["origin"]  # a server's own action carries none
            envelope["channel"] = channel
            made.append((channel, "action", envelope))
        changes = view.take_changes()
        if changes:
            made.append((None, *_summary_changed(view, changes)))
        if made:
            self._send_all(made, urgent)

    def _send_all(self, made: list[tuple[str | None, str, dict[str, Any]]], urgent: bool) -> None:
        """Send each 1.0 client the messages of ``made`` on its channels, in one write: each
        message is encoded once for every client whose connection takes the same."""
        encoded: dict[tuple[Framer, int, int | None], list[bytes | None]] = {}
        for client in [client for client in self.server.clients if client.ahp1]:
            subscribed = client.subscriptions
            frames = encoded.setdefault(client.connection.outbound_encoding, [None] * len(made))
            chunk = []
            try:
                for number, (channel, method, params) in enumerate(made):
                    if channel is None or channel in subscribed:
                        frame = frames[number]
                        if frame is None:
                            frame = frames[number] = client.encode(method, params)
                        chunk.append(frame)
                if chunk:
                    client.send_encoded(b"".join(chunk), urgent=urgent)
            except ConnectionClosed:
                self.server.clients.discard(client)

    def _summary_changed(self, view: ChatView, changes: dict[str, Any]) -> None:
        self._broadcast(*_summary_changed(view, changes))

    def _known(self, channel: str) -> bool:
        return channel == ROOT or channel in self.views or channel in self.chats

    def _snapshot(self, channel: str) -> dict[str, Any]:
        view = self.chats.get(channel) or self.views.get(channel)
        state = view.state_of(channel) if view is not None else self._root()
        return {"resource": channel, "state": state, "fromSeq": self.log.server_seq}

    def _root(self) -> dict[str, Any]:
        provider = self.server.provider_name()
        agent = {
            "provider": provider,
            "displayName": provider,
            "description": "An agent hosted by extension-host, with the project's extensions",
            "models": [],
            "capabilities": {},
        }
        return {"agents": [agent]}

    def _broadcast(self, method: str, params: Any) -> None:
        for client in [client for client in self.server.clients if client.ahp1]:
            self._send(client, method, params)

    def _send(self, client: Client, method: str, params: Any) -> None:
        try:
            client.send(method, params)
        except ConnectionClosed:
            self.server.clients.discard(client)


def _unknown_cursor(channel: str, cursor: str) -> ServeError:
    return ServeError(
        INVALID_PARAMS,
        f"fetchTurns: {cursor[:80]!r} is no cursor of {channel}; give its state's turnsNextCursor "
        "(or none, for the turns before those it holds)",
    )


def _older_turns(session: ServedSession, oldest: str) -> bool:
    """Whether ``session`` has finished turns before its turn ``oldest`` (read from its history)."""
    try:
        return bool(fetch_turns(session, oldest, 1)["turns"])
    except ServeError:
        return False


def _summary_changed(view: ChatView, changes: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``root/sessionSummaryChanged`` of ``view``'s session: its method and params."""
    return "root/sessionSummaryChanged", {"channel": ROOT, "session": view.uri, "changes": changes}


def negotiate(offered: Iterable[str]) -> str | None:
    """The highest version offered that is 1.0's (a ``1.x.y`` at or above ``1.0.0``), or ``None``."""
    compatible = [version for version in offered if version.split(".")[0] == "1"]
    return max(compatible, key=lambda version: tuple(int(part) for part in version.split(".")), default=None)


def method_not_found(method: str) -> ServeError:
    """The error for a method the client's protocol version does not have."""
    return ServeError(METHOD_NOT_FOUND, f"no method {method} in this protocol version")
