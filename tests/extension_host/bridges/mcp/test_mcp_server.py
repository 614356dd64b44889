"""``extensions mcp`` driven by the MCP SDK's own stdio client, as Claude Code or VS Code would run it.

Each test starts the real server process (with the command ``--print-config`` prints) on a
project with real extensions, and talks to it with ``mcp.ClientSession``: tools and their
schemas, calls through a hook that rewrites and one that denies, a failing tool, slash commands
as prompts, log notifications, and a new extension arriving as ``tools/list_changed``.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from extension_host.bridges.mcp.config import client_config
from extension_host.control.tokens import TOKEN_ENV
from helpers import OtherUser, Project, run

pytestmark = pytest.mark.subprocess

STEP_TIMEOUT = 60.0
"""Seconds any one exchange may take on a loaded machine."""

TOOLS = """
    from sdk_extension import Command, command, join_session, tool

    @tool(name="tools_echo", description="Echo the text back.")
    def echo(text: str) -> str:
        return text

    @tool(name="tools_fail", description="Always fails.")
    def fail() -> str:
        raise RuntimeError("the disk is on fire")

    @command
    def greet(context):
        '''Greet someone.'''
        session.log(f"hello {context.args}")
        session.send(f"Say hello to {context.args}")

    def broken(context):
        raise ValueError("no target named " + context.args)

    session = join_session(tools=[echo, fail], commands=[greet, Command("broken", "Always fails", broken)])
    session.log("tools ready")
"""

GUARD = """
    from sdk_extension import join_session

    def pre(input, invocation):
        text = input.tool_args.get("text", "")
        if "secret" in text:
            return {"permission_decision": "deny", "permission_decision_reason": "no secrets"}
        return {"modified_args": {"text": text.upper()}}

    join_session(hooks={"on_pre_tool_use": pre}, hook_matchers={"on_pre_tool_use": ["tools_echo"]})
"""

MORE = """
    from sdk_extension import join_session, tool

    @tool(name="more_count", description="Count the words.")
    def count(text: str) -> str:
        return str(len(text.split()))

    join_session(tools=[count])
"""


class Client:
    """A ``ClientSession`` and what the server sent it besides answers."""

    def __init__(self) -> None:
        self.session: ClientSession | None = None
        self.logs: list[types.LoggingMessageNotificationParams] = []
        self.tools_changed = anyio.Event()
        self.log_arrived = anyio.Event()

    async def on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.tools_changed.set()

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)
        self.log_arrived.set()

    async def wait_for_log(self, text: str) -> types.LoggingMessageNotificationParams:
        with anyio.fail_after(STEP_TIMEOUT):
            while True:
                for entry in self.logs:
                    if entry.data == text:
                        return entry
                self.log_arrived = anyio.Event()
                await self.log_arrived.wait()


@asynccontextmanager
async def mcp_client(project: Project, errlog: Path) -> AsyncIterator[tuple[ClientSession, Client]]:
    """The server started as a client's config says (``--print-config claude``), initialized."""
    server = client_config("claude", project.root, project.home).snippet["mcpServers"]["extensions"]
    # The SDK's client passes only a few variables on by default; the tests' home and trust are needed.
    params = StdioServerParameters(command=server["command"], args=server["args"], env=dict(os.environ))
    client = Client()
    with errlog.open("w") as err:
        async with (
            stdio_client(params, errlog=err) as (read, write),
            ClientSession(read, write, message_handler=client.on_message, logging_callback=client.on_log) as session,
        ):
            with anyio.fail_after(STEP_TIMEOUT):
                await session.initialize()
            client.session = session
            yield session, client


def texts(result: types.CallToolResult | types.GetPromptResult) -> list[str]:
    if isinstance(result, types.GetPromptResult):
        return [m.content.text for m in result.messages if isinstance(m.content, types.TextContent)]
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


