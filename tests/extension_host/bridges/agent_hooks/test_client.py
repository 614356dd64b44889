"""The hook command's light client: one ``host.hook`` request over the control socket."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator

import pytest

from extension_host import ExtensionHostError, hookimpl
from extension_host.bridges.agent_hooks.client import (
    HostTimeoutError,
    HostUnreachableError,
    ask_running_host,
)
from extension_host.control import private_socket
from extension_host.control.methods import METHOD_HOOK
from extension_host.control.service import ControlServer, connect_to_host
from extension_host.project.paths import control_socket_path
from helpers import Project, run


class Deny:
    @hookimpl
    def on_pre_tool_use(self, input: object) -> dict[str, str]:
        return {"permission_decision": "deny", "permission_decision_reason": "never"}


def test_with_no_host_running_the_client_says_none(project: Project) -> None:
    assert ask_running_host(project.root, METHOD_HOOK, {"hook": "sessionEnd"}) is None


@pytest.mark.subprocess
def test_the_client_gets_the_running_hosts_answer(project: Project) -> None:
    async def scenario() -> None:
        async with project.host(watch=False, persist=False) as host, ControlServer(host):
            host.register_plugin(Deny(), "policy")
            params = {"hook": "preToolUse", "toolName": "Bash", "toolArgs": {"command": "ls"}}
            answer = await asyncio.to_thread(ask_running_host, project.root, METHOD_HOOK, params)
            assert answer == {"decision": "deny", "reason": "never", "decidedBy": "policy"}
            with pytest.raises(HostUnreachableError, match=r"host.hook: preToolUse needs a toolName"):
                await asyncio.to_thread(ask_running_host, project.root, METHOD_HOOK, {"hook": "preToolUse"})

    run(scenario())


def test_the_client_refuses_a_listener_of_another_user_before_sending_it_anything(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = control_socket_path(project.root)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(os.fspath(path))
        listener.listen()
        monkeypatch.setattr(private_socket, "peer_uid", lambda _sock: os.geteuid() + 1)
        with pytest.raises(ExtensionHostError, match=rf"the control socket {path} is served by a process of uid"):
            ask_running_host(project.root, METHOD_HOOK, {"hook": "sessionEnd"}, timeout=5)
        listener.settimeout(5)
        connection, _ = listener.accept()
        with connection:
            connection.settimeout(5)
            assert connection.recv(65536) == b""


@pytest.mark.subprocess
def test_the_control_socket_refuses_a_malformed_hook_request(project: Project) -> None:
    async def scenario() -> None:
        async with project.host(watch=False, persist=False) as host, ControlServer(host):
            client = await connect_to_host(project.root)
            assert client is not None
            try:
                with pytest.raises(ExtensionHostError, match=r"host.hook: hook"):
                    await client.request(METHOD_HOOK, {"hook": "onPreToolUse"})
                assert await client.request(METHOD_HOOK, {"hook": "sessionStart"}) == {}
            finally:
                await client.close()

    run(scenario())


def test_a_hook_command_imports_neither_the_host_nor_the_event_loop_nor_the_sdks_author_api() -> None:
    """Nothing of the SDK, and of the shared protocol only the framing and nesting rules and the
    hook points' names: the same as every peer's, without join_session, pydantic or an event loop."""
    code = (
        "import sys, extension_host.frontends.hook_command as h; h.agent('claude'); h.agent('gemini');"
        "import json; print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, timeout=60)
    modules = set(json.loads(done.stdout))
    # orjson too: importing it would cost more than the few messages gain.
    assert not modules & {"asyncio", "pydantic", "pluggy", "extension_host.host", "dataclasses", "orjson"}
    assert not {name for name in modules if name.split(".")[0] == "sdk_extension"}
    shared = {name for name in modules if name.split(".")[0] == "extension_protocol"}
    assert shared == {
        "extension_protocol",
        "extension_protocol.lazy",
        "extension_protocol.framing",
        "extension_protocol.json_codec",
        "extension_protocol.nesting",
        "extension_protocol.hook_names",
    }


ANSWER = b'{"jsonrpc":"2.0","id":1,"result":{"decision":"deny"}}'


@contextlib.asynccontextmanager
async def host_answering(project: Project, answer: bytes) -> AsyncIterator[None]:
    """A host on the project's control socket that reads the request, writes ``answer`` and keeps
    the connection open (as a peer that sent all it will send)."""
    held: list[asyncio.StreamWriter] = []

    async def answer_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(answer)
        await writer.drain()
        held.append(writer)

    server = await asyncio.start_unix_server(answer_once, os.fspath(control_socket_path(project.root)))
    async with server:
        yield
    for writer in held:
        writer.close()


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (b"Content-Length: 2\r\nContent-Length: 100000\r\n\r\n{}", "Content-Length appears twice"),
        (b"Content-Length: %d\n\n%s" % (len(ANSWER), ANSWER), "a line break other than \\r\\n"),
        (b"Content-Length: 2\r\nX-Padding: " + b"a" * 70_000 + b"\r\n\r\n{}", "header block is too long"),
        (b"Content-Length: 0%d\r\n\r\n%s" % (len(ANSWER), ANSWER), "Content-Length has a leading zero"),
    ],
    ids=["twice", "bare-lf", "over-64-KiB", "leading-zero"],
)
def test_an_answer_the_framing_refuses_is_refused_at_once_by_the_hook_client(
    project: Project, answer: bytes, error: str
) -> None:
    """The host's answer meets the framing every peer meets: a header block no frame can follow
    is refused as soon as it is read, while the host keeps the connection open, never waited on."""

    async def scenario() -> None:
        async with host_answering(project, answer):
            with pytest.raises(HostUnreachableError) as caught:
                await asyncio.to_thread(ask_running_host, project.root, METHOD_HOOK, {"hook": "sessionEnd"}, 30)
            assert not isinstance(caught.value, HostTimeoutError)
            assert str(caught.value).startswith("the host sent bytes that are not a message: ")
            assert error in str(caught.value)

    run(scenario())


def test_a_header_block_the_framing_takes_is_taken_by_the_hook_client_too(project: Project) -> None:
    """Other header lines, up to the framing's 64 KiB, are read past as every peer reads them."""
    padded = b"Content-Type: application/json\r\nX-Padding: %s\r\nContent-Length: %d\r\n\r\n%s" % (
        b"a" * 10_000,
        len(ANSWER),
        ANSWER,
    )

    async def scenario() -> None:
        async with host_answering(project, padded):
            answer = await asyncio.to_thread(ask_running_host, project.root, METHOD_HOOK, {"hook": "sessionEnd"}, 30)
            assert answer == {"decision": "deny"}

    run(scenario())
