"""A hook command's one deadline: how long it is, and what it says when a wait runs it out."""

from __future__ import annotations

import pytest

from extension_host.bridges.agent_hooks.deadline import (
    HOOK_DEADLINE,
    HOOK_TIMEOUT_ENV,
    HookDeadline,
    HookDeadlineError,
    hook_deadline_seconds,
)


@pytest.mark.parametrize(
    ("value", "timeout"),
    [
        ("", HOOK_DEADLINE),
        ("5", 5.0),
        ("0.5", 0.5),
        ("0", HOOK_DEADLINE),
        ("soon", HOOK_DEADLINE),
        ("nan", HOOK_DEADLINE),
        ("600", HOOK_DEADLINE),
    ],
)
def test_the_deadline_can_be_lowered_from_the_environment_but_not_raised_past_the_agents_limit(
    value: str, timeout: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the agents' own 60 s the hook command would be killed, which both agents read as
    "carry on": a longer wait is ignored, as is anything that is not a positive number."""
    monkeypatch.setenv(HOOK_TIMEOUT_ENV, value)
    assert hook_deadline_seconds() == timeout


def test_a_deadline_that_has_passed_names_the_wait_it_ran_out_in() -> None:
    deadline = HookDeadline(0.0)
    assert deadline.remaining() == 0.0
    with pytest.raises(HookDeadlineError) as caught:
        deadline.left_for("the background host's start")
    assert str(caught.value) == "the background host's start took longer than the 0 s a hook command has"
    assert 0 < HookDeadline(30.0).left_for("anything") <= 30.0
