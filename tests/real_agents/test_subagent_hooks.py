"""Claude Code and Gemini CLI, the real programs, guarded inside their subagents: the project's
scaffolded guard, installed with ``extensions hook install``, denies a call a custom agent's
child conversation makes exactly as it denies the parent's, and the hooks see whose call it is
where the agent says (Claude Code does; Gemini CLI's hook payloads do not tell)."""

from __future__ import annotations

import json

import pytest

from real_agents.agents import Agent, assert_finished, for_agents
from real_agents.extensions import record_to
from real_agents.models import Say, Turn
from real_agents.programs import skip_without_node
from real_agents.runner import SECRET, Workspace

pytestmark = pytest.mark.real_agent
skip_without_node()

CHILD_MARK = "MARK-HELPER-7f3a"
"""In the custom agent's prompt only: what tells the model a child's request."""
REFUSAL = ".env may hold secrets; guard keeps it away from tools"
"""The scaffolded guard's reason for ``cat .env``."""


def recorder(workspace: Workspace) -> str:
    """An extension that records the session fields of each pre-tool hook input, one JSON line each."""
    return (
        record_to(workspace.root / "inputs.jsonl")
        + """
import json
from sdk_extension import join_session

def pre(input, invocation):
    record(json.dumps({"tool": input.tool_name, "args": input.tool_args, "session": input.session_id,
                       "agent": input.agent_id, "type": input.agent_type, "parent": input.parent_agent_id}))

join_session(hooks={"on_pre_tool_use": pre})
"""
    )


@for_agents()
def test_the_projects_guard_denies_a_subagents_call_as_it_denies_the_parents(
    agent: Agent, workspace: Workspace
) -> None:
    workspace.extensions("scaffold", "guard")
    workspace.add_extension("audit", recorder(workspace))  # runs before the guard (by name)
    agent.install_hooks(workspace)
    agent.add_subagent(workspace, "helper", "Reads files for the main agent", f"{CHILD_MARK} You help.")
    parent: list[Turn] = [agent.shell("cat .env"), agent.delegate("helper", "show me the settings"), Say("done")]
    child: list[Turn] = [agent.shell("cat .env"), agent.finish_subagent("the guard refused")]
    with agent.model(parent, {CHILD_MARK: child}) as model:
        run = agent.run(workspace, model, "show me the .env file", *agent.shell_allowed)
    assert_finished(run, model)
    assert SECRET not in model.bodies(), model.log()

    child_requests = model.conversation_requests(CHILD_MARK)
    assert child_requests, f"the child conversation never reached the model\n{model.log()}"
    (denied_in_parent, *_) = model.tool_results()
    (denied_in_child, *_) = model.results_in(child_requests[-1])
    assert REFUSAL in denied_in_parent and REFUSAL in denied_in_child, (denied_in_parent, denied_in_child)

    inputs = [json.loads(line) for line in (workspace.root / "inputs.jsonl").read_text().splitlines()]
    shell = [entry for entry in inputs if entry["tool"] == agent.shell_tool]
    assert len(shell) == 2, inputs
    in_parent, in_child = shell
    assert (in_parent["agent"], in_parent["type"], in_parent["parent"]) == (None, None, None)
    if agent.subagent_marks_calls:
        assert in_child["session"] == in_child["agent"] and in_child["type"] == "helper", in_child
        assert in_child["parent"] == in_parent["session"] != in_child["session"], inputs
    else:  # nothing in the payload tells the child's call from the parent's
        assert in_child == {**in_parent, "args": in_child["args"]}, inputs


CONTEXT_MARK = "MARK-CONTEXT-52c1"
"""What the subagent-start hook adds; found in the child's conversation when Claude Code gave it."""


def subagent_hooks(workspace: Workspace) -> str:
    """An extension on the subagent hook points: start adds context, stop records what it got
    and blocks once, so the subagent answers a second time."""
    return (
        record_to(workspace.root / "subagents.jsonl")
        + f"""
import json
from sdk_extension import join_session

def start(input, invocation):
    record(json.dumps({{"hook": "start", "agent": input.agent_id, "type": input.agent_type,
                       "session": input.session_id}}))
    return {{"additional_context": {CONTEXT_MARK!r}}}

def stop(input, invocation):
    record(json.dumps({{"hook": "stop", "agent": input.agent_id, "response": input.response,
                       "active": input.stop_hook_active}}))
    return None if input.stop_hook_active else {{"decision": "block", "reason": "say it once more"}}

join_session(hooks={{"on_subagent_start": start, "on_subagent_stop": stop}})
"""
    )


@for_agents("claude")
def test_claude_codes_subagent_start_and_stop_run_the_subagent_hook_points(agent: Agent, workspace: Workspace) -> None:
    workspace.add_extension("subagents", subagent_hooks(workspace))
    agent.install_hooks(workspace)
    agent.add_subagent(workspace, "helper", "Reads files for the main agent", f"{CHILD_MARK} You help.")
    parent: list[Turn] = [agent.delegate("helper", "look around"), Say("done")]
    child: list[Turn] = [Say("first answer"), Say("second answer")]
    with agent.model(parent, {CHILD_MARK: child}) as model:
        run = agent.run(workspace, model, "ask the helper", *agent.shell_allowed)
    assert_finished(run, model)
    child_requests = model.conversation_requests(CHILD_MARK)
    assert child_requests and CONTEXT_MARK in json.dumps(child_requests[0]), model.log()
    seen = [json.loads(line) for line in (workspace.root / "subagents.jsonl").read_text().splitlines()]
    start, *stops = seen
    assert start["hook"] == "start" and start["type"] == "helper" and start["agent"] != start["session"], seen
    assert [(s["response"], s["active"]) for s in stops] == [("first answer", False), ("second answer", True)], seen
    assert {s["agent"] for s in stops} == {start["agent"]}
