"""The agent's extensions_manage and extensions_reload, with real extension processes: what the
agent is offered, each operation and refusal as the agent reads it, the permission it asks, the
project's trust, and a turn that scaffolds, edits, reloads and calls the new tool."""

from __future__ import annotations

import py_compile
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from chat_server import Answer, ChatServer
from extension_host import AgentReply, ExtensionHost, ScriptedAgent, ToolCall
from extension_host.project.trust import TRUST_ENV
from extension_host.session.agents import AgentRequest
from extension_host.session.manage_tools import MANAGE_TOOL, RELOAD_TOOL
from extension_protocol.protocol import Event
from helpers import Project, chat, run

pytestmark = pytest.mark.subprocess

NO_ANSWER = (
    "Permission denied because no interactive user response was available. Retry in an interactive "
    "session so the user can approve it, or try an alternative that does not require this permission."
)
SCAFFOLDED = "\n\nEdit this file to implement your extension, then call extensions_reload to activate it."

WRITER = """
from pathlib import Path
from sdk_extension import join_session, tool

@tool(description="Write a text file of the project (the whole file).")
def write_file(path: str, content: str) -> str:
    Path(path).write_text(content)
    return f"wrote {len(content)} characters to {path}"

join_session(tools=[write_file])
"""

SHOUTER = """
from sdk_extension import join_session, tool

@tool(name="made_shout", description="Shout a text.")
def shout(text: str) -> str:
    return text.upper() + "!"

join_session(tools=[shout])
"""

BROKEN = """
raise RuntimeError("broken at import")
"""

HOOKED = """
import os
from sdk_extension import join_session

def pre(input, invocation):
    if input.tool_name == "extensions_manage" and input.tool_args.get("operation") == "scaffold":
        return {"permission_decision": "deny", "permission_decision_reason": "no new extensions today"}

def post(input, invocation):
    return {"additional_context": f"post hook of pid {os.getpid()}"}

join_session(hooks={"on_pre_tool_use": pre, "on_post_tool_use": post})
"""


def calls(*steps: tuple[str, dict[str, Any]]) -> ScriptedAgent:
    """An agent that makes each call in turn, one per step, then says done."""
    replies = [AgentReply("", (ToolCall(name, arguments),)) for name, arguments in steps]
    return ScriptedAgent([[*replies, AgentReply("done")]])


def results(host: ExtensionHost) -> list[tuple[str | None, str | None, str]]:
    """(tool, result type, text) of every tool result the agent read, in order."""
    return [(m.tool_name, m.result_type, m.content) for m in host.model_context.messages if m.role == "tool"]


def turn(
    project: Project,
    agent: ScriptedAgent,
    check: Callable[[ExtensionHost], Awaitable[None] | None] = lambda host: None,
    **options: Any,
) -> None:
    """Run one prompt of ``agent`` in a host of ``project``, then ``check(host)`` before it stops."""
    options.setdefault("on_ask", lambda *_: True)
    options.setdefault("watch", False)  # the reload the agent asks for is what starts new code

    async def scenario() -> None:
        async with project.host(agent=agent, **options) as host:
            await host.send_and_wait("go", timeout=60)
            checked = check(host)
            if checked is not None:
                await checked

    run(scenario(), timeout=90)


def offered(request: AgentRequest) -> dict[str, Any]:
    return {tool.name: tool for tool in request.tools}


def test_an_agent_is_offered_both_tools_with_copilot_clis_names_and_parameters(project: Project) -> None:
    agent = ScriptedAgent.replies("hello")
    turn(project, agent)
    tools = offered(agent.requests[0])
    manage, reload = tools[MANAGE_TOOL], tools[RELOAD_TOOL]
    assert reload.parameters == {"type": "object", "properties": {}}
    assert reload.description.startswith("Reload all extensions from disk.")
    assert manage.parameters is not None
    properties = manage.parameters["properties"]
    assert manage.parameters["required"] == ["operation"]
    assert properties["operation"]["enum"] == ["list", "inspect", "scaffold", "guide"]
    assert properties["location"]["enum"] == ["project", "user"]
    assert {"name", "description", "kind", "language"} <= set(properties)
    assert properties["language"]["enum"] == ["python", "javascript"]


def test_a_host_without_an_agent_or_told_not_to_offers_neither(project: Project) -> None:
    async def scenario() -> None:
        async with project.host() as host:
            assert not {MANAGE_TOOL, RELOAD_TOOL} & set(host.tools)

    run(scenario())
    agent = ScriptedAgent.replies("hello")
    turn(project, agent, extension_tools=False)
    assert not {MANAGE_TOOL, RELOAD_TOOL} & set(offered(agent.requests[0]))


