"""Subagents: the parent's agent delegates with the ``task`` tool to a custom agent, whose child
session runs inside the call, through the session's pipeline and hooks, within its allowlist."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from extension_host import AgentReply, ScriptedAgent, ToolCall, hookimpl
from extension_host.events import PARENT_CALL_EVENT_TYPES
from extension_host.schemas.event_models import check_event
from extension_host.session.agents import AgentRequest
from extension_host.session.custom_agents import CustomAgent
from extension_host.session.subagents import MAX_DEPTH, NOT_SUPPORTED, TASK_TOOL
from extension_protocol.protocol import Event
from helpers import RAW_PROTOCOL, Project, copilot_sdk_marks, run, sdk_host

pytestmark = pytest.mark.subprocess

GUARD_REASON = "no bad text"

PY_EXTENSION = f"""
import json, pathlib
from sdk_extension import join_session, tool

RAN = pathlib.Path(__file__).with_name("ran.jsonl")

def note(what):
    with RAN.open("a") as f:
        f.write(json.dumps(what) + "\\n")

@tool(description="Echo the text back.")
def echo(text: str, invocation) -> str:
    note({{"tool": "echo", "text": text}})
    return "echo " + text

@tool(description="Reads a secret.")
def secret() -> str:
    note({{"tool": "secret"}})
    return "s3cret"

def guard(input, invocation):
    note({{"hook": "preToolUse", "sessionId": input.session_id, "agentId": input.agent_id,
          "agentType": input.agent_type, "parentAgentId": input.parent_agent_id, "tool": input.tool_name}})
    if input.tool_args.get("text") == "bad":
        return {{"permission_decision": "deny", "permission_decision_reason": {GUARD_REASON!r}}}
    return None

def prompted(input, invocation):
    note({{"hook": "userPromptSubmitted", "sessionId": input.session_id, "agentId": input.agent_id}})
    return None

join_session(tools=[echo, secret], hooks={{"on_pre_tool_use": guard, "on_user_prompt_submitted": prompted}})
"""

MJS_EXTENSION = f"""
import fs from "node:fs";
import path from "node:path";
import {{ fileURLToPath }} from "node:url";
import {{ joinSession }} from "@github/copilot-sdk/extension";

