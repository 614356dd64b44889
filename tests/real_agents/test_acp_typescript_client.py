"""The official TypeScript ACP client (``@agentclientprotocol/sdk``, pinned) drives ``copilot --acp``
(offline, against a scripted model) and ``extensions acp`` with one client script: a tool call,
a hook's deny, a permission the client answers, a cancel, and a load in a new agent process.
Both runs reduce to the same shapes, outside a reviewed table of intended differences.

What each agent runs for the same steps differs where the agents do: ``copilot --acp`` loads no
project extension (its model calls Copilot's own tools, its command hook denies, and its own
``bash`` permission prompt is what reaches the client, since it refuses a hook's ``ask`` without
asking the client); ``extensions acp`` runs the project extension's tools and hooks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest

from real_agents.acp_shapes import INTENDED, Transcript, run_client, shapes, unexplained
from real_agents.agents import FAKE_KEY, Agent
from real_agents.models import Call, ChatCompletionsModel, Say, ScriptedModel, Turn
from real_agents.programs import skip_without_node
from real_agents.runner import EXTENSIONS_BIN, Workspace

pytestmark = [pytest.mark.real_agent, pytest.mark.subprocess, pytest.mark.slow]
skip_without_node()

DENY_REASON: Final = "forbidden by the guard"
ASK_REASON: Final = "the guard asks"

TOOL, DENY, ASK, CANCEL, LOAD = 2, 3, 4, 5, 8
"""The steps of :data:`STEPS` the tests look at."""
STEPS: Final[list[dict[str, Any]]] = [
    {"do": "initialize"},
    {"do": "new"},
    {"do": "prompt", "text": "call the tool"},
    {"do": "prompt", "text": "call it on something forbidden"},
    {"do": "prompt", "text": "call it on something that needs asking", "permissions": ["allow_once"]},
    {"do": "prompt", "text": "wait a while", "cancel_on": "tool_call"},
    {"do": "restart"},
    {"do": "initialize"},
    {"do": "load"},
]
PROMPTS: Final = (TOOL, DENY, ASK, CANCEL)

COPILOT_GUARD: Final = f"""input=$(cat)
case "$input" in
  *forbidden*) echo '{{"permissionDecision":"deny","permissionDecisionReason":"{DENY_REASON}"}}' ;;
  *ask-me*) echo '{{"permissionDecision":"ask","permissionDecisionReason":"{ASK_REASON}"}}' ;;
esac
"""
"""Copilot CLI's command hook (``preToolUse``): denies a call whose input names ``forbidden``, asks
about one that names ``ask-me``."""

PROBE: Final = f"""
import time
from typing import Annotated
from sdk_extension import join_session, tool

@tool(name="probe_echo", description="Echo the text.")
def echo(text: Annotated[str, "what to echo"]) -> str:
    return "echo: " + text

@tool(name="probe_slow", description="Wait a while.")
def slow() -> str:
    time.sleep(20)
    return "slept"

def guard(input, invocation):
    if "forbidden" in str(input.tool_args):
        return {{"permission_decision": "deny", "permission_decision_reason": {DENY_REASON!r}}}
    if "ask me" in str(input.tool_args):
        return {{"permission_decision": "ask", "permission_decision_reason": {ASK_REASON!r}}}
    return None

