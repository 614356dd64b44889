"""Running one hook adapter row against a stand-in host, for the Claude Code and Gemini CLI tables' tests."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from extension_host.bridges.agent_hooks.adapter import HookAgent, HookReply, run_agent_hook
from extension_host.bridges.agent_hooks.deadline import HookDeadline
from helpers import Project


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


@dataclass(frozen=True)
class AgentTable:
    """One agent's table under test: the payloads it is fed (``common``, the fields the agent
    sends with every event, in each) and its rows run against a stand-in host."""

    agent: HookAgent
    common: Mapping[str, Any]

    def payload(self, event: str, **fields: Any) -> bytes:
        """What the agent writes to a hook's stdin for ``event`` with ``fields``."""
        return json.dumps({**self.common, "hook_event_name": event, **fields}).encode()

    def hook(
        self, project: Project, event: str, stdin: bytes, answer: dict[str, Any]
    ) -> tuple[dict[str, Any], HookReply]:
        """Run ``event`` with a stand-in host that gives ``answer``; the request it got and the reply."""
        return run_with_answer(self.agent, event, stdin, project.root, answer)
