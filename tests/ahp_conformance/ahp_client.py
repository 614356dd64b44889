"""The client script, one list of steps run the same way against either server, recording every
message each way.

:data:`STEPS` is the script: ``initialize`` (the 1.0 form: ``channel: ahp-root://``, offering
``1.0.0``, subscribing to the root), ``authenticate`` (for each protected resource the root state
says is required: a real client authenticates before it asks for a session; a server that
advertises none gets nothing), ``sessions`` (list, create one at a URI the client picks, list
again), ``subscribe`` (the session, then its default chat), ``turn`` (a prompt whose scripted
model calls ``probe_echo`` and then answers; a tool call waiting for confirmation is approved),
``cancel`` (a second prompt, cancelled while the model holds its answer: :class:`Gate`) and
``reconnect`` (a new connection asking, with the client's id and the last sequence number it saw
before ``cancel``, for what it missed on its three channels).

Every message is a :class:`Record` of the step it belongs to, decided by what it is, not by
when it came: an action about a turn belongs to the step that started the turn (``turn-1`` to
``turn``, ``turn-2`` to ``cancel``), whenever it arrives; anything else to the step running
when it arrives. Each step waits for the messages that end it (an answer; for a turn, its end
and then the session list's news that the session is idle again; for ``sessions``, the new
session's summary change), then drains only what is already in flight (quiet for
:data:`QUIET` seconds, at most :data:`DRAIN` seconds), so a loaded machine delays a step but
does not move a message into the next one. Every wait is bounded; a wait that runs out is
recorded (``timeout``), not raised, so a server that never answers shows as a difference,
with everything before it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final

import websockets
from websockets.asyncio.client import ClientConnection

from ahp_conformance.ahp_fakes import seal

__all__ = ["CLIENT_ID", "PROMPTS", "QUIET", "STEPS", "TURN_STEPS", "Gate", "Record", "Script", "run_script"]

ROOT: Final = "ahp-root://"
VERSION: Final = "1.0.0"
CLIENT_ID: Final = "ahp-differential-client"
PROMPTS: Final = ("please echo hi", "say something slowly")
STEPS: Final = ("initialize", "authenticate", "sessions", "subscribe", "turn", "cancel", "reconnect")
QUIET: Final = 0.3
"""Seconds without a message that end a step's drain (after the messages that end it came)."""
DRAIN: Final = 3.0
"""Seconds a step's drain lasts at most."""
TURN_STEPS: Final = {"turn-1": "turn", "turn-2": "cancel"}
"""The step each of the script's turns belongs to: an action about it is recorded there."""
ENDING_TIMEOUT: Final = 10.0
"""Seconds a step waits for a message that follows its end (a summary change, news of agents)."""
STEP_TIMEOUT: Final = 90.0
REQUEST_TIMEOUT: Final = 30.0
_FINISHED: Final = frozenset({"chat/turnComplete", "chat/turnCancelled", "chat/error"})
FAKE_GITHUB_TOKEN: Final = "gho_fake0123456789abcdef0123456789abcd"
"""What the client authenticates with (sealed): only the fake GitHub ever sees it."""


@dataclass(frozen=True)
class Record:
    """One message: the step it belongs to, ``sent`` or ``received``, the connection (1, 2)
    and, for a request or its answer, the label the script gave the request."""

    step: str
    direction: str
    connection: int
    message: dict[str, Any]
    label: str | None = None


class Gate:
    """Holds the model's answer of the cancelled turn: the model server calls :meth:`hold`
    (its ``before``), which says it has the request and waits, bounded, for :meth:`release`."""

    def __init__(self, timeout: float = 60.0) -> None:
        self.entered = threading.Event()
        self.released = threading.Event()
        self.timeout = timeout

    def hold(self) -> None:
        self.entered.set()
        self.released.wait(self.timeout)

    def release(self) -> None:
        self.released.set()


@dataclass
class _Connection:
    number: int
    socket: ClientConnection
    script: Script
    pending: dict[int, tuple[str, asyncio.Future[dict[str, Any]]]] = field(default_factory=dict)
    reader: asyncio.Task[None] | None = None

    async def read(self) -> None:
        with contextlib.suppress(websockets.ConnectionClosed):
            async for text in self.socket:
                message = json.loads(text)
                if not isinstance(message, dict):
                    continue
                label = None
                if "id" in message and ("result" in message or "error" in message):
                    label, future = self.pending.pop(message["id"], (None, None))
                    if future is not None and not future.done():
                        future.set_result(message)
                self.script.received(self.number, message, label)


