"""A served session opens its project's control socket: a hook command reaches its extensions."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator

import pytest
from serve_client import ServeClient, connect_in_process, in_process_server, write_script

from extension_host.bridges.agent_hooks.client import ask_running_host
from extension_host.control.methods import METHOD_HOOK
from extension_host.project.paths import control_socket_path
from extension_host.project.trust import TrustStore
from extension_host.serve.server import ProtocolServer
from helpers import Project, run, wait_for_exit

GUARD = """
    import os
    from sdk_extension import join_session

    def guard(input, invocation):
        return {"permission_decision": "deny", "permission_decision_reason": f"denied by {os.getpid()}"}

    join_session(hooks={"on_pre_tool_use": guard})
"""

ASKS_FOR_TOKEN = """
    from sdk_extension import join_session

    join_session(requested_environment_variables=["GITHUB_TOKEN"])
"""

PRE_TOOL_USE = {"hook": "preToolUse", "toolName": "Bash", "toolArgs": {"command": "ls"}}


@contextlib.asynccontextmanager
async def _two_sessions(project: Project) -> AsyncIterator[tuple[ProtocolServer, ServeClient]]:
    """A server in this process with sessions copilot:/a and copilot:/b in the project, and its client."""
    server = in_process_server(write_script(project.home / "script.json", []), project.home)
    client = await connect_in_process(server)
    try:
        await client.initialize()
        await client.create_session("copilot:/a", project.root)
        await client.create_session("copilot:/b", project.root)  # the socket is taken: b runs without it
        yield server, client
    finally:
        await client.close()
        await server.close()


def test_a_hook_call_in_the_project_is_answered_by_the_first_served_session_until_it_ends(project: Project) -> None:
    project.add_extension("guard", GUARD)

    async def scenario() -> None:
        async with _two_sessions(project) as (_server, client):
            status = await asyncio.to_thread(ask_running_host, project.root, "host.status", None)
            assert status["pid"] == os.getpid()
            answer = await asyncio.to_thread(ask_running_host, project.root, METHOD_HOOK, PRE_TOOL_USE)
            assert answer["decision"] == "deny" and answer["reason"].startswith("denied by ")

            await client.request("disposeSession", {"session": "copilot:/a"})
            await client.wait_for(lambda: ("notify/sessionRemoved", {"session": "copilot:/a"}) in client.notifications)
            assert not control_socket_path(project.root).exists()
        assert not control_socket_path(project.root).exists()

    run(scenario(), timeout=120)


def test_revoking_a_grant_stops_the_extension_in_every_served_session_of_the_project(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the first session holds the project's socket; the revocation it hears stops the
    extension that holds the value in the other session too."""
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_served")
    project.add_extension("spy", ASKS_FOR_TOKEN)
    TrustStore(project.home).grant(project.root, "project", "spy", ["GITHUB_TOKEN"])

    async def scenario() -> None:
        async with _two_sessions(project) as (server, _client):
            pids = [server.session(uri).host.extension("spy").pid for uri in ("copilot:/a", "copilot:/b")]
            assert await project.cli_in_thread("grant", "spy", "GITHUB_TOKEN", "--revoke") == 0
            for pid in pids:
                assert pid is not None and wait_for_exit(pid), "a served session kept a revoked secret"
            for uri in ("copilot:/a", "copilot:/b"):
                info = server.session(uri).host.extension("spy")
                assert info.status == "failed" and (info.error or "").startswith("needs grant: GITHUB_TOKEN")

    run(scenario(), timeout=120)
