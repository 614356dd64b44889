"""The project's extension tools through ``extensions mcp`` in each real agent, and in the MCP
Inspector's command-line mode; the agents' own hooks on those MCP tools.

The server is registered with the entry ``extensions mcp --print-config`` prints. Where a test
needs hooks apart from the tools, the tools come from a second project (registered as server
``tools``), so the guards that run are only the agent's hooks of the first, not the MCP
server's own pipeline.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from real_agents.agents import Agent, assert_finished, for_agents, mcp_server_entry, merge_json
from real_agents.extensions import REDACTED, REDACTOR, TOOLS
from real_agents.models import Call, Say
from real_agents.programs import skip_without_node
from real_agents.runner import EXTENSIONS_BIN, SECRET, Workspace

pytestmark = pytest.mark.real_agent
skip_without_node()


def tools_project(workspace: Workspace) -> Path:
    """A second, trusted project whose extension ``tools`` offers :data:`TOOLS`."""
    root = workspace.root / "tools-project"
    folder = root / ".github" / "extensions" / "tools"
    folder.mkdir(parents=True)
    (root / ".git").mkdir()
    (folder / "extension.py").write_text(TOOLS)
    workspace.extensions("--root", str(root), "trust")
    return root


@for_agents("claude", "gemini", "copilot")
def test_an_extension_tool_answers_through_extensions_mcp_in_the_agent(agent: Agent, workspace: Workspace) -> None:
    workspace.add_extension("tools", TOOLS)
    workspace.extensions("trust")
    agent.register_mcp_server(workspace)
    name = agent.mcp_tool("extensions", "tools_shout")
    with agent.model([Call(name, {"text": "quiet words"}), Say("done")]) as model:
        run = agent.run(workspace, model, "shout quiet words", *agent.mcp_options("extensions"), stop_hook_host=False)
    assert_finished(run, model)
    assert name in model.tool_names(), model.tool_names()
    assert any("QUIET WORDS!" in result for result in model.tool_results()), model.log()


@for_agents()
def test_a_guard_denies_an_mcp_tool_by_the_name_the_agent_gives_it(agent: Agent, workspace: Workspace) -> None:
    tools = tools_project(workspace)
    agent.register_mcp_server(workspace, "tools", tools)
    name = agent.mcp_tool("tools", "tools_read_secret")
    workspace.add_extension(
        "guard",
        f"""
from sdk_extension import join_session

def guard(input, invocation):
    if input.tool_name == {name!r}:
        return {{"permission_decision": "deny", "permission_decision_reason": "the guard keeps the secret"}}
    return None

join_session(hooks={{"on_pre_tool_use": guard}})
""",
    )
    agent.install_hooks(workspace)
    with agent.model([Call(name, {}), Say("done")]) as model:
        run = agent.run(workspace, model, "read the secret", *agent.mcp_options("tools"))
    assert_finished(run, model)
    assert SECRET not in model.bodies(), model.log()
    assert any("the guard keeps the secret" in result for result in model.tool_results()), model.log()


@for_agents()
def test_a_post_tool_hook_replaces_an_mcp_tools_result_before_the_model_sees_it(
    agent: Agent, workspace: Workspace
) -> None:
    tools = tools_project(workspace)
    agent.register_mcp_server(workspace, "tools", tools)
    workspace.add_extension("redactor", REDACTOR)
    agent.install_hooks(workspace)
    with agent.model([Call(agent.mcp_tool("tools", "tools_read_secret"), {}), Say("done")]) as model:
        run = agent.run(workspace, model, "read the secret", *agent.mcp_options("tools"))
    assert_finished(run, model)
    assert any(REDACTED in result for result in model.tool_results()), model.log()
    assert SECRET not in model.bodies(), model.log()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def http_server(workspace: Workspace, address: str, token: str) -> Iterator[None]:
    """``extensions mcp --http ADDRESS`` of the project with ``token``, until the block ends
    (it is stopped and reaped whatever happened); the block starts once it accepts connections."""
    host, _, port = address.rpartition(":")
    log = (workspace.root / "mcp-http.log").open("w")
    server = subprocess.Popen(
        [str(EXTENSIONS_BIN / "extensions"), "mcp", "--http", address],
        cwd=workspace.project,
        env=workspace.env(EXTENSION_HOST_TOKEN=token),
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            assert server.poll() is None, (workspace.root / "mcp-http.log").read_text()
            with contextlib.suppress(OSError), socket.create_connection((host, int(port)), timeout=1):
                break
            assert time.monotonic() < deadline, (workspace.root / "mcp-http.log").read_text()
            time.sleep(0.1)
        yield
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=15)
        log.close()


def test_copilot_cli_reaches_extensions_mcp_over_http_with_the_snippet_print_config_gives(
    copilot_cli: Agent, workspace: Workspace
) -> None:
    # The snippet names the token as ${EXTENSION_HOST_TOKEN}, which Copilot CLI expands from its environment.
    workspace.add_extension("tools", TOOLS)
    workspace.extensions("trust")
    address = f"127.0.0.1:{free_port()}"
    token = "token-" + "0123456789abcdef" * 3
    snippet = json.loads(workspace.extensions("mcp", "--print-config", "copilot", "--http", address).stdout)
    assert token not in json.dumps(snippet)
    merge_json(workspace.home / ".copilot" / "mcp-config.json", snippet)
    name = copilot_cli.mcp_tool("extensions", "tools_shout")
    with (
        http_server(workspace, address, token),
        copilot_cli.model([Call(name, {"text": "far words"}), Say("done")]) as model,
    ):
        run = copilot_cli.run(
            workspace, model, "shout far words", stop_hook_host=False, env={"EXTENSION_HOST_TOKEN": token}
        )
    assert_finished(run, model)
    assert any("FAR WORDS!" in result for result in model.tool_results()), model.log()


def inspector(command: list[str], workspace: Workspace, *args: str) -> dict[str, Any]:
    """Run the MCP Inspector in ``--cli`` mode against the project's ``extensions mcp`` (the
    entry ``--print-config`` gives); its JSON answer."""
    entry = mcp_server_entry(workspace, "claude")
    run = workspace.run([*command, "--cli", entry["command"], *entry["args"], *args], env=workspace.env(), timeout=60)
    assert run.exit_code == 0 and not run.leftovers, run.describe()
    answer: dict[str, Any] = json.loads(run.stdout)
    return answer


def test_the_mcp_inspector_lists_and_calls_the_extension_tools(mcp_inspector: list[str], workspace: Workspace) -> None:
    workspace.add_extension("tools", TOOLS)
    workspace.extensions("trust")
    listed = inspector(mcp_inspector, workspace, "--method", "tools/list")
    tools = {tool["name"]: tool for tool in listed["tools"]}
    assert set(tools) == {"tools_shout", "tools_read_secret"}, listed
    assert tools["tools_shout"]["inputSchema"]["properties"]["text"]["type"] == "string"
    called = inspector(
        mcp_inspector, workspace, "--method", "tools/call", "--tool-name", "tools_shout", "--tool-arg", "text=quiet"
    )
    assert called["content"] == [{"type": "text", "text": "QUIET!"}] and not called.get("isError"), called
