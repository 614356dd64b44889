"""Revoking a grant in a running host: every process that holds the value stops at once."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Final

import pytest

from extension_host import Timeouts
from extension_host.control.service import ControlServer
from extension_host.project.trust import TrustStore
from helpers import RAW_PROTOCOL, Project, is_log, process_exists, run, wait_for_event, wait_for_exit

pytestmark = pytest.mark.subprocess

HOLDING = """
    import os, threading
    from sdk_extension import join_session, tool

    @tool(description="Hold GITHUB_TOKEN until the host gives up on the call")
    def hold() -> str:
        session.log(f"holding {os.environ['GITHUB_TOKEN']}")
        threading.Event().wait(600)
        return "released"

    session = join_session(tools=[hold], requested_environment_variables=["GITHUB_TOKEN"])
"""
"""An extension whose one tool keeps its call in flight, so a version of it drains after a reload."""

STUBBORN = (
    RAW_PROTOCOL
    + """
import signal, threading, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)

def handle(message):
    pass

joining = {"sessionId": os.environ["SESSION_ID"], "requestedEnvironmentVariables": ["GITHUB_TOKEN"]}
answer = request(1, "session.resume", joining)
assert answer["result"]["grantedEnvironmentVariables"]["GITHUB_TOKEN"] == "ghp_stubborn"

def serve():
    while True:
        handle(read())  # at end of stream read() ends this thread, not the process

threading.Thread(target=serve, daemon=True).start()
while True:
    time.sleep(60)
"""
)
"""An extension that got the value and ignores end of stream and SIGTERM: only SIGKILL ends it."""


TIMEOUTS: Final = Timeouts(stop_grace=0.5)
"""The timeouts of these tests' hosts: the stop ladder waits half a second at each step, so an
extension that ignores end of stream and SIGTERM is killed within about a second."""


def _granted_spy(project: Project, monkeypatch: pytest.MonkeyPatch, code: str, **values: str) -> Path:
    """Extension ``spy`` made of ``code``, the host having ``values`` and spy granted them all."""
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    TrustStore(project.home).grant(project.root, "project", "spy", values)
    return project.add_extension("spy", code)


def test_a_version_draining_after_a_reload_is_stopped_too_and_its_call_ends(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call in flight keeps the old version draining beside the new one; revoking stops both
    at once, and the call ends with a failure instead of waiting out the drain."""
    folder = _granted_spy(project, monkeypatch, HOLDING, GITHUB_TOKEN="ghp_draining")

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS, watch=False) as host, ControlServer(host):
            old_pid = host.extension("spy").pid
            assert old_pid is not None
            call = asyncio.ensure_future(host.call_tool("hold"))
            await wait_for_event(host, is_log("holding ghp_draining"))
            entry = folder / "extension.py"
            entry.write_text(entry.read_text(encoding="utf-8") + "\n# the next version\n", encoding="utf-8")
            (outcome,) = await host.reload("spy")
            assert outcome.action == "reloaded"
            new_pid = host.extension("spy").pid
            assert new_pid is not None and new_pid != old_pid

            assert await project.cli_in_thread("grant", "spy", "GITHUB_TOKEN", "--revoke") == 0
            assert wait_for_exit(old_pid), "the draining version kept running with a revoked secret"
            assert wait_for_exit(new_pid), "the current version kept running with a revoked secret"
            async with asyncio.timeout(30):
                result = await call
            assert not result.success
            info = host.extension("spy")
            assert info.status == "failed"
            assert info.error is not None and info.error.startswith("needs grant: GITHUB_TOKEN")

    run(scenario())


def test_an_extension_that_ignores_end_of_stream_and_sigterm_is_killed(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    _granted_spy(project, monkeypatch, STUBBORN, GITHUB_TOKEN="ghp_stubborn")

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS, watch=False) as host, ControlServer(host):
            info = host.extension("spy")
            assert info.status == "running", info.error
            assert info.pid is not None
            assert await project.cli_in_thread("grant", "spy", "GITHUB_TOKEN", "--revoke") == 0
            assert wait_for_exit(info.pid), "a stubborn extension kept a revoked secret"
            assert host.extension("spy").status == "failed"

    run(scenario())


def test_revoking_another_variable_leaves_the_extension_running(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a value the extension holds counts: a grant of something else it did not ask for,
    taken back, changes nothing."""
    _granted_spy(project, monkeypatch, HOLDING, GITHUB_TOKEN="ghp_kept", NPM_TOKEN="npm_other")

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS, watch=False) as host, ControlServer(host):
            pid = host.extension("spy").pid
            assert await project.cli_in_thread("grant", "spy", "NPM_TOKEN", "--revoke") == 0
            info = host.extension("spy")
            assert (info.status, info.pid) == ("running", pid)
            assert pid is not None and process_exists(pid)

    run(scenario())


def test_a_host_told_of_a_changed_record_stops_holders_when_the_record_cannot_be_read(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trust file that became unreadable grants nothing, as it would refuse a join."""
    _granted_spy(project, monkeypatch, HOLDING, GITHUB_TOKEN="ghp_damaged")

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS, watch=False) as host:
            pid = host.extension("spy").pid
            assert pid is not None
            TrustStore(project.home).path.write_text("{not json", encoding="utf-8")
            await host.apply_changes(set())
            assert wait_for_exit(pid)
            assert host.extension("spy").status == "failed"

    run(scenario())