def test_scaffold_then_reload_makes_the_new_tool_callable_in_the_same_turn(project: Project) -> None:
    project.add_extension("writer", WRITER)
    entry = project.root / ".github" / "extensions" / "made" / "extension.py"
    agent = calls(
        (MANAGE_TOOL, {"operation": "scaffold", "name": "made", "description": "Shouts what it is given"}),
        ("write_file", {"path": str(entry), "content": SHOUTER}),
        (RELOAD_TOOL, {}),
        ("made_shout", {"text": "it works"}),
    )

    def check(host: ExtensionHost) -> None:
        scaffold, write, reload, shout = results(host)
        assert scaffold == (MANAGE_TOOL, "success", f"Extension scaffolded at: {entry}{SCAFFOLDED}")
        assert write[1] == "success"
        assert reload[1] == "success" and reload[2].startswith("Extensions reloaded. 2 extension(s) running.\n\n")
        made = host.extension("made")
        assert f"• **made** — ready [project] (pid: {made.pid})\n  Log: {made.log_path}" in reload[2]
        assert reload[2].endswith("\n\nNew tools are now available.")
        assert shout == ("made_shout", "success", "IT WORKS!")
        asked = [e["data"]["permissionRequest"] for e in host.events.history("permission.requested")]
        assert asked == [
            {"kind": "extension-management", "operation": "scaffold", "extensionName": "made"},
            {"kind": "extension-management", "operation": "reload"},
        ]

    turn(project, agent, check)
    before, after = offered(agent.requests[2]), offered(agent.requests[3])
    assert "made_shout" not in before and "made_shout" in after  # the very next request of the turn


def test_list_and_inspect_show_status_pid_log_and_the_error_of_a_failed_extension(project: Project) -> None:
    project.add_extension("writer", WRITER)
    project.add_extension("broken", BROKEN)
    agent = calls(
        (MANAGE_TOOL, {"operation": "list"}),
        (MANAGE_TOOL, {"operation": "inspect", "name": "broken"}),
        (MANAGE_TOOL, {"operation": "inspect", "name": "project:writer"}),
    )

    def check(host: ExtensionHost) -> None:
        listed, broken, writer = (text for _, _, text in results(host))
        bad, good = host.extension("broken"), host.extension("writer")
        assert listed == (
            "Discovered extensions (2):\n\n"
            f"• **broken** — failed\n  ID: project:broken\n  Source: project\n  Path: {bad.path / 'extension.py'}\n"
            f"  PID: unknown\n  Log: {bad.log_path}\n  Error: {bad.error}\n\n"
            f"• **writer** — running\n  ID: project:writer\n  Source: project\n  Path: {good.path / 'extension.py'}\n"
            f"  PID: {good.pid}\n  Log: {good.log_path}"
        )
        assert broken.startswith("Extension: **broken**\nID: project:broken\nSource: project\n")
        assert "\nStatus: failed\nPID: unknown\n" in broken
        assert "\n\nLog tail (" in broken and broken.endswith("\n```") and "RuntimeError: broken at import" in broken
        assert f"\nStatus: running\nPID: {good.pid}\nLog: {good.log_path}\nTools: write_file\n" in writer

    turn(project, agent, check)


def test_bad_calls_are_failures_worded_as_copilot_cli_words_them(project: Project) -> None:
    project.add_extension("writer", WRITER)
    writer = project.root / ".github" / "extensions" / "writer" / "extension.py"
    agent = calls(
        (MANAGE_TOOL, {}),
        (MANAGE_TOOL, {"operation": "bogus"}),
        (MANAGE_TOOL, {"operation": "inspect"}),
        (MANAGE_TOOL, {"operation": "scaffold"}),
        (MANAGE_TOOL, {"operation": "inspect", "name": "nope"}),
        (MANAGE_TOOL, {"operation": "scaffold", "name": "bad name!"}),
        (MANAGE_TOOL, {"operation": "scaffold", "name": "writer"}),
        (MANAGE_TOOL, {"operation": "scaffold", "name": "x", "location": "elsewhere"}),
        (MANAGE_TOOL, {"operation": "scaffold", "name": "x", "kind": "canvas"}),
    )

    def check(host: ExtensionHost) -> None:
        assert [(kind, text) for _, kind, text in results(host)] == [
            ("failure", 'Unknown operation "". Use "list", "inspect", "scaffold", or "guide".'),
            ("failure", 'Unknown operation "bogus". Use "list", "inspect", "scaffold", or "guide".'),
            ("failure", 'The "inspect" operation requires a "name" parameter.'),
            ("failure", 'The "scaffold" operation requires a "name" parameter.'),
            ("failure", 'Extension "nope" not found. Available extensions: project:writer'),
            ("failure", 'Invalid extension name "bad name!". Use only alphanumerics, hyphens, and underscores.'),
            (
                "failure",
                f'Extension "writer" already exists at {writer}. Edit the existing file or choose a different name.',
            ),
            ("failure", 'Invalid location "elsewhere". Use "project" or "user".'),
            ("failure", 'Invalid kind "canvas". Use "basic" or "tool-only".'),
        ]

    before = writer.read_text()
    turn(project, agent, check)
    assert writer.read_text() == before
    assert not (project.root / ".github" / "extensions" / "x").exists()


