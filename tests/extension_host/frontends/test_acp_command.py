"""``extensions acp`` as an editor runs it: a real process, the ACP SDK's client on its stdio, an
OpenAI-compatible endpoint on loopback (tests/chat_server.py); raw lines a client should never
send; the registration snippets."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from typing import Any

import pytest
from acp import text_block

from acp_client import RecordingClient, spawned, updates_of
from chat_server import Answer, ChatServer
from extension_host.launch.interpreter import python_command
from helpers import Project, chat_env, run

pytestmark = pytest.mark.subprocess

ECHO = """
from sdk_extension import join_session, tool

@tool(name="echo", description="Echo the text.")
def echo(text: str) -> str:
    return text

session = join_session(tools=[echo])
"""


def _env() -> dict[str, str]:
    return {**chat_env(), "EXTENSION_HOST_TRUST_PROJECT": "1"}


def test_a_turn_with_the_openai_agent_streams_its_reply_and_an_extensions_tool_call(project: Project) -> None:
    project.add_extension("echo", ECHO)
    client = RecordingClient()
    script = [Answer("", [("echo", {"text": "hi"})]), Answer("It said hi.", pieces=["It said ", "hi."])]

    async def scenario(url: str) -> tuple[Any, int | None]:
        args = ["--base-url", url, "--model", "test-model"]
        async with spawned(client, project.home, args, _env()) as (sdk, process):
            await sdk.initialize(protocol_version=1)
            session = await sdk.new_session(cwd=str(project.root), mcp_servers=[])
            answer = await sdk.prompt(session_id=session.session_id, prompt=[text_block("echo hi")])
        async with asyncio.timeout(30):
            return answer, await process.wait()

    with ChatServer(script) as server:
        answer, code = run(scenario(server.base_url), timeout=90)
    assert answer.stop_reason == "end_turn"
    assert code == 0
    assert [u["content"]["text"] for u in updates_of(client, "agent_message_chunk")] == ["It said ", "hi."]
    completed = updates_of(client, "tool_call_update")[-1]
    assert completed["status"] == "completed"
    assert completed["content"][0]["content"]["text"] == "hi"
    assert server.requests[1]["messages"][-1]["content"] == "hi"
    assert client.schema_errors == []


def _raw(project: Project, lines: bytes) -> subprocess.CompletedProcess[bytes]:
    script = project.home / "empty.json"
    script.write_text("[]")
    command = python_command(
        "-m", "extension_host", "--home", str(project.home), "acp", "--agent", f"scripted:{script}"
    )
    return subprocess.run(command, input=lines, capture_output=True, env=_env(), timeout=60)


def test_malformed_deep_and_oversized_lines_are_each_one_error_and_the_agent_goes_on(project: Project) -> None:
    deep = b'{"jsonrpc": "2.0", "id": 5, "params": ' + b"[" * 200 + b"]" * 200 + b"}"
    lines = [
        b"this is not json",
        b"[1, 2]",
        deep,
        b'{"jsonrpc": "2.0", "id": 6, "method": "x", "params": "' + b"a" * (17 * 1024 * 1024) + b'"}',
        b'{"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {"protocolVersion": "one"}}',
        b'{"jsonrpc": "2.0", "id": 8, "method": "nope"}',
        b'{"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {"protocolVersion": 1}}',
    ]
    done = _raw(project, b"\n".join(lines) + b"\n")
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0
    assert [answer["error"]["code"] for answer in answers[:2]] == [-32700, -32700]  # in order: no id to tell
    by_id = {answer["id"]: answer for answer in answers[2:]}  # answers may come in any order
    assert sorted(by_id) == [5, 6, 7, 8, 9]
    assert {key: by_id[key]["error"]["code"] for key in (5, 6, 7, 8)} == {5: -32700, 6: -32700, 7: -32602, 8: -32601}
    assert "line longer than" in by_id[6]["error"]["message"]
    assert by_id[7]["error"]["message"].startswith("initialize: protocolVersion: ")
    assert by_id[9]["result"]["protocolVersion"] == 1
    assert b"Traceback" not in done.stderr


def test_print_config_gives_each_editor_a_snippet_naming_this_interpreter_and_never_a_key(project: Project) -> None:
    env = {**chat_env(), "OPENAI_API_KEY": "sk-do-not-print"}
    for editor, where in (("zed", "~/.config/zed/settings.json"), ("jetbrains", "~/.jetbrains/acp.json")):
        done = subprocess.run(
            python_command("-m", "extension_host", "acp", "--print-config", editor, "--model", "m"),
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        entry = json.loads(done.stdout)["agent_servers"]["extension-host"]
        assert entry["command"] == sys.executable
        assert entry["args"] == ["-P", "-m", "extension_host", "acp", "--model", "m"]
        assert (entry.get("type") == "custom") is (editor == "zed")
        assert where in done.stderr
        assert "sk-do-not-print" not in done.stdout + done.stderr


def test_an_unknown_agent_or_an_unreadable_script_is_one_line_and_no_protocol(project: Project) -> None:
    for args, expected, code in (
        (["--agent", "magic"], "error: --agent magic: no such agent; use openai or scripted:FILE", 2),
        (["--agent", "scripted:/no/such/file.json"], "error: --agent scripted:/no/such/file.json: cannot read", 1),
    ):
        done = project.run_command("acp", *args)
        assert done.returncode == code
        assert done.stdout == ""
        (line,) = done.stderr.splitlines()
        assert line.startswith(expected), line


def test_the_agent_ends_when_the_client_closes_stdin_and_leaves_no_extension_running(project: Project) -> None:
    project.add_extension("echo", ECHO)
    marker = project.root / "pid"
    project.add_extension(
        "pid", f"import os; open({str(marker)!r}, 'w').write(str(os.getpid()))\n" + ECHO.replace("echo", "echo2")
    )
    client = RecordingClient()

    async def scenario() -> int:
        script = project.home / "empty.json"
        script.write_text("[]")
        async with spawned(client, project.home, ["--agent", f"scripted:{script}"], _env()) as (sdk, process):
            await sdk.initialize(protocol_version=1)
            await sdk.new_session(cwd=str(project.root), mcp_servers=[])
        async with asyncio.timeout(30):
            return await process.wait()

    assert run(scenario(), timeout=90) == 0
    pid = int(marker.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
