"""``extensions serve --listen`` and its token as another local user sees it: ``--token`` shows in
``ps`` (and is warned about), ``--token-file`` and ``$EXTENSION_HOST_TOKEN`` do not; a token file
others may read is refused. Real server processes, looked at through ``runuser``. And
``--max-sessions``: checked in one line, and the session past it refused naming it."""

from __future__ import annotations

import asyncio
import os
import secrets
import select
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from serve_client import stdio_server, write_script

from chat_server import Answer, ChatServer
from extension_host.control.tokens import TOKEN_ENV
from extension_host.serve.providers import NO_AGENT
from extension_protocol.connection import RpcError
from helpers import OtherUser, Project, run

pytestmark = pytest.mark.subprocess

TOKEN = f"serve-token-{secrets.token_hex(16)}"
"""A token of this process alone: what ``ps`` shows of every user's processes is searched for it,
so a server another test (or another run) started with its own token is no false alarm."""


@dataclass
class Listening:
    """A running ``serve --listen``: its pid, the URL it printed, and (once stopped) its stderr."""

    pid: int
    url: str
    stderr: str = ""


@asynccontextmanager
async def listening(project: Project, *options: str, env: dict[str, str] | None = None) -> AsyncIterator[Listening]:
    """``serve --listen 127.0.0.1:0`` with ``options``, once it listens; stopped and reaped on
    the way out, its stderr kept."""
    process = await asyncio.create_subprocess_exec(
        *project.command("serve", "--listen", "127.0.0.1:0", *options),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    assert process.stdout is not None
    server = Listening(process.pid, "")
    try:
        async with asyncio.timeout(60):
            server.url = (await process.stdout.readline()).decode().strip()
        assert server.url.startswith("ws://127.0.0.1:"), server.url
        yield server
    finally:
        if process.returncode is None:
            process.terminate()
        async with asyncio.timeout(30):
            _, err = await process.communicate()
        server.stderr = err.decode()


def seen_by(user: OtherUser, pid: int) -> tuple[str, str, subprocess.CompletedProcess[str]]:
    """What ``user`` reads of process ``pid``: ``ps``, its command line, its environment."""
    ps = user.run("ps", "-eo", "pid,args", "-ww")
    cmdline = user.run("cat", f"/proc/{pid}/cmdline")
    return ps.stdout, cmdline.stdout.replace("\0", " "), user.run("cat", f"/proc/{pid}/environ")


def test_a_token_on_the_command_line_is_seen_by_other_users_and_warned_about_in_one_line(
    project: Project, another_user: OtherUser
) -> None:
    async def scenario() -> tuple[str, str, Listening]:
        async with listening(project, "--token", TOKEN) as server:
            ps, cmdline, _ = seen_by(another_user, server.pid)
        return ps, cmdline, server

    ps, cmdline, server = run(scenario(), timeout=120)
    assert server.url.endswith(f"?token={TOKEN}")
    assert TOKEN in ps and TOKEN in cmdline  # what --token costs, as the warning says
    assert server.stderr.splitlines() == [
        "extensions serve: warning: --token shows the token to every user of this machine (ps, /proc/PID/cmdline); "
        "use --token-file FILE or $EXTENSION_HOST_TOKEN instead"
    ]


def test_a_token_from_a_file_or_the_environment_is_out_of_other_users_sight(
    project: Project, another_user: OtherUser, tmp_path: Path
) -> None:
    websockets = pytest.importorskip("websockets.asyncio.client")
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    path.chmod(0o600)

    async def scenario(options: tuple[str, ...], env: dict[str, str]) -> None:
        async with listening(project, *options, env=env) as server:
            ps, cmdline, environ = seen_by(another_user, server.pid)
            assert TOKEN not in ps and TOKEN not in cmdline
            assert environ.returncode != 0 and TOKEN not in environ.stdout
            bare = server.url.split("?")[0]
            async with websockets.connect(bare, additional_headers={"Authorization": f"Bearer {TOKEN}"}):
                pass  # the server takes the token it was given
            with pytest.raises(Exception, match="401"):
                await websockets.connect(bare, additional_headers={"Authorization": "Bearer not-it"})

    run(scenario(("--token-file", str(path)), {}), timeout=120)
    run(scenario((), {TOKEN_ENV: TOKEN}), timeout=120)


@pytest.mark.parametrize("loose", [0o644, 0o640])
def test_a_token_file_others_may_read_is_refused_in_one_line_naming_it(
    project: Project, tmp_path: Path, loose: int
) -> None:
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    path.chmod(loose)
    done = project.run_command("serve", "--listen", "127.0.0.1:0", "--token-file", str(path))
    assert done.returncode == 2
    assert done.stderr == (
        f"extensions serve: the token file {path} has mode {loose:04o}, so other users may read it; "
        f"run `chmod 600 {path}`\n"
    )


def test_the_token_options_go_with_listen_and_not_together(project: Project, tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text(TOKEN)
    path.chmod(0o600)
    alone = project.run_command("serve", "--token-file", str(path))
    assert (alone.returncode, alone.stderr) == (2, "extensions serve: --token and --token-file go with --listen\n")
    both = project.run_command("serve", "--listen", "127.0.0.1:0", "--token", "x", "--token-file", str(path))
    assert both.returncode == 2 and "not allowed with argument" in both.stderr


@pytest.mark.parametrize("value", ["0", "-1", "many", "2.5"])
def test_a_max_sessions_that_is_not_a_whole_number_of_at_least_one_is_refused_in_one_line(
    project: Project, value: str
) -> None:
    done = project.run_command("serve", f"--max-sessions={value}")
    assert done.returncode == 2
    assert done.stderr == f"extensions serve: --max-sessions must be a whole number of at least 1, not {value!r}\n"


def test_serve_with_max_sessions_refuses_the_session_past_it_naming_the_option(project: Project) -> None:
    script = write_script(project.home / "script.json", [])

    async def scenario() -> str:
        async with stdio_server(
            project.command("serve", "--agent", f"scripted:{script}", "--max-sessions", "1")
        ) as client:
            await client.initialize()
            await client.create_session("copilot:/first", project.root)
            with pytest.raises(RpcError) as refused:
                await client.create_session("copilot:/second", project.root)
            return refused.value.message

    message = run(scenario(), timeout=90)
    assert message.startswith("this server hosts at most 1 session; ") and "--max-sessions" in message


def test_serve_without_an_agent_opens_sessions_and_a_prompt_fails_saying_how_to_configure_one(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No ``--agent`` and no OpenAI variables: the session opens, its turn ends in one line
    naming ``--agent`` and the variables."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    async def scenario() -> str:
        async with stdio_server(project.command("serve")) as client:
            await client.initialize()
            await client.create_session("copilot:/one", project.root)
            await client.request("subscribe", {"resource": "copilot:/one"})
            client.start_turn("copilot:/one", "t1", "hello?")
            error = await client.wait_for_action("session/error", turnId="t1")
            return str(error["error"]["message"])

    message = run(scenario(), timeout=90)
    assert message.endswith(NO_AGENT) and "\n" not in message
    assert "--agent" in message and "OPENAI_BASE_URL" in message and "OPENAI_API_KEY" in message


def test_serve_with_an_openai_endpoint_in_the_environment_answers_with_it(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``OPENAI_BASE_URL`` (and a key) set: the OpenAI-compatible agent is the default one."""
    with ChatServer([Answer("hello from the endpoint")]) as endpoint:
        monkeypatch.setenv("OPENAI_BASE_URL", endpoint.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")

        async def scenario() -> list[dict[str, object]]:
            async with stdio_server(project.command("serve")) as client:
                await client.initialize()
                await client.create_session("copilot:/one", project.root)
                await client.request("subscribe", {"resource": "copilot:/one"})
                client.start_turn("copilot:/one", "t1", "hello?")
                await client.wait_for_action("session/turnComplete", turnId="t1")
                return client.actions()

        actions = run(scenario(), timeout=90)
    assert endpoint.requests and "hello from the endpoint" in str(actions)


def _serve_at_a_terminal(project: Project, *options: str, stdin_terminal: bool) -> str:
    """``serve`` with its stderr (and, with ``stdin_terminal``, its stdin) on a pseudo-terminal:
    its first line there, then stopped with SIGTERM and reaped."""
    main, terminal = os.openpty()
    process = subprocess.Popen(
        project.command("serve", *options),
        stdin=terminal if stdin_terminal else subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=terminal,
        env={key: value for key, value in os.environ.items() if not key.startswith("OPENAI_")},
    )
    os.close(terminal)
    said = b""
    try:
        deadline = time.monotonic() + 60
        while b"\n" not in said and time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 1)
            if ready:
                said += os.read(main, 4096)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        finally:
            if process.returncode is None:
                process.kill()
                process.wait()
            os.close(main)
    return said.decode()


def test_serve_says_at_a_terminal_where_it_listens_and_which_agent_answers(project: Project, tmp_path: Path) -> None:
    """The WebSocket's address without its token and where clients find it; the socket's path;
    stdin/stdout when a person started it there."""
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    token_file.chmod(0o600)
    said = _serve_at_a_terminal(
        project, "--listen", "127.0.0.1:0", "--token-file", str(token_file), stdin_terminal=False
    )
    assert said.startswith("serving the client protocol on ws://127.0.0.1:"), said
    assert f"(clients give the token in {token_file}; a browser opens the page http://127.0.0.1:" in said
    assert TOKEN not in said
    assert "no agent configured" in said
    said = _serve_at_a_terminal(project, "--socket", stdin_terminal=False)
    assert said.startswith("serving the client protocol on the Unix socket /") and "(this user only)" in said
    said = _serve_at_a_terminal(project, stdin_terminal=True)
    assert said.startswith("serving the client protocol on stdin/stdout"), said


def test_serve_on_stdio_started_by_a_client_says_nothing_on_a_terminal(project: Project) -> None:
    """A client that starts it owns stdin and stdout: once it has answered the client, nothing
    has been said, even with stderr a terminal."""
    main, terminal = os.openpty()

    async def scenario() -> None:
        async with stdio_server(project.command("serve"), stderr=terminal) as client:
            os.close(terminal)
            await client.initialize()

    try:
        run(scenario(), timeout=90)
        readable, _, _ = select.select([main], [], [], 0)
        try:
            said = os.read(main, 4096) if readable else b""
        except OSError:  # EIO: the server has gone and wrote nothing
            said = b""
    finally:
        os.close(main)
    assert said == b""