def test_the_client_lists_the_tools_and_calls_them_through_the_hooks(project: Project, tmp_path: Path) -> None:
    project.add_extension("tools", TOOLS)
    project.add_extension("guard", GUARD)

    async def scenario() -> None:
        async with mcp_client(project, tmp_path / "server.err") as (session, _):
            listed = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert set(listed) == {"tools_echo", "tools_fail"}
            assert listed["tools_echo"].description == "Echo the text back."
            assert listed["tools_echo"].input_schema["properties"]["text"]["type"] == "string"
            assert listed["tools_echo"].input_schema["required"] == ["text"]

            rewritten = await session.call_tool("tools_echo", {"text": "hi there"})
            assert (rewritten.is_error, texts(rewritten)) == (False, ["HI THERE"])

            denied = await session.call_tool("tools_echo", {"text": "my secret"})
            assert denied.is_error
            assert texts(denied)[0].startswith("denied by project:guard before tools_echo ran: ")
            assert "no secrets" in texts(denied)[0]

            failed = await session.call_tool("tools_fail", {})
            assert failed.is_error
            assert texts(failed)[0].startswith("tools_fail of project:tools failed: ")
            assert "the disk is on fire" in texts(failed)[0]

            unknown = await session.call_tool("nobody_offers_this", {})
            assert unknown.is_error
            assert "no tool named 'nobody_offers_this'" in texts(unknown)[0]

    run(scenario(), timeout=120)
    # The calls went through the session like any other: its log has them, the denial included.
    (events_file,) = (project.home / "sessions").glob("*/events.jsonl")
    events = [json.loads(line) for line in events_file.read_text(encoding="utf-8").splitlines()]
    completed = [e["data"] for e in events if e["type"] == "tool.execution_complete"]
    assert [(c["toolName"], c["success"], c.get("error", {}).get("code")) for c in completed] == [
        ("tools_echo", True, None),
        ("tools_echo", False, "denied"),
        ("tools_fail", False, "failure"),
    ]
    denials = [e["data"] for e in events if e["type"] == "permission.completed"]
    assert [d["result"]["kind"] for d in denials] == ["denied-by-permission-request-hook"]


def test_slash_commands_are_prompts_whose_messages_are_what_the_command_said(project: Project, tmp_path: Path) -> None:
    project.add_extension("tools", TOOLS)

    async def scenario() -> None:
        async with mcp_client(project, tmp_path / "server.err") as (session, client):
            prompts = {prompt.name: prompt for prompt in (await session.list_prompts()).prompts}
            assert set(prompts) == {"greet", "broken"}
            assert prompts["greet"].description == "Greet someone."
            assert [(a.name, a.required) for a in prompts["greet"].arguments or ()] == [("args", False)]

            greeted = await session.get_prompt("greet", {"args": "Ada"})
            assert texts(greeted) == ["hello Ada", "Say hello to Ada"]
            assert all(message.role == "user" for message in greeted.messages)

            broken = await session.get_prompt("broken", {"args": "prod"})
            assert len(texts(broken)) == 1
            assert texts(broken)[0].startswith("/broken failed: ")
            assert "no target named prod" in texts(broken)[0]

            # What extensions log reaches the client as log notifications, the start-up line included.
            ready = await client.wait_for_log("tools ready")
            assert (ready.level, ready.logger) == ("info", "project:tools")
            await client.wait_for_log("hello Ada")

    run(scenario(), timeout=120)


def test_a_new_extension_reaches_the_client_as_a_tool_list_change(project: Project, tmp_path: Path) -> None:
    project.add_extension("tools", TOOLS)

    async def scenario() -> None:
        async with mcp_client(project, tmp_path / "server.err") as (session, client):
            assert {tool.name for tool in (await session.list_tools()).tools} == {"tools_echo", "tools_fail"}
            project.add_extension("more", MORE)
            with anyio.fail_after(STEP_TIMEOUT):
                await client.tools_changed.wait()
            assert {tool.name for tool in (await session.list_tools()).tools} == {
                "tools_echo",
                "tools_fail",
                "more_count",
            }
            counted = await session.call_tool("more_count", {"text": "one two three"})
            assert texts(counted) == ["3"]

    run(scenario(), timeout=120)


