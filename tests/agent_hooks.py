"""Running one hook adapter row against a stand-in host, for the Claude Code and Gemini CLI tables' tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from extension_host.bridges.agent_hooks.adapter import HookAgent, HookReply, run_agent_hook
from extension_host.bridges.agent_hooks.deadline import HookDeadline


def run_with_answer(
    agent: HookAgent, event: str, stdin: bytes, root: Path, answer: dict[str, Any]
) -> tuple[dict[str, Any], HookReply]:
    """Run ``event`` of ``agent`` with a stand-in host that gives ``answer``; the request it got
    (empty when none was made) and the reply."""
    asked: list[dict[str, Any]] = []

    def host(_root: Path, params: dict[str, Any], _deadline: HookDeadline) -> dict[str, Any]:
        asked.append(params)
        return answer

    reply = run_agent_hook(agent, event, stdin, root, one_shot=host)
    return (asked[0] if asked else {}), reply


def output(reply: HookReply) -> Any:
    """The JSON a successful reply printed (``None`` when it printed nothing)."""
    assert reply.exit_code == 0, reply
    return json.loads(reply.stdout) if reply.stdout else None
