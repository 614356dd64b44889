"""What every hook command shares, against a stand-in host: what the host's ``unjudged`` does
to a guard event, whatever it holds."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agent_hooks import run_with_answer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extension_host.bridges.agent_hooks.adapter import EXIT_BLOCK, HookAgent
from extension_host.bridges.agent_hooks.claude import CLAUDE
from extension_host.bridges.agent_hooks.gemini import GEMINI
from helpers import Project

GUARD_EVENTS = [
    (CLAUDE, "PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "cat .env"}}),
    (CLAUDE, "UserPromptSubmit", {"prompt": "hi"}),
    (GEMINI, "BeforeTool", {"tool_name": "run_shell_command", "tool_input": {"command": "cat .env"}}),
    (GEMINI, "BeforeAgent", {"prompt": "hi"}),
]

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
UNJUDGED = JSON | st.fixed_dictionaries(
    {"message": st.text(max_size=40) | JSON, "allowed": st.sampled_from([True, False, 1, "true", None]) | JSON},
    optional={"extensions": JSON},
)
"""What a host could put under ``unjudged``: anything, and often nearly the real shape."""


def well_formed_allowance(unjudged: Any) -> bool:
    message = unjudged.get("message") if isinstance(unjudged, dict) else None
    return isinstance(message, str) and bool(message) and unjudged.get("allowed") is True


@pytest.mark.slow
@settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(row=st.sampled_from(GUARD_EVENTS), unjudged=UNJUDGED)
def test_an_unjudged_guard_event_passes_only_when_the_user_allowed_it_and_then_warns_in_one_line(
    project: Project, row: tuple[HookAgent, str, dict[str, Any]], unjudged: Any
) -> None:
    """Whatever the host says under ``unjudged`` (its absence aside), the call is blocked unless
    the user allowed it (``allowed`` exactly true, with a message); either way the command says
    so in one line on stderr that no terminal acts on."""
    agent, event, fields = row
    stdin = json.dumps({"hook_event_name": event, "session_id": "s", **fields}).encode()
    _, reply = run_with_answer(agent, event, stdin, project.root, {"unjudged": unjudged})
    if unjudged is None:
        assert (reply.exit_code, reply.stderr) == (0, "")
        return
    if well_formed_allowance(unjudged):
        assert reply.exit_code == 0 and "warning" in reply.stderr
    else:
        assert (reply.exit_code, reply.stdout) == (EXIT_BLOCK, "")
    assert reply.stderr.count("\n") == 1 and reply.stderr.endswith("\n")
    assert not any(ord(char) < 0x20 or 0x7F <= ord(char) <= 0x9F for char in reply.stderr[:-1])
