"""``extensions serve``'s side: a turn through the server against the Python API, fan-out to many
clients, and a long ``reconnect``.

- :func:`api_turns` / :func:`served_turns`: the same turn (one ``echo0`` tool call, then a
  reply) with a scripted agent, through ``host.send_and_wait`` in this process, and through
  ``extensions serve --stdio`` in a child, from dispatching ``session/turnStarted`` to receiving
  ``session/turnComplete``; or, by an AHP 1.0 client, from ``chat/turnStarted`` on the session's
  chat channel to ``chat/turnComplete``.
- :func:`fan_out`: a server in this process, 10 clients in a child process on its Unix socket,
  subscribed to one session; events are emitted one per millisecond, each carrying the monotonic
  time it was emitted (the clock is the machine's, shared by both processes), and each client
  records when it received each. The latency includes the clients' own decoding.
- :func:`replay`: a server in this process with ``count`` actions in its buffer; the time from
  sending ``reconnect`` (from 0) to holding its decoded answer, over a socket pair.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from extension_host import AgentReply, ExtensionHost, ScriptedAgent, ToolCall
from extension_host.launch.interpreter import python_command
from extension_host.serve.served_session import HostOptions
from extension_host.serve.server import ProtocolServer, ServerOptions
from extension_host.serve.transports import client_connection, serve_socket
from extension_protocol.connection import Connection

from .host import CALL_TIMEOUT, _check_running

URI = "copilot:/bench"
TURN = [
    {"text": "Echoing.", "toolCalls": [{"name": "echo0", "arguments": {"text": "hi"}}]},
    {"text": "Done."},
]
"""One prompt's script: a tool call, then the answer."""
SEED: Final = "0.1.0"
AHP1: Final = "1.0.0"
_COMPLETE: Final = frozenset({"session/turnComplete", "chat/turnComplete"})
_ENDS: Final = _COMPLETE | {"session/error", "chat/error"}
_TRUSTING_DEPTH = 10**9
"""A nesting bound no body reaches: the bench's clients skip the depth walk a server must do."""


def _script_agent(turns: int) -> ScriptedAgent:
    steps = [AgentReply("Echoing.", (ToolCall("echo0", {"text": "hi"}),)), AgentReply("Done.")]
    return ScriptedAgent([steps] * turns)


async def api_turns(project: Path, home: Path, turns: int) -> list[float]:
    """Seconds of each ``host.send_and_wait`` of a one-tool-call turn."""
    async with ExtensionHost(project, home, trust=True, watch=False, agent=_script_agent(turns)) as host:
        _check_running(host)
        times = []
        async with asyncio.timeout(CALL_TIMEOUT * 4):
            for _ in range(turns):
                started = time.perf_counter()
                await host.send_and_wait("go")
                times.append(time.perf_counter() - started)
        return times