const ran = path.join(path.dirname(fileURLToPath(import.meta.url)), "ran.jsonl");
const note = (what) => fs.appendFileSync(ran, JSON.stringify(what) + "\\n");
await joinSession({{
  tools: [
    {{ name: "echo", description: "Echo the text back.",
      parameters: {{ type: "object", properties: {{ text: {{ type: "string" }} }}, required: ["text"] }},
      handler: async (args) => {{ note({{ tool: "echo", text: args.text }}); return `echo ${{args.text}}`; }} }},
    {{ name: "secret", description: "Reads a secret.", parameters: {{ type: "object", properties: {{}} }},
      handler: async () => {{ note({{ tool: "secret" }}); return "s3cret"; }} }},
  ],
  hooks: {{
    onPreToolUse: async (input) => {{
      note({{ hook: "preToolUse", sessionId: input.sessionId, agentId: input.agentId ?? null,
             agentType: input.agentType ?? null, parentAgentId: input.parentAgentId ?? null, tool: input.toolName }});
      const deny = {{ permissionDecision: "deny", permissionDecisionReason: {GUARD_REASON!r} }};
      return input.toolArgs?.text === "bad" ? deny : undefined;
    }},
    onUserPromptSubmitted: async (input) => {{
      note({{ hook: "userPromptSubmitted", sessionId: input.sessionId, agentId: input.agentId ?? null }});
      return undefined;
    }},
  }},
}});
"""


def task(agent: str = "reviewer", prompt: str = "review it") -> ToolCall:
    return ToolCall(TASK_TOOL, {"name": "r", "description": "review the code", "prompt": prompt, "agent_type": agent})


def calls(*steps: ToolCall | str) -> list[AgentReply]:
    return [AgentReply("", (step,)) if isinstance(step, ToolCall) else AgentReply(step) for step in steps]


def reviewer(child: ScriptedAgent, tools: Sequence[str] | None = ("echo",), **fields: Any) -> CustomAgent:
    return CustomAgent(
        "reviewer",
        "You review code.",
        description="Reviews code",
        tools=None if tools is None else tuple(tools),
        agent=child,
        **fields,
    )


def ran(project: Project, name: str = "probe") -> list[dict[str, Any]]:
    path = project.root / ".github" / "extensions" / name / "ran.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def tool_runs(project: Project) -> list[dict[str, Any]]:
    return [entry for entry in ran(project) if "hook" not in entry]


def results(request: AgentRequest) -> list[str]:
    return [message.content for message in request.messages if message.role == "tool"]


def delegate(
    host_options: dict[str, Any], project: Project, child_steps: Sequence[ToolCall | str], make_host: Any = Project.host
) -> tuple[list[Event], ScriptedAgent, ScriptedAgent]:
    """Run one prompt whose agent delegates to ``reviewer``; the events, the parent and the child."""
    child = ScriptedAgent([calls(*child_steps)] if child_steps else [])
    parent = ScriptedAgent([calls(task(), "parent done")])
    agents = host_options.pop("custom_agents", None) or [reviewer(child)]
    seen: list[Event] = []

    async def scenario() -> None:
        async with make_host(project, watch=False, agent=parent, custom_agents=agents, **host_options) as host:
            host.events.subscribe(seen.append)
            await asyncio.wait_for(host.send_and_wait("delegate"), 60)

    run(scenario(), timeout=180)
    return seen, parent, child


def of_agent(events: Sequence[Mapping[str, Any]], kind: str | None = None) -> list[Mapping[str, Any]]:
    return [e for e in events if e.get("agentId") and (kind is None or e["type"] == kind)]


def test_the_childs_final_answer_is_the_task_tools_result_and_the_parent_never_sees_its_conversation(
    project: Project,
) -> None:
    project.add_extension("probe", PY_EXTENSION)
    events, parent, child = delegate({}, project, [ToolCall("echo", {"text": "hi"}), "the code is fine"])
    assert results(parent.requests[-1]) == ["the code is fine"]
    assert [m.role for m in parent.requests[-1].messages] == ["user", "assistant", "tool"]
    first = child.requests[0]
    assert [(m.role, m.content) for m in first.messages] == [("system", "You review code."), ("user", "review it")]
    assert results(child.requests[-1]) == ["echo hi"]
    prompts = [
        (entry["agentId"] is None, entry["sessionId"])
        for entry in ran(project)
        if entry.get("hook") == "userPromptSubmitted"
    ]
    (started,) = of_agent(events, "subagent.started")
    assert [in_parent for in_parent, _ in prompts] == [True, False]
    assert prompts[1][1] == started["agentId"]
    naming_the_call = {e["type"] for e in of_agent(events) if "parentToolCallId" in e["data"]}
    assert naming_the_call == PARENT_CALL_EVENT_TYPES - {"assistant.message_delta"}
    assert {e["data"]["parentToolCallId"] for e in of_agent(events) if "parentToolCallId" in e["data"]} == {
        started["data"]["toolCallId"]
    }
    for event in events:
        check_event(event)


def test_the_child_is_offered_only_the_tools_its_allowlist_names_with_their_definitions(project: Project) -> None:
    project.add_extension("probe", PY_EXTENSION)
    _, parent, child = delegate({}, project, ["nothing to do"])
    offered = {tool.name: tool for tool in parent.requests[0].tools}
    assert TASK_TOOL in offered and "secret" in offered
    (echo,) = child.requests[0].tools
    assert echo == offered["echo"]
    schema = offered[TASK_TOOL].parameters
    assert schema is not None and schema["properties"]["agent_type"]["enum"] == ["reviewer"]
    assert schema["required"] == ["name", "prompt", "agent_type", "description"]
    assert "**reviewer**: Reviews code" in offered[TASK_TOOL].description


def test_a_tool_outside_the_allowlist_is_refused_with_the_sdk_text_and_never_runs(project: Project) -> None:
    project.add_extension("probe", PY_EXTENSION)
    events, _, child = delegate({}, project, [ToolCall("secret", {}), "done"])
    assert results(child.requests[-1]) == [NOT_SUPPORTED.format(name="secret")]
    assert tool_runs(project) == []
    assert [entry["tool"] for entry in ran(project) if entry.get("hook") == "preToolUse"] == [TASK_TOOL]
    (complete,) = of_agent(events, "tool.execution_complete")
    assert complete["data"]["success"] is False


def test_an_empty_allowlist_offers_nothing_and_refuses_every_tool(project: Project) -> None:
    project.add_extension("probe", PY_EXTENSION)
    child = ScriptedAgent([calls(ToolCall("echo", {"text": "hi"}), "done")])
    delegate({"custom_agents": [reviewer(child, tools=())]}, project, [])
    assert child.requests[0].tools == ()
    assert results(child.requests[-1]) == [NOT_SUPPORTED.format(name="echo")]
    assert tool_runs(project) == []


def test_a_guard_denies_a_tool_inside_the_child_as_in_the_parent_and_sees_the_child_session(
    project: Project,
) -> None:
    project.add_extension("probe", PY_EXTENSION)
    child = ScriptedAgent([calls(ToolCall("echo", {"text": "bad"}), "done")])
    parent = ScriptedAgent([calls(ToolCall("echo", {"text": "bad"}), task(), "parent done")])

    async def scenario() -> tuple[str, list[Event]]:
        async with project.host(watch=False, agent=parent, custom_agents=[reviewer(child)]) as host:
            seen: list[Event] = []
            host.events.subscribe(seen.append)
            await asyncio.wait_for(host.send_and_wait("delegate"), 60)
            return host.session_id, seen

    session_id, events = run(scenario(), timeout=120)
    in_parent = results(parent.requests[1])[0]
    assert GUARD_REASON in in_parent
    assert results(child.requests[-1]) == [in_parent]
    assert tool_runs(project) == []
    (started,) = of_agent(events, "subagent.started")
    child_id = started["agentId"]
    guards = [entry for entry in ran(project) if entry.get("hook") == "preToolUse" and entry["tool"] == "echo"]
    assert guards == [
        {"hook": "preToolUse", "sessionId": session_id, "agentId": None, "agentType": None, "parentAgentId": None,
         "tool": "echo"},
        {"hook": "preToolUse", "sessionId": child_id, "agentId": child_id, "agentType": "reviewer",
         "parentAgentId": session_id, "tool": "echo"},
    ]  # fmt: skip


def test_child_events_carry_the_agent_id_and_subagent_started_precedes_the_first_request_of_the_child(
    project: Project,
) -> None:
    project.add_extension("probe", PY_EXTENSION)
    events, _, _ = delegate({}, project, [ToolCall("echo", {"text": "hi"}), "fine"])
    child_events = of_agent(events)
    started = child_events[0]
    assert started["type"] == "subagent.started"
    data = started["data"]
    assert data["remoteSessionId"] == started["agentId"]
    assert (data["agentName"], data["agentDisplayName"], data["agentDescription"]) == (
        "reviewer",
        "reviewer",
        "Reviews code",
    )
    task_call = next(e for e in events if e["type"] == "tool.execution_start" and e["data"]["toolName"] == TASK_TOOL)
    assert data["toolCallId"] == task_call["data"]["toolCallId"]
    assert "agentId" not in task_call
    types = [e["type"] for e in child_events]
    assert types.index("subagent.started") < types.index("external_tool.requested")
    assert types[-1] == "subagent.completed"
    assert child_events[-1]["data"]["totalToolCalls"] == 1
    used = [e["data"] for e in child_events if e["type"] == "assistant.usage"]
    tokens = sum(d.get("inputTokens", 0) + d.get("outputTokens", 0) for d in used)
    assert child_events[-1]["data"]["totalTokens"] == tokens
    assert {e["agentId"] for e in child_events} == {started["agentId"]}
    after = events[[e["id"] for e in events].index(child_events[-1]["id"]) + 1 :]
    assert all("agentId" not in e for e in after)


def test_the_childs_events_are_persisted_and_a_resumed_session_leaves_them_out_of_the_model_context(
    project: Project,
) -> None:
    project.add_extension("probe", PY_EXTENSION)
    child = ScriptedAgent([calls(ToolCall("echo", {"text": "hi"}), "fine")])
    parent = ScriptedAgent([calls(task(), "parent done")])

    async def scenario() -> None:
        async with project.host(watch=False, agent=parent, custom_agents=[reviewer(child)]) as host:
            await asyncio.wait_for(host.send_and_wait("delegate"), 60)
            session = host.session_id
            persisted = list(host.replay())
        assert [e["type"] for e in persisted if e.get("agentId")][:2] == ["subagent.started", "subagent.selected"]
        async with project.host(watch=False, agent=ScriptedAgent.replies("ok"), session=session) as again:
            roles = [m.role for m in again.model_context.messages]
            assert roles == ["user", "assistant", "tool", "assistant"]
            assert [m.content for m in again.model_context.messages if m.role == "tool"] == ["fine"]

    run(scenario(), timeout=120)


def test_a_failing_child_ends_with_subagent_failed_and_the_parent_reads_why(project: Project) -> None:
    class Broken:
        def respond(self, request: AgentRequest) -> AgentReply:
            raise RuntimeError("the model is down")

    parent = ScriptedAgent([calls(task(), "parent done")])
    agent = CustomAgent("reviewer", "You review code.", agent=Broken())

    async def scenario() -> list[Event]:
        async with project.host(watch=False, agent=parent, custom_agents=[agent]) as host:
            await asyncio.wait_for(host.send_and_wait("delegate"), 60)
            return host.events.history()

    events = run(scenario())
    (failed,) = of_agent(events, "subagent.failed")
    assert "the model is down" in failed["data"]["error"]
    (result,) = results(parent.requests[-1])
    assert result.startswith("Agent reviewer failed: ") and "the model is down" in result
    assert not of_agent(events, "subagent.completed")
    check_event(failed)


def test_cancelling_the_parents_turn_cancels_the_child(project: Project) -> None:
    asked = asyncio.Event()

    class Hanging:
        async def respond(self, request: AgentRequest) -> AgentReply:
            asked.set()
            await asyncio.sleep(3600)
            raise AssertionError("never answered")

    parent = ScriptedAgent([calls(task(), "parent done")])
    agent = CustomAgent("reviewer", "You review code.", agent=Hanging())

    async def scenario() -> list[Event]:
        async with project.host(watch=False, agent=parent, custom_agents=[agent]) as host:
            await host.send("delegate")
            await asyncio.wait_for(asked.wait(), 30)
            assert host.cancel_turn()
            await host.wait_idle(30)
            return host.events.history()

    events = run(scenario())
    (completed,) = of_agent(events, "subagent.completed")
    assert completed["data"]["cancelled"] is True
    idle = [e for e in events if e["type"] == "session.idle"]
    assert idle[-1]["data"].get("aborted") is None or idle[-1]["data"]["aborted"] is True
    (complete,) = [e for e in events if e["type"] == "tool.execution_complete" and not e.get("agentId")]
    assert complete["data"]["result"]["resultType"] == "rejected"


def test_a_child_starts_another_only_when_its_allowlist_names_the_task_tool(project: Project) -> None:
    inner = ScriptedAgent([calls("inner answer")])
    limited = ScriptedAgent([calls(task("helper"), "limited done")])
    parent = ScriptedAgent([calls(task("limited"), task("open"), "parent done")])
    opener = ScriptedAgent([calls(task("helper"), "open done")])
    agents = [
        CustomAgent("limited", "You have no tools.", tools=("echo",), agent=limited),
        CustomAgent("open", "You may delegate.", tools=None, agent=opener),
        CustomAgent("helper", "You help.", tools=(), agent=inner),
    ]

    async def scenario() -> list[Event]:
        async with project.host(watch=False, agent=parent, custom_agents=agents) as host:
            await asyncio.wait_for(host.send_and_wait("delegate"), 60)
            return host.events.history()

    events = run(scenario())
    assert TASK_TOOL not in [t.name for t in limited.requests[0].tools]
    assert results(limited.requests[-1]) == [NOT_SUPPORTED.format(name=TASK_TOOL)]
    assert TASK_TOOL in [t.name for t in opener.requests[0].tools]
    assert results(opener.requests[-1]) == ["inner answer"]
    nested = [e for e in of_agent(events, "subagent.started") if e["data"]["agentName"] == "helper"]
    (helper,) = nested
    outer = next(e for e in of_agent(events, "subagent.started") if e["data"]["agentName"] == "open")
    assert helper["agentId"] != outer["agentId"]
    assert MAX_DEPTH >= 2


def test_an_unknown_agent_type_is_one_line_naming_the_agents_there_are(project: Project) -> None:
    parent = ScriptedAgent([calls(task("nobody"), "done")])

    async def scenario() -> None:
        async with project.host(
            watch=False, agent=parent, custom_agents=[reviewer(ScriptedAgent.replies("x"))]
        ) as host:
            await asyncio.wait_for(host.send_and_wait("delegate"), 60)

    run(scenario())
    assert results(parent.requests[-1]) == ["Unknown agent type 'nobody'; available agent types: reviewer"]


def test_the_task_tool_is_offered_only_while_the_session_has_custom_agents(project: Project) -> None:
    agent = ScriptedAgent.replies("hello")

    async def scenario() -> None:
        async with project.host(watch=False, agent=agent) as host:
            await asyncio.wait_for(host.send_and_wait("hi"), 60)
            assert host.custom_agents == {}

    run(scenario())
    assert TASK_TOOL not in [tool.name for tool in agent.requests[0].tools]


def test_an_extension_can_give_the_session_custom_agents_and_a_bad_one_is_refused_in_one_line(
    project: Project, tmp_path: Path
) -> None:
    good = [{"name": "linter", "prompt": "You lint.", "tools": ["echo"], "description": "Lints"}]
    project.add_extension("giver", _raw_join({"customAgents": good}))
    project.add_extension("bad", _raw_join({"customAgents": [{"name": "no spaces allowed", "prompt": "p"}]}))

    async def scenario() -> None:
        async with project.host(watch=False) as host:
            agents = host.custom_agents
            assert list(agents) == ["linter"]
            assert agents["linter"].tools == ("echo",) and agents["linter"].source == "extension:project:giver"
            bad = host.extension("bad")
            assert bad.status == "failed"
            assert bad.error is not None and "customAgents[0].name" in bad.error

    run(scenario())


def _raw_join(extra: dict[str, Any]) -> str:
    """An extension that joins over the raw protocol with ``extra`` in its ``session.resume``."""
    return (
        RAW_PROTOCOL
        + f"""
