"""A subagent round trip against the same work done by the session's own agent.

- :func:`parent_turns`: two prompts, each a turn with one ``echo0`` tool call and an answer.
- :func:`subagent_turns`: one prompt whose agent calls ``task``; the custom agent's child
  session makes the one ``echo0`` call and answers, and that answer ends the parent's turn.

Both make four agent steps and two tool calls (one of them ``task`` in the second) through the
host's pipeline, with scripted agents, in this process; each figure is the seconds of one round.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from extension_host import AgentReply, CustomAgent, ExtensionHost, ScriptedAgent, ToolCall

from .host import CALL_TIMEOUT, _check_running
from .serve import api_turns

_ECHO = ToolCall("echo0", {"text": "hi"})
_TASK = ToolCall("task", {"name": "b", "description": "bench", "prompt": "echo hi", "agent_type": "worker"})


def _steps(call: ToolCall, turns: int) -> ScriptedAgent:
    return ScriptedAgent([[AgentReply("", (call,)), AgentReply("Done.")]] * turns)


async def parent_turns(project: Path, home: Path, rounds: int) -> list[float]:
    """Seconds of each round of two one-tool-call turns of the session's own agent."""
    turns = await api_turns(project, home, rounds * 2)
    return [first + second for first, second in zip(turns[::2], turns[1::2], strict=True)]


async def subagent_turns(project: Path, home: Path, rounds: int) -> list[float]:
    """Seconds of each turn that delegates its tool call to a custom agent's child session."""
    worker = CustomAgent("worker", "You echo.", tools=("echo0",), agent=_steps(_ECHO, rounds))
    agent = _steps(_TASK, rounds)
    async with ExtensionHost(project, home, trust=True, watch=False, agent=agent, custom_agents=[worker]) as host:
        _check_running(host)
        times = []
        async with asyncio.timeout(CALL_TIMEOUT * 4):
            for _ in range(rounds):
                started = time.perf_counter()
                reply = await host.send_and_wait("go")
                times.append(time.perf_counter() - started)
                assert reply is not None and reply["data"]["content"] == "Done."
        return times
