"""Cancelling a turn: the running tool call is withdrawn, hooks see it, the session is idle again.

In memory (a built-in tool that never returns, in-process hooks) for the sequence of events and
the queue; with a real extension whose tool hangs for the process boundary.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from extension_host import (
    AgentReply,
    ScriptedAgent,
    Timeouts,
    ToolCall,
    TurnCancelledError,
    hookimpl,
)
from extension_host.session.cancellation import Cancellation, RunCancelled
from helpers import Project, run, wait_for_event
from sdk_extension import tool


@tool(description="Wait for something that never comes")
async def hang() -> str:
    await asyncio.Event().wait()
    return "never"


class ErrorHooks:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str, bool]] = []

    @hookimpl
    def on_error_occurred(self, input: Any) -> dict[str, Any]:
        self.seen.append((input.error, input.error_context, input.recoverable))
        return {"user_notification": "stopped, as you asked"}


def hanging_agent(then: str) -> ScriptedAgent:
    """Asks for ``hang`` and ``hang`` again (the second is never reached); answers the next
    prompt with ``then``."""
    calls = (ToolCall("hang", {}, "c1"), ToolCall("hang", {}, "c2"))
    return ScriptedAgent([[AgentReply("working", calls), AgentReply("unreached")], [AgentReply(then)]])


def test_cancelling_a_turn_withdraws_its_tool_call_and_ends_it_as_the_sdk_ends_an_abort(project: Project) -> None:
    hooks = ErrorHooks()

    async def scenario() -> None:
        async with project.host(
            watch=False,
            fork_server=False,
            session_hooks=False,
            builtin_tools=[hang],
            agent=hanging_agent("back again"),
        ) as host:
            host.register_plugin(hooks, "hooks")
            waiting = asyncio.ensure_future(host.send_and_wait("hang around", timeout=20))
            await wait_for_event(host, lambda e: e["type"] == "tool.execution_start")
            queued = asyncio.ensure_future(host.send_and_wait("and then this", timeout=20))
            await wait_for_event(host, lambda e: e["type"] == "pending_messages.modified" and host.pending_prompts)
            assert host.cancel_turn() is True
            with pytest.raises(TurnCancelledError, match="the turn was cancelled"):
                await waiting
            with pytest.raises(TurnCancelledError, match="dropped"):
                await queued
            await host.wait_idle(10)
            assert host.cancel_turn() is False  # nothing runs now

            skipped = ("pending_messages.modified", "hook.start", "hook.end")
            types = [e["type"] for e in host.events.history() if e["type"] not in skipped]
            start = types.index("tool.execution_start")
            assert types[start:] == [
                "tool.execution_start",
                "tool.execution_complete",
                "tool.execution_complete",
                "abort",
                "assistant.turn_end",
                "assistant.idle",
                "session.idle",
            ]
            first, second = host.events.history("tool.execution_complete")
            assert (first["data"]["toolCallId"], first["data"]["result"]["resultType"]) == ("c1", "rejected")
            assert first["data"]["success"] is False
            assert first["data"]["error"]["message"] == "tool hang was cancelled: the turn was cancelled"
            assert (second["data"]["toolCallId"], second["data"]["result"]["resultType"]) == ("c2", "rejected")
            assert host.events.history("abort")[0]["data"] == {"reason": "user_initiated"}
            assert host.events.history("session.idle")[-1]["data"] == {"aborted": True, "mode": "interactive"}
            assert hooks.seen == []  # a cancelled call is no error of the session (nor in the Copilot CLI)
            assert [e["data"]["content"] for e in host.events.history("user.message")] == ["hang around"]

            # Every tool request has its result, so the next prompt runs on a well-formed context.
            reply = await host.send_and_wait("still there?", timeout=20)
            assert reply is not None and reply["data"]["content"] == "back again"
            roles = [m.role for m in host.model_context.messages]
            assert roles == ["user", "assistant", "tool", "tool", "user", "assistant"]

    run(scenario(), timeout=40)


@tool(description="Quick")
def quick() -> str:
    return "done"


class AskFirst:
    @hookimpl
    def on_pre_tool_use(self, input: Any) -> dict[str, Any]:
        return {"permission_decision": "ask", "permission_decision_reason": "really?"}


def test_cancelling_while_a_permission_is_asked_completes_the_request_as_cancelled(project: Project) -> None:
    async def nobody_answers(tool: str, arguments: Any, reason: str | None) -> bool:
        await asyncio.Event().wait()
        return False

    agent = ScriptedAgent([[AgentReply("asking", (ToolCall("quick", {}, "q1"),)), AgentReply("unreached")]])

    async def scenario() -> None:
        async with project.host(
            watch=False,
            fork_server=False,
            session_hooks=False,
            builtin_tools=[quick],
            agent=agent,
            on_ask=nobody_answers,
        ) as host:
            host.register_plugin(AskFirst(), "ask-first")
            await host.send("do it")
            requested = await wait_for_event(host, lambda e: e["type"] == "permission.requested")
            assert host.cancel_turn() is True
            await host.wait_idle(10)
            (completed,) = host.events.history("permission.completed")
            assert completed["data"] == {
                "requestId": requested["data"]["requestId"],
                "result": {"kind": "cancelled"},
                "toolCallId": "q1",
            }
            (complete,) = host.events.history("tool.execution_complete")
            assert complete["data"]["result"]["resultType"] == "rejected"

    run(scenario(), timeout=30)


def test_cancelling_while_the_agent_thinks_ends_the_turn_without_an_answer(project: Project) -> None:
    asked = asyncio.Event()

    class SlowAgent:
        async def respond(self, request: Any) -> AgentReply:
            asked.set()
            await asyncio.Event().wait()
            return AgentReply("never")

    async def scenario() -> None:
        async with project.host(watch=False, fork_server=False, session_hooks=False, agent=SlowAgent()) as host:
            await host.send("think hard")
            await asyncio.wait_for(asked.wait(), 10)
            assert host.cancel_turn() is True
            await host.wait_idle(10)
            types = [e["type"] for e in host.events.history()]
            assert "assistant.message" not in types
            assert types[-4:] == ["abort", "assistant.turn_end", "assistant.idle", "session.idle"]

    run(scenario(), timeout=30)


def test_cancel_on_an_idle_session_changes_nothing(project: Project) -> None:
    async def scenario() -> None:
        async with project.host(
            watch=False,
            fork_server=False,
            session_hooks=False,
            agent=ScriptedAgent.replies("hi"),
        ) as host:
            before = len(host.events.history())
            assert host.cancel_turn() is False
            assert len(host.events.history()) == before

    run(scenario(), timeout=30)


def test_a_guard_returns_the_result_of_work_that_finishes_first() -> None:
    async def scenario() -> None:
        cancellation = Cancellation()

        async def quick() -> int:
            return 7

        assert await cancellation.guard(quick()) == 7

    run(scenario())


def test_a_guard_cancels_its_work_when_the_switch_is_flipped_and_before_it_starts_once_flipped() -> None:
    async def scenario() -> None:
        cancellation = Cancellation()
        cancelled = asyncio.Event()

        async def forever() -> None:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled.set()
                raise

        guarded = asyncio.ensure_future(cancellation.guard(forever()))
        await asyncio.sleep(0)
        cancellation.request()
        with pytest.raises(RunCancelled):
            await guarded
        assert cancelled.is_set()
        with pytest.raises(RunCancelled):
            await cancellation.guard(forever())  # flipped already: never left running
        cancellation.reset()
        assert not cancellation.requested

    run(scenario())


HANGING_EXTENSION = """
import time
from sdk_extension import join_session, tool

