"""``extensions serve`` as a real process, over stdio, the project's Unix socket and a loopback
WebSocket; bind rules; a client that stops reading; garbage frames."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from serve_client import FakeSession, ServeClient, connect_in_process, write_script

from extension_host.serve.errors import UNSUPPORTED_PROTOCOL_VERSION
from extension_host.serve.served_session import HostOptions
from extension_host.serve.server import ProtocolServer, ServerOptions
from extension_host.serve.transports import WebSocketWriter, client_connection
from extension_protocol.connection import Connection, RpcError
from extension_protocol.framing import encode_message, read_message
from extension_protocol.protocol import PARSE_ERROR
from helpers import Project, run

pytestmark = pytest.mark.subprocess

COUNTER = """
    from sdk_extension import join_session, tool

    @tool(description="Count the words of a text")
    def count(text: str) -> str:
        return str(len(text.split()))

    join_session(tools=[count])
"""

SCRIPT: list[list[dict[str, Any]]] = [
    [
        {"text": "Counting.", "toolCalls": [{"name": "count", "arguments": {"text": "a b"}}]},
        {"text": "Two words."},
    ]
]


async def start_serve(project: Project, *args: str) -> asyncio.subprocess.Process:
    script = write_script(project.home / "script.json", SCRIPT)
    return await asyncio.create_subprocess_exec(
        *project.command("serve", "--agent", f"scripted:{script}", *args),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )


async def stop(process: asyncio.subprocess.Process) -> int:
    if process.returncode is None:
        if process.stdin is not None:
            process.stdin.close()
        process.terminate()
    async with asyncio.timeout(30):
        return await process.wait()


async def turn_with_a_tool_call(client: ServeClient, project: Project, uri: str) -> None:
    await client.create_session(uri, project.root)
    await client.request("subscribe", {"resource": uri})
    client.start_turn(uri, "t1", "count")
    await client.wait_for_action("session/turnComplete", turnId="t1")
    [complete] = client.actions("session/toolCallComplete")
    assert complete["result"]["content"] == [{"type": "text", "text": "2"}]


def test_over_stdio_a_client_negotiates_runs_a_turn_with_a_tool_call_and_ends_the_server(project: Project) -> None:
    project.add_extension("counter", COUNTER)

    async def scenario() -> None:
        process = await start_serve(project, "--stdio")
        assert process.stdout is not None and process.stdin is not None
        client = ServeClient(Connection(process.stdout, process.stdin))
        try:
            with pytest.raises(RpcError) as refused:
                await client.request("initialize", {"protocolVersions": ["7.0.0"], "clientId": "c"})
            assert refused.value.code == UNSUPPORTED_PROTOCOL_VERSION
            await client.initialize()
            await turn_with_a_tool_call(client, project, "copilot:/stdio")
        finally:
            process.stdin.close()  # the client goes: the server stops its sessions and exits
            async with asyncio.timeout(30):
                assert await process.wait() == 0
            await client.close()

    run(scenario(), timeout=90)


def test_over_stdio_a_broken_frame_is_answered_with_a_parse_error(project: Project) -> None:
    async def scenario() -> None:
        process = await start_serve(project)
        assert process.stdout is not None and process.stdin is not None
        process.stdin.write(b"Content-Length: 5\r\n\r\n{oops")
        await process.stdin.drain()
        async with asyncio.timeout(30):
            header = await process.stdout.readuntil(b"\r\n\r\n")
            body = json.loads(await process.stdout.readexactly(int(header.split(b":")[1])))
        assert body["id"] is None and body["error"]["code"] == PARSE_ERROR
        async with asyncio.timeout(30):
            assert await process.wait() == 0  # its only client is gone: it stops

    run(scenario())


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            b"Content-Length: 2\r\nContent-Length: 100000\r\n\r\n{}",
            "Content-Length appears twice in one header block ('2' and '100000'); a frame has exactly one",
        ),
        (
            b"Content-Length: 2\n\n{}",
            "header block has a line break other than \\r\\n: 'Content-Length: 2\\n\\n",
        ),
    ],
    ids=["content-length-twice", "lf-without-cr"],
)
def test_over_stdio_a_header_that_cannot_start_a_frame_is_answered_at_once_and_the_server_ends(
    project: Project, data: bytes, message: str
) -> None:
    """The client keeps stdin open after a header no frame can follow: the server does not wait
    for bytes that never come; it answers PARSE_ERROR (id null) naming the fault, closes, and,
    its only client gone, exits."""

    async def scenario() -> None:
        process = await start_serve(project, "--stdio")
        assert process.stdout is not None and process.stdin is not None
        try:
            process.stdin.write(data)
            await process.stdin.drain()
            async with asyncio.timeout(30):
                answer = await read_message(process.stdout)
                end = await read_message(process.stdout)
                assert await process.wait() == 0
            assert answer is not None
            error = answer.pop("error")
            assert answer == {"jsonrpc": "2.0", "id": None}
            assert error["code"] == PARSE_ERROR and error["message"].startswith(message)
            assert end is None
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()

    run(scenario())


def test_over_the_project_socket_two_clients_share_a_session(project: Project) -> None:
    project.add_extension("counter", COUNTER)

    async def scenario() -> None:
        process = await start_serve(project, "--socket")
        assert process.stdout is not None
        try:
            async with asyncio.timeout(30):
                path = Path((await process.stdout.readline()).decode().strip())
            assert stat.S_IMODE(path.stat().st_mode) == 0o600
            clients = []
            for name in ("one", "two"):
                reader, writer = await asyncio.open_unix_connection(os.fspath(path))
                clients.append(ServeClient(Connection(reader, writer), name))
            first, second = clients
            await first.initialize()
            await second.initialize()
            await first.create_session("copilot:/shared", project.root)
            await second.request("subscribe", {"resource": "copilot:/shared"})
            await first.request("subscribe", {"resource": "copilot:/shared"})
            first.start_turn("copilot:/shared", "t1", "count")
            await second.wait_for_action("session/turnComplete", turnId="t1")
            await first.wait_for_action("session/turnComplete", turnId="t1")
            assert first.envelopes == second.envelopes
            for client in clients:
                await client.close()
        finally:
            assert await stop(process) == 0
        assert not path.exists()

    run(scenario(), timeout=90)


def test_over_a_websocket_a_client_with_the_token_is_served_and_one_without_is_refused(project: Project) -> None:
    websockets = pytest.importorskip("websockets.asyncio.client")
    project.add_extension("counter", COUNTER)

    async def scenario() -> None:
        process = await start_serve(project, "--listen", "127.0.0.1:0")
        assert process.stdout is not None
        try:
            async with asyncio.timeout(30):
                url = (await process.stdout.readline()).decode().strip()
                page = (await process.stdout.readline()).decode().strip()
            assert url.startswith("ws://127.0.0.1:") and "?token=" in url
            assert page == "http://" + url.removeprefix("ws://")  # the web page, with the same token
            bare = url.split("?")[0]
            with pytest.raises(Exception, match="401"):
                await websockets.connect(bare)
            with pytest.raises(Exception, match="401"):
                await websockets.connect(bare + "?token=wrong")
            async with websockets.connect(url) as socket:

                async def call(message: dict[str, Any]) -> dict[str, Any]:
                    await socket.send(json.dumps(message))
                    while True:
                        answer: dict[str, Any] = json.loads(await socket.recv())
                        if answer.get("id") == message["id"]:
                            return answer

                initialize = {"protocolVersions": ["0.1.0"], "clientId": "ws"}
                answer = await call({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize})
                assert answer["result"]["protocolVersion"] == "0.1.0"
                create = {"session": "copilot:/ws", "workingDirectory": project.root.as_uri()}
                assert (await call({"jsonrpc": "2.0", "id": 2, "method": "createSession", "params": create}))[
                    "result"
                ] is None
                await call({"jsonrpc": "2.0", "id": 3, "method": "subscribe", "params": {"resource": "copilot:/ws"}})
                start = {
                    "type": "session/turnStarted",
                    "session": "copilot:/ws",
                    "turnId": "t1",
                    "userMessage": {"text": "count"},
                }
                await socket.send(
                    json.dumps(
                        {"jsonrpc": "2.0", "method": "dispatchAction", "params": {"clientSeq": 1, "action": start}}
                    )
                )
                kinds = []
                async with asyncio.timeout(30):
                    while "session/turnComplete" not in kinds:
                        message = json.loads(await socket.recv())
                        if message.get("method") == "action":
                            kinds.append(message["params"]["action"]["type"])
                assert "session/toolCallComplete" in kinds
                answer = await call({"jsonrpc": "2.0", "id": 4, "method": "nope"})
                assert answer["error"]["code"] == -32601
        finally:
            assert await stop(process) == 0

    run(scenario(), timeout=90)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--listen", "0.0.0.0:0"], "only loopback"),
        (["--listen", "0.0.0.0:0", "--allow-remote"], "needs a token of your choosing"),
        (["--listen", "nonsense"], "HOST:PORT"),
        (["--agent", "nobody"], "no agent provider"),
    ],
)
def test_the_server_refuses_unsafe_binds_and_bad_options_with_one_line(
    project: Project, args: list[str], expected: str
) -> None:
    async def scenario() -> tuple[int, str]:
        process = await asyncio.create_subprocess_exec(
            *project.command("serve", *args), stdin=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
        )
        _, stderr = await process.communicate()
        return await process.wait(), stderr.decode()

    code, stderr = run(scenario())
    assert code != 0
    assert expected in stderr and len(stderr.strip().splitlines()) == 1 and "Traceback" not in stderr


def test_without_websockets_installed_listen_says_what_to_install(project: Project, tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "websockets.py").write_text("raise ImportError('not installed')\n")

    async def scenario() -> tuple[int, str]:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocker), *sys.path])}
        process = await asyncio.create_subprocess_exec(
            *project.command("serve", "--listen", "127.0.0.1:0"),
            stdin=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            env=env,
        )
        _, stderr = await process.communicate()
        return await process.wait(), stderr.decode()

    code, stderr = run(scenario())
    assert code == 1 and "pip install 'extension-host[serve]'" in stderr


def test_a_client_that_stops_reading_is_dropped_and_the_others_keep_receiving(project: Project) -> None:
    async def scenario() -> None:
        server = ProtocolServer(ServerOptions(hosts=HostOptions(project.home, fork_server=False)))
        reader_client = await connect_in_process(server, "reader")
        await reader_client.initialize()
        # The slow one: a raw socket nobody reads from, with a small queue bound.
        ours, theirs = socket.socketpair()
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        server_reader, server_writer = await asyncio.open_connection(sock=theirs)
        slow = Connection(server_reader, server_writer, max_queued_bytes=256 * 1024)
        serving = asyncio.ensure_future(server.serve_client(slow))
        await asyncio.sleep(0)
        [slow_client] = [c for c in server.clients if c.connection is slow]
        slow_client.client_id = "slow"
        slow_client.subscriptions.add(FakeSession.uri)
        for client in server.clients:
            client.subscriptions.add(FakeSession.uri)
        payload = "x" * 4096
        for number in range(400):
            server.publish(
                FakeSession(),  # type: ignore[arg-type]
                {
                    "type": "session/titleChanged",
                    "session": FakeSession.uri,
                    "title": f"{number} {payload}",
                },
                None,
            )
        async with asyncio.timeout(30):
            await serving
        assert slow_client not in server.clients
        await reader_client.wait_for(lambda: len(reader_client.envelopes) == 400)
        assert [e["serverSeq"] for e in reader_client.envelopes] == list(range(1, 401))
        ours.close()
        await reader_client.close()
        await server.close()

    run(scenario())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    garbage=st.lists(
        st.binary(min_size=1, max_size=200)
        | st.sampled_from(
            [
                b"Content-Length: 2\r\n\r\n{}",
                b"Content-Length: 7\r\n\r\n[1,2,3]",
                b'Content-Length: 27\r\n\r\n{"jsonrpc":"2.0","id":1}xx',
                b"Content-Length: 999999999999\r\n\r\n",
                b'Content-Length: 45\r\n\r\n{"jsonrpc":"2.0","id":1,"method":"reconnect"}',
            ]
        ),
        max_size=5,
    )
)
def test_garbage_frames_cost_the_sender_its_connection_at_most(garbage: list[bytes], project: Project) -> None:
    async def scenario() -> None:
        server = ProtocolServer(ServerOptions(hosts=HostOptions(project.home, fork_server=False)))
        bystander = await connect_in_process(server, "bystander")
        await bystander.initialize()
        ours, theirs = socket.socketpair()
        server_reader, server_writer = await asyncio.open_connection(sock=theirs)
        serving = asyncio.ensure_future(server.serve_client(client_connection(server_reader, server_writer)))
        reader, writer = await asyncio.open_connection(sock=ours)
        for chunk in garbage:
            writer.write(chunk)
        await writer.drain()
        writer.close()
        async with asyncio.timeout(10):
            await serving
            while await reader.read(65536):
                pass  # whatever it was told, it was told in frames
        assert (await bystander.request("listSessions", {})) == {"items": []}
        assert len(server.clients) == 1
        await bystander.close()
        await server.close()

    run(scenario(), timeout=30)


def test_a_second_socket_server_for_the_project_is_refused_naming_the_socket(project: Project) -> None:
    async def scenario() -> None:
        first = await start_serve(project, "--socket")
        assert first.stdout is not None
        try:
            async with asyncio.timeout(30):
                path = (await first.stdout.readline()).decode().strip()
            second = await start_serve(project, "--socket")
            async with asyncio.timeout(30):
                _, stderr = await second.communicate()
            assert second.returncode == 1
            assert f"already serves {project.root}" in stderr.decode() and path in stderr.decode()
        finally:
            assert await stop(first) == 0

    run(scenario(), timeout=90)


class _StuckWebSocket:
    """A WebSocket whose client never reads: every send waits forever."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.aborted = False
        self.transport = self

    async def send(self, text: str) -> None:
        self.sent.append(text)
        await asyncio.Event().wait()

    async def close(self) -> None:
        pass

    def abort(self) -> None:
        self.aborted = True


def test_a_websocket_client_that_stops_reading_is_cut_once_its_queue_is_full() -> None:
    async def scenario() -> None:
        websocket = _StuckWebSocket()
        writer = WebSocketWriter(websocket, max_queued=10_000)
        frames = b"".join(encode_message({"jsonrpc": "2.0", "method": "action", "params": n}) for n in range(3))
        writer.write(frames[:7])  # frames may arrive cut anywhere
        writer.write(frames[7:])
        async with asyncio.timeout(5):
            while not websocket.sent:
                await asyncio.sleep(0)
        assert json.loads(websocket.sent[0])["params"] == 0
        assert not writer.is_closing()
        writer.write(encode_message({"jsonrpc": "2.0", "method": "action", "params": "x" * 20_000}))
        assert writer.is_closing() and websocket.aborted
        await writer.finished()

    run(scenario())
