"""``extensions hook claude|gemini EVENT`` as the agents run it: a real process, JSON on stdin."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from extension_host.bridges.agent_hooks.deadline import HOOK_TIMEOUT_ENV
from extension_host.bridges.agent_hooks.host_start import HOOK_HOST_IDLE_ENV
from extension_host.launch.interpreter import python_command
from extension_host.project.paths import RUNTIME_ENV, control_socket_path
from extension_host.project.trust import TRUST_ENV
from helpers import (
    SLOW_TO_JOIN,
    OtherUser,
    Project,
    hook_command,
    run,
    running_dev,
    wait_for_exit,
    write_trust_record,
)

pytestmark = pytest.mark.subprocess

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
                code, answer, _ = await hook_command(
                    project, "claude", "PreToolUse", json.dumps(CLAUDE_PRE).encode(), short=short
                )
                assert code == 0
                assert deny_of(answer) == ("deny", "no rm -rf here")
            harmless = {**CLAUDE_PRE, "tool_input": {"command": "make"}}
            assert await hook_command(project, "claude", "PreToolUse", json.dumps(harmless).encode()) == (0, None, "")

    run(scenario())
    # One extension process answered every call: the running host's, not one started per call.
    assert len(set(pids.read_text().split())) == 1
    assert len(pids.read_text().split()) == 3


def test_with_a_running_host_a_guard_that_fails_denies(project: Project, tmp_path: Path, monkeypatch: Any) -> None:
    setup(project, tmp_path, monkeypatch)
    payload = {"tool_name": "run_shell_command", "tool_input": {"command": "explode"}, "hook_event_name": "BeforeTool"}

    async def scenario() -> None:
        async with running_dev(project):
            code, answer, _ = await hook_command(project, "gemini", "BeforeTool", json.dumps(payload).encode())
            assert code == 0
            assert answer["decision"] == "deny"
            assert "the guard broke" in answer["reason"]

    run(scenario())


def test_without_a_host_one_is_started_for_the_call(project: Project, tmp_path: Path, monkeypatch: Any) -> None:
    pids = setup(project, tmp_path, monkeypatch)

    async def scenario() -> None:
        code, answer, _ = await hook_command(project, "claude", "PreToolUse", json.dumps(CLAUDE_PRE).encode())
        assert code == 0
        assert deny_of(answer) == ("deny", "no rm -rf here")
        prompt = {"hook_event_name": "BeforeAgent", "prompt": "build it", "session_id": "s"}
        code, answer, _ = await hook_command(project, "gemini", "BeforeAgent", json.dumps(prompt).encode())
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
            code, answer, err = await hook_command(project, "claude", "PreToolUse", json.dumps(CLAUDE_PRE).encode())
            assert (code, answer) == (2, None)
            assert "failing closed" in err
            assert "could not be asked: the host" in err
            start = {"hook_event_name": "SessionStart", "source": "startup"}
            code, answer, err = await hook_command(project, "claude", "SessionStart", json.dumps(start).encode())
            assert (code, answer) == (1, None)  # an observer only warns

    run(scenario())


def test_bad_json_on_stdin_blocks_a_guard_with_one_line(project: Project) -> None:
    async def scenario() -> None:
        code, answer, err = await hook_command(project, "gemini", "BeforeTool", b"{oops")
        assert (code, answer) == (2, None)
        assert err.count("\n") == 1
        assert "Gemini CLI BeforeTool payload on stdin is not JSON" in err

    run(scenario())


def nested_payload(event: str, field: str, depth: int) -> bytes:
    """A payload of ``event`` whose ``field`` is arrays nested so that the whole nests ``depth`` levels."""
    arrays = "[" * (depth - 1) + "]" * (depth - 1)
    return f'{{"hook_event_name": "{event}", "tool_name": "Bash", "{field}": {arrays}, "tool_response": "ok"}}'.encode()


@pytest.mark.parametrize("depth", [101, 100_000])
def test_a_payload_nested_too_deeply_blocks_a_guard_and_warns_otherwise_in_one_line_naming_the_nesting(
    project: Project, depth: int
) -> None:
    """Just past the wire's limit, or far past the JSON decoder's recursion: a guard event is
    blocked and an observer's warns, in one line that says the payload nests too deeply and
    shows no RecursionError."""
    project.add_extension("guard", GUARD)
    fault = "payload on stdin is nested deeper than 100 levels\n"

    async def scenario() -> None:
        code, answer, err = await hook_command(
            project, "claude", "PreToolUse", nested_payload("PreToolUse", "tool_input", depth)
        )
        assert (code, answer) == (2, None)
        assert err == f"blocked by the project's extensions (failing closed): the Claude Code PreToolUse {fault}"
        code, answer, err = await hook_command(
            project, "gemini", "AfterTool", nested_payload("AfterTool", "tool_input", depth)
        )
        assert (code, answer) == (1, None)
        assert err == f"extensions hook gemini AfterTool: the Gemini CLI AfterTool {fault}"

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


# -- one deadline ------------------------------------------------------------------------------


def test_a_host_started_for_the_call_that_is_slow_costs_one_deadline_and_its_extensions_are_stopped(
    project: Project, tmp_path: Path, monkeypatch: Any
) -> None:
    """With the background host off, the call's own host would wait 30 s for the extension to
    join and 30 s for each hook: past the agents' 60 s. It draws from the command's deadline
    instead (lowered to 5 s here): a guard event blocks, another warns, each in one line naming
    what took too long, and the extension started for the call is stopped."""
    pids = setup(project, tmp_path, monkeypatch)
    project.add_extension("slow", SLOW_TO_JOIN)
    monkeypatch.setenv(HOOK_TIMEOUT_ENV, "5")
    too_long = "starting the project's extensions for this call and running its hooks took longer than the 5 s"
    start = json.dumps({"hook_event_name": "SessionStart", "source": "startup"}).encode()

    for event, stdin, exit_code in (("PreToolUse", json.dumps(CLAUDE_PRE).encode(), 2), ("SessionStart", start, 1)):
        began = time.monotonic()
        code, answer, err = run(hook_command(project, "claude", event, stdin))
        took = time.monotonic() - began
        assert (code, answer) == (exit_code, None), err
        assert err.count("\n") == 1 and too_long in err, err
        assert took < 20, f"{event} took {took:.1f} s, as long as waiting for the extension to join"
    started = [int(pid) for pid in pids.read_text().split()]
    assert len(started) == 2
    for pid in started:
        assert wait_for_exit(pid), f"the extension started for a call (pid {pid}) was left running"


# -- a trust record that cannot be read --------------------------------------------------------


def damage(record: Path, how: str) -> str:
    """Make ``record`` unusable ``how``; the fix its refusal names."""
    if how == "damaged":
        record.write_text('{"version": 1, "projects": {', encoding="utf-8")
        return "fix it or remove it"
    if how == "open to others' writes":
        record.chmod(0o666)
        return f"chmod 600 {record}"
    record.unlink()
    record.mkdir()  # a folder where the file should be
    return "remove it and decide again"


START = json.dumps({"hook_event_name": "SessionStart", "source": "startup"}).encode()


@pytest.mark.parametrize("how", ["damaged", "open to others' writes", "a folder"])
def test_a_trust_record_that_cannot_be_read_blocks_guard_events_naming_it_and_warns_at_others(
    project: Project, tmp_path: Path, monkeypatch: Any, how: str
) -> None:
    """Trust that cannot be determined is not a decision: the project's guard cannot run, so a
    guard event is blocked in one line naming the record, what is wrong and the fix, and any
    other event goes on with a warning. A project with no decision at all is untrusted and not
    blocked, as before."""
    setup(project, tmp_path, monkeypatch)
    monkeypatch.delenv(TRUST_ENV)
    record = write_trust_record(project)
    fix = damage(record, how)
    stdin = json.dumps(CLAUDE_PRE).encode()

    code, answer, err = run(hook_command(project, "claude", "PreToolUse", stdin))
    assert (code, answer) == (2, None), err
    assert err.count("\n") == 1, err
    assert "this project's extensions cannot run, as the trust record cannot be read" in err
    assert str(record) in err and fix in err

    code, answer, err = run(hook_command(project, "claude", "SessionStart", START))
    assert (code, answer) == (0, None), err
    assert err.count("\n") == 1 and "warning" in err and str(record) in err, err

    if record.is_dir():
        record.rmdir()
    else:
        record.unlink()
    assert run(hook_command(project, "claude", "PreToolUse", stdin)) == (0, None, "")


def test_a_trust_record_another_user_owns_blocks_guard_events_naming_it(
    project: Project, tmp_path: Path, monkeypatch: Any, another_user: OtherUser
) -> None:
    """A record another user owns is refused (they could have written it), so the project's
    guard does not run: a guard event is blocked, naming the record, its owner and the fix."""
    setup(project, tmp_path, monkeypatch)
    monkeypatch.delenv(TRUST_ENV)
    record = write_trust_record(project)
    os.chown(record, another_user.uid, another_user.gid)

    code, answer, err = run(hook_command(project, "claude", "PreToolUse", json.dumps(CLAUDE_PRE).encode()))
    assert (code, answer) == (2, None), err
    assert err.count("\n") == 1, err
    assert f"{record} belongs to uid {another_user.uid}, not you; remove it and decide again" in err


# -- a runtime folder another user took first -----------------------------------------------


@pytest.fixture
def shared_temp() -> Iterator[Path]:
    """A temporary folder every user may add to (mode 1777, as /tmp is), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="eh-tmp-"))
    folder.chmod(0o1777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_runtime_folder_another_user_took_first_leaves_each_call_to_a_host_of_its_own(
    project: Project, tmp_path: Path, monkeypatch: Any, another_user: OtherUser, shared_temp: Path
) -> None:
    """Without XDG_RUNTIME_DIR (ssh without logind, cron, containers) the runtime folder falls back
    to runtime-<uid> in the temporary folder, a name anyone can take first. Another user's folder
    there is refused, as it must be, yet the guard still judges every call: in a host started for
    the call, with one warning line naming the folder, its owner and what to do. The folder is
    left as it was."""
    setup(project, tmp_path, monkeypatch)
    env = {name: value for name, value in os.environ.items() if name not in (RUNTIME_ENV, "XDG_RUNTIME_DIR")}
    env |= {"TMPDIR": str(shared_temp), HOOK_HOST_IDLE_ENV: "300"}
    fallback = subprocess.run(
        python_command("-c", "from extension_host.project.paths import runtime_dir; print(runtime_dir())"),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.strip()
    squatted = shared_temp / f"runtime-{os.geteuid()}"
    if not fallback.startswith(f"{squatted}/"):
        pytest.skip(f"this machine's runtime folder is {fallback}, not one in the temporary folder")
    made = another_user.run("mkdir", "-m", "0755", str(squatted))
    assert made.returncode == 0, made.stderr

    for command, expected in (("rm -rf build", ("deny", "no rm -rf here")), ("make", None)):
        payload = json.dumps({**CLAUDE_PRE, "tool_input": {"command": command}}).encode()
        code, answer, err = run(hook_command(project, "claude", "PreToolUse", payload, env=env))
        assert code == 0, err
        assert (deny_of(answer) if answer is not None else None) == expected
        assert err.count("\n") == 1, err
        assert str(squatted) in err and f"uid {another_user.uid}" in err
        assert RUNTIME_ENV in err and "answered by a host started for this call" in err
    assert squatted.lstat().st_uid == another_user.uid
    assert list(squatted.iterdir()) == []


# -- extensions that cannot judge ------------------------------------------------------------

BROKEN = "raise RuntimeError('no config for the guard')\n"

CAT_DOT_ENV = {
    "claude": ("PreToolUse", {**CLAUDE_PRE, "tool_input": {"command": "cat .env"}}),
    "gemini": (
        "BeforeTool",
        {
            "session_id": "s",
            "hook_event_name": "BeforeTool",
            "tool_name": "run_shell_command",
            "tool_input": {"command": "cat .env"},
        },
    ),
}


def assert_blocked_naming(err: str, extension: str, error: str) -> None:
    """One line that names the extension, its error, and both ways out."""
    assert err.count("\n") == 1, err
    assert f"{extension} is failed" in err and error in err
    assert f"extensions inspect {extension.split(':')[1]}" in err
    assert "extensions trust --allow-failed-guards" in err


@pytest.mark.parametrize("agent", ["claude", "gemini"])
def test_a_scaffolded_guard_with_a_syntax_error_blocks_the_call_it_would_have_denied(
    project: Project, agent: str
) -> None:
    """Whole, the scaffolded guard denies `cat .env`; with a syntax error it cannot start, and
    the call is blocked (exit 2) naming it, instead of going through unjudged."""
    event, payload = CAT_DOT_ENV[agent]
    stdin = json.dumps(payload).encode()
    project.run_command("scaffold", "guard", check=True)
    source = project.root / ".github" / "extensions" / "guard" / "extension.py"

    code, answer, err = run(hook_command(project, agent, event, stdin))
    assert code == 0, err
    assert ".env may hold secrets" in json.dumps(answer)

    source.write_text(source.read_text() + "\ndef broken(:\n")
    code, answer, err = run(hook_command(project, agent, event, stdin))
    assert (code, answer) == (2, None)
    assert_blocked_naming(err, "project:guard", "SyntaxError")


def test_an_extension_that_cannot_start_blocks_prompts_too_and_other_events_carry_on(project: Project) -> None:
    """A prompt is a guard event as a tool call is; the observers' events go on without it."""
    project.add_extension("guard", BROKEN)
    prompt = json.dumps({"session_id": "s", "hook_event_name": "UserPromptSubmit", "prompt": "hi"}).encode()
    post = json.dumps(
        {**CLAUDE_PRE, "hook_event_name": "PostToolUse", "tool_input": {"command": "make"}, "tool_response": "ok"}
    ).encode()
    start = json.dumps({"session_id": "s", "hook_event_name": "SessionStart", "source": "startup"}).encode()

    async def scenario() -> None:
        code, answer, err = await hook_command(project, "claude", "UserPromptSubmit", prompt)
        assert (code, answer) == (2, None)
        assert_blocked_naming(err, "project:guard", "RuntimeError: no config for the guard")
        assert await hook_command(project, "claude", "PostToolUse", post) == (0, None, "")
        assert await hook_command(project, "claude", "SessionStart", start) == (0, None, "")

    run(scenario())


def test_a_running_host_with_an_extension_that_cannot_start_blocks_guard_events(
    project: Project, tmp_path: Path, monkeypatch: Any
) -> None:
    """The host that answers over the control socket says so as the one-shot host does: a call
    the running extensions let through is blocked all the same."""
    setup(project, tmp_path, monkeypatch)
    project.add_extension("helper", BROKEN)
    harmless = json.dumps({**CLAUDE_PRE, "tool_input": {"command": "make"}}).encode()

    async def scenario() -> None:
        async with running_dev(project):
            code, answer, err = await hook_command(project, "claude", "PreToolUse", harmless)
            assert (code, answer) == (2, None)
            assert_blocked_naming(err, "project:helper", "RuntimeError: no config for the guard")

    run(scenario())


def test_allowing_failed_guards_lets_calls_through_with_a_warning_until_the_project_is_trusted_again(
    project: Project,
) -> None:
    """The relaxation is the user's, recorded with their trust in the project (a repository
    cannot ship it); plain `extensions trust` ends it."""
    project.add_extension("guard", BROKEN)
    event, payload = CAT_DOT_ENV["claude"]
    stdin = json.dumps(payload).encode()

    def trust(*options: str) -> None:
        project.run_command("trust", *options, check=True)

    trust("--allow-failed-guards")
    code, answer, err = run(hook_command(project, "claude", event, stdin))
    assert (code, answer) == (0, None)
    assert err.count("\n") == 1 and "warning" in err and "project:guard is failed" in err

    trust()
    code, answer, err = run(hook_command(project, "claude", event, stdin))
    assert (code, answer) == (2, None)
    assert_blocked_naming(err, "project:guard", "RuntimeError: no config for the guard")
