"""What a permission handler's answer becomes on the wire."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sdk_extension.permissions import decide_permission, permission_answer


@pytest.mark.parametrize(
    ("answer", "decision"),
    [
        (True, {"kind": "approve-once"}),
        (False, {"kind": "reject"}),
        ("use staging", {"kind": "reject", "feedback": "use staging"}),
        ({"kind": "approve-for-session"}, {"kind": "approve-for-session"}),
        (None, None),
    ],
)
def test_a_handlers_answer_becomes_the_sdks_decision(answer: Any, decision: Any) -> None:
    assert permission_answer(answer) == decision


def test_an_answer_of_another_type_is_refused_saying_what_is_allowed() -> None:
    with pytest.raises(TypeError, match="returns True, False, feedback text"):
        permission_answer(3)


async def direct(function: Any, *args: Any) -> Any:
    return function(*args)


def test_a_handler_that_raises_answers_user_not_available() -> None:
    def broken(request: Any, invocation: Any) -> Any:
        raise RuntimeError("no terminal")

    data = {"requestId": "r", "permissionRequest": {"kind": "hook"}}
    assert asyncio.run(decide_permission(broken, data, "s", direct)) == {"kind": "user-not-available"}


def test_a_request_a_hook_resolved_is_not_passed_to_the_handler() -> None:
    seen: list[Any] = []
    data = {"requestId": "r", "permissionRequest": {"kind": "hook"}, "resolvedByHook": True}
    assert asyncio.run(decide_permission(lambda r, i: seen.append(r), data, "s", direct)) is None
    assert seen == []
