"""The permission broker in memory: who may answer, the first answer wins, what is announced."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from extension_host.calls.permissions import MAX_FEEDBACK_CHARS, PermissionBroker
from extension_host.events import EventLog
from helpers import run

REQUEST = {"kind": "hook", "toolName": "shell", "toolArgs": {"command": "rm x"}, "hookMessage": "it deletes"}


def completions(log: EventLog) -> list[dict[str, Any]]:
    return [event["data"] for event in log.history("permission.completed")]


def test_with_nobody_to_answer_a_request_is_denied_at_once_and_announced() -> None:
    log = EventLog()
    broker = PermissionBroker(log)
    outcome = run(broker.request(REQUEST, tool_call_id="c1"), timeout=5)
    assert (outcome.approved, outcome.decided_by, outcome.feedback) == (False, "host", "nobody can answer here")
    [requested] = log.history("permission.requested")
    assert requested["data"] == {"requestId": outcome.request_id, "permissionRequest": REQUEST}
    assert completions(log) == [
        {
            "requestId": outcome.request_id,
            "result": {"kind": "denied-no-approval-rule-and-could-not-request-from-user"},
            "toolCallId": "c1",
            "decisionSource": "unattended_fallback",
        }
    ]


def test_the_first_answer_wins_and_later_ones_are_refused() -> None:
    log = EventLog()
    broker = PermissionBroker(log, has_handlers=lambda: True)
    answers: list[bool] = []

    def answer(event: Any) -> None:
        if event["type"] == "permission.requested":
            request_id = event["data"]["requestId"]
            answers.append(broker.resolve(request_id, {"kind": "approve-for-session"}, "project:approver"))
            answers.append(broker.resolve(request_id, {"kind": "reject"}, "project:other"))

    log.subscribe(answer)
    outcome = run(broker.request(REQUEST), timeout=5)
    assert (outcome.approved, outcome.decided_by) == (True, "project:approver")
    assert answers == [True, False]
    assert completions(log)[0]["result"] == {"kind": "approved"}
    assert broker.pending == []


def test_on_ask_answers_with_the_tool_its_arguments_and_the_reason() -> None:
    asked: list[tuple[str, Any, str | None]] = []

    async def on_ask(tool: str, arguments: Any, reason: str | None) -> bool:
        asked.append((tool, arguments, reason))
        return False

    outcome = run(PermissionBroker(EventLog(), on_ask).request(REQUEST), timeout=5)
    assert asked == [("shell", {"command": "rm x"}, "it deletes")]
    assert (outcome.approved, outcome.decided_by, outcome.result) == (
        False,
        "user",
        {"kind": "denied-interactively-by-user"},
    )


def test_an_unanswered_request_is_denied_after_the_timeout() -> None:
    broker = PermissionBroker(EventLog(), clients=True, timeout=0.05)
    outcome = run(broker.request(REQUEST), timeout=5)
    assert outcome.approved is False and outcome.feedback == "no answer within 0.05 s"


def test_a_rejections_feedback_is_kept_and_cut_to_the_limit() -> None:
    log = EventLog()
    broker = PermissionBroker(log, clients=True)

    async def scenario() -> Any:
        task = asyncio.ensure_future(broker.request(REQUEST))
        while not broker.pending:
            await asyncio.sleep(0)
        broker.resolve(broker.pending[0], {"kind": "reject", "feedback": "x" * (MAX_FEEDBACK_CHARS + 10)}, "user")
        return await task

    outcome = run(scenario(), timeout=5)
    assert outcome.feedback == "x" * MAX_FEEDBACK_CHARS
    assert outcome.result == {"kind": "denied-interactively-by-user", "feedback": "x" * MAX_FEEDBACK_CHARS}


def test_an_unknown_decision_kind_is_refused_naming_it() -> None:
    broker = PermissionBroker(EventLog())
    with pytest.raises(ValueError, match="permission decision kind 'maybe' is not one of"):
        broker.resolve("perm-1", {"kind": "maybe"}, "project:x")


def test_a_hook_decision_is_announced_as_resolved_by_hook() -> None:
    log = EventLog()
    PermissionBroker(log).resolved_by_hook(REQUEST, {"kind": "denied-by-permission-request-hook"}, tool_call_id="c9")
    [requested] = log.history("permission.requested")
    assert requested["data"]["resolvedByHook"] is True
    assert completions(log)[0]["result"] == {"kind": "denied-by-permission-request-hook"}