def test_scaffold_for_the_user_writes_into_the_users_extensions_folder(project: Project) -> None:
    agent = calls((MANAGE_TOOL, {"operation": "scaffold", "name": "mine", "location": "user"}), (RELOAD_TOOL, {}))
    entry = project.home / "extensions" / "mine" / "extension.py"

    def check(host: ExtensionHost) -> None:
        scaffold, reload = results(host)
        assert scaffold[2] == f"Extension scaffolded at: {entry}{SCAFFOLDED}"
        assert "• **mine** — ready [user]" in reload[2]
        assert "mine_count_lines" in host.tools

    turn(project, agent, check)
    py_compile.compile(str(entry), doraise=True, cfile=str(project.home / "compiled.pyc"))


def test_a_description_with_quotes_and_backslashes_still_scaffolds_a_python_file_that_runs(project: Project) -> None:
    said = 'Counts "lines" of C:\\files\\N and\nmore """'
    agent = calls(
        (MANAGE_TOOL, {"operation": "scaffold", "name": "quoted", "description": said, "kind": "tool-only"}),
        (RELOAD_TOOL, {}),
        ("quoted_hello", {"name": "Ada"}),
    )
    turn(project, agent, lambda host: None)
    entry = project.root / ".github" / "extensions" / "quoted" / "extension.py"
    assert agent.requests[-1].messages[-1].content == "Hello, Ada!"
    namespace: dict[str, Any] = {}
    exec(compile(entry.read_text().split("\n\n")[0], str(entry), "exec"), namespace)  # the docstring alone
    assert namespace["__doc__"] == 'quoted: Counts "lines" of C:\\files\\N and more """ It offers one tool.'


@pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None, reason="needs node and npm")
def test_javascript_on_request_scaffolds_copilot_clis_extension_mjs_which_runs(project: Project) -> None:
    agent = calls(
        (MANAGE_TOOL, {"operation": "scaffold", "name": "jsext", "language": "javascript"}),
        (RELOAD_TOOL, {}),
        ("jsext_example", {}),
    )
    turn(project, agent, lambda host: None)
    entry = project.root / ".github" / "extensions" / "jsext" / "extension.mjs"
    assert entry.read_text().startswith("// Extension: jsext\n// an extension for the agent.\n")
    assert agent.requests[-1].messages[-1].content == "Hello from jsext!"


def test_without_anybody_to_answer_the_permission_scaffold_and_reload_are_denied(project: Project) -> None:
    agent = calls((MANAGE_TOOL, {"operation": "scaffold", "name": "made"}), (RELOAD_TOOL, {}))

    def check(host: ExtensionHost) -> None:
        assert [(kind, text) for _, kind, text in results(host)] == [("denied", NO_ANSWER), ("denied", NO_ANSWER)]

    turn(project, agent, check, on_ask=None)
    assert not (project.root / ".github" / "extensions" / "made").exists()


def test_a_user_who_declines_is_quoted_with_the_feedback(project: Project) -> None:
    agent = calls((MANAGE_TOOL, {"operation": "scaffold", "name": "made"}), (RELOAD_TOOL, {}))

    async def check(host: ExtensionHost) -> None:
        assert [(kind, text) for _, kind, text in results(host)] == [
            ("denied", "The user rejected this tool call. User feedback: not now"),
            ("denied", "The user rejected this tool call."),
        ]

    async def scenario() -> None:
        async with project.host(agent=agent, permission_clients=True, watch=False) as host:
            answers = iter([(False, "not now"), (False, None)])

            def answer(event: Event) -> None:
                if event["type"] == "permission.requested":
                    approved, feedback = next(answers)
                    host.resolve_permission(event["data"]["requestId"], approved, feedback)

            host.on_event(answer)
            await host.send_and_wait("go", timeout=60)
            await check(host)

    run(scenario(), timeout=90)
    assert not (project.root / ".github" / "extensions" / "made").exists()


