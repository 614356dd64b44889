"""A served session opens its project's control socket: a hook command reaches its extensions."""

from __future__ import annotations

import asyncio
import os

from serve_client import connect_in_process, in_process_server, write_script

from extension_host.bridges.hook_client import METHOD_HOOK, ask_running_host
from extension_host.paths import control_socket_path
from helpers import Project, run

GUARD = """
    import os
    from sdk_extension import join_session

    def guard(input, invocation):
        return {"permission_decision": "deny", "permission_decision_reason": f"denied by {os.getpid()}"}

    join_session(hooks={"on_pre_tool_use": guard})
"""

PRE_TOOL_USE = {"hook": "preToolUse", "toolName": "Bash", "toolArgs": {"command": "ls"}}


def test_a_hook_call_in_the_project_is_answered_by_the_first_served_session_until_it_ends(project: Project) -> None:
    project.add_extension("guard", GUARD)

    async def scenario() -> None:
        server = in_process_server(write_script(project.home / "script.json", []), project.home)
        client = await connect_in_process(server)
        try:
            await client.initialize()
            await client.create_session("copilot:/a", project.root)
            await client.create_session("copilot:/b", project.root)  # the socket is taken: b runs without it
            status = await asyncio.to_thread(ask_running_host, project.root, "host.status", None)
            assert status["pid"] == os.getpid()
            answer = await asyncio.to_thread(ask_running_host, project.root, METHOD_HOOK, PRE_TOOL_USE)
            assert answer["decision"] == "deny" and answer["reason"].startswith("denied by ")

            await client.request("disposeSession", {"session": "copilot:/a"})
            await client.wait_for(lambda: ("notify/sessionRemoved", {"session": "copilot:/a"}) in client.notifications)
            assert not control_socket_path(project.root).exists()
        finally:
            await client.close()
            await server.close()
        assert not control_socket_path(project.root).exists()

    run(scenario(), timeout=120)
