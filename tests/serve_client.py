"""A client of ``extensions serve`` for the tests: a JSON-RPC connection that records what the
server sends unasked (action envelopes, session notifications) and waits on it, bounded."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import signal
import socket
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from extension_host.serve.served_session import HostOptions
from extension_host.serve.server import ProtocolServer, ServerOptions
from extension_protocol.connection import Connection

VERSION = "0.1.0"
AHP1 = "1.0.0"
AHP1_ROOT = "ahp-root://"
_SERVING: set[asyncio.Future[None]] = set()


class ServeClient:
    """One client: ``request`` commands, ``dispatch`` actions, ``wait_for`` what arrives."""

    def __init__(self, connection: Connection, client_id: str = "client-1") -> None:
        self.connection = connection
        self.client_id = client_id
        self.envelopes: list[dict[str, Any]] = []
        self.notifications: list[tuple[str, Any]] = []
        self._changed = asyncio.Event()
        self._seq = 0
        connection.on_notification("action", self._on_action)
        connection.on_notification(
            "notify/sessionAdded", lambda params: self._on_notification("notify/sessionAdded", params)
        )
        connection.on_notification(
            "notify/sessionRemoved", lambda params: self._on_notification("notify/sessionRemoved", params)
        )
        for method in ("root/sessionAdded", "root/sessionRemoved", "root/sessionSummaryChanged"):
            connection.on_notification(method, functools.partial(self._on_notification, method))
        self._serving = asyncio.ensure_future(self._serve())

    async def _serve(self) -> None:
        try:
            await connection_serve(self.connection)
        finally:
            self._changed.set()

    def _on_action(self, envelope: Any) -> None:
        self.envelopes.append(envelope)
        self._changed.set()

    def _on_notification(self, method: str, params: Any) -> None:
        self.notifications.append((method, params))
        self._changed.set()

    @property
    def closed(self) -> bool:
        return self._serving.done()

    async def request(self, method: str, params: Any = None, timeout: float = 60) -> Any:
        return await self.connection.request(method, params, timeout=timeout)

    async def initialize(self, subscriptions: list[str] | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"protocolVersions": [VERSION], "clientId": self.client_id}
        if subscriptions:
            params["initialSubscriptions"] = subscriptions
        result: dict[str, Any] = await self.request("initialize", params)
        return result

    async def initialize_ahp1(self, subscriptions: list[str] | None = None) -> dict[str, Any]:
        """``initialize`` as an AHP 1.0 client (naming the root channel)."""
        params: dict[str, Any] = {"channel": AHP1_ROOT, "protocolVersions": [AHP1], "clientId": self.client_id}
        if subscriptions:
            params["initialSubscriptions"] = subscriptions
        result: dict[str, Any] = await self.request("initialize", params)
        return result

    def dispatch_ahp1(self, channel: str, action: dict[str, Any]) -> int:
        """An AHP 1.0 ``dispatchAction`` of ``action`` on ``channel``; its ``clientSeq``."""
        self._seq += 1
        self.connection.notify("dispatchAction", {"channel": channel, "clientSeq": self._seq, "action": action})
        return self._seq

    def on_channel(self, channel: str, kind: str | None = None) -> list[dict[str, Any]]:
        """The AHP 1.0 actions received on ``channel`` (of type ``kind``), in order."""
        return [
            e["action"]
            for e in self.envelopes
            if e.get("channel") == channel and (kind is None or e["action"]["type"] == kind)
        ]

    async def create_session(self, uri: str, directory: Path, **extra: Any) -> None:
        await self.request("createSession", {"session": uri, "workingDirectory": directory.as_uri(), **extra})

    def dispatch(self, action: dict[str, Any]) -> int:
        self._seq += 1
        self.connection.notify("dispatchAction", {"clientSeq": self._seq, "action": action})
        return self._seq

    def start_turn(self, session: str, turn_id: str, text: str) -> int:
        return self.dispatch(
            {"type": "session/turnStarted", "session": session, "turnId": turn_id, "userMessage": {"text": text}}
        )

    def actions(self, kind: str | None = None) -> list[dict[str, Any]]:
        return [e["action"] for e in self.envelopes if kind is None or e["action"]["type"] == kind]

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 30) -> Any:
        """Wait until ``predicate()`` is truthy (checked whenever something arrives); its value."""
        async with asyncio.timeout(timeout):
            while True:
                value = predicate()
                if value:
                    return value
                if self.closed:
                    raise AssertionError("the connection ended while waiting")
                self._changed.clear()
                await self._changed.wait()

    async def wait_for_action(self, kind: str, timeout: float = 30, **fields: Any) -> dict[str, Any]:
        def found() -> dict[str, Any] | None:
            for action in self.actions(kind):
                if all(action.get(key) == value for key, value in fields.items()):
                    return action
            return None

        result: dict[str, Any] = await self.wait_for(found, timeout)
        return result

    async def wait_closed(self, timeout: float = 30) -> None:
        """Wait until the server has ended this connection (bounded)."""
        async with asyncio.timeout(timeout):
            await asyncio.gather(asyncio.shield(self._serving), return_exceptions=True)

    async def close(self) -> None:
        self.connection.close()
        await asyncio.gather(self._serving, return_exceptions=True)


class FakeSession:
    """Stands for a served session when a test publishes actions itself: it folds nothing."""

    uri = "copilot:/fake"

    def apply(self, action: dict[str, Any]) -> None:
        pass


async def connection_serve(connection: Connection) -> None:
    try:
        await connection.serve()
    except Exception:
        pass


async def connect_in_process(
    server: ProtocolServer, client_id: str = "client-1", *, server_side: Callable[[Any, Any], Connection] | None = None
) -> ServeClient:
    """A client of ``server`` over a socket pair in this process (the server's side served as a
    task, on the connection ``server_side(reader, writer)`` makes: by default the transports')."""
    ours, theirs = socket.socketpair()
    server_reader, server_writer = await asyncio.open_connection(sock=theirs)
    from extension_host.serve.transports import client_connection

    make = server_side if server_side is not None else client_connection
    serving = asyncio.ensure_future(server.serve_client(make(server_reader, server_writer)))
    _SERVING.add(serving)
    serving.add_done_callback(_SERVING.discard)
    reader, writer = await asyncio.open_connection(sock=ours)
    return ServeClient(Connection(reader, writer, max_message_bytes=128 * 1024 * 1024), client_id)


def write_script(path: Path, prompts: list[list[dict[str, Any]]]) -> Path:
    """An agent script for ``--agent scripted:FILE``."""
    path.write_text(json.dumps(prompts), encoding="utf-8")
    return path


def in_process_server(
    script: Path, home: Path, *, max_sessions: int | None = None, freeze_sessions: bool = False, **options: Any
) -> ProtocolServer:
    """A server of scripted sessions in this process; ``options`` are its hosts'."""
    return ProtocolServer(
        ServerOptions(
            provider="scripted",
            provider_argument=str(script),
            hosts=HostOptions(home, **options),
            max_sessions=max_sessions,
            freeze_sessions=freeze_sessions,
        )
    )


@contextlib.asynccontextmanager
async def stdio_server(
    command: list[str], cwd: Path | None = None, stderr: int | None = None
) -> AsyncIterator[ServeClient]:
    """A client of ``command`` (an ``extensions ... serve --stdio`` command line), started in a
    process group of its own (its stderr on the descriptor ``stderr``, else this process's); on
    the way out its stdin is closed (the server stops its sessions and exits), it is waited for
    (bounded), and killed with its group if it is still there."""
    process = await asyncio.create_subprocess_exec(
        *command,
        cwd=cwd,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        start_new_session=True,
    )
    assert process.stdin is not None and process.stdout is not None
    client = ServeClient(Connection(process.stdout, process.stdin))
    try:
        yield client
    finally:
        process.stdin.close()
        try:
            async with asyncio.timeout(30):
                await process.wait()
        finally:
            if process.returncode is None:
                os.killpg(process.pid, signal.SIGKILL)
                await process.wait()
            await client.close()


@contextlib.asynccontextmanager
async def on_websocket(server: ProtocolServer, token: str) -> AsyncIterator[str]:
    """``server`` on a WebSocket of 127.0.0.1 (a free port) wanting ``token``, for the block;
    its URL (``ws://127.0.0.1:PORT/?token=...``). The listener and the server are closed after."""
    from extension_host.serve.transports import serve_websocket

    stop = asyncio.Event()
    where: list[str] = []
    serving = asyncio.ensure_future(serve_websocket(server, "127.0.0.1", 0, token, where.append, stop))
    try:
        async with asyncio.timeout(30):
            while not where:
                if serving.done():
                    serving.result()  # it failed to listen: say why
                await asyncio.sleep(0.01)
        yield where[0]
    finally:
        stop.set()
        await asyncio.gather(serving, return_exceptions=True)
        await server.close()


COUNTER = """
    from sdk_extension import join_session, tool

    @tool(description="Count the words of a text")
    def count(text: str) -> str:
        return str(len(text.split()))

    join_session(tools=[count])
"""

ASKING_GUARD = """
    from sdk_extension import join_session

    def guard(input, invocation):
        if input.tool_name == "count":
            return {"permission_decision": "ask", "permission_decision_reason": "it counts"}

    join_session(hooks={"on_pre_tool_use": guard})
"""

COUNT_THEN_ANSWER: list[list[dict[str, Any]]] = [
    [
        {"text": "Let me count.", "toolCalls": [{"name": "count", "arguments": {"text": "one two three"}}]},
        {"text": "Three words."},
    ]
]


_TIMESTAMPS = frozenset({"createdAt", "modifiedAt", "startedAt", "duration"})


def ahp1_plain(value: Any, chat: str, calls: dict[str, str] | None = None) -> Any:
    """An AHP 1.0 state as two servers' can be compared: no timestamps or durations, the chat URI ``chat``
    as ``CHAT``, tool call and response part ids numbered in the order met (``calls``: the
    numbering so far)."""
    calls = {} if calls is None else calls
    if isinstance(value, dict):
        plain = {}
        for key, item in value.items():
            if (key == "toolCallId" or (key == "id" and "kind" in value)) and isinstance(item, str):
                item = calls.setdefault(item, f"id-{len(calls) + 1}")
            plain[key] = None if key in _TIMESTAMPS else ahp1_plain(item, chat, calls)
        return plain
    if isinstance(value, list):
        return [ahp1_plain(item, chat, calls) for item in value]
    return "CHAT" if value == chat else value


def served(project: Any, prompts: list[list[dict[str, Any]]]) -> ProtocolServer:
    """A server of scripted sessions for ``project`` (a ``helpers.Project``), answering ``prompts``."""
    script = write_script(project.home / "script.json", prompts)
    return in_process_server(script, project.home)