def handle(message):
    pass

request(1, "session.resume", {{"sessionId": os.environ["SESSION_ID"], **{extra!r}}})
while True:
    read()
"""
    )


def test_a_python_extension_sees_the_child_session_as_a_javascript_one_does(project: Project) -> None:
    same_in_a_child_session(project, "py")


def test_a_javascript_extension_on_the_published_sdk_works_in_a_child_session(project: Project) -> None:
    same_in_a_child_session(project, "mjs")


for _mark in copilot_sdk_marks():
    test_a_javascript_extension_on_the_published_sdk_works_in_a_child_session = _mark(
        test_a_javascript_extension_on_the_published_sdk_works_in_a_child_session
    )


def same_in_a_child_session(project: Project, language: str) -> None:
    """The published JavaScript SDK and the Python SDK, each as the extension: its tool runs in
    the child within the allowlist, its guard denies there, and it hears the child's session."""
    code, entry = (PY_EXTENSION, "extension.py") if language == "py" else (MJS_EXTENSION, "extension.mjs")
    project.add_extension("probe", code, entry=entry)
    child_steps: list[ToolCall | str] = [
        ToolCall("echo", {"text": "hi"}),
        ToolCall("echo", {"text": "bad"}),
        ToolCall("secret", {}),
        "ok",
    ]
    events, _, child = delegate({}, project, child_steps, make_host=sdk_host if language == "mjs" else Project.host)
    (started,) = of_agent(events, "subagent.started")
    child_id = started["agentId"]
    seen = results(child.requests[-1])
    assert seen[0] == "echo hi"
    assert GUARD_REASON in seen[1]
    assert seen[2] == NOT_SUPPORTED.format(name="secret")
    assert tool_runs(project) == [{"tool": "echo", "text": "hi"}]
    hooks = [entry for entry in ran(project) if entry.get("hook")]
    in_child = [entry for entry in hooks if entry.get("agentId")]
    assert {entry["sessionId"] for entry in in_child} == {child_id}
    assert [entry["hook"] for entry in in_child] == ["userPromptSubmitted", "preToolUse", "preToolUse"]