@tool(description="Sleep for a long time")
def nap() -> str:
    time.sleep(120)
    return "rested"

session = join_session(tools=[nap])
"""


@pytest.mark.subprocess
def test_cancelling_a_turn_stops_waiting_for_an_extension_whose_tool_hangs(project: Project) -> None:
    project.add_extension("sleepy", HANGING_EXTENSION)
    agent = ScriptedAgent([[AgentReply("napping", (ToolCall("nap", {}, "n1"),)), AgentReply("awake")]])

    async def scenario() -> None:
        async with project.host(timeouts=Timeouts(stop_grace=1.0), session_hooks=False, agent=agent) as host:
            waiting = asyncio.ensure_future(host.send_and_wait("take a nap", timeout=60))
            await wait_for_event(host, lambda e: e["type"] == "tool.execution_start", timeout=20)
            assert host.cancel_turn() is True
            with pytest.raises(TurnCancelledError):
                await asyncio.wait_for(waiting, 10)  # far sooner than the tool or its timeout
            (complete,) = host.events.history("tool.execution_complete")
            assert complete["data"]["result"]["resultType"] == "rejected"
            assert host.events.history("session.idle")[-1]["data"] == {"aborted": True, "mode": "interactive"}

    run(scenario(), timeout=60)


ASYNC_NAPPER = """
import asyncio
from sdk_extension import join_session, tool

@tool(description="Sleep without blocking")
async def doze() -> str:
    session.log("dozing off")
    try:
        await asyncio.sleep(120)
    except asyncio.CancelledError:
        session.log("doze was cancelled by the host")
        raise
    return "rested"

session = join_session(tools=[doze])
"""


@pytest.mark.subprocess
def test_an_async_tool_of_a_python_extension_is_cancelled_when_its_turn_is(project: Project) -> None:
    project.add_extension("dozy", ASYNC_NAPPER)
    agent = ScriptedAgent([[AgentReply("dozing", (ToolCall("doze", {}, "d1"),)), AgentReply("awake")]])

    async def scenario() -> None:
        async with project.host(timeouts=Timeouts(stop_grace=1.0), session_hooks=False, agent=agent) as host:
            await host.send("doze off")
            await wait_for_event(host, lambda e: e["type"] == "session.info" and "dozing off" in str(e["data"]), 20)
            assert host.cancel_turn() is True
            logged = await wait_for_event(
                host, lambda e: e["type"] == "session.info" and "doze was cancelled" in str(e["data"]), timeout=20
            )
            assert "doze was cancelled by the host" in logged["data"]["message"]

    run(scenario(), timeout=60)
