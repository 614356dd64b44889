"""``listExtensions`` and ``reloadExtensions``: a session's extensions as a client sees them, and
reloading them from a client."""

from __future__ import annotations

import textwrap

import pytest
from serve_client import connect_in_process, in_process_server, write_script

from extension_host.serve.errors import TURN_IN_PROGRESS
from extension_protocol.connection import RpcError
from extension_protocol.protocol import INVALID_PARAMS
from helpers import Project, run

pytestmark = pytest.mark.subprocess

TOOLS = """
    import asyncio
    from sdk_extension import join_session, tool

    @tool(description="Count the words of a text")
    def count(text: str) -> str:
        return str(len(text.split()))

    @tool(description="Take a long time")
    async def slow() -> str:
        await asyncio.sleep(120)
        return "done"

    join_session(tools=[count, slow])
"""

BROKEN = "raise SystemExit('this one never joins')\n"


def test_a_client_lists_a_sessions_extensions_and_reloads_one_that_changed(project: Project) -> None:
    folder = project.add_extension("tools", TOOLS)
    project.add_extension("broken", BROKEN)
    script = write_script(
        project.home / "script.json",
        [[{"text": "Working.", "toolCalls": [{"name": "slow", "arguments": {}}]}, {"text": "Never."}]],
    )

    async def scenario() -> None:
        server = in_process_server(script, project.home)
        client = await connect_in_process(server)
        try:
            await client.initialize()
            await client.create_session("copilot:/x", project.root)
            listed = {
                item["name"]: item
                for item in (await client.request("listExtensions", {"session": "copilot:/x"}))["items"]
            }
            assert listed["tools"]["status"] == "running" and listed["tools"]["tools"] == ["count", "slow"]
            assert listed["broken"]["status"] == "failed" and listed["broken"]["error"]
            keys = {"id", "name", "source", "status", "tools", "hooks", "commands", "canvases", "error"}
            assert set(listed["tools"]) == keys and listed["tools"]["canvases"] == []

            (folder / "extension.py").write_text(textwrap.dedent(TOOLS).replace("count", "tally"), encoding="utf-8")
            answer = await client.request("reloadExtensions", {"session": "copilot:/x", "extension": "tools"})
            assert [(o["extension"], o["action"]) for o in answer["outcomes"]] == [("project:tools", "reloaded")]
            after = {item["name"]: item for item in answer["items"]}
            assert after["tools"]["tools"] == ["tally", "slow"]

            with pytest.raises(RpcError) as unknown:
                await client.request("reloadExtensions", {"session": "copilot:/x", "extension": "nobody"})
            assert unknown.value.code == INVALID_PARAMS and "nobody" in unknown.value.message

            await client.request("subscribe", {"resource": "copilot:/x"})
            client.start_turn("copilot:/x", "t1", "go")
            await client.wait_for_action("session/toolCallReady", turnId="t1")
            with pytest.raises(RpcError) as busy:
                await client.request("reloadExtensions", {"session": "copilot:/x"})
            assert busy.value.code == TURN_IN_PROGRESS and "running a turn" in busy.value.message
            client.dispatch({"type": "session/turnCancelled", "session": "copilot:/x", "turnId": "t1"})
            await client.wait_for_action("session/turnCancelled", turnId="t1")
        finally:
            await client.close()
            await server.close()

    run(scenario(), timeout=90)
