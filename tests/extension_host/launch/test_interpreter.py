"""No Python process the project starts imports from its working folder or from the project.

Each test plants shadows of ``extension_host``, ``sdk_extension``, ``pydantic`` and
``sitecustomize`` (:func:`helpers.plant_shadows`) at the root of an untrusted project, or of the
folder a client starts a command in, runs one entry point there as a real process, and checks
that it did its job and that no shadow was imported: the background host a hook command starts,
the host a hook command starts for one call, extensions (forked by the fork server or in a new
interpreter), the MCP command ``--print-config`` registers, ``extensions serve``, the Copilot CLI
launcher under node, and the bench's children.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serve_client import stdio_server, write_script

from extension_host.bridges.agent_hooks.host_start import HOOK_HOST_IDLE_ENV, background_host_pid
from extension_host.bridges.copilot import LAUNCHER_FILE, export_copilot
from extension_host.launch.lifeline import LIFELINE_ENV
from extension_host.project.discovery import ExtensionSpec
from extension_host.project.paths import control_socket_path
from extension_host.project.trust import TRUST_ENV
from helpers import EXTENSIONS_SCRIPT, REPO_ROOT, Project, Shadows, plant_shadows, process_exists, run, wait_for_exit

pytestmark = pytest.mark.subprocess

STEP_TIMEOUT = 60.0
"""Seconds one exchange with a started process may take on a loaded machine."""

WITNESS = """
    import json, os, subprocess, sys
    from pathlib import Path
    from sdk_extension import join_session, tool

    @tool(description="This process's parent's command line, its sys.path, and the one of its folder's probe.py")
    def where() -> str:
        parent = Path(f"/proc/{os.getppid()}/cmdline").read_bytes().split(b"\\0")
        probe = [sys.executable, str(Path(__file__).parent / "probe.py")]  # with this environment and folder
        as_a_script = subprocess.run(probe, capture_output=True, text=True, timeout=30, check=True).stdout
        return json.dumps(
            {"parent": [part.decode() for part in parent if part], "path": sys.path, "script": json.loads(as_a_script)}
        )

    def guard(input, invocation):
        if "rm -rf" in input.tool_args.get("command", ""):
            return {"permission_decision": "deny", "permission_decision_reason": "no rm -rf here"}
        return None

    join_session(tools=[where], hooks={"on_pre_tool_use": guard})
"""
"""A user extension (user extensions run in an untrusted project): a tool that says where it
runs, and a guard."""

PRE_TOOL_USE = json.dumps(
    {"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "rm -rf b"}}
).encode()


@pytest.fixture
def shadows(project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Shadows:
    """The project, untrusted, with shadows at its root, and the user extension :data:`WITNESS`."""
    monkeypatch.delenv(TRUST_ENV)
    folder = project.add_extension("witness", WITNESS, source="user")
    (folder / "probe.py").write_text("import json, sys\nprint(json.dumps(sys.path))\n", encoding="utf-8")
    return plant_shadows(project.root, tmp_path / "shadow-imports.txt")


def hook_call(project: Project) -> tuple[int, Any, str]:
    """``extensions hook claude PreToolUse`` in the project, as Claude Code runs it."""
    done = subprocess.run(
        [str(EXTENSIONS_SCRIPT), "hook", "claude", "PreToolUse"],
        cwd=project.root,
        input=PRE_TOOL_USE,
        capture_output=True,
        timeout=STEP_TIMEOUT,
    )
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else None, done.stderr.decode()


def assert_denied(result: tuple[int, Any, str]) -> None:
    code, answer, err = result
    assert code == 0, err
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny", answer
    assert answer["hookSpecificOutput"]["permissionDecisionReason"] == "no rm -rf here"


@pytest.fixture
def background_host(project: Project, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Hook commands start a background host; it is ended afterwards, pass or fail (it is
    detached: the reaper does not know it)."""
    monkeypatch.setenv(HOOK_HOST_IDLE_ENV, "300")
    try:
        yield
    finally:
        try:
            pid = int(control_socket_path(project.root).with_suffix(".hook-host.pid").read_text())
        except (OSError, ValueError):
            pid = 0
        if pid and process_exists(pid):
            os.kill(pid, signal.SIGTERM)  # it stops its extensions
            if not wait_for_exit(pid, 15):
                os.killpg(pid, signal.SIGKILL)


@pytest.mark.usefixtures("background_host")
def test_the_background_host_a_hook_command_starts_imports_nothing_from_the_project(
    project: Project, shadows: Shadows
) -> None:
    assert_denied(hook_call(project))
    assert shadows.imported() == []
    assert background_host_pid(project.root) is not None  # it answered, not a host of the call's own


def test_the_host_a_hook_command_starts_for_one_call_imports_nothing_from_the_project(
    project: Project, shadows: Shadows
) -> None:
    assert_denied(hook_call(project))
    assert shadows.imported() == []


