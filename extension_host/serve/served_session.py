"""The sessions one server hosts: each an :class:`~extension_host.host.ExtensionHost` of its own.

A :class:`ServedSession` is one client-named session (its URI, e.g. ``copilot:/<uuid>``): a host
in its working directory, with its own extension processes and persisted session, the agent its
provider made, and the protocol state clients see (folded from its actions by
:func:`~extension_host.serve.state.reduce`, a run of deltas at a time:
:class:`~extension_host.serve.delta_runs.DeltaFold`). Its host's events go through its
:class:`~extension_host.serve.actions.EventMapper` to ``publish``, the server's, which numbers
them and sends them to the session's subscribers. All sessions share one fork server.

:func:`fetch_turns` rebuilds a session's finished turns from its persisted events, for
``fetchTurns``. This module knows hosts and the state of sessions; not clients or transports.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from extension_protocol.protocol import INVALID_PARAMS, Event

from ..control.service import ControlServer
from ..errors import ExtensionHostError
from ..host import ExtensionHost
from ..launch.forkserver import ForkServer
from ..runtime.options import DEFAULT_READINESS_TIMEOUT, Timeouts
from ..session.agents import Agent
from ..session.custom_agents import CustomAgent
from ..session.store import SessionStore
from .actions import EventMapper
from .canvas_routes import describe_canvas
from .contents import ContentStore
from .control_socket import claim_control_socket
from .delta_runs import DeltaFold
from .errors import ServeError
from .state import initial_state, now_ms, reduce

__all__ = [
    "MAX_FETCH_TURNS",
    "MAX_SNAPSHOT_TURNS",
    "HostOptions",
    "ServedSession",
    "fetch_turns",
    "fork_session",
]

MAX_SNAPSHOT_TURNS: Final = 50
"""Finished turns a session's snapshot holds; older ones are had with ``fetchTurns``."""
MAX_FETCH_TURNS: Final = 200
"""Turns one ``fetchTurns`` answer holds at most, whatever ``limit`` asks."""
_MAX_TURN_IDS: Final = 10_000
"""Client turn ids remembered per session (for ``fetchTurns``; older turns keep their message id)."""

Publish = Callable[["ServedSession", dict[str, Any], "dict[str, Any] | None"], None]
"""The server's: number an action of a session and send it to the session's subscribers."""


@dataclass(frozen=True)
class HostOptions:
    """How a served session's host is made (the server's options, the same for every session)."""

    user_home: Path | None = None
    readiness_timeout: float = DEFAULT_READINESS_TIMEOUT
    watch: bool = False
    fork_server: ForkServer | bool = True


class ServedSession:
    """One session of the server: its host, agent, protocol state and event mapping."""

    def __init__(
        self,
        uri: str,
        working_directory: Path,
        provider: str,
        agent: Agent,
        model: str | None,
        options: HostOptions,
        publish: Publish,
        *,
        resume: str | None = None,
        contents: ContentStore | None = None,
        peers: Callable[[], Iterable[ExtensionHost]] = tuple,
        custom_agents: Iterable[CustomAgent] = (),
    ) -> None:
        """``peers()``: the hosts of the server's other sessions; those in this session's
        project hear of a decision recorded while they run through its control socket, if it
        holds one."""
        self.uri: Final = uri
        self.working_directory: Final = working_directory
        self.provider: Final = provider
        self.agent: Final = agent
        self.host: Final = ExtensionHost(
            working_directory,
            options.user_home,
            agent=agent,
            timeouts=Timeouts(readiness=options.readiness_timeout),
            watch=options.watch,
            fork_server=options.fork_server,
            permission_clients=True,
            session=resume,
            custom_agents=custom_agents,
        )
        state = initial_state(uri, provider, model=model, now=now_ms())
        state["summary"]["workingDirectory"] = working_directory.as_uri()
        self._fold: Final = DeltaFold(state, _reduce, "session/delta")
        self.mapper: Final = EventMapper(uri, contents, describe_canvas(self.host.canvases))
        self.turn_ids: OrderedDict[str, str] = OrderedDict()
        """Message id → the turn id a client gave it (for :func:`fetch_turns`)."""
        self._publish = publish
        self._resumed = resume is not None
        self._unsubscribe: Callable[[], Any] | None = None
        self._control: ControlServer | None = None
        self._peers = peers

    @property
    def state(self) -> dict[str, Any]:
        """The session's protocol state (``SessionState``) after every action applied."""
        return self._fold.state

    @state.setter
    def state(self, state: dict[str, Any]) -> None:
        self._fold.state = state

    @property
    def session_id(self) -> str:
        """The host's persisted session id."""
        return self.host.session_id

    async def start(self) -> None:
        """Start the host and begin turning its events into actions; a resumed session's
        finished turns are in its state from the start."""
        await self.host.start()
        if self._resumed:
            self.state = {**self.state, "turns": fetch_turns(self, None, MAX_SNAPSHOT_TURNS)["turns"]}
        self._unsubscribe = self.host.on_event(self._on_event)
        # Hook commands in the project reach this session; a recorded decision, every session.
        self._control = await claim_control_socket(self.host, self._peers)

    async def stop(self) -> None:
        """Stop the host (its extensions, its session's log)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        control, self._control = self._control, None
        if control is not None:
            await control.close()
        await self.host.stop()

    def apply(self, action: dict[str, Any]) -> None:
        """Fold ``action`` into the state; finished turns beyond the snapshot's bound are dropped."""
        self._fold.apply(action)

    def claim_turn(self, message_id: str, turn_id: str, action: dict[str, Any], origin: dict[str, Any]) -> None:
        """The prompt ``message_id`` runs as the client's turn ``turn_id``, started by ``action``."""
        self.mapper.claim_turn(message_id, turn_id, action, origin)
        self.turn_ids[message_id] = turn_id
        while len(self.turn_ids) > _MAX_TURN_IDS:
            self.turn_ids.popitem(last=False)

    def summary(self) -> dict[str, Any]:
        """The session's ``SessionSummary``."""
        return dict(self.state["summary"])

    def snapshot(self, server_seq: int) -> dict[str, Any]:
        """The session's snapshot as of ``server_seq``."""
        return {"resource": self.uri, "state": self.state, "fromSeq": server_seq}

    def _on_event(self, event: Event) -> None:
        for action, origin in self.mapper.map(event):
            self._publish(self, action, origin)


