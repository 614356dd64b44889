"""Hooks across real extension processes: composition, denial, and every way a hook fails."""

from __future__ import annotations

import asyncio
import os
import signal
import textwrap
from pathlib import Path
from typing import Any

import pytest

from extension_host import Timeouts, hookimpl
from helpers import Project, hook_callers, is_log, run, wait_for_event

pytestmark = pytest.mark.subprocess

TOOLS = """
    from pathlib import Path
    from sdk_extension import join_session, tool

    @tool(description="Write a marker file (a side effect a deny must prevent)")
    def write_marker(name: str) -> str:
        Path(name).write_text("ran")
        return f"wrote {name}"

    @tool(description="Echo the text")
    def echo(text: str) -> str:
        return text

    join_session(tools=[write_marker, echo])
"""


def guard(name: str, body: str, hook: str = "on_pre_tool_use") -> str:
    """An extension with one hook whose body is given (``input`` and ``invocation`` in scope)."""
    indented = "\n".join(f"        {line}" for line in textwrap.dedent(body).strip().splitlines())
    return f"""
    import os, sys, time, threading
    from sdk_extension import join_session, ToolResult

    def hook(input, invocation):
{indented}

    session = join_session(hooks={{"{hook}": hook}})
    session.log("{name} ready")
    """


def test_a_deny_prevents_the_tool_from_running(project: Project) -> None:
    """The handler's side effect does not happen; the result is denied with the reason."""
    project.add_extension("a_tools", TOOLS)
    project.add_extension(
        "b_guard",
        guard(
            "guard",
            """
        if input.tool_name == "write_marker":
            return {"permission_decision": "deny", "permission_decision_reason": "no writes today"}
        """,
        ),
    )

    async def scenario() -> None:
        async with project.host() as host:
            result = await host.call_tool("write_marker", {"name": "marker.txt"})
            assert result.result_type == "denied"
            assert "no writes today" in result.text_result_for_llm
            assert (result.decision, result.decided_by) == ("deny", "project:b_guard")
            assert not (project.root / "marker.txt").exists()
            (complete,) = host.events.history("tool.execution_complete")
            assert complete["data"]["error"]["code"] == "denied"
            assert (await host.call_tool("echo", {"text": "still fine"})).text_result_for_llm == "still fine"

    run(scenario())


def test_argument_rewrites_of_two_extensions_apply_in_load_order(project: Project) -> None:
    """Each hook sees the previous one's modified_args; the tool gets both rewrites."""
    project.add_extension("a_tools", TOOLS)
    for name in ("b_first", "c_second"):
        project.add_extension(
            name,
            guard(
                name,
                f"""
            if input.tool_name == "echo":
                return {{"modified_args": {{"text": input.tool_args["text"] + "+{name}"}},
                         "additional_context": "{name} was here"}}
            """,
            ),
        )

    async def scenario() -> None:
        async with project.host() as host:
            result = await host.call_tool("echo", {"text": "x"})
            assert result.text_result_for_llm == "x+b_first+c_second"
            assert result.additional_context == "b_first was here\n\nc_second was here"
            assert host.hook_chain("on_pre_tool_use") == ["project:b_first", "project:c_second"]

    run(scenario())


def test_after_a_deny_the_next_hook_is_not_called(project: Project) -> None:
    """One denies and a later one would allow: denied, and the later one never runs."""
    project.add_extension("a_tools", TOOLS)
    project.add_extension("b_deny", guard("deny", 'return {"permission_decision": "deny"}'))
    project.add_extension("c_allow", guard("allow", 'return {"permission_decision": "allow"}'))

    async def scenario() -> None:
        async with project.host() as host:
            result = await host.call_tool("echo", {"text": "x"})
            assert result.result_type == "denied"
            assert hook_callers(host.events) == ["project:b_deny"]

    run(scenario())