def where(project: Project) -> dict[str, Any]:
    """What the witness's ``where`` tool answers to ``extensions call`` run in the project."""
    done = subprocess.run(
        project.command("call", "where"), cwd=project.root, capture_output=True, text=True, timeout=STEP_TIMEOUT
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


@pytest.mark.parametrize("fork_server", ["1", "0"], ids=["forked", "new-interpreter"])
def test_an_extension_and_the_fork_server_import_nothing_from_the_project(
    project: Project, shadows: Shadows, fork_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXTENSION_HOST_FORK_SERVER", fork_server)
    parent = where(project)["parent"]
    assert shadows.imported() == []
    assert ("sdk_extension._forkserver" in parent) == (fork_server == "1"), parent


@pytest.mark.parametrize("fork_server", ["1", "0"], ids=["forked", "new-interpreter"])
def test_an_extensions_sys_path_is_the_one_running_its_file_would_give(
    project: Project, shadows: Shadows, fork_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXTENSION_HOST_FORK_SERVER", fork_server)
    found = where(project)
    # Its folder first, then the interpreter's own path; never the project it runs in.
    assert found["path"] == found["script"]
    assert str(project.root) not in found["path"]


def test_the_mcp_command_print_config_registers_imports_nothing_from_the_folder_a_client_starts_it_in(
    project: Project, shadows: Shadows, tmp_path: Path
) -> None:
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client
    from mcp.types import TextContent

    printed = project.run_command("mcp", "--print-config", "cursor", timeout=STEP_TIMEOUT)
    assert printed.returncode == 0, printed.stderr
    server = json.loads(printed.stdout)["mcpServers"]["extensions"]
    workspace = tmp_path / "workspace"
    elsewhere = plant_shadows(workspace, shadows.evidence)
    params = StdioServerParameters(
        command=server["command"], args=server["args"], env=dict(os.environ), cwd=elsewhere.folder
    )

    async def scenario() -> list[str]:
        with (tmp_path / "server.err").open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                with anyio.fail_after(STEP_TIMEOUT):
                    await session.initialize()
                    assert [tool.name for tool in (await session.list_tools()).tools] == ["where"]
                    called = await session.call_tool("where", {})
                    assert not called.is_error, called
                    return [block.text for block in called.content if isinstance(block, TextContent)]

    (text,) = run(scenario(), timeout=2 * STEP_TIMEOUT)
    assert "sdk_extension" in " ".join(json.loads(text)["parent"])  # answered by the extension
    assert shadows.imported() == []


def test_extensions_serve_over_stdio_imports_nothing_from_the_project(project: Project, shadows: Shadows) -> None:
    script = write_script(
        project.home / "script.json",
        [[{"text": "Looking.", "toolCalls": [{"name": "where", "arguments": {}}]}, {"text": "Found it."}]],
    )

    async def scenario() -> list[dict[str, Any]]:
        command = project.command("serve", "--stdio", "--agent", f"scripted:{script}")
        async with stdio_server(command, cwd=project.root) as client:
            await client.initialize()
            await client.create_session("copilot:/shadows", project.root)
            await client.request("subscribe", {"resource": "copilot:/shadows"})
            client.start_turn("copilot:/shadows", "t1", "where are you")
            await client.wait_for_action("session/turnComplete", turnId="t1", timeout=STEP_TIMEOUT)
            return client.actions("session/toolCallComplete")

    (complete,) = run(scenario(), timeout=2 * STEP_TIMEOUT)
    assert complete["result"]["success"] is True, complete
    assert shadows.imported() == []


COPILOT_WITNESS = """
    import sys
    import pydantic
    import sdk_extension

    print("imported", sdk_extension.__name__, pydantic.__name__, file=sys.stderr)
    sys.exit(3)
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is needed to run extension.mjs")
def test_the_copilot_launcher_run_by_node_imports_nothing_from_the_project(project: Project, shadows: Shadows) -> None:
    folder = project.add_extension("witness", COPILOT_WITNESS)
    export_copilot(ExtensionSpec(folder.name, "project", folder), sys.executable)
    env = {key: value for key, value in os.environ.items() if key != LIFELINE_ENV}
    env.update(SESSION_ID="copilot-session-1", COPILOT_EXTENSION_PARENT_PID=str(os.getpid()))
    process = subprocess.Popen(
        ["node", str(folder / LAUNCHER_FILE)],
        cwd=project.root,  # Copilot CLI runs extensions in the repository it works on
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    try:
        _, err = process.communicate(timeout=STEP_TIMEOUT)
    finally:
        if process.returncode is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate(timeout=10)
    assert (process.returncode, err.decode()) == (3, "imported sdk_extension pydantic\n")
    assert shadows.imported() == []


BENCH_CHILD = """
import asyncio
from bench.procs import child

async def main():
    code = "import extension_protocol.framing, pydantic; print('imported', flush=True)"
    async with child("-c", code) as (_, stdout), asyncio.timeout(60):
        print((await stdout.readline()).decode(), end="")

asyncio.run(main())
"""
"""A bench process in the planted folder (the bench itself comes from the project root, as
``python -m bench`` there would have it) starting one child through the bench's own helper."""


def test_the_benchs_python_children_import_nothing_from_the_working_folder(tmp_path: Path) -> None:
    here = plant_shadows(tmp_path / "here", tmp_path / "shadow-imports.txt")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(
        [sys.executable, "-P", "-c", BENCH_CHILD],
        cwd=here.folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=STEP_TIMEOUT,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "imported\n", "")
    assert here.imported() == []