def test_stopping_the_client_stops_the_server_and_its_extensions(project: Project, tmp_path: Path) -> None:
    project.add_extension("tools", TOOLS)
    errlog = tmp_path / "server.err"

    async def scenario() -> None:
        async with mcp_client(project, errlog) as (session, _):
            assert len((await session.list_tools()).tools) == 2

    run(scenario(), timeout=120)
    said = errlog.read_text(encoding="utf-8")
    assert "serving 2 tools of 1 extensions of" in said
    assert "Traceback" not in said


def test_the_host_itself_never_imports_the_mcp_sdk() -> None:
    code = (
        "import sys, extension_host, extension_host.frontends.cli, extension_host.bridges.mcp.config\n"
        "print(sorted(name for name in sys.modules if name == 'mcp' or name.startswith('mcp.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


@dataclass
class HttpServer:
    """A running ``extensions mcp --http``: its URL, the header it said clients must send, and
    (once stopped) its exit code and stdout."""

    url: str
    header: str | None
    """``None`` if the server named none (it said so before where it listens)."""
    returncode: int | None = None
    stdout: bytes = b""


@asynccontextmanager
async def http_server(project: Project, *options: str, env: dict[str, str] | None = None) -> AsyncIterator[HttpServer]:
    """``extensions mcp --http 127.0.0.1:0`` with ``options``, once it said where it listens;
    stopped with SIGTERM (and reaped) on the way out."""
    server = await asyncio.create_subprocess_exec(
        *project.command("mcp", "--http", "127.0.0.1:0", *options),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    assert server.stdout is not None and server.stderr is not None
    try:
        url = header = None
        async with asyncio.timeout(STEP_TIMEOUT):
            while url is None:
                line = (await server.stderr.readline()).decode()
                assert line, "the server exited before it said where it listens"
                if found := re.search(r"over MCP \((http://127\.0\.0\.1:\d+/mcp)\)", line):
                    url = found.group(1)
                if found := re.fullmatch(r"clients must send the header 'Authorization: (.+)'\n", line):
                    header = found.group(1)
        running = HttpServer(url, header)
        yield running
    finally:
        if server.returncode is None:
            server.send_signal(signal.SIGTERM)
        async with asyncio.timeout(STEP_TIMEOUT):
            out, _ = await server.communicate()
    running.returncode, running.stdout = server.returncode, out


@asynccontextmanager
async def http_session(url: str, authorization: str) -> AsyncIterator[ClientSession]:
    """The SDK's client over streamable HTTP, sending ``authorization``, initialized."""
    async with (
        httpx2.AsyncClient(headers={"Authorization": authorization}, timeout=STEP_TIMEOUT) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        with anyio.fail_after(STEP_TIMEOUT):
            await session.initialize()
        yield session


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}},
}
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def test_over_http_on_loopback_a_client_calls_the_tools_until_the_server_is_stopped(project: Project) -> None:
    project.add_extension("tools", TOOLS)
    project.add_extension("guard", GUARD)

    async def scenario() -> HttpServer:
        async with http_server(project) as server, http_session(server.url, server.header or "") as session:
            with anyio.fail_after(STEP_TIMEOUT):
                assert {tool.name for tool in (await session.list_tools()).tools} == {"tools_echo", "tools_fail"}
                echoed = await session.call_tool("tools_echo", {"text": "over http"})
                assert (echoed.is_error, texts(echoed)) == (False, ["OVER HTTP"])
                denied = await session.call_tool("tools_echo", {"text": "a secret"})
                assert denied.is_error and texts(denied)[0].startswith("denied by project:guard")
        return server

    server = run(scenario(), timeout=120)
    assert (server.returncode, server.stdout) == (0, b"")


