"""A Python extension exported with ``extensions export copilot`` inside the real GitHub Copilot
CLI (offline, against a scripted Chat Completions model): its tool, its guard on a built-in tool,
and no process of it left once the CLI is gone, however it went."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
from pathlib import Path

import pytest

from extension_host import ExtensionHost
from helpers import doc_section
from real_agents.agents import Agent, assert_finished
from real_agents.extensions import DENY_ENV, DENY_REASON
from real_agents.models import Call, Say, Turn
from real_agents.programs import skip_without_node
from real_agents.runner import SECRET, Workspace

pytestmark = pytest.mark.real_agent
skip_without_node()

SDK_SESSION = Path(__file__).with_name("copilot_sdk_session.mjs")

SESSION_TOOL = """
import os
from sdk_extension import join_session, tool

@tool(name="probe_session", description="Say which session this extension joined.")
def probe_session() -> str:
    return f"probe pid {os.getpid()} in session {os.environ.get('SESSION_ID')}"

join_session(tools=[probe_session])
"""


def node() -> str:
    found = shutil.which("node")
    assert found is not None
    return found


def export(workspace: Workspace, name: str, code: str) -> str:
    """Write ``code`` as the project extension ``name`` and export it; what the export printed."""
    workspace.add_extension(name, code)
    return workspace.extensions("export", "copilot", name).stdout


def test_an_exported_python_extensions_tool_answers_in_copilot_cli_and_nothing_is_left_after_it_exits(
    copilot_cli: Agent, workspace: Workspace
) -> None:
    export(workspace, "probe", SESSION_TOOL)
    with copilot_cli.model([Call("probe_session", {}), Say("done")]) as model:
        run = copilot_cli.run(workspace, model, "which session is this", stop_hook_host=False)
    assert_finished(run, model)
    assert "probe_session" in model.tool_names(), model.tool_names()
    (result,) = model.tool_results()
    session = result.rpartition(" in session ")[2]
    assert result.startswith("probe pid ") and session not in ("", "None"), model.log()
    assert session in run.stdout, run.describe()  # the session Copilot CLI reports is the one it gave the extension


def test_an_exported_python_extension_joins_a_copilot_sdk_session_that_requests_extensions(
    copilot_cli: Agent, workspace: Workspace
) -> None:
    export(workspace, "probe", SESSION_TOOL)
    driver = workspace.root / "sdk-client"
    driver.mkdir()
    (driver / "node_modules").symlink_to(copilot_cli.prefix / "node_modules")  # @github/copilot-sdk, pinned
    shutil.copy(SDK_SESSION, driver / SDK_SESSION.name)
    with copilot_cli.model([Call("probe_session", {}), Say("done")]) as model:
        argv = [str(driver / SDK_SESSION.name), copilot_cli.program.command(copilot_cli.prefix)[0]]
        run = workspace.run(
            [node(), *argv, f"{model.origin}/v1", str(workspace.project), "which session is this"],
            env=copilot_cli.env(workspace, model),
        )
    assert_finished(run, model)
    (said,) = run.json_lines()
    assert said["answer"] == "done", run.describe()
    (result,) = model.tool_results()
    assert result.startswith("probe pid ") and result.endswith(f" in session {said['sessionId']}"), model.log()


def test_an_exported_python_guard_denies_copilot_clis_own_shell(copilot_cli: Agent, workspace: Workspace) -> None:
    export(workspace, "guard", DENY_ENV)
    with copilot_cli.model([copilot_cli.shell("cat .env"), Say("done")]) as model:
        run = copilot_cli.run(workspace, model, "show me the .env file", stop_hook_host=False)
    assert_finished(run, model)
    assert SECRET not in model.bodies(), model.log()
    assert any(DENY_REASON in result for result in model.tool_results()), model.log()


def test_no_process_of_the_extension_is_left_when_copilot_cli_is_killed(
    copilot_cli: Agent, workspace: Workspace
) -> None:
    export(workspace, "probe", SESSION_TOOL)

    def kill_the_cli() -> None:  # the extension answered a call: it is running
        os.kill(workspace.agent_pid(), signal.SIGKILL)

    script: list[Turn] = [Call("probe_session", {}), Say("never said", before=kill_the_cli)]
    with copilot_cli.model(script) as model:
        run = copilot_cli.run(workspace, model, "which session is this", stop_hook_host=False)
    assert run.exit_code == -signal.SIGKILL, run.describe()
    assert any(result.startswith("probe pid ") for result in model.tool_results()), model.log()
    assert not run.leftovers, f"left after Copilot CLI was killed: {run.leftovers}"


@pytest.mark.parametrize(
    "missing",
    ["COPILOT_CLI_ENABLED_FEATURE_FLAGS", "GITHUB_COPILOT_PROMPT_MODE_EXTENSIONS"],
    ids=["flag", "prompt-mode"],
)
def test_copilot_cli_runs_no_extension_in_a_prompt_run_without_both_switches(
    copilot_cli: Agent, workspace: Workspace, missing: str
) -> None:
    said = export(workspace, "probe", SESSION_TOOL)
    with copilot_cli.model([Say("done")]) as model:
        run = copilot_cli.run(workspace, model, "which session is this", stop_hook_host=False, env={missing: ""})
    assert_finished(run, model)
    assert model.tool_names() and "probe_session" not in model.tool_names(), model.tool_names()
    (note,) = [line for line in said.splitlines() if missing in line]  # the export says so, in one line
    assert "COPILOT_CLI_ENABLED_FEATURE_FLAGS=EXTENSIONS" in note and "GITHUB_COPILOT_PROMPT_MODE_EXTENSIONS" in note


def test_the_docs_say_which_switches_copilot_cli_needs_to_run_an_exported_extension() -> None:
    section = doc_section("other-agents.md", "## GitHub Copilot CLI", "\n## ")
    assert "COPILOT_CLI_ENABLED_FEATURE_FLAGS=EXTENSIONS" in section and "--experimental" in section
    assert "GITHUB_COPILOT_PROMPT_MODE_EXTENSIONS=true" in section


CLI_SDK_EXTENSION = """
import { joinSession } from "@github/copilot-sdk/extension";

