"""Turns and permissions with real extension processes: session.send, send_and_wait and
answers to permission requests over the wire."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from extension_host import AgentReply, ScriptedAgent, ToolCall, hookimpl
from helpers import Project, run
from sdk_extension import tool

pytestmark = pytest.mark.subprocess

ASKER = """
from sdk_extension import join_session, tool

@tool(description="Ask the agent and return its answer")
def ask(prompt: str, attachment: str = "") -> str:
    attachments = [{"type": "file", "path": attachment}] if attachment else None
    try:
        reply = session.send_and_wait(prompt, attachments, timeout=20)
    except Exception as exc:
        return f"error: {exc}"
    return reply["data"]["content"] if reply else "no reply"

session = join_session(tools=[ask])
"""


def test_send_and_wait_from_an_extension_resolves_with_the_turns_last_assistant_message(project: Project) -> None:
    project.add_extension("asker", ASKER)
    (project.root / "notes.md").write_text("notes")
    agent = ScriptedAgent.replies("2 + 2 = 4")

    async def scenario() -> None:
        async with project.host(session_hooks=False, agent=agent) as host:
            result = await host.call_tool("ask", {"prompt": "what is 2 + 2?", "attachment": "notes.md"})
            assert result.text_result_for_llm == "2 + 2 = 4"
            (user,) = host.events.history("user.message")
            assert user["data"]["source"] == "project:asker"
            assert user["data"]["attachments"] == [
                {"type": "file", "path": str((project.root / "notes.md").resolve()), "displayName": "notes.md"}
            ]
            assert agent.requests[0].messages[-1].content == "what is 2 + 2?"

    run(scenario())


def test_send_and_wait_from_an_extension_fails_at_once_without_an_agent(project: Project) -> None:
    project.add_extension("asker", ASKER)

    async def scenario() -> None:
        async with project.host(session_hooks=False) as host:
            result = await host.call_tool("ask", {"prompt": "anyone?"})
            assert result.text_result_for_llm.startswith("error: session.send: this host has no agent")
            assert host.events.history("user.message") == []

    run(scenario())


def test_an_attachment_outside_the_project_is_refused_naming_its_path(project: Project, tmp_path: Path) -> None:
    project.add_extension("asker", ASKER)
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("x")

    async def scenario() -> None:
        async with project.host(session_hooks=False, agent=ScriptedAgent.replies("never")) as host:
            result = await host.call_tool("ask", {"prompt": "read it", "attachment": str(outside)})
            assert f"attachment '{outside}': lies outside the project" in result.text_result_for_llm
            missing = await host.call_tool("ask", {"prompt": "read it", "attachment": "gone.md"})
            assert "attachment 'gone.md': no such file" in missing.text_result_for_llm

    run(scenario())


GUARD = """
from sdk_extension import join_session

def pre(input, invocation):
    if input.tool_name == "deploy":
        return {"permission_decision": "ask", "permission_decision_reason": "it deploys"}

join_session(hooks={"on_pre_tool_use": pre})
"""

deployed: list[str] = []


@tool(description="Deploy the project")
def deploy(target: str) -> str:
    deployed.append(target)
    return f"deployed to {target}"


def deploy_agent() -> ScriptedAgent:
    call = ToolCall("deploy", {"target": "prod"}, "call-deploy")
    return ScriptedAgent([[AgentReply(tool_calls=(call,)), AgentReply("done")]])


def test_an_ask_resolved_by_the_embedding_application_with_feedback_reaches_the_agent(project: Project) -> None:
    project.add_extension("guard", GUARD)
    deployed.clear()
    agent = deploy_agent()

    async def scenario() -> None:
        async with project.host(
            session_hooks=False, agent=agent, builtin_tools=[deploy], permission_clients=True
        ) as host:

            def answer(event: Any) -> None:
                if event["type"] == "permission.requested":
                    assert host.resolve_permission(event["data"]["requestId"], False, "deploy to staging first")

            host.on_event(answer)
            await host.send_and_wait("ship it", timeout=20)
            (requested,) = host.events.history("permission.requested")
            assert requested["data"]["permissionRequest"] == {
                "kind": "hook",
                "toolName": "deploy",
                "toolArgs": {"target": "prod"},
                "toolCallId": "call-deploy",
                "hookMessage": "it deploys",
            }
            (completed,) = host.events.history("permission.completed")
            assert completed["data"] == {
                "requestId": requested["data"]["requestId"],
                "result": {"kind": "denied-interactively-by-user", "feedback": "deploy to staging first"},
                "toolCallId": "call-deploy",
                "decisionSource": "human_response",
            }
            assert not host.resolve_permission(requested["data"]["requestId"], True)  # answered already
            assert host.pending_permissions == []

    run(scenario())
    assert deployed == []
    result = agent.requests[1].messages[-1]
    assert (result.role, result.result_type) == ("tool", "denied")
    assert "deploy to staging first" in result.content


def test_an_extension_crash_fails_its_call_for_the_failure_hooks_and_does_not_reach_the_error_hooks(
    project: Project,
) -> None:
    """As in the Copilot CLI: the call in flight fails (``postToolUseFailure`` hears of it) and
    ``errorOccurred`` is not called."""
    project.add_extension(
        "fragile",
        """
        import os
        from sdk_extension import join_session, tool

        @tool(description="Exit the process")
        def die() -> str:
            os._exit(3)

        join_session(tools=[die])
        """,
    )
    errors: list[str] = []
    failures: list[tuple[str, str]] = []

    class Watch:
        @hookimpl
        def on_error_occurred(self, input: Any) -> None:
            errors.append(input.error)

        @hookimpl
        def on_post_tool_use_failure(self, input: Any) -> None:
            failures.append((input.tool_name, input.error))

    async def scenario() -> None:
        async with project.host(session_hooks=False, watch=False) as host:
            host.register_plugin(Watch(), "watch")
            result = await host.call_tool("die")
            assert result.result_type == "failure"
            assert failures == [("die", result.error)]
            assert errors == []

    run(scenario())