class SubagentHooks:
    """An in-process plugin on the subagent hook points and agent stop: start adds context, the
    first subagent stop blocks, the second rewrites the answer."""

    def __init__(self) -> None:
        self.inputs: list[Any] = []

    @hookimpl
    def on_subagent_start(self, input: Any) -> dict[str, Any]:
        self.inputs.append(input)
        return {"additional_context": "Mind the tests."}

    @hookimpl
    def on_subagent_stop(self, input: Any) -> dict[str, Any]:
        self.inputs.append(input)
        if not input.stop_hook_active:
            return {"decision": "block", "reason": "check once more"}
        return {"modified_response": f"reviewed: {input.response}"}

    @hookimpl
    def on_agent_stop(self, input: Any) -> None:
        self.inputs.append(input)


def test_the_subagent_hook_points_frame_the_child_and_the_agent_stop_hooks_run_inside_it_first(
    project: Project,
) -> None:
    child = ScriptedAgent([calls("first look"), calls("second look")])
    parent = ScriptedAgent([calls(task(), "parent done")])
    plugin = SubagentHooks()

    async def scenario() -> str:
        async with project.host(watch=False, agent=parent, custom_agents=[reviewer(child)]) as host:
            host.register_plugin(plugin)
            await asyncio.wait_for(host.send_and_wait("delegate"), 60)
            return host.session_id

    session_id = run(scenario())
    assert [m.content for m in child.requests[0].messages if m.role == "user"] == ["Mind the tests.\n\nreview it"]
    assert [m.content for m in child.requests[1].messages if m.role == "user"][-1] == "check once more"
    assert results(parent.requests[-1]) == ["reviewed: second look"]
    start, first_inside, first_stop, second_inside, second_stop, parent_stop = plugin.inputs
    assert (start.agent_name, start.session_id, start.parent_agent_id) == ("reviewer", session_id, session_id)
    assert start.agent_id and start.agent_id != session_id and start.agent_type == "reviewer"
    assert (first_stop.response, first_stop.stop_hook_active) == ("first look", False)
    assert (second_stop.response, second_stop.stop_hook_active) == ("second look", True)
    assert first_stop.agent_id == start.agent_id and first_stop.session_id == session_id
    assert type(parent_stop).__name__ == "AgentStopInput" and parent_stop.agent_id is None
    for inside, active in ((first_inside, False), (second_inside, True)):
        assert type(inside).__name__ == "AgentStopInput" and inside.stop_hook_active is active
        assert inside.session_id == inside.agent_id == start.agent_id and inside.parent_agent_id == session_id