const session = await joinSession({
  tools: [{ name: "on_cli_sdk", description: "Say which SDK this runs on",
            parameters: { type: "object", properties: {} },
            handler: async () => `on ${process.env.COPILOT_SDK_PATH} in ${session.sessionId}` }],
  hooks: { onPreToolUse: async (input) =>
    input.toolName === "blocked" ? { permissionDecision: "deny", permissionDecisionReason: "not here" } : undefined },
});
"""


def test_a_javascript_extension_runs_under_this_host_on_the_sdk_build_copilot_cli_injects(
    copilot_cli: Agent, workspace: Workspace
) -> None:
    """Copilot CLI unpacks its own SDK build (newer than the published 1.0.14) on first run; given
    to the host as ``extension_sdk_path``, the same extension runs on it here."""
    run = workspace.run([*copilot_cli.program.command(copilot_cli.prefix), "--version"], env=workspace.env())
    assert run.exit_code == 0, run.describe()
    (build,) = (workspace.home / ".cache" / "copilot" / "pkg").glob("*/*/copilot-sdk")
    folder = workspace.project / ".github" / "extensions" / "on_cli_sdk"
    folder.mkdir(parents=True)
    (folder / "extension.mjs").write_text(CLI_SDK_EXTENSION)

    async def scenario() -> None:
        host = ExtensionHost(workspace.project, workspace.home / "eh", trust=True, extension_sdk_path=build)
        async with host:
            (info,) = host.extensions
            assert info.status == "running", info.error
            result = await host.call_tool("on_cli_sdk")
            assert result.text_result_for_llm == f"on {build} in {host.session_id}"
            check = await host.check_tool_call("blocked", {})
            assert (check.decision, check.reason) == ("deny", "not here")

    asyncio.run(asyncio.wait_for(scenario(), 90))