join_session(tools=[echo, slow], hooks={{"on_pre_tool_use": guard}})
"""
"""This host's project extension: a tool, a slow tool, and a guard that denies ``forbidden`` and
asks about ``ask me``."""


@dataclass(frozen=True)
class AcpAgent:
    """One agent under the client script: its workspace, command line, environment and model."""

    name: str
    workspace: Workspace
    command: list[str]
    env: dict[str, str]
    model: ScriptedModel

    def drive(self, sdk: Path, steps: Sequence[dict[str, Any]] = STEPS) -> Transcript:
        """Run the client script against this agent; it must finish every step and leave no process."""
        transcript = run_client(self.workspace, sdk, self.command, steps, self.env)
        assert transcript.ok, f"{transcript.describe()}\n--- model\n{self.model.log()}"
        assert not transcript.run.leftovers, transcript.describe()
        return transcript


def copilot_script(workspace: Workspace) -> list[Turn]:
    """Copilot CLI's project (a file, a command hook) and its model's script for :data:`STEPS`."""
    (workspace.project / "notes.txt").write_text("a note\n")
    hooks = workspace.project / ".github" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "guard.sh").write_text(COPILOT_GUARD)
    hook = {"type": "command", "bash": "sh .github/hooks/guard.sh", "cwd": ".", "timeoutSec": 10}
    (hooks / "guard.json").write_text(json.dumps({"version": 1, "hooks": {"preToolUse": [hook]}}))
    return [
        Call("view", {"path": str(workspace.project / "notes.txt")}),
        Say("read it"),
        Call("view", {"path": str(workspace.project / "forbidden.txt")}),
        Say("denied"),
        Call("bash", {"command": "printf ran-once", "description": "print"}),
        Say("ran"),
        Call("bash", {"command": "sleep 20", "description": "wait"}),
        Say("never said"),
    ]


def extensions_script(workspace: Workspace) -> list[Turn]:
    """This host's project (the probe extension, trusted) and its model's script for :data:`STEPS`."""
    workspace.add_extension("probe", PROBE)
    workspace.extensions("trust")
    return [
        Call("probe_echo", {"text": "hi"}),
        Say("echoed"),
        Call("probe_echo", {"text": "forbidden"}),
        Say("denied"),
        Call("probe_echo", {"text": "ask me"}),
        Say("asked"),
        Call("probe_slow", {}),
        Say("never said"),
    ]


@contextmanager
def copilot_agent(
    copilot: Agent, base: Path, script: Callable[[Workspace], list[Turn]] = copilot_script
) -> Iterator[AcpAgent]:
    """``copilot --acp`` in a workspace of its own under ``base``, its model answering ``script``."""
    workspace = Workspace.create(base / "copilot")
    try:
        with copilot.model(script(workspace)) as model:
            command = [*copilot.program.command(copilot.prefix), "--acp"]
            yield AcpAgent("copilot", workspace, command, copilot.env(workspace, model), model)
    finally:
        workspace.remove()


@contextmanager
def extensions_agent(base: Path) -> Iterator[AcpAgent]:
    """``extensions acp`` against a scripted model, in a workspace of its own under ``base``."""
    workspace = Workspace.create(base / "extensions")
    try:
        with ChatCompletionsModel(extensions_script(workspace)) as model:
            command = [
                str(EXTENSIONS_BIN / "extensions"),
                "acp",
                "--base-url",
                f"{model.origin}/v1",
                "--model",
                "test-model",
            ]
            yield AcpAgent("extensions", workspace, command, workspace.env(OPENAI_API_KEY=FAKE_KEY), model)
    finally:
        workspace.remove()


@contextmanager
def acp_agent(name: str, request: pytest.FixtureRequest, base: Path) -> Iterator[AcpAgent]:
    if name == "copilot":
        with copilot_agent(request.getfixturevalue("copilot_cli"), base) as agent:
            yield agent
    else:
        with extensions_agent(base) as agent:
            yield agent


@pytest.mark.parametrize("name", ["copilot", "extensions"])
def test_the_official_client_runs_every_step_of_the_script(
    name: str, request: pytest.FixtureRequest, acp_sdk: Path, tmp_path: Path
) -> None:
    with acp_agent(name, request, tmp_path) as agent:
        transcript = agent.drive(acp_sdk)
    assert transcript.result(0)["protocolVersion"] == 1
    session = transcript.result(1)["sessionId"]
    stops = [transcript.result(step)["stopReason"] for step in PROMPTS]
    assert stops == ["end_turn", "end_turn", "end_turn", "cancelled"], transcript.describe()
    # The tool call: announced, then completed.
    tool = transcript.updates(TOOL)
    assert [u.get("status") for u in tool if u["sessionUpdate"] in ("tool_call", "tool_call_update")][-1] == "completed"
    # The hook's deny: the call fails with the hook's reason, and the client is not asked.
    denied = [u for u in transcript.updates(DENY) if u["sessionUpdate"] == "tool_call_update"]
    assert denied[-1]["status"] == "failed" and DENY_REASON in json.dumps(denied[-1]), transcript.describe()
    # The client was asked once, during the ask step, and its answer let the call run.
    (asked,) = transcript.permission_requests()
    assert asked["sessionId"] == session
    assert {"allow_once", "reject_once"} <= {option["kind"] for option in asked["options"]}
    ran = [u for u in transcript.updates(ASK) if u["sessionUpdate"] == "tool_call_update"]
    assert ran[-1]["status"] == "completed", transcript.describe()
    assert agent.model.tool_results()[2].startswith(("ran-once", "echo: ask me")), agent.model.log()
    # Cancelled while its tool ran: the model was never asked to answer the slow tool's result.
    assert "never said" not in json.dumps(transcript.messages)
    # Loaded in a new agent process: the history comes back before the answer.
    replayed = [u["sessionUpdate"] for u in transcript.updates(LOAD)]
    assert replayed[:1] == ["user_message_chunk"] and "agent_message_chunk" in replayed, replayed
    first_prompt = next(u for u in transcript.updates(LOAD) if u["sessionUpdate"] == "user_message_chunk")
    assert first_prompt["content"] == {"type": "text", "text": STEPS[TOOL]["text"]}


def test_both_agents_show_the_same_shapes_outside_the_reviewed_differences(
    request: pytest.FixtureRequest, acp_sdk: Path, tmp_path: Path
) -> None:
    with acp_agent("extensions", request, tmp_path) as ours_agent:
        ours = shapes(ours_agent.drive(acp_sdk), PROMPTS, LOAD)
    with acp_agent("copilot", request, tmp_path) as copilot:
        theirs = shapes(copilot.drive(acp_sdk), PROMPTS, LOAD)
    problems = unexplained(theirs, ours, INTENDED)
    assert not problems, "\n".join(problems)


def test_copilot_refuses_a_hooks_ask_without_asking_the_acp_client(
    copilot_cli: Agent, acp_sdk: Path, tmp_path: Path
) -> None:
    """Why the script's permission step uses Copilot's own ``bash`` prompt on its side."""

    def asking(workspace: Workspace) -> list[Turn]:
        copilot_script(workspace)  # the project, with its hook
        return [Call("view", {"path": str(workspace.project / "ask-me.txt")}), Say("refused")]

    with copilot_agent(copilot_cli, tmp_path, asking) as agent:
        steps = [*STEPS[:2], {"do": "prompt", "text": "read it", "permissions": ["allow_once"]}]
        transcript = agent.drive(acp_sdk, steps)
    assert transcript.permission_requests() == []
    (refused,) = [u for u in transcript.updates(2) if u["sessionUpdate"] == "tool_call_update"]
    assert refused["status"] == "failed", refused
    assert refused["rawOutput"] == {
        "message": f"Denied by user via preToolUse hook prompt: {ASK_REASON}",
        "code": "denied",
    }