def test_over_http_a_request_without_the_servers_token_is_refused_401(project: Project) -> None:
    project.add_extension("tools", TOOLS)

    async def scenario() -> None:
        async with http_server(project) as server, httpx2.AsyncClient(timeout=STEP_TIMEOUT) as http:

            async def refused(given: dict[str, str]) -> None:
                answer = await http.post(server.url, json=INITIALIZE, headers={**MCP_HEADERS, **given})
                assert answer.status_code == 401, given
                assert answer.headers["WWW-Authenticate"].startswith("Bearer")
                assert "serverInfo" not in answer.text

            await refused({})
            await refused({"Authorization": "Bearer not-the-token"})
            assert server.header is not None and re.fullmatch(r"Bearer [A-Za-z0-9_-]{43}", server.header)
            await refused({"Authorization": server.header[:-1]})
            taken = await http.post(
                server.url, json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": server.header}
            )
            assert taken.status_code == 200 and "serverInfo" in taken.text

    run(scenario(), timeout=120)


ATTACK = """
set -u
url=$1
json='Content-Type: application/json'
accept='Accept: application/json, text/event-stream'
initialize='{"jsonrpc":"2.0","id":1,"method":"initialize","params":
    {"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}'
session=$(curl -s -D - -o /dev/null -H "$json" -H "$accept" --data "$initialize" "$url" \\
    | tr -d '\\r' | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')
for message in '{"jsonrpc":"2.0","method":"notifications/initialized"}' \\
        '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'; do
    curl -s -w '\\nHTTP %{http_code}\\n' -H "$json" -H "$accept" -H "Mcp-Session-Id: $session" \\
        -H 'Mcp-Protocol-Version: 2025-06-18' --data "$message" "$url"
done
"""
"""What another user of the machine would do: initialize, then list the tools, with curl."""


def test_another_user_of_the_machine_cannot_list_the_tools_over_http(project: Project, another_user: OtherUser) -> None:
    project.add_extension("tools", TOOLS)

    async def scenario() -> subprocess.CompletedProcess[str]:
        async with http_server(project) as server:
            return await asyncio.to_thread(another_user.run, "sh", "-c", ATTACK, "attack", server.url)

    attack = run(scenario(), timeout=120)
    assert "tools_echo" not in attack.stdout
    assert attack.stdout.count("HTTP 401") == 2, attack.stdout


def test_over_http_the_token_can_come_from_a_file_or_the_environment(project: Project, tmp_path: Path) -> None:
    project.add_extension("tools", TOOLS)
    token = "mcp-token-0123456789abcdef0123456789abcdef"
    path = tmp_path / "token"
    path.write_text(token + "\n")
    path.chmod(0o600)

    async def scenario(options: tuple[str, ...], env: dict[str, str], where: str) -> None:
        async with http_server(project, *options, env=env) as server:
            assert server.header == f"Bearer <{where}>"  # the token itself is not printed
            async with http_session(server.url, f"Bearer {token}") as session:
                assert {tool.name for tool in (await session.list_tools()).tools} == {"tools_echo", "tools_fail"}

    run(scenario(("--token-file", str(path)), {}, f"the token in {path}"), timeout=120)
    run(scenario((), {TOKEN_ENV: token}, "$EXTENSION_HOST_TOKEN"), timeout=120)
    path.chmod(0o644)
    done = project.run_command("mcp", "--http", "127.0.0.1:0", "--token-file", str(path))
    assert (done.returncode, done.stderr) == (
        2,
        f"error: the token file {path} has mode 0644, so other users may read it; run `chmod 600 {path}`\n",
    )


def test_http_listens_on_loopback_only(project: Project) -> None:
    for spec, says in [
        ("0.0.0.0:8765", "0.0.0.0 is not a loopback address"),
        ("example.org:8765", "example.org is not a loopback address"),
        ("127.0.0.1", "say HOST:PORT"),
        ("127.0.0.1:http", "say HOST:PORT"),
    ]:
        done = project.run_command("mcp", "--http", spec)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith(f"error: --http {spec}: ") and says in done.stderr
        assert len(done.stderr.splitlines()) == 1
