"""Answering the host's permission requests: ``join_session(on_permission_request=...)``.

An extension that joins with a permission handler tells the host so (``requestPermission:
true``, as the published SDK's ``onPermissionRequest`` does) and is sent each
``permission.requested`` event. Its handler gets the request (the wire's ``permissionRequest``:
``kind``, and for a hook's ask ``toolName``, ``toolArgs``, ``hookMessage``) and answers:

- ``True`` → ``{"kind": "approve-once"}``; ``False`` → ``{"kind": "reject"}``;
- a string → a rejection with that text as ``feedback`` (it reaches the agent);
- a dict with the SDK's ``kind`` (``{"kind": "reject", "feedback": "use the staging db"}``);
- ``None`` → no answer: someone else (the user, another extension) decides.

A handler that raises answers ``user-not-available``, as the published SDK does. Requests a
hook already resolved (``resolvedByHook``) are not passed on. This module shapes answers; the
client (:mod:`sdk_extension.session`) sends them.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from extension_protocol import protocol as p

__all__ = ["PermissionHandler", "decide_permission", "permission_answer"]

PermissionHandler = Callable[[dict[str, Any], Any], "Any | Awaitable[Any]"]
"""``handler(permission_request, invocation)``; ``invocation.session_id`` names the session."""


class _Invocation:
    __slots__ = ("session_id",)

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id


def permission_answer(answer: Any) -> p.PermissionDecision | None:
    """The wire decision for what a handler returned (``None``: it does not answer).

    Raises:
        TypeError: the handler returned something else.
    """
    if answer is None:
        return None
    if answer is True:
        return {"kind": "approve-once"}
    if answer is False:
        return {"kind": "reject"}
    if isinstance(answer, str):
        return {"kind": "reject", "feedback": answer}
    if isinstance(answer, Mapping) and isinstance(answer.get("kind"), str):
        decision: Any = dict(answer)
        return decision  # type: ignore[no-any-return]
    raise TypeError(
        f"a permission handler returns True, False, feedback text, a dict with 'kind' or None; "
        f"got {type(answer).__name__}"
    )


async def decide_permission(
    handler: PermissionHandler,
    data: Mapping[str, Any],
    session_id: str,
    in_thread: Callable[..., Awaitable[Any]],
) -> p.PermissionDecision | None:
    """Run the handler on one ``permission.requested`` event's data; a sync handler runs through
    ``in_thread(handler, *args)`` (it may ask somebody). Failures answer ``user-not-available``."""
    request = data.get("permissionRequest")
    if data.get("resolvedByHook") or not isinstance(request, dict):
        return None
    try:
        if asyncio.iscoroutinefunction(handler):
            answer = await handler(request, _Invocation(session_id))
        else:
            answer = await in_thread(handler, request, _Invocation(session_id))
            if asyncio.iscoroutine(answer):
                answer = await answer
        return permission_answer(answer)
    except Exception as exc:
        print(f"permission handler failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return {"kind": "user-not-available"}