class Script:
    """One run of :data:`STEPS` against the server at ``url`` (see the module's doc)."""

    def __init__(self, url: str, project_uri: str, gate: Gate) -> None:
        self.url = url
        self.project_uri = project_uri
        self.gate = gate
        self.records: list[Record] = []
        self.step = STEPS[0]
        self.last_seq = 0
        self._ids = 0
        self._client_seq = 0
        self._changed = asyncio.Event()
        self.connection: _Connection | None = None

    # -- recording

    def received(self, number: int, message: dict[str, Any], label: str | None) -> None:
        self.records.append(Record(self.step_of(message), "received", number, message, label))
        params = message.get("params")
        if isinstance(params, dict) and isinstance(params.get("serverSeq"), int):
            self.last_seq = max(self.last_seq, params["serverSeq"])
        self._changed.set()

    def step_of(self, message: dict[str, Any]) -> str:
        """The step ``message`` belongs to: its turn's for an action about one of the script's
        turns, else the step running now."""
        params = message.get("params")
        action = params.get("action") if isinstance(params, dict) else None
        turn = action.get("turnId") if isinstance(action, dict) else None
        return TURN_STEPS.get(turn, self.step) if isinstance(turn, str) else self.step

    def note(self, said: str, **detail: Any) -> None:
        """A client-side happening worth comparing (a wait that ran out)."""
        self.records.append(Record(self.step, "client", 0, {"note": said, **detail}))

    # -- the wire

    async def connect(self) -> _Connection:
        socket = await asyncio.wait_for(websockets.connect(self.url, max_size=2**24), REQUEST_TIMEOUT)
        number = 1 if self.connection is None else self.connection.number + 1
        self.connection = _Connection(number, socket, self)
        self.connection.reader = asyncio.ensure_future(self.connection.read())
        return self.connection

    async def close(self) -> None:
        if self.connection is not None:
            await self.connection.socket.close()
            if self.connection.reader is not None:
                await asyncio.wait_for(self.connection.reader, REQUEST_TIMEOUT)

    async def request(self, label: str, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        """Send a request; its answer (``None`` when none came in time, noted)."""
        assert self.connection is not None
        self._ids += 1
        message = {"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params}
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.connection.pending[self._ids] = (label, future)
        self.records.append(Record(self.step, "sent", self.connection.number, message, label))
        await self.connection.socket.send(json.dumps(message))
        try:
            return await asyncio.wait_for(future, REQUEST_TIMEOUT)
        except TimeoutError:
            self.note("no answer", request=label)
            return None

    async def dispatch(self, channel: str, action: dict[str, Any]) -> None:
        assert self.connection is not None
        self._client_seq += 1
        params = {"channel": channel, "clientSeq": self._client_seq, "action": action}
        message = {"jsonrpc": "2.0", "method": "dispatchAction", "params": params}
        self.records.append(Record(self.step, "sent", self.connection.number, message, action.get("type")))
        await self.connection.socket.send(json.dumps(message))

    async def until(
        self, found: Callable[[Record], bool], what: str, timeout: float = STEP_TIMEOUT, noted: bool = True
    ) -> Record | None:
        """The first record of this step that ``found`` accepts, waiting for it (bounded); a wait
        that runs out is noted unless ``noted`` is false."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        seen = 0
        while True:
            for record in self.records[seen:]:
                if record.step == self.step and record.direction == "received" and found(record):
                    return record
            seen = len(self.records)
            self._changed.clear()
            left = deadline - loop.time()
            if left <= 0:
                if noted:
                    self.note("waited in vain", what=what)
                return None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), left)

    async def drain(self) -> None:
        """Take what is already in flight: wait until the server has been quiet for
        :data:`QUIET` seconds, at most :data:`DRAIN` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + DRAIN
        while loop.time() < deadline:
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), min(QUIET, max(0.0, deadline - loop.time())))
            except TimeoutError:
                return

    async def idle_after(self, ended: Record, what: str) -> None:
        """Wait (bounded, not noted) for the session list's news, after ``ended``, that the
        session is idle again: a ``root/sessionSummaryChanged`` with status 1."""
        after = self.records.index(ended)

        def idle(record: Record) -> bool:
            changes = (record.message.get("params") or {}).get("changes") or {}
            return (
                record.message.get("method") == "root/sessionSummaryChanged"
                and changes.get("status") == 1
                and self.records.index(record) > after
            )

        await self.until(idle, what, ENDING_TIMEOUT, noted=False)

    # -- the steps

    async def run(self) -> list[Record]:
        state: dict[str, Any] = {}
        await self.connect()
        try:
            for step, body in zip(STEPS, self._bodies(), strict=True):
                self.step = step
                if not await body(state):
                    self.note("script stopped", step=step)
                    break
                await self.drain()
        finally:
            self.gate.release()
            await self.close()
        return self.records

    def _bodies(self) -> tuple[Callable[[dict[str, Any]], Awaitable[bool]], ...]:
        return (
            self._initialize,
            self._authenticate,
            self._sessions,
            self._subscribe,
            self._turn,
            self._cancel,
            self._reconnect,
        )

    async def _initialize(self, state: dict[str, Any]) -> bool:
        params = {"channel": ROOT, "protocolVersions": [VERSION], "clientId": CLIENT_ID, "initialSubscriptions": [ROOT]}
        answer = await self.request("initialize", "initialize", params)
        state["initialized"] = (answer or {}).get("result")
        return isinstance(state["initialized"], dict)

    async def _authenticate(self, state: dict[str, Any]) -> bool:
        initialized = state["initialized"]
        root = next((s.get("state") for s in initialized.get("snapshots") or [] if s.get("resource") == ROOT), None)
        if not isinstance(root, dict):
            return True
        for agent in root.get("agents") or []:
            for protected in agent.get("protectedResources") or []:
                if protected.get("required"):
                    resource = str(protected["resource"])
                    token = seal(initialized, root, resource, FAKE_GITHUB_TOKEN)
                    params = {"channel": ROOT, "resource": resource, "token": token}
                    await self.request("authenticate", "authenticate", params)
                    agents = "root/agentsChanged after authenticate"
                    await self.until(self._action("root/agentsChanged"), agents, ENDING_TIMEOUT, noted=False)
        return True

    async def _sessions(self, state: dict[str, Any]) -> bool:
        await self.request("listSessions (none yet)", "listSessions", {"channel": ROOT})
        session = f"ahp-session:/{uuid.uuid4()}"
        params = {"channel": session, "workingDirectories": [self.project_uri]}
        created = await self.request("createSession", "createSession", params)
        await self.until(lambda r: r.message.get("method") == "root/sessionAdded", "root/sessionAdded", ENDING_TIMEOUT)
        summary = "root/sessionSummaryChanged of the new session"
        await self.until(
            lambda r: r.message.get("method") == "root/sessionSummaryChanged", summary, ENDING_TIMEOUT, noted=False
        )
        await self.request("listSessions (one)", "listSessions", {"channel": ROOT})
        state["session"] = session
        return created is not None and "result" in created

    async def _subscribe(self, state: dict[str, Any]) -> bool:
        answer = await self.request("subscribe (session)", "subscribe", {"channel": state["session"]})
        snapshot = ((answer or {}).get("result") or {}).get("snapshot") or {}
        chat = (snapshot.get("state") or {}).get("defaultChat")
        if not isinstance(chat, str):
            return False
        state["chat"] = chat
        await self.request("subscribe (chat)", "subscribe", {"channel": chat})
        return True

    def _started(self, turn: str, text: str) -> dict[str, Any]:
        message = {"text": text, "origin": {"kind": "user"}}
        return {"type": "chat/turnStarted", "turnId": turn, "startedAt": "2026-01-01T00:00:00.000Z", "message": message}

    @staticmethod
    def _action(kind: str) -> Callable[[Record], bool]:
        def found(record: Record) -> bool:
            action = (record.message.get("params") or {}).get("action") or {}
            return bool(record.message.get("method") == "action" and action.get("type") == kind)

        return found

    def _finished(self, turn: str) -> Callable[[Record], bool]:
        def found(record: Record) -> bool:
            action = (record.message.get("params") or {}).get("action") or {}
            return action.get("type") in _FINISHED and action.get("turnId") == turn

        return found

    async def _turn(self, state: dict[str, Any]) -> bool:
        chat = state["chat"]
        await self.dispatch(chat, self._started("turn-1", PROMPTS[0]))
        confirmed: set[str] = set()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STEP_TIMEOUT
        while loop.time() < deadline:
            for record in list(self.records):
                action = (record.message.get("params") or {}).get("action") or {}
                call = str(action.get("toolCallId"))
                if action.get("type") == "chat/toolCallReady" and not action.get("confirmed") and call not in confirmed:
                    confirmed.add(call)
                    approve = {"type": "chat/toolCallConfirmed", "turnId": "turn-1", "toolCallId": call}
                    await self.dispatch(chat, {**approve, "approved": True, "confirmed": "user-action"})
            ended = await self.until(self._finished("turn-1"), "the end of turn-1", 1.0, noted=False)
            if ended is not None:
                await self.idle_after(ended, "the session idle after turn-1")
                state["last_seq"] = self.last_seq
                return True
        self.note("waited in vain", what="the end of turn-1")
        state["last_seq"] = self.last_seq
        return False

    async def _cancel(self, state: dict[str, Any]) -> bool:
        chat = state["chat"]
        await self.dispatch(chat, self._started("turn-2", PROMPTS[1]))
        if not await asyncio.to_thread(self.gate.entered.wait, STEP_TIMEOUT):
            self.note("waited in vain", what="the model's request of turn-2")
            return False
        await self.dispatch(chat, {"type": "chat/turnCancelled", "turnId": "turn-2", "duration": 0})
        ended = await self.until(self._finished("turn-2"), "the end of turn-2")
        self.gate.release()
        if ended is None:
            return False
        await self.idle_after(ended, "the session idle after turn-2")
        return True

    async def _reconnect(self, state: dict[str, Any]) -> bool:
        await self.close()
        await self.connect()
        params = {
            "channel": ROOT,
            "clientId": CLIENT_ID,
            "lastSeenServerSeq": state["last_seq"],
            "subscriptions": [ROOT, state["session"], state["chat"]],
        }
        return await self.request("reconnect", "reconnect", params) is not None


async def run_script(url: str, project_uri: str, gate: Gate, timeout: float = 400) -> list[Record]:
    """Run :data:`STEPS` against ``url``; every record (bounded by ``timeout`` in all)."""
    script = Script(url, project_uri, gate)
    try:
        return await asyncio.wait_for(script.run(), timeout)
    except TimeoutError:
        script.note("the script ran out of time")
        return script.records
