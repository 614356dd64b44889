"""A Python extension inside a custom agent's child session of the real GitHub Copilot CLI.

Copilot CLI announces the child with ``subagent.started`` (the child's id only in the event's
``agentId``), then sends the child's tool calls and hook calls naming the parent session, with
the child's id in the event's ``agentId`` and the hook input's ``agentId``/``sessionId``. It also
takes the custom agents an extension declares in ``session.resume`` (``customAgents``) and
offers their child only what their allowlist names. The extension, exported with ``extensions
export copilot``, records what its handlers were given.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from helpers import CHILD_RECORDER, recorded
from real_agents.agents import Agent, assert_finished
from real_agents.models import Call, Say, ScriptedModel, Turn
from real_agents.programs import skip_without_node
from real_agents.runner import Workspace

pytestmark = pytest.mark.real_agent
skip_without_node()

PROMPT = "You review things (REVIEWER-PROMPT-5c1e)."

AGENT_FILE = f"""---
name: reviewer
description: Reviews things
tools: ["save"]
---
{PROMPT}
"""

TASK = {"name": "rev", "prompt": "save it", "agent_type": "reviewer", "description": "review"}


def delegate(
    copilot_cli: Agent, workspace: Workspace, agents: str = "[]"
) -> tuple[list[tuple[str, str | None, str]], str, list[dict[str, Any]]]:
    """Run a parent turn that saves, then delegates to ``reviewer``, whose child saves, tries to
    delegate in turn, and answers (turns are picked by how many the conversation has had). The
    extension declares ``agents`` (Python source); without any, ``reviewer`` is a project file.

    Returns what the extension's handlers recorded (what, tool, session id) with the child's
    ids replaced by ``child`` and ``parent``, the result of the ``task`` call, and the bodies
    of the child's model requests.
    """
    workspace.add_extension("recorder", CHILD_RECORDER.replace("AGENTS", agents))
    workspace.extensions("export", "copilot", "recorder")
    if agents == "[]":
        (workspace.project / ".github" / "agents").mkdir(parents=True)
        (workspace.project / ".github" / "agents" / "reviewer.agent.md").write_text(AGENT_FILE)
    script: list[Turn] = [Call("save", {"text": "x"}), Call("task", TASK), Say("finished")]
    with copilot_cli.model(script) as model:
        run = copilot_cli.run(workspace, model, "delegate", stop_hook_host=False)
    assert_finished(run, model)
    results = model.tool_results()
    assert results[0] == "saved" and len(results) == 2, model.log()
    seen = recorded(workspace.project / ".github" / "extensions" / "recorder")
    (started,) = [entry for entry in seen if entry["what"] == "started"]
    assert started["agent"] == "reviewer" and started["child"], seen
    parent = seen[0]["session"]
    assert started["child"] != parent
    names = {started["child"]: "child", parent: "parent"}
    handlers = [(e["what"], e.get("tool"), names.get(e["session"], e["session"])) for e in seen if "session" in e]
    return handlers, results[1], child_requests(model)


def child_requests(model: ScriptedModel) -> list[dict[str, Any]]:
    """The bodies of the requests of the child's conversation (its system message is the agent's prompt)."""
    return [body for body in model.posted() if PROMPT in json.dumps((body.get("messages") or [{}])[0])]


def test_a_childs_tool_call_and_hook_reach_the_python_handlers_with_the_childs_id(
    copilot_cli: Agent, workspace: Workspace
) -> None:
    handlers, answer, requests = delegate(copilot_cli, workspace)
    assert answer == "finished"  # the child's last words
    assert handlers == [
        ("hook", "save", "parent"),
        ("save", None, "parent"),
        ("hook", "task", "parent"),
        ("hook", "save", "child"),
        ("save", None, "child"),
        ("hook", "task", "child"),  # the CLI runs the hook, then refuses a tool the child does not have
    ]
    assert [tool["function"]["name"] for tool in requests[0]["tools"]] == ["save"]


@pytest.mark.parametrize(
    ("allowlist", "child_handlers", "offered"),
    [
        (["save"], [("hook", "save", "child"), ("save", None, "child"), ("hook", "task", "child")], ["save"]),
        ([], [], []),  # the child is offered no tool: nothing of the extension runs for it
    ],
)
def test_copilot_cli_takes_an_extensions_custom_agent_and_offers_its_child_only_its_allowlist(
    copilot_cli: Agent,
    workspace: Workspace,
    allowlist: list[str],
    child_handlers: list[tuple[str, str | None, str]],
    offered: list[str],
) -> None:
    agents = f"[CustomAgent(name='reviewer', prompt={PROMPT!r}, description='Reviews things', tools={allowlist!r})]"
    handlers, _, requests = delegate(copilot_cli, workspace, agents)
    assert handlers == [
        ("hook", "save", "parent"),
        ("save", None, "parent"),
        ("hook", "task", "parent"),
        *child_handlers,
    ]
    assert requests and all(
        [tool["function"]["name"] for tool in body.get("tools") or []] == offered for body in requests
    )
