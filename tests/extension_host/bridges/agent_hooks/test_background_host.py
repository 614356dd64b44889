"""The background host hook commands start on demand: real hook commands, real detached hosts."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from extension_host.bridges.agent_hooks.deadline import HOOK_TIMEOUT_ENV
from extension_host.bridges.agent_hooks.host_start import (
    DEFAULT_HOOK_HOST_IDLE,
    HOOK_HOST_IDLE_ENV,
    HOOK_HOST_LOG_NAME,
    background_host_pid,
    hook_host_idle,
)
from extension_host.launch.interpreter import python_command
from extension_host.project.paths import control_socket_path, project_logs_dir
from extension_host.project.trust import TRUST_ENV
from helpers import SLOW_TO_JOIN, Project, hook_command, process_exists, run, wait_for_exit, write_trust_record

pytestmark = pytest.mark.subprocess

GUARD = """
import os
from pathlib import Path
from sdk_extension import join_session

def guard(input, invocation):
    with open(Path(os.environ["PIDS_FILE"]), "a") as pids:
        pids.write(f"{os.getpid()}\\n")
    if "rm -rf" in input.tool_args.get("command", ""):
        return {"permission_decision": "deny", "permission_decision_reason": "no rm -rf here"}
    return None

join_session(hooks={"on_pre_tool_use": guard})
"""

PRE_TOOL_USE = json.dumps(
    {"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "rm -rf b"}}
).encode()


def pid_file(project: Project) -> Path:
    return control_socket_path(project.root).with_suffix(".hook-host.pid")


@pytest.fixture
def background(project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A guard extension, the background host turned on, and every background host this test
    started ended afterwards, pass or fail (it is detached: the reaper does not know it)."""
    pids = tmp_path / "pids.txt"
    monkeypatch.setenv("PIDS_FILE", str(pids))
    monkeypatch.setenv(HOOK_HOST_IDLE_ENV, "300")
    project.add_extension("guard", GUARD)
    try:
        yield pids
    finally:
        try:
            pid: int | None = int(pid_file(project).read_text())
        except (OSError, ValueError):
            pid = None
        if pid is not None and process_exists(pid):
            os.kill(pid, signal.SIGTERM)
            if not wait_for_exit(pid, 15):
                os.killpg(pid, signal.SIGKILL)  # its own session: it leads its process group
        for line in pids.read_text().split() if pids.exists() else ():
            if process_exists(int(line)):
                os.kill(int(line), signal.SIGKILL)


async def hook(project: Project) -> tuple[int, Any, str]:
    return await hook_command(project, "claude", "PreToolUse", PRE_TOOL_USE)


def assert_denied(result: tuple[int, Any, str]) -> None:
    code, answer, err = result
    assert code == 0, err
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert answer["hookSpecificOutput"]["permissionDecisionReason"] == "no rm -rf here"


def test_the_first_call_starts_a_background_host_and_later_calls_reuse_it(project: Project, background: Path) -> None:
    assert_denied(run(hook(project)))
    host_pid = background_host_pid(project.root)
    assert host_pid is not None
    assert_denied(run(hook(project)))
    assert_denied(run(hook(project)))

    extension_pids = background.read_text().split()
    assert len(extension_pids) == 3
    assert len(set(extension_pids)) == 1  # one extension process answered every call
    assert background_host_pid(project.root) == host_pid
    log = project_logs_dir(project.home, project.root) / HOOK_HOST_LOG_NAME
    assert f"serving {project.root} (pid {host_pid}" in log.read_text()


def test_the_background_hosts_pid_file_and_log_are_its_users_alone(project: Project, background: Path) -> None:
    assert_denied(run(hook(project)))
    logs = project_logs_dir(project.home, project.root)
    modes = {path: stat.S_IMODE(path.stat().st_mode) for path in (pid_file(project), logs / HOOK_HOST_LOG_NAME, logs)}
    assert modes == {pid_file(project): 0o600, logs / HOOK_HOST_LOG_NAME: 0o600, logs: 0o700}


def test_the_background_host_exits_by_itself_when_idle_and_stops_its_extension(
    project: Project, background: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HOOK_HOST_IDLE_ENV, "1")
    assert_denied(run(hook(project)))
    host_pid = int(pid_file(project).read_text())
    extension_pid = int(background.read_text().split()[0])

    assert wait_for_exit(host_pid, 30)
    assert wait_for_exit(extension_pid, 15)
    assert not control_socket_path(project.root).exists()
    assert "idle; stopping" in (project_logs_dir(project.home, project.root) / HOOK_HOST_LOG_NAME).read_text()


def test_two_racing_first_calls_start_one_background_host(project: Project, background: Path) -> None:
    async def both() -> list[tuple[int, Any, str]]:
        return list(await asyncio.gather(hook(project), hook(project)))

    for result in run(both()):
        assert_denied(result)
    assert len(set(background.read_text().split())) == 1
    log = (project_logs_dir(project.home, project.root) / HOOK_HOST_LOG_NAME).read_text()
    assert log.count("serving") == 1


def test_a_stale_socket_file_is_replaced_by_the_background_host(project: Project, background: Path) -> None:
    path = control_socket_path(project.root)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(os.fspath(path))
    stale.close()  # the file stays; nobody listens on it

    assert_denied(run(hook(project)))
    assert background_host_pid(project.root) is not None