@pytest.mark.parametrize("answer", [None, True, False], ids=["no-handler", "approved", "declined"])
def test_ask_goes_to_the_application_and_counts_as_deny_without_one(project: Project, answer: bool | None) -> None:
    """ask → the on_ask callback decides; with no callback the call is denied."""
    project.add_extension("a_tools", TOOLS)
    project.add_extension(
        "b_ask",
        guard("ask", 'return {"permission_decision": "ask", "permission_decision_reason": "writes a file"}'),
    )
    asked: list[tuple[str, Any, str | None]] = []

    async def on_ask(tool: str, arguments: Any, reason: str | None) -> bool:
        asked.append((tool, arguments, reason))
        return bool(answer)

    async def scenario() -> None:
        options: dict[str, Any] = {} if answer is None else {"on_ask": on_ask}
        async with project.host(**options) as host:
            result = await host.call_tool("write_marker", {"name": "m.txt"})
            if answer:
                assert result.success and (project.root / "m.txt").exists()
                assert asked == [("write_marker", {"name": "m.txt"}, "writes a file")]
            else:
                assert result.result_type == "denied"
                assert not (project.root / "m.txt").exists()
            if answer is None:
                assert result.text_result_for_llm == (
                    "Denied by preToolUse hook (unable to ask user for confirmation): writes a file"
                )

    run(scenario())


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('raise ValueError("guard bug")', "raised ValueError: guard bug"),
        ("return 42", "returned int"),
        ('return {"permision_decision": "deny"}', "unknown output key 'permision_decision'"),
        ('return {"permission_decision": "maybe"}', "'permission_decision'"),
        ("threading.Event().wait(60)", "no answer within 1 s"),
    ],
    ids=["raises", "not-a-dict", "unknown-key", "wrong-value", "hangs"],
)
def test_a_failing_guard_hook_fails_closed_naming_the_extension(project: Project, body: str, expected: str) -> None:
    """The call is denied with a reason naming the extension; the session keeps working."""
    project.add_extension("a_tools", TOOLS)
    project.add_extension(
        "b_faulty",
        guard(
            "faulty",
            f"""
        if input.tool_name == "write_marker":
            {body}
        """,
        ),
    )

    async def scenario() -> None:
        async with project.host(timeouts=Timeouts(stop_grace=2.0, hook=1.0)) as host:
            result = await host.call_tool("write_marker", {"name": "m.txt"})
            assert result.result_type == "denied"
            assert "project:b_faulty" in result.text_result_for_llm
            assert expected in result.text_result_for_llm
            assert "guard hooks fail closed" in result.text_result_for_llm
            assert not (project.root / "m.txt").exists()
            assert (await host.call_tool("echo", {"text": "next"})).text_result_for_llm == "next"
            (record, *_) = host.recent_hook_calls("project:b_faulty")
            assert record.outcome in ("error", "timeout", "invalid")

    run(scenario())


def test_a_failing_observer_hook_fails_open_with_a_warning(project: Project) -> None:
    """A post-tool hook that raises leaves the result alone and emits session.warning."""
    project.add_extension("a_tools", TOOLS)
    project.add_extension("b_post", guard("post", 'raise RuntimeError("observer bug")', hook="on_post_tool_use"))

    async def scenario() -> None:
        async with project.host() as host:
            result = await host.call_tool("echo", {"text": "kept"})
            assert (result.result_type, result.text_result_for_llm) == ("success", "kept")
            warning = await wait_for_event(host, lambda e: e["type"] == "session.warning")
            assert "project:b_post" in warning["data"]["message"]
            assert "observer bug" in warning["data"]["message"]

    run(scenario())


def test_a_post_tool_hook_replaces_the_result(project: Project) -> None:
    """modified_result (a ToolResult or a dict) is what the caller gets."""
    project.add_extension("a_tools", TOOLS)
    project.add_extension(
        "b_redact",
        guard(
            "redact",
            """
        text = input.tool_result.text_result_for_llm.replace("hunter2", "[redacted]")
        return {"modified_result": ToolResult(text)}
        """,
            hook="on_post_tool_use",
        ),
    )

    async def scenario() -> None:
        async with project.host() as host:
            result = await host.call_tool("echo", {"text": "password hunter2"})
            assert result.text_result_for_llm == "password [redacted]"

    run(scenario())


def test_an_extension_that_dies_during_a_hook_call_is_a_guard_failure(project: Project) -> None:
    """SIGKILL mid-hook: the call is denied at once naming the extension; the host goes on."""
    project.add_extension("a_tools", TOOLS)
    project.add_extension(
        "b_dies",
        guard(
            "dies",
            """
        session.log(f"hook running in {os.getpid()}")
        threading.Event().wait(60)
        """,
        ),
    )

    async def scenario() -> None:
        async with project.host() as host:
            call = asyncio.ensure_future(host.call_tool("echo", {"text": "x"}))
            pid = host.extension("b_dies").pid
            assert pid is not None
            await wait_for_event(host, is_log(f"hook running in {pid}"))
            os.kill(pid, signal.SIGKILL)
            async with asyncio.timeout(10):
                result = await call
            assert result.result_type == "denied"
            assert "project:b_dies" in result.text_result_for_llm
            await wait_for_event(host, lambda e: "project:b_dies failed" in e["data"].get("message", ""))
            assert host.hook_chain("on_pre_tool_use") == []
            assert (await host.call_tool("echo", {"text": "after"})).text_result_for_llm == "after"

    run(scenario())