def test_an_untrusted_project_refuses_a_project_scaffold_and_its_reload_says_how_to_trust(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TRUST_ENV)
    project.add_extension("writer", WRITER)
    agent = calls(
        (MANAGE_TOOL, {"operation": "scaffold", "name": "made"}),
        (RELOAD_TOOL, {}),
        (MANAGE_TOOL, {"operation": "scaffold", "name": "mine", "location": "user"}),
    )

    def check(host: ExtensionHost) -> None:
        (_, refused_kind, refused), (_, _, reload), (_, mine_kind, _) = results(host)
        assert refused_kind == "failure" and mine_kind == "success"
        assert refused.startswith("Cannot scaffold a project extension: this project is not trusted")
        assert "'extensions trust'" in refused and 'location "user"' in refused
        assert "• **writer** — untrusted [project] (pid: unknown)" in reload
        assert "'extensions trust'" in reload
        operations = [e["data"]["permissionRequest"]["operation"] for e in host.events.history("permission.requested")]
        assert operations == ["reload", "scaffold"]  # the refused scaffold asked nothing

    turn(project, agent, check)
    assert not (project.root / ".github" / "extensions" / "made").exists()
    assert (project.home / "extensions" / "mine" / "extension.py").is_file()


def test_hooks_judge_the_built_in_tools_and_after_a_reload_the_new_versions_post_hooks_run(project: Project) -> None:
    project.add_extension("hooked", HOOKED)
    agent = calls((MANAGE_TOOL, {"operation": "scaffold", "name": "made"}), (RELOAD_TOOL, {}))

    def check(host: ExtensionHost) -> None:
        (_, denied_kind, denied), (_, reload_kind, reloaded) = results(host)
        assert denied_kind == "denied" and "no new extensions today" in denied
        assert reload_kind == "success"
        # The post hook's guidance follows the result the model reads, as in Copilot CLI.
        assert f"post hook of pid {host.extension('hooked').pid}" in reloaded  # the new process's
        assert host.events.history("session.warning") == []

    turn(project, agent, check)
    assert not (project.root / ".github" / "extensions" / "made").exists()


def test_guide_names_the_templates_and_the_sdk_to_read(project: Project) -> None:
    agent = calls((MANAGE_TOOL, {"operation": "guide"}))

    def check(host: ExtensionHost) -> None:
        ((_, kind, text),) = results(host)
        assert kind == "success"
        files = [Path(line[2:]) for line in text.splitlines() if line.startswith("• ")]
        assert files and all(path.is_file() for path in files)
        assert {path.name for path in files} >= {"extension.py", "extension.mjs"}
        assert str(project.root / ".github" / "extensions") in text

    turn(project, agent, check)


def test_extensions_chat_scaffolds_edits_reloads_and_calls_the_new_tool_in_one_turn(project: Project) -> None:
    """The scenario as a person runs it: ``extensions chat`` against a model endpoint, both
    permission questions answered at the prompt; what the model read is the evidence."""
    project.add_extension("writer", WRITER)
    entry = project.root / ".github" / "extensions" / "made" / "extension.py"
    script = [
        Answer("", [(MANAGE_TOOL, {"operation": "scaffold", "name": "made"})]),
        Answer("", [("write_file", {"path": str(entry), "content": SHOUTER})]),
        Answer("", [(RELOAD_TOOL, {})]),
        Answer("", [("made_shout", {"text": "it works"})]),
        Answer("It shouts."),
    ]
    with ChatServer(script) as server:
        done = chat(project, "make me a tool that shouts\ny\ny\n", "--base-url", server.base_url, "--model", "m")
    assert done.returncode == 0, done.stderr
    assert "allow extension-management scaffold made? [y/N]" in done.stdout.splitlines()
    assert "allow extension-management reload? [y/N]" in done.stdout.splitlines()
    last = server.requests[-1]["messages"]
    read = [message["content"] for message in last if message["role"] == "tool"]
    assert read[0] == f"Extension scaffolded at: {entry}{SCAFFOLDED}"
    assert read[2].startswith("Extensions reloaded. 2 extension(s) running.")
    assert read[3] == "IT WORKS!"
    offered_then = [tool["function"]["name"] for tool in server.requests[3]["tools"]]
    assert "made_shout" in offered_then and MANAGE_TOOL in offered_then
