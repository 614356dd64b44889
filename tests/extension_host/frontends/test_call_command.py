"""extensions call through the host running for the project: its extension answers, none is started."""

from __future__ import annotations

import json
import re

import pytest

from extension_host.control.service import ControlServer
from helpers import Project, finished, run

pytestmark = pytest.mark.subprocess

COUNTER = """
    import os
    from sdk_extension import join_session, tool

    calls = []

    @tool(description="Count the calls this process answered")
    def count(text: str = "") -> str:
        calls.append(text)
        return f"call {len(calls)} in pid {os.getpid()}"

    def guard(input, invocation):
        if "rm" in input.tool_args.get("text", ""):
            return {"permission_decision": "deny", "permission_decision_reason": "no rm"}

    join_session(tools=[count], hooks={"on_pre_tool_use": guard})
"""
"""A tool that says how many calls its process has answered, and a guard that denies ``rm``."""


def test_call_is_answered_by_the_running_host_s_extension_and_starts_none(project: Project) -> None:
    """Two calls from two commands reach the one extension process the host runs: its count goes
    on (a command that started its own would say ``call 1`` each time, from another pid)."""
    project.add_extension("counter", COUNTER)

    async def scenario() -> None:
        async with project.host() as host, ControlServer(host):
            pid = host.extension("counter").pid
            first = await finished(*project.command("call", "count"))
            second = await finished(*project.command("call", "count", '{"text": "again"}'))
            assert first == (0, f"call 1 in pid {pid}\n", "(from the running host)\n")
            assert second[:2] == (0, f"call 2 in pid {pid}\n")
            assert host.extension("counter").pid == pid

    run(scenario())


def test_call_through_the_running_host_prints_the_same_json_and_hook_trail(project: Project) -> None:
    project.add_extension("counter", COUNTER)

    async def scenario() -> None:
        async with project.host() as host, ControlServer(host):
            code, out, _ = await finished(*project.command("call", "count", "--json"))
            assert code == 0
            assert json.loads(out) == {
                "tool": "count",
                "owner": "project:counter",
                "result_type": "success",
                "text_result_for_llm": f"call 1 in pid {host.extension('counter').pid}",
                "error": None,
                "decision": None,
                "decided_by": None,
                "additional_context": None,
            }
            code, out, err = await finished(*project.command("call", "count", '{"text": "rm -rf /"}', "--verbose"))
            assert code == 1
            assert out.startswith("[denied] ")
            assert re.search(r"on_pre_tool_use .*deny", err), err
            assert "decided deny by project:counter" in err

    run(scenario())


def test_an_unknown_tool_through_the_running_host_fails_in_one_line_naming_it(project: Project) -> None:
    project.add_extension("counter", COUNTER)

    async def scenario() -> None:
        async with project.host() as host, ControlServer(host):
            code, out, err = await finished(*project.command("call", "cuont"))
            assert (code, out) == (1, "")
            assert "no tool named 'cuont'" in err and "count" in err
            assert err.count("\n") == 1

    run(scenario())