def test_prompt_hooks_chain_rewrites_and_join_context(project: Project) -> None:
    """Two prompt hooks: both rewrites apply in order; their contexts are joined."""
    for name in ("a_upper", "b_suffix"):
        body = (
            'return {"modified_prompt": input.prompt.upper(), "additional_context": "shouted"}'
            if name == "a_upper"
            else 'return {"modified_prompt": input.prompt + "!", "additional_context": "excited"}'
        )
        project.add_extension(name, guard(name, body, hook="on_user_prompt_submitted"))

    async def scenario() -> None:
        async with project.host() as host:
            result = await host.submit_prompt("fix the build")
            assert (result.prompt, result.rejected) == ("FIX THE BUILD!", False)
            assert result.additional_context == "shouted\n\nexcited"

    run(scenario())


def test_session_hooks_run_on_start_and_stop_and_error_hooks_take_the_strongest(project: Project) -> None:
    """startup context, complete summary/cleanup on stop, abort beats retry."""
    project.add_extension(
        "a_session",
        """
        from sdk_extension import join_session
        join_session(hooks={
            "on_session_start": lambda i, inv: {"additional_context": f"started by {i.source}"},
            "on_session_end": lambda i, inv: {"session_summary": f"ended: {i.reason}", "cleanup_actions": ["a"]},
            "on_error_occurred": lambda i, inv: {"error_handling": "retry", "retry_count": 2},
        })
        """,
    )
    project.add_extension(
        "b_session",
        """
        from sdk_extension import join_session
        join_session(hooks={
            "onSessionEnd": lambda i, inv: {"cleanupActions": ["b1", "b2"]},
            "onErrorOccurred": lambda i, inv: {"errorHandling": "abort", "userNotification": "stop"},
        })
        """,
    )

    async def scenario() -> None:
        host = project.host()
        await host.start()
        try:
            assert hook_callers(host.events, "on_session_start") == ["project:a_session"]
            decision = await host.report_error("model overloaded", "model_call", recoverable=True)
            assert (decision.error_handling, decision.retry_count, decision.user_notification) == ("abort", 2, "stop")
            ended = await host.end_session("user_exit")
            assert ended.session_summary == "ended: user_exit"
            assert ended.cleanup_actions == ("a", "b1", "b2")
        finally:
            await host.stop()
        assert not [e for e in host.events.history("hook.end") if e["data"]["hook"] == "on_session_end"][2:]

    run(scenario())


def test_in_process_plugins_compose_with_extension_hooks(project: Project, tmp_path: Path) -> None:
    """A tryfirst plugin runs before extensions; its deny stops the extension from being called."""
    project.add_extension("a_tools", TOOLS)
    project.add_extension(
        "b_guard",
        guard("guard", 'return {"additional_context": "extension saw " + input.tool_name}'),
    )
    seen: list[str] = []

    class Policy:
        @hookimpl(tryfirst=True)
        def on_pre_tool_use(self, input: Any) -> dict[str, str] | None:
            seen.append(input.tool_name)
            if input.tool_name == "write_marker":
                return {"permission_decision": "deny", "permission_decision_reason": "policy"}
            return None

    async def scenario() -> None:
        async with project.host() as host:
            host.register_plugin(Policy(), "policy")
            assert host.hook_chain("on_pre_tool_use") == ["policy", "project:b_guard"]
            denied = await host.call_tool("write_marker", {"name": "m.txt"})
            assert (denied.result_type, denied.decided_by) == ("denied", "policy")
            allowed = await host.call_tool("echo", {"text": "x"})
            assert allowed.additional_context == "extension saw echo"
            assert seen == ["write_marker", "echo"]
            assert hook_callers(host.events, "on_pre_tool_use") == ["policy", "policy", "project:b_guard"]

    run(scenario())


def test_a_hook_point_nobody_implements_sends_nothing(project: Project) -> None:
    """With only tools loaded, a call emits no hook events (and so makes no hook IPC)."""
    project.add_extension("a_tools", TOOLS)

    async def scenario() -> None:
        async with project.host() as host:
            assert (await host.call_tool("echo", {"text": "x"})).success
            assert host.events.history("hook.start") == []

    run(scenario())


def test_a_hook_that_times_out_is_told_to_cancel(project: Project) -> None:
    """The host sends $/cancelRequest: an async hook sees CancelledError; the call was denied."""
    project.add_extension("a_tools", TOOLS)
    project.add_extension(
        "b_slow",
        """
        import asyncio
        from sdk_extension import join_session

        async def hook(input, invocation):
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                session.log("hook cancelled")
                raise

        session = join_session(hooks={"on_pre_tool_use": hook})
        """,
    )

    async def scenario() -> None:
        async with project.host(timeouts=Timeouts(stop_grace=2.0, hooks={"on_pre_tool_use": 0.5})) as host:
            result = await host.call_tool("echo", {"text": "x"})
            assert result.result_type == "denied"
            assert "no answer within 0.5 s" in result.text_result_for_llm
            await wait_for_event(host, is_log("hook cancelled"))

    run(scenario())
