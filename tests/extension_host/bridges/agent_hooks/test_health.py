"""A host that stops answering hook calls costs one timeout, not one per call: real hook
commands against a real process that holds the project's control socket and never answers."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from extension_host.bridges.agent_hooks.deadline import HOOK_TIMEOUT_ENV
from extension_host.project.paths import control_socket_path
from helpers import Project, hook_command, run

pytestmark = pytest.mark.subprocess

GUARD = """
from sdk_extension import join_session

def guard(input, invocation):
    if "rm -rf" in input.tool_args.get("command", ""):
        return {"permission_decision": "deny", "permission_decision_reason": "no rm -rf here"}
    return None

join_session(hooks={"on_pre_tool_use": guard})
"""

SILENT_HOST = r"""
import os, socket, sys
path, log = sys.argv[1], sys.argv[2]
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
os.chmod(path, 0o600)
server.listen()
print("listening", flush=True)
held = []
while True:
    connection, _ = server.accept()
    held.append(connection)  # never answered, never closed
    connection.settimeout(5)
    try:
        data = connection.recv(65536)
    except OSError:
        data = b""
    with open(log, "ab") as record:
        record.write(data + b"\n")
"""
"""Accepts every connection and reads the request, but never answers: a host whose event loop is stuck."""

PRE_TOOL_USE = json.dumps(
    {"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "rm -rf b"}}
).encode()
POST_TOOL_USE = json.dumps(
    {
        "session_id": "s",
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "make"},
        "tool_response": "ok",
    }
).encode()
TIMEOUT = 8.0
"""The hook command's wait for an answer in these tests (the default is 50 s)."""


@contextlib.contextmanager
def silent_host(project: Project, tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """A process listening on the project's control socket that never answers; its log holds
    every request it read, one per line. Killed and reaped on the way out."""
    log = tmp_path / "requests.log"
    log.touch()
    path = control_socket_path(project.root)
    process = subprocess.Popen(
        [sys.executable, "-c", SILENT_HOST, str(path), str(log)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "listening"
        yield process, log
    finally:
        process.kill()
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()


def timed(stdin: bytes, project: Project, event: str = "PreToolUse") -> tuple[tuple[int, Any, str], float]:
    start = time.monotonic()
    result = run(hook_command(project, "claude", event, stdin))
    return result, time.monotonic() - start


def test_a_host_that_stops_answering_costs_one_timeout_then_guards_block_at_once(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first call waits the timeout and blocks, naming the host; it is not a host hook
    commands started, so it is left running. Later calls do not wait for it: a guard event
    blocks at once, another event warns at once, each after one quick status request only.
    Once it is gone the calls are answered again."""
    project.add_extension("guard", GUARD)
    monkeypatch.setenv(HOOK_TIMEOUT_ENV, f"{TIMEOUT:g}")

    with silent_host(project, tmp_path) as (process, log):
        (code, answer, err), _ = timed(PRE_TOOL_USE, project)
        assert (code, answer) == (2, None)
        assert err.count("\n") == 1, err
        assert f"did not answer host.hook within the {TIMEOUT:g} s a hook command has" in err
        assert f"pid {process.pid}" in err and "left running" in err
        assert log.read_text().count('"host.hook"') == 1

        (code, answer, err), seconds = timed(PRE_TOOL_USE, project)
        assert (code, answer) == (2, None)
        assert seconds < TIMEOUT, "the second call waited for the host again"
        assert err.count("\n") == 1, err
        assert f"pid {process.pid}" in err and "not asked until it answers" in err

        (code, answer, err), seconds = timed(POST_TOOL_USE, project, "PostToolUse")
        assert (code, answer) == (1, None)
        assert seconds < TIMEOUT
        assert "not asked until it answers" in err

        requests = log.read_text()
        assert requests.count('"host.hook"') == 1
        assert requests.count('"host.status"') == 2
        assert process.poll() is None

    code, answer, err = run(hook_command(project, "claude", "PreToolUse", PRE_TOOL_USE))
    assert code == 0, err
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert err == ""