AGENT_FILE = """---
name: reviewer
description: Reviews code from a file
tools: ["echo"]
---
You review code, as the file says.
"""


def test_agent_files_give_the_session_agents_and_an_untrusted_project_gives_none(project: Project) -> None:
    folder = project.root / ".github" / "agents"
    folder.mkdir(parents=True)
    (folder / "reviewer.agent.md").write_text(AGENT_FILE)
    (folder / "broken.agent.md").write_text("no front matter here\n")
    user = project.home / "agents"
    user.mkdir(parents=True)
    (user / "helper.md").write_text("---\ndescription: Helps\n---\nYou help.\n")

    async def scenario(trusted: bool) -> tuple[dict[str, CustomAgent], list[str]]:
        async with project.host(watch=False, agent=ScriptedAgent.replies("ok"), trust=trusted) as host:
            warnings = [e["data"]["message"] for e in host.events.history("session.warning")]
            return host.custom_agents, warnings

    agents, warnings = run(scenario(True))
    assert sorted(agents) == ["helper", "reviewer"]
    reviewer = agents["reviewer"]
    assert (reviewer.source, reviewer.tools, reviewer.description) == ("project", ("echo",), "Reviews code from a file")
    assert reviewer.prompt.strip() == "You review code, as the file says."
    assert [w for w in warnings if "broken.agent.md" in w] != []
    agents, _ = run(scenario(False))
    assert list(agents) == ["helper"]