def _reduce(state: dict[str, Any], action: dict[str, Any]) -> dict[str, Any]:
    after = reduce(state, action)
    if len(after["turns"]) > MAX_SNAPSHOT_TURNS:
        after = {**after, "turns": after["turns"][-MAX_SNAPSHOT_TURNS:]}
    return after


async def fork_session(source: ServedSession, turn_id: str) -> str:
    """A new persisted session holding ``source``'s events up to and including the response of
    its turn ``turn_id`` (a client's turn id, or a message id); its id, to resume.

    Raises:
        ServeError: ``INVALID_PARAMS`` when the turn is unknown or has not ended.
    """
    message_id = next((message for message, turn in source.turn_ids.items() if turn == turn_id), turn_id)
    source.host.flush()  # what the source's file has queued counts
    store = SessionStore(source.host.user_home)
    try:
        return await asyncio.to_thread(store.fork, source.session_id, message_id)
    except ExtensionHostError as exc:
        raise ServeError(
            INVALID_PARAMS, f"createSession: cannot fork {source.uri} at turn {turn_id!r}: {exc}"
        ) from None


def fetch_turns(session: ServedSession, before: str | None, limit: int) -> dict[str, Any]:
    """``fetchTurns``: up to ``limit`` finished turns before turn ``before`` (the latest when
    ``None``), oldest first, from the session's persisted events.

    Raises:
        ServeError: ``before`` names no turn of the session.
    """
    mapper = EventMapper(session.uri, session.mapper.contents)
    for message_id, turn_id in session.turn_ids.items():
        mapper.claim_turn(message_id, turn_id)
    state = initial_state(session.uri, session.provider, now=0)
    active_now = session.state.get("activeTurn")
    # The turns ended so far, taken out of the state as each ends (the reducer only appends to
    # its turns): no turn's end copies the ones before it, so a long history replays in linear time.
    finished: list[dict[str, Any]] = []
    for event in session.host.replay():
        for action, _origin in mapper.map(event):
            state = reduce(state, action, now=lambda: 0)
            if state["turns"]:
                finished += state["turns"]
                state = {**state, "turns": []}
        if (
            event.get("type") == "user.message"
            and not event.get("agentId")
            and mapper.turn_id is not None
            and state.get("activeTurn") is None
        ):
            # A client's turn: its own turnStarted was the envelope, so it is rebuilt here.
            text = str(event.get("data", {}).get("content", ""))
            start = {"type": "session/turnStarted", "session": session.uri, "turnId": mapper.turn_id}
            state = reduce(state, {**start, "userMessage": {"text": text}}, now=lambda: 0)
    if mapper.turn_id is not None and (active_now is None or active_now.get("id") != mapper.turn_id):
        # Idle is not persisted: a turn still open at the end of the log has finished.
        state = reduce(
            state, {"type": "session/turnComplete", "session": session.uri, "turnId": mapper.turn_id}, now=lambda: 0
        )
    turns = finished + state["turns"]
    end = len(turns)
    if before is not None:
        index = next((number for number, turn in enumerate(turns) if turn["id"] == before), None)
        if index is None:
            raise ServeError(
                INVALID_PARAMS, f"session {session.uri} has no turn {before!r}; give a turn id it returned"
            )
        end = index
    start_at = max(0, end - limit)
    return {"turns": turns[start_at:end], "hasMore": start_at > 0}
