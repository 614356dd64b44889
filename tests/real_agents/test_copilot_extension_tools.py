"""The agent's extensions_manage and extensions_reload next to GitHub Copilot CLI's own: the same
tool definitions where the host has the same features, and the same refusals, word for word,
for the same calls of the model."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from extension_host import AgentReply, ExtensionHost, ScriptedAgent, Timeouts, ToolCall
from extension_host.session.manage_tools import MANAGE_TOOL, RELOAD_TOOL
from real_agents.agents import Agent, assert_finished
from real_agents.models import Call, Say
from real_agents.programs import skip_without_node
from real_agents.runner import Workspace

pytestmark = pytest.mark.real_agent
skip_without_node()

BAD_CALLS: list[dict[str, Any]] = [
    {},
    {"operation": "bogus"},
    {"operation": "inspect"},
    {"operation": "scaffold"},
    {"operation": "scaffold", "name": "bad name!"},
    {"operation": "scaffold", "name": "x", "location": "elsewhere"},
]


def host_answers(workspace: Workspace, steps: list[tuple[str, dict[str, Any]]]) -> tuple[list[str], dict[str, Any]]:
    """What this host's agent reads for ``steps`` in the workspace's project, and the tools it was offered."""
    agent = ScriptedAgent([[*(AgentReply("", (ToolCall(n, a),)) for n, a in steps), AgentReply("done")]])

    async def scenario() -> list[str]:
        async with ExtensionHost(
            workspace.project,
            workspace.home / "eh",
            agent=agent,
            trust=True,
            watch=False,
            timeouts=Timeouts(stop_grace=2.0),
        ) as host:
            await asyncio.wait_for(host.send_and_wait("go"), 60)
            return [m.content for m in host.model_context.messages if m.role == "tool"]

    read = asyncio.run(scenario())
    return read, {t.name: {"description": t.description, "parameters": t.parameters} for t in agent.requests[0].tools}


def test_the_tool_definitions_match_copilot_clis_where_the_host_has_the_same_features(
    copilot_cli: Agent, workspace: Workspace
) -> None:
    with copilot_cli.model([Say("done")]) as model:
        run = copilot_cli.run(workspace, model, "hello", stop_hook_host=False)
    assert_finished(run, model)
    (body,) = model.conversation_requests()
    cli = {tool["function"]["name"]: tool["function"] for tool in body["tools"]}
    _, host = host_answers(workspace, [])
    assert host[RELOAD_TOOL] == {
        "description": cli[RELOAD_TOOL]["description"],
        "parameters": cli[RELOAD_TOOL]["parameters"],
    }
    ours, theirs = host[MANAGE_TOOL]["parameters"], cli[MANAGE_TOOL]["parameters"]
    assert ours["required"] == theirs["required"] == ["operation"]
    assert ours["properties"]["operation"]["enum"] == theirs["properties"]["operation"]["enum"]
    for field in ("name", "description"):
        assert ours["properties"][field] == theirs["properties"][field]
    assert set(ours["properties"]["location"]["enum"]) < set(theirs["properties"]["location"]["enum"])
    assert set(ours["properties"]) - set(theirs["properties"]) == {"language"}  # the host's addition


def test_bad_calls_are_refused_in_copilot_clis_words(copilot_cli: Agent, workspace: Workspace) -> None:
    with copilot_cli.model([*(Call(MANAGE_TOOL, arguments) for arguments in BAD_CALLS), Say("done")]) as model:
        run = copilot_cli.run(workspace, model, "manage extensions", stop_hook_host=False)
    assert_finished(run, model)
    theirs = model.tool_results()
    ours, _ = host_answers(workspace, [(MANAGE_TOOL, arguments) for arguments in BAD_CALLS])
    assert len(theirs) == len(BAD_CALLS)
    differ = {str(call): (a, b) for call, a, b in zip(BAD_CALLS, ours, theirs, strict=True) if a != b}
    # Only the locations each offers differ: the CLI has session-scoped extensions, the host does not.
    assert list(differ) == [str(BAD_CALLS[-1])], differ
    assert differ[str(BAD_CALLS[-1])] == (
        'Invalid location "elsewhere". Use "project" or "user".',
        'Invalid location "elsewhere". Use "project", "user", or "session".',
    )
