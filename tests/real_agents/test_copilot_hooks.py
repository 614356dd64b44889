"""The hook points as the real GitHub Copilot CLI calls them: the behaviour this host copies.

A ``.mjs`` extension records every hook input it gets (through the SDK the CLI injects) and
answers as a scenario needs; the scripted model's requests show what the model read. Each fact
asserted here is one the host's own tests hold it to (``tests/extension_host/test_dispatch.py``,
``session/test_turns.py``, ``test_copilot_sdk.py``), so a CLI that changes shows up here first.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from real_agents.agents import Agent, assert_finished
from real_agents.models import Call, Say, Turn
from real_agents.programs import skip_without_node
from real_agents.runner import Workspace

pytestmark = pytest.mark.real_agent
skip_without_node()

RECORDER = """
import { appendFileSync } from "node:fs";
import { joinSession } from "@github/copilot-sdk/extension";

const seen = new URL("./seen.jsonl", import.meta.url);
const record = (hook) => async (input) => {
  appendFileSync(seen, JSON.stringify({ hook, ...input }) + "\\n");
  if (hook === "preToolUse" && input.toolName.startsWith("deny_")) {
    return input.toolName === "deny_with_reason"
      ? { permissionDecision: "deny", permissionDecisionReason: "not here" } : { permissionDecision: "deny" };
  }
  if (hook === "postToolUseFailure") return { additionalContext: "guidance for " + input.toolName };
  if (hook === "agentStop" && !input.stopHookActive) return { decision: "block", reason: "please continue" };
  return undefined;
};
const names = ["preToolUse", "postToolUse", "postToolUseFailure", "userPromptSubmitted",
               "userPromptTransformed", "sessionStart", "sessionEnd", "errorOccurred", "agentStop"];
await joinSession({
  tools: [
    { name: "explode", description: "Always throws", handler: async () => { throw new Error("kaboom"); } },
    { name: "fail_result", description: "Returns a failure",
      handler: async () => ({ textResultForLlm: "it failed", resultType: "failure", error: "the failure" }) },
    { name: "deny_with_reason", description: "Denied by the hook", handler: async () => "ran" },
    { name: "deny_without_reason", description: "Denied by the hook", handler: async () => "ran" },
  ],
  hooks: Object.fromEntries(names.map((name) => [`on${name[0].toUpperCase()}${name.slice(1)}`, record(name)])),
});
"""


def recorded(workspace: Workspace) -> list[dict[str, Any]]:
    seen = workspace.project / ".github" / "extensions" / "recorder" / "seen.jsonl"
    return [json.loads(line) for line in seen.read_text().splitlines()]


def test_copilot_cli_calls_the_failure_hooks_for_a_failed_tool_the_stop_hooks_at_the_end_and_words_a_denial(
    copilot_cli: Agent, workspace: Workspace
) -> None:
    folder = workspace.project / ".github" / "extensions" / "recorder"
    folder.mkdir(parents=True)
    (folder / "extension.mjs").write_text(RECORDER)
    script: list[Turn] = [
        Call("explode"),
        Call("fail_result"),
        Call("deny_with_reason"),
        Call("deny_without_reason"),
        Say("done"),
    ]
    with copilot_cli.model(script) as model:
        run = copilot_cli.run(workspace, model, "do it", stop_hook_host=False)
    assert_finished(run, model)
    seen = recorded(workspace)
    hooks = [entry["hook"] for entry in seen]
    assert "errorOccurred" not in hooks and "postToolUse" not in hooks
    failures = [entry for entry in seen if entry["hook"] == "postToolUseFailure"]
    assert [(entry["toolName"], entry["error"]) for entry in failures] == [
        ("explode", "Tool execution failed"),
        ("fail_result", "the failure"),
    ]
    stops = [entry for entry in seen if entry["hook"] == "agentStop"]
    assert [(entry["stopReason"], entry["stopHookActive"]) for entry in stops] == [
        ("end_turn", False),
        ("end_turn", True),
    ]
    assert Path(stops[0]["transcriptPath"]).name == "events.jsonl"
    transformed = [entry for entry in seen if entry["hook"] == "userPromptTransformed"]
    assert [entry["prompt"] for entry in transformed] == ["do it", "please continue"]
    assert all(entry["sessionId"] and entry["workingDirectory"] == str(workspace.project) for entry in seen)
    results = model.tool_results()
    assert "Denied by preToolUse hook: not here" in results
    assert "Denied by preToolUse hook: No reason provided" in results
    guidance = 'Tool "fail_result" failed. Additional guidance from postToolUseFailure hooks:\nguidance for fail_result'
    messages = model.conversation_requests()[-1]["messages"]
    assert {"role": "user", "content": guidance} in [{"role": m["role"], "content": m["content"]} for m in messages]
