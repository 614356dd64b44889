"""extensions grant: taking a grant back from a running host, and where --revoke may stand."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from extension_host import ExtensionHost, Timeouts
from extension_host.control.service import ControlServer
from extension_host.project.trust import TrustStore
from helpers import Project, process_exists, run, running_dev, wait_for_exit

HOLDER = """
    import os, subprocess, sys, threading
    from sdk_extension import join_session, tool

    started = threading.Event()
    child = []

    @tool(description="Whether this extension has GITHUB_TOKEN, and which processes hold it")
    def report() -> str:
        started.wait(30)
        token = os.environ.get("GITHUB_TOKEN", "<none>")
        return f"token={token} pid={os.getpid()} child={child[0].pid}"

    join_session(tools=[report], requested_environment_variables=["GITHUB_TOKEN"])
    # Started with the value in its environment, in the extension's process group.
    child.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]))
    started.set()
"""
"""An extension that asks for GITHUB_TOKEN, starts a process that inherits it, and reports both."""

REPORT = r"token=(\S+) pid=(\d+) child=(\d+)"


@pytest.mark.subprocess
def test_revoking_a_grant_stops_every_process_holding_the_value_until_it_is_granted_again(
    project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reproduction: grant, call sees it, grant --revoke; the running extension and what it
    started are gone, calls no longer see the value, list and inspect say which grant it needs;
    a new grant brings it back."""
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_revoke_me")
    project.add_extension("spy", HOLDER)
    assert project.cli("grant", "spy", "GITHUB_TOKEN") == 0

    async def scenario() -> None:
        async with running_dev(project) as dev:
            await dev.send("call report")
            token, pid, child = (await dev.expect(REPORT)).groups()
            assert token == "ghp_revoke_me"
            with open(f"/proc/{child}/environ", "rb") as environ:
                assert b"GITHUB_TOKEN=ghp_revoke_me" in environ.read()  # the child holds it too
            capsys.readouterr()

            assert await project.cli_in_thread("grant", "spy", "GITHUB_TOKEN", "--revoke") == 0
            out = capsys.readouterr().out
            assert "took back GITHUB_TOKEN from project:spy" in out
            assert re.search(r"project:spy\s+stopped\s+needs grant: GITHUB_TOKEN", out), out
            assert wait_for_exit(int(pid)), "the extension kept running with a revoked secret"
            assert wait_for_exit(int(child)), "a process it started kept running with a revoked secret"

            revoked_at = len(dev.seen)
            await dev.send("call report")
            await dev.expect(r"tool 'report' is unavailable: extension project:spy failed: needs grant: GITHUB_TOKEN")
            assert not any("ghp_revoke_me" in line for line in dev.seen[revoked_at:])

            assert await project.cli_in_thread("list", "--json") == 1
            (entry,) = json.loads(capsys.readouterr().out)["extensions"]
            assert entry["status"] == "failed"
            assert entry["error"].startswith("needs grant: GITHUB_TOKEN")
            assert "extensions grant spy GITHUB_TOKEN" in entry["error"]
            assert entry["environment"] == {"requested": ["GITHUB_TOKEN"], "granted": [], "missing": ["GITHUB_TOKEN"]}
            assert await project.cli_in_thread("inspect", "spy") == 1
            assert "needs grant: GITHUB_TOKEN" in capsys.readouterr().out
            # A host of its own (extensions call) does not get the value either.
            assert await project.cli_in_thread("call", "report") == 1
            assert "ghp_revoke_me" not in capsys.readouterr().out

            assert await project.cli_in_thread("grant", "spy", "GITHUB_TOKEN") == 0
            assert re.search(r"project:spy\s+reloaded", capsys.readouterr().out)
            await dev.send("call report")
            token, new_pid, _ = (await dev.expect(REPORT)).groups()
            assert token == "ghp_revoke_me" and new_pid != pid
            await dev.send("quit")
            async with asyncio.timeout(30):
                assert await dev.process.wait() == 0
        assert not process_exists(int(pid))

    run(scenario(), timeout=90)


@pytest.mark.parametrize(
    "arguments",
    [
        ("--revoke", "spy", "GITHUB_TOKEN", "NPM_TOKEN"),
        ("spy", "GITHUB_TOKEN", "NPM_TOKEN", "--revoke"),
        ("spy", "--revoke", "GITHUB_TOKEN", "NPM_TOKEN"),
        ("spy", "GITHUB_TOKEN", "--revoke", "NPM_TOKEN", "--json"),
    ],
    ids=["before", "after", "between", "among"],
)
def test_revoke_may_stand_before_between_or_after_the_names(
    project: Project, capsys: pytest.CaptureFixture[str], arguments: tuple[str, ...]
) -> None:
    project.add_extension("spy", "")
    assert project.cli("grant", "spy", "GITHUB_TOKEN", "NPM_TOKEN", "SENTRY_DSN") == 0
    capsys.readouterr()
    assert project.cli("grant", *arguments) == 0
    assert "took back GITHUB_TOKEN, NPM_TOKEN" in capsys.readouterr().out or "--json" in arguments
    assert TrustStore(project.home).granted(project.root, "project", "spy") == {"SENTRY_DSN"}


def test_trust_refuses_allow_failed_guards_with_revoke_in_one_line(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    assert project.cli("trust", "--revoke", "--allow-failed-guards") == 2
    assert capsys.readouterr().err == (
        "extensions trust: argument --allow-failed-guards: not allowed with argument --revoke "
        "(see 'extensions trust --help')\n"
    )
    assert not (project.home / "trust.json").exists()


def test_grant_without_a_name_is_told_the_name_is_missing(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    assert project.cli("grant", "--revoke") == 2
    assert capsys.readouterr().err == (
        "extensions grant: the following arguments are required: name (see 'extensions grant --help')\n"
    )


@pytest.mark.subprocess
def test_revoking_a_user_extension_s_grant_reaches_the_host_of_every_project(
    project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A user extension's grants hold in every project, so the revocation, made in a project
    where no host runs, stops it in the host running for another project."""
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_everywhere")
    project.add_extension("spy", HOLDER, source="user")
    other = project.root.parent / "other"
    (other / ".git").mkdir(parents=True)
    TrustStore(project.home).grant(project.root, "user", "spy", ["GITHUB_TOKEN"])

    async def scenario() -> None:
        async with (
            ExtensionHost(other, project.home, watch=False, timeouts=Timeouts(stop_grace=0.5)) as host,
            ControlServer(host),
        ):
            info = host.extension("user:spy")
            assert info.status == "running", info.error
            assert info.pid is not None
            assert await project.cli_in_thread("grant", "user:spy", "GITHUB_TOKEN", "--revoke") == 0
            assert re.search(r"user:spy\s+stopped\s+needs grant: GITHUB_TOKEN", capsys.readouterr().out)
            assert wait_for_exit(info.pid), "the other project's host kept a revoked secret"

    run(scenario())