def test_an_agent_given_to_the_host_wins_over_a_file_of_the_same_name(project: Project) -> None:
    folder = project.root / ".github" / "agents"
    folder.mkdir(parents=True)
    (folder / "reviewer.agent.md").write_text(AGENT_FILE)
    given = reviewer(ScriptedAgent.replies("x"))

    async def scenario() -> CustomAgent:
        async with project.host(watch=False, agent=ScriptedAgent.replies("ok"), custom_agents=[given]) as host:
            return host.custom_agents["reviewer"]

    assert run(scenario()) is given


class Choosing(ScriptedAgent):
    """The session's agent, able to make a copy answering with another model (as the
    OpenAI-compatible agent does); the copy answers the child."""

    def with_model(self, model_id: str) -> ScriptedAgent:
        if model_id == "unknown-model":
            raise ValueError(f"model {model_id!r} is not offered by the endpoint")
        return ScriptedAgent([calls(f"answered by {model_id}")], model=model_id)


def test_a_custom_agents_model_or_the_calls_answers_the_child_when_the_agent_can_choose(project: Project) -> None:
    steps = [
        task(),
        ToolCall(TASK_TOOL, {**task().arguments, "model": "big"}),
        ToolCall(TASK_TOOL, {**task().arguments, "model": "unknown-model"}),
    ]
    parent = Choosing([calls(*steps, "parent done")])
    agent = CustomAgent("reviewer", "You review code.", model="small")

    async def scenario() -> list[Event]:
        async with project.host(watch=False, agent=parent, custom_agents=[agent]) as host:
            await asyncio.wait_for(host.send_and_wait("delegate"), 60)
            return host.events.history()

    events = run(scenario())
    first, second, third = results(parent.requests[-1])
    assert (first, second) == ("answered by small", "answered by big")
    assert third.startswith("Agent reviewer cannot start: ") and "unknown-model" in third
    assert [e["data"]["model"] for e in of_agent(events, "subagent.started")] == ["small", "big"]