def test_hook_stop_stops_the_background_host_and_its_extension(project: Project, background: Path) -> None:
    assert_denied(run(hook(project)))
    host_pid = background_host_pid(project.root)
    extension_pid = int(background.read_text().split()[0])

    stopped = project.run_command("hook", "stop", "--json", check=True)
    assert json.loads(stopped.stdout) == {"root": str(project.root), "stopped": host_pid}
    assert host_pid is not None and wait_for_exit(host_pid, 15)  # stop waited for it: already gone (or a zombie)
    assert wait_for_exit(extension_pid, 15)
    again = project.run_command("hook", "stop", check=True)
    assert again.stdout.strip() == f"no background host runs for {project.root}"


def test_with_the_background_host_off_every_call_starts_its_own(
    project: Project, background: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HOOK_HOST_IDLE_ENV, "off")
    assert_denied(run(hook(project)))
    assert_denied(run(hook(project)))
    assert len(set(background.read_text().split())) == 2
    assert not pid_file(project).exists()


def test_a_background_host_that_hangs_is_stopped_and_the_next_call_starts_a_new_one(
    project: Project, background: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host that stops answering (here: stopped with SIGSTOP, its socket still accepting) costs
    the call that finds it one timeout: that call blocks, and since it is the background host
    hook commands started, it is stopped, so the next call starts a healthy one."""
    assert_denied(run(hook(project)))
    hung = background_host_pid(project.root)
    assert hung is not None
    os.kill(hung, signal.SIGSTOP)

    with monkeypatch.context() as patch:
        patch.setenv(HOOK_TIMEOUT_ENV, "5")
        code, answer, err = run(hook(project))
    assert (code, answer) == (2, None)
    assert err.count("\n") == 1, err
    assert f"pid {hung}" in err and "stopped it" in err
    assert "did not answer host.hook within the 5 s a hook command has" in err
    assert wait_for_exit(hung, 15)

    assert_denied(run(hook(project)))
    replacement = background_host_pid(project.root)
    assert replacement is not None and replacement != hung


def test_a_background_host_slow_to_start_costs_the_call_one_deadline_and_the_guard_blocks_saying_so(
    project: Project, background: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unbounded, the call would wait for the background host's start (20 s), then for a host of
    its own to start the extension (30 s to join) and run the hooks: past the agents' 60 s, where
    a killed guard lets the call through. Every wait draws from one deadline instead (lowered to
    5 s here): the guard event blocks when it is up, in one line naming the wait it ran out in."""
    project.add_extension("slow", SLOW_TO_JOIN)
    monkeypatch.setenv(HOOK_TIMEOUT_ENV, "5")
    started = time.monotonic()
    code, answer, err = run(hook(project))
    took = time.monotonic() - started
    assert (code, answer) == (2, None)
    assert err.count("\n") == 1, err
    assert "the background host's start took longer than the 5 s a hook command has" in err
    assert took < 20, f"the call took {took:.1f} s, as long as the background host's own start timeout"


def test_a_stop_signal_while_its_extensions_start_stops_the_background_host_and_what_it_started(
    project: Project, background: Path
) -> None:
    """SIGTERM while an extension has not joined yet (it would take minutes, the readiness
    timeout 30 s) does not wait for the start: the host stops that extension and exits."""
    project.add_extension("slow", SLOW_TO_JOIN)
    host = subprocess.Popen(
        python_command(
            "-m",
            "extension_host.bridges.agent_hooks.background_host",
            str(project.root),
            "--idle",
            "300",
            "--home",
            str(project.home),
        ),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not (background.exists() and background.read_text().split()) and time.monotonic() < deadline:
            time.sleep(0.05)  # the extension writes its pid as it starts; no event to wait on
        slow = int(background.read_text().split()[0])
        host.send_signal(signal.SIGTERM)
        out, _ = host.communicate(timeout=15)  # well before its extension would join or time out
        assert host.returncode == 0, out
        assert b"asked to stop while starting" in out
        assert wait_for_exit(slow, 15)
    finally:
        if host.poll() is None:
            os.killpg(host.pid, signal.SIGKILL)
            host.wait(15)


def test_a_trust_record_put_right_by_hand_is_followed_by_the_running_background_host_at_the_next_call(
    project: Project, background: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The background host started while the record was open to other users' writes, so it holds
    the project's extensions back and guard events are blocked saying why. Once the user checks
    the record and runs chmod 600, the next call finds it trusted and readable: the host starts
    the extensions at once and the guard judges that very call (no restart, no trust command)."""
    monkeypatch.delenv(TRUST_ENV)
    record = write_trust_record(project)
    record.chmod(0o666)
    code, answer, err = run(hook(project))
    assert (code, answer) == (2, None), err
    assert f"{record} can be written by other users" in err and f"chmod 600 {record}" in err
    host = background_host_pid(project.root)
    assert host is not None

    record.chmod(0o600)
    assert_denied(run(hook(project)))
    assert background_host_pid(project.root) == host


@pytest.mark.parametrize(
    ("value", "idle"),
    [("", DEFAULT_HOOK_HOST_IDLE), ("90", 90.0), ("0", None), ("off", None), ("-5", None), ("soon", 600.0)],
)
def test_the_idle_setting_is_read_from_the_environment(
    value: str, idle: float | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HOOK_HOST_IDLE_ENV, value)
    assert hook_host_idle() == idle