async def served_turns(project: Path, home: Path, turns: int, version: str = SEED) -> list[float]:
    """Seconds of each turn through ``extensions serve --stdio``, from dispatching its start to
    receiving its end, by a client of ``version`` (:data:`SEED` or :data:`AHP1`)."""
    home.mkdir(parents=True, exist_ok=True)
    script = home / "bench-serve-script.json"
    script.write_text(json.dumps([TURN] * turns), encoding="utf-8")
    env = {**os.environ, "EXTENSION_HOST_TRUST_PROJECT": "1"}
    command = python_command("-m", "extension_host", "--root", str(project), "--home", str(home), "serve")
    process = await asyncio.create_subprocess_exec(
        *command,
        "--agent",
        f"scripted:{script}",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    assert process.stdin is not None and process.stdout is not None
    done: asyncio.Queue[str] = asyncio.Queue()

    def on_action(envelope: Any) -> None:
        kind = envelope["action"]["type"]
        if kind in _ENDS:
            done.put_nowait(kind)

    connection = Connection(process.stdout, process.stdin, notification_handlers={"action": on_action})
    serving = asyncio.ensure_future(connection.serve())
    try:
        async with asyncio.timeout(CALL_TIMEOUT * 4):
            start = await (_ahp1_client if version == AHP1 else _seed_client)(connection, project)
            times = []
            for number in range(turns):
                started = time.perf_counter()
                start(number)
                if await done.get() not in _COMPLETE:
                    raise RuntimeError("a served turn ended with an error")
                times.append(time.perf_counter() - started)
            return times
    finally:
        process.stdin.close()
        async with asyncio.timeout(30):
            await process.wait()
        serving.cancel()


async def _seed_client(connection: Connection, project: Path) -> Callable[[int], None]:
    """A 0.1.0 client with one session it subscribed to: what starts its turn ``number``."""
    await connection.request("initialize", {"protocolVersions": [SEED], "clientId": "bench"})
    await connection.request("createSession", {"session": URI, "workingDirectory": project.as_uri()})
    await connection.request("subscribe", {"resource": URI})

    def start(number: int) -> None:
        action = {"type": "session/turnStarted", "session": URI, "turnId": f"t{number}", "userMessage": {"text": "go"}}
        connection.notify("dispatchAction", {"clientSeq": number + 1, "action": action})

    return start


async def _ahp1_client(connection: Connection, project: Path) -> Callable[[int], None]:
    """An AHP 1.0 client with one session, subscribed to its session and its chat channels."""
    await connection.request("initialize", {"channel": "ahp-root://", "protocolVersions": [AHP1], "clientId": "bench"})
    session = f"ahp-session:/{uuid.uuid4()}"
    await connection.request("createSession", {"channel": session, "workingDirectories": [project.as_uri()]})
    chat = (await connection.request("subscribe", {"channel": session}))["snapshot"]["state"]["defaultChat"]
    await connection.request("subscribe", {"channel": chat})

    def start(number: int) -> None:
        action = {"type": "chat/turnStarted", "turnId": f"t{number}", "message": {"text": "go"}}
        connection.notify("dispatchAction", {"channel": chat, "clientSeq": number + 1, "action": action})

    return start


_FAN_OUT_CLIENT = r"""
import asyncio, json, sys, time
sys.path[:0] = json.loads(sys.argv[3])
from extension_protocol.connection import Connection

async def main(path, clients):
    latencies, connections, done = [], [], asyncio.Event()
    expected = int(sys.argv[4]) * clients
    def on_action(envelope):
        action = envelope["action"]
        if action["type"] == "session/delta":
            latencies.append(time.monotonic() - float(action["content"]))
            if len(latencies) == expected:
                done.set()
    for number in range(clients):
        reader, writer = await asyncio.open_unix_connection(path)
        connection = Connection(reader, writer, notification_handlers={"action": on_action})
        asyncio.ensure_future(connection.serve())
        await connection.request("initialize", {"protocolVersions": ["0.1.0"], "clientId": f"c{number}",
                                                "initialSubscriptions": ["copilot:/bench"]})
        connections.append(connection)
    print("ready", flush=True)
    await asyncio.wait_for(done.wait(), 120)
    print(json.dumps(latencies), flush=True)

asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


def _server(home: Path) -> ProtocolServer:
    """A server whose sessions' agent answers nothing (the events are emitted by hand)."""
    home.mkdir(parents=True, exist_ok=True)
    script = home / "bench-empty-script.json"
    script.write_text("[]", encoding="utf-8")
    return ProtocolServer(ServerOptions(provider_argument=str(script), hosts=HostOptions(home, fork_server=False)))


async def fan_out(project: Path, home: Path, clients: int, events: int) -> list[float]:
    """Seconds from emitting each of ``events`` events to each of ``clients`` clients holding it."""
    server = _server(home)
    runtime = Path(tempfile.mkdtemp(prefix="bs-"))
    os.chmod(runtime, 0o700)
    path = runtime / "serve.sock"
    stop = asyncio.Event()
    listening = asyncio.Event()
    listener = asyncio.ensure_future(serve_socket(server, path, project, lambda _: listening.set(), stop))
    process = None
    try:
        async with asyncio.timeout(CALL_TIMEOUT * 2):
            await listening.wait()
            client = await _in_process_client(server)
            await client.request("initialize", {"protocolVersions": ["0.1.0"], "clientId": "creator"})
            await client.request("createSession", {"session": URI, "workingDirectory": project.as_uri()})
            session = server.sessions[URI]
            source = [str(Path(__file__).resolve().parents[1])]
            process = await asyncio.create_subprocess_exec(
                *python_command("-c", _FAN_OUT_CLIENT, str(path), str(clients), json.dumps(source), str(events)),
                stdout=asyncio.subprocess.PIPE,
                limit=64 * 1024 * 1024,
            )
            assert process.stdout is not None
            if (await process.stdout.readline()).strip() != b"ready":
                raise RuntimeError("the fan-out clients did not start")
            session.host.events.emit("user.message", {"content": "go", "messageId": "bench"})
            for _ in range(events):
                session.host.events.emit(
                    "assistant.message_delta",
                    {"messageId": "m", "deltaContent": repr(time.monotonic())},
                    ephemeral=True,
                )
                await asyncio.sleep(0.001)
            latencies: list[float] = json.loads(await process.stdout.readline())
            await process.wait()
            await client.close()
            return latencies
    finally:
        if process is not None and process.returncode is None:
            process.kill()
            await process.wait()
        stop.set()
        await asyncio.gather(listener, return_exceptions=True)
        await server.close()
        os.rmdir(runtime)


async def replay(project: Path, home: Path, count: int) -> float:
    """Seconds of a ``reconnect`` from 0 answered with ``count`` replayed action envelopes."""
    server = _server(home)
    try:
        creator = await _in_process_client(server)
        await creator.request("initialize", {"protocolVersions": ["0.1.0"], "clientId": "creator"})
        await creator.request("createSession", {"session": URI, "workingDirectory": project.as_uri()})
        events = server.sessions[URI].host.events
        before = server.log.server_seq
        # A turn (one action), then deltas of one part (the first makes the part too).
        events.emit("user.message", {"content": "go", "messageId": "bench"})
        for number in range(count - 2):
            events.emit(
                "assistant.message_delta", {"messageId": "m", "deltaContent": f"word {number} "}, ephemeral=True
            )
        await creator.close()
        client = await _in_process_client(server)
        params = {"clientId": "again", "lastSeenServerSeq": before, "subscriptions": [URI]}
        async with asyncio.timeout(CALL_TIMEOUT):
            started = time.perf_counter()
            result = await client.request("reconnect", params)
            elapsed = time.perf_counter() - started
        if result["type"] != "replay" or len(result["actions"]) != count:
            raise RuntimeError(f"reconnect replayed {len(result.get('actions', []))} of {count} actions")
        await client.close()
        return elapsed
    finally:
        await server.close()


class _Client:
    def __init__(self, connection: Connection, serving: asyncio.Future[None]) -> None:
        self.connection = connection
        self._serving = serving

    async def request(self, method: str, params: Any) -> Any:
        return await self.connection.request(method, params, timeout=CALL_TIMEOUT)

    async def close(self) -> None:
        self.connection.close()
        await asyncio.gather(self._serving, return_exceptions=True)


async def _in_process_client(server: ProtocolServer) -> _Client:
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=theirs)
    serving_server = asyncio.ensure_future(server.serve_client(client_connection(reader, writer)))
    reader, writer = await asyncio.open_connection(sock=ours)
    # A client trusts its server: it decodes the answer without walking it for nesting depth.
    connection = Connection(reader, writer, max_message_bytes=256 * 1024 * 1024, max_depth=_TRUSTING_DEPTH)
    serving = asyncio.ensure_future(connection.serve())
    serving.add_done_callback(lambda _: serving_server.cancel() if not serving_server.done() else None)
    return _Client(connection, serving)
