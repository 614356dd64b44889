"""``extensions hook claude|gemini EVENT`` as the agents run it: a real process, JSON on stdin."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from extension_host.paths import control_socket_path
from helpers import Project, run, running_dev

GUARD = """
import os
from pathlib import Path
from sdk_extension import join_session

def guard(input, invocation):
    with open(Path(os.environ["PIDS_FILE"]), "a") as pids:
        pids.write(f"{os.getpid()}\\n")
    command = input.tool_args.get("command", "")
    if "rm -rf" in command:
        return {"permission_decision": "deny", "permission_decision_reason": "no rm -rf here"}
    if command == "explode":
        raise RuntimeError("the guard broke")
    return None

def context(input, invocation):
    return {"additional_context": "the build uses make"}

join_session(hooks={"on_pre_tool_use": guard, "on_user_prompt_submitted": context})
"""

CLAUDE_PRE = {
    "session_id": "abc123",
    "transcript_path": "/tmp/abc123.jsonl",
    "cwd": "/tmp",
    "permission_mode": "default",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "rm -rf build"},
    "tool_use_id": "toolu_01",
}


def setup(project: Project, tmp_path: Path, monkeypatch: Any) -> Path:
    pids = tmp_path / "pids.txt"
    monkeypatch.setenv("PIDS_FILE", str(pids))
    project.add_extension("guard", GUARD)
    return pids


async def hook(project: Project, agent: str, event: str, stdin: bytes, *, short: bool = True) -> tuple[int, Any, str]:
    """Run the hook command in the project as an agent would; exit code, parsed stdout, stderr.

    ``short``: the exact command line the settings hold (the launcher's fast path), run in the
    project folder; otherwise with ``--root``/``--home`` first (the full command line parser).
    """
    if short:
        argv = [sys.executable, "-m", "extension_host", "hook", agent, event]
    else:
        argv = project.command("hook", agent, event)
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=project.root,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    async with asyncio.timeout(60):
        out, err = await process.communicate(stdin)
    assert process.returncode is not None
    return process.returncode, json.loads(out) if out.strip() else None, err.decode()


def deny_of(answer: Any) -> tuple[str, str]:
    specific = answer["hookSpecificOutput"]
    return specific["permissionDecision"], specific["permissionDecisionReason"]


def test_with_a_running_host_the_hook_is_answered_by_its_extension(
    project: Project, tmp_path: Path, monkeypatch: Any
) -> None:
    pids = setup(project, tmp_path, monkeypatch)

    async def scenario() -> None:
        async with running_dev(project):
            for short in (True, False):
                code, answer, _ = await hook(
                    project, "claude", "PreToolUse", json.dumps(CLAUDE_PRE).encode(), short=short
                )
                assert code == 0
                assert deny_of(answer) == ("deny", "no rm -rf here")
            harmless = {**CLAUDE_PRE, "tool_input": {"command": "make"}}
            assert await hook(project, "claude", "PreToolUse", json.dumps(harmless).encode()) == (0, None, "")

    run(scenario())
    # One extension process answered every call: the running host's, not one started per call.
    assert len(set(pids.read_text().split())) == 1
    assert len(pids.read_text().split()) == 3


def test_with_a_running_host_a_guard_that_fails_denies(project: Project, tmp_path: Path, monkeypatch: Any) -> None:
    setup(project, tmp_path, monkeypatch)
    payload = {"tool_name": "run_shell_command", "tool_input": {"command": "explode"}, "hook_event_name": "BeforeTool"}

    async def scenario() -> None:
        async with running_dev(project):
            code, answer, _ = await hook(project, "gemini", "BeforeTool", json.dumps(payload).encode())
            assert code == 0
            assert answer["decision"] == "deny"
            assert "the guard broke" in answer["reason"]

    run(scenario())


def test_without_a_host_one_is_started_for_the_call(project: Project, tmp_path: Path, monkeypatch: Any) -> None:
    pids = setup(project, tmp_path, monkeypatch)

    async def scenario() -> None:
        code, answer, _ = await hook(project, "claude", "PreToolUse", json.dumps(CLAUDE_PRE).encode())
        assert code == 0
        assert deny_of(answer) == ("deny", "no rm -rf here")
        prompt = {"hook_event_name": "BeforeAgent", "prompt": "build it", "session_id": "s"}
        code, answer, _ = await hook(project, "gemini", "BeforeAgent", json.dumps(prompt).encode())
        assert (code, answer["hookSpecificOutput"]["additionalContext"]) == (0, "the build uses make")

    run(scenario())
    assert len(pids.read_text().split()) == 1
    assert not control_socket_path(project.root).exists()  # the call's host is gone with it


def test_a_host_that_does_not_answer_makes_the_guard_block(project: Project, tmp_path: Path, monkeypatch: Any) -> None:
    setup(project, tmp_path, monkeypatch)
    path = control_socket_path(project.root)

    async def hang_up(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    async def scenario() -> None:
        server = await asyncio.start_unix_server(hang_up, os.fspath(path))
        async with server:
            code, answer, err = await hook(project, "claude", "PreToolUse", json.dumps(CLAUDE_PRE).encode())
            assert (code, answer) == (2, None)
            assert "failing closed" in err
            assert "could not be asked: the host" in err
            start = {"hook_event_name": "SessionStart", "source": "startup"}
            code, answer, err = await hook(project, "claude", "SessionStart", json.dumps(start).encode())
            assert (code, answer) == (1, None)  # an observer only warns

    run(scenario())


def test_bad_json_on_stdin_blocks_a_guard_with_one_line(project: Project) -> None:
    async def scenario() -> None:
        code, answer, err = await hook(project, "gemini", "BeforeTool", b"{oops")
        assert (code, answer) == (2, None)
        assert err.count("\n") == 1
        assert "Gemini CLI BeforeTool payload on stdin is not JSON" in err

    run(scenario())


def test_a_root_that_cannot_be_used_blocks_a_guard(project: Project, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"

    async def scenario() -> None:
        argv = [sys.executable, "-m", "extension_host", "--root", str(missing), "hook", "claude", "PreToolUse"]
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        async with asyncio.timeout(60):
            out, err = await process.communicate(json.dumps(CLAUDE_PRE).encode())
        assert (process.returncode, out) == (2, b"")
        assert str(missing) in err.decode()

    run(scenario())
