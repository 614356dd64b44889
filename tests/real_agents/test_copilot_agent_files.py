"""Custom agent files next to GitHub Copilot CLI: the same files in a project's ``.github/agents/``
and ``.claude/agents/`` give the real CLI and this host the same agents, by name, description,
tools and prompt, and the same files give neither."""

from __future__ import annotations

import re
from typing import Any

import pytest

from extension_host.session.agent_files import load_agent_files
from extension_host.session.subagents import TASK_TOOL
from real_agents.agents import Agent, assert_finished
from real_agents.models import Say, Turn
from real_agents.programs import skip_without_node
from real_agents.runner import Workspace

pytestmark = pytest.mark.real_agent
skip_without_node()

FILES = {
    ".github/agents/reviewer.agent.md": (
        '---\nname: code-reviewer\ndescription: Reviews a diff\ntools: ["view"]\n---\nMARK-REVIEWER reviews.\n'
    ),
    ".github/agents/runner.md": (
        "---\ndescription: >\n  Runs the tests\n  and reports\ntools: view, bash\n---\nMARK-RUNNER\n"
    ),
    ".github/agents/team/helper.agent.md": "---\ndescription: 'Helps: anyone'  # a comment\n---\nMARK-HELPER helps.\n",
    ".github/agents/quiet.agent.md": "---\ndescription: Uses no tools\ntools: []\n---\nMARK-QUIET\n",
    ".claude/agents/claude-only.md": "---\ndescription: From the Claude folder\ntools:\n  - view\n---\nMARK-CLAUDE\n",
    ".github/agents/hidden.agent.md": "---\ndescription: Not for the model\ninfer: false\n---\nMARK-HIDDEN\n",
    ".github/agents/nodescription.agent.md": "---\nname: nodescription\n---\nMARK-NODESC\n",
}
MARKERS = {
    "code-reviewer": "MARK-REVIEWER",
    "runner": "MARK-RUNNER",
    "team--helper": "MARK-HELPER",
    "quiet": "MARK-QUIET",
    "claude-only": "MARK-CLAUDE",
}
_LISTED = re.compile(r"^- \*\*(.+?)\*\*: (.*)$", re.M)


def listed_agents(task_tool: dict[str, Any]) -> dict[str, str]:
    """The custom agents the task tool's description lists, with their descriptions."""
    description = str(task_tool["description"])
    _, _, custom = description.partition("User-provided custom agents:")
    return dict(_LISTED.findall(custom))


def test_the_same_agent_files_give_the_cli_and_the_host_the_same_agents(
    copilot_cli: Agent, workspace: Workspace
) -> None:
    for path, text in FILES.items():
        (workspace.project / path).parent.mkdir(parents=True, exist_ok=True)
        (workspace.project / path).write_text(text)
    delegate: list[Turn] = [copilot_cli.delegate(name, "do it") for name in MARKERS]
    children: dict[str, list[Turn]] = {marker: [Say(f"{marker} answer")] for marker in MARKERS.values()}
    with copilot_cli.model([*delegate, Say("done")], children) as model:
        run = copilot_cli.run(workspace, model, "delegate to each agent", stop_hook_host=False)
    assert_finished(run, model)

    ours = load_agent_files(workspace.project, workspace.home / "extension-host")
    assert [line.split(": ", 1)[1] for line in ours.problems] == [
        "'description' is missing: add 'description: what the agent is for' (the model chooses by it)"
    ]
    first = model.conversation_requests()[0]
    (task,) = (tool["function"] for tool in first["tools"] if tool["function"]["name"] == TASK_TOOL)
    cli_custom = set(task["parameters"]["properties"]["agent_type"]["enum"]) & set(listed_agents(task))
    assert listed_agents(task) == {agent.name: agent.description for agent in ours.agents}
    assert cli_custom == set(MARKERS)

    selected = {
        event["data"]["agentName"]: event["data"]["tools"]
        for event in run.json_lines()
        if isinstance(event, dict) and event.get("type") == "subagent.selected"
    }
    assert selected == {agent.name: ["*"] if agent.tools is None else list(agent.tools) for agent in ours.agents}
    for agent in ours.agents:
        (child,) = model.conversation_requests(MARKERS[agent.name])
        assert agent.prompt in model.system_text(child), agent.name
    assert model.tool_results() == [f"{MARKERS[name]} answer" for name in MARKERS]
