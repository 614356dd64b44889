"""Permission requests, on the published Copilot SDK's wire: who is asked, who answers, what is said.

A request (a pre-tool hook's ``ask``, or a permission the embedding application asks for) is
announced with ``permission.requested`` ``{requestId, permissionRequest}``; the
``permissionRequest`` has the SDK's ``kind`` (``hook`` for a hook's ask: ``toolName``,
``toolArgs``, ``hookMessage``, ``toolCallId``). The first answer wins, from whichever comes
first:

- the embedding application's ``on_ask(tool, args, reason) -> bool`` (may be async);
- an extension that joined with a permission handler (``requestPermission: true``), answering
  ``session.permissions.handlePendingPermissionRequest {requestId, result}``;
- :meth:`PermissionBroker.resolve` for anyone else (``host.resolve_permission``, a client).

Then ``permission.completed`` ``{requestId, result, toolCallId?}`` with the SDK's result kinds
(``approved``, ``denied-interactively-by-user`` with the ``feedback``, ...). With nobody who
could answer, an ask is denied at once; with somebody, it waits at most
:data:`PERMISSION_TIMEOUT`. A decision a hook already made is announced with
``resolvedByHook: true`` and needs no answer.

The decision kinds are the SDK's ``PermissionDecisionRequest["result"]`` (``rpc.d.ts``); the
completion kinds its ``PermissionResult`` (``session-events.d.ts``). This module knows events and
futures; it does not know tools, hooks or extensions.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..events import EventLog

__all__ = [
    "APPROVE_KINDS",
    "DECISION_KINDS",
    "MAX_FEEDBACK_CHARS",
    "PERMISSION_TIMEOUT",
    "AskHandler",
    "PermissionBroker",
    "PermissionOutcome",
]

AskHandler = Callable[[str, Any, "str | None"], "Awaitable[bool] | bool"]
"""Answers a hook's ``ask``: ``(tool_name, arguments, reason) -> allowed``."""

PERMISSION_TIMEOUT: Final = 300.0
"""Seconds a permission request waits for an answer before it is denied as unanswered."""
MAX_FEEDBACK_CHARS: Final = 4096
"""Feedback (or any reason) an answer carries is cut to this many characters."""

APPROVE_KINDS: Final = frozenset(
    {
        "approve-once",
        "approve-for-session",
        "approve-for-location",
        "approve-permanently",
        "approved",
        "approved-for-session",
        "approved-for-location",
    }
)
"""Decision kinds that approve (an approval for the session or location counts for this
request only: the host keeps no approval rules)."""
DECISION_KINDS: Final = APPROVE_KINDS | frozenset(
    {
        "reject",
        "user-not-available",
        "cancelled",
        "denied-by-rules",
        "denied-no-approval-rule-and-could-not-request-from-user",
        "denied-interactively-by-user",
        "denied-by-content-exclusion-policy",
        "denied-by-permission-request-hook",
    }
)
"""Every ``result.kind`` of ``session.permissions.handlePendingPermissionRequest``."""
_UNANSWERED: Final = "denied-no-approval-rule-and-could-not-request-from-user"


@dataclass(frozen=True, slots=True)
class PermissionOutcome:
    """How a request ended: approved or not, the feedback for the agent, the completion's
    ``result`` as sent in ``permission.completed``, and who answered."""

    request_id: str
    approved: bool
    result: dict[str, Any]
    decided_by: str
    feedback: str | None = None


class PermissionBroker:
    """Announces permission requests and takes the first answer (see the module).

    Args:
        events: where ``permission.requested``/``permission.completed`` go.
        on_ask: the embedding application's answerer, if any.
        has_handlers: whether a running extension joined with a permission handler.
        clients: whether something else answers with :meth:`resolve` (a client, a UI).
        timeout: seconds a request waits for an answer.
    """

    def __init__(
        self,
        events: EventLog,
        on_ask: AskHandler | None = None,
        has_handlers: Callable[[], bool] = lambda: False,
        *,
        clients: bool = False,
        timeout: float = PERMISSION_TIMEOUT,
    ) -> None:
        self._events = events
        self._on_ask = on_ask
        self._has_handlers = has_handlers
        self.clients = clients
        self._timeout = timeout
        self._pending: dict[str, asyncio.Future[PermissionOutcome]] = {}
        self._prefix = uuid.uuid4().hex[:12]
        self._numbers = itertools.count(1)

    @property
    def pending(self) -> list[str]:
        """The ids of the requests waiting for an answer."""
        return list(self._pending)

    def can_ask(self) -> bool:
        """Whether anybody could answer a request now."""
        return self._on_ask is not None or self.clients or self._has_handlers()

    async def request(
        self, permission_request: dict[str, Any], *, tool_call_id: str | None = None
    ) -> PermissionOutcome:
        """Announce a request and wait for its first answer (denied if nobody can answer, or
        none came within the timeout); ``permission.completed`` follows."""
        request_id = f"perm-{self._prefix}-{next(self._numbers)}"
        future: asyncio.Future[PermissionOutcome] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        asking: asyncio.Task[None] | None = None
        try:
            self._events.emit(
                "permission.requested", {"requestId": request_id, "permissionRequest": permission_request}
            )
            if not self.can_ask():
                self._settle(request_id, {"kind": _UNANSWERED}, "host", "nobody can answer here")
            elif self._on_ask is not None:
                asking = asyncio.ensure_future(self._ask(request_id, permission_request))
            try:
                async with asyncio.timeout(self._timeout):
                    outcome = await asyncio.shield(future)
            except TimeoutError:
                self._settle(request_id, {"kind": _UNANSWERED}, "host", f"no answer within {self._timeout:g} s")
                outcome = future.result()
            except asyncio.CancelledError:
                # The call was withdrawn (its turn was cancelled): the request ends unanswered.
                cancelled: dict[str, Any] = {"requestId": request_id, "result": {"kind": "cancelled"}}
                if tool_call_id is not None:
                    cancelled["toolCallId"] = tool_call_id
                self._events.emit("permission.completed", cancelled)
                raise
        finally:
            self._pending.pop(request_id, None)
            if asking is not None and not asking.done():
                asking.cancel()
        completed: dict[str, Any] = {"requestId": request_id, "result": outcome.result}
        if tool_call_id is not None:
            completed["toolCallId"] = tool_call_id
        if outcome.decided_by in ("user", "host"):
            completed["decisionSource"] = "human_response" if outcome.decided_by == "user" else "unattended_fallback"
        self._events.emit("permission.completed", completed)
        return outcome

    def resolved_by_hook(
        self, permission_request: dict[str, Any], result: dict[str, Any], *, tool_call_id: str | None = None
    ) -> None:
        """Announce a request a hook already decided: no answer is awaited."""
        request_id = f"perm-{self._prefix}-{next(self._numbers)}"
        self._events.emit(
            "permission.requested",
            {"requestId": request_id, "permissionRequest": permission_request, "resolvedByHook": True},
        )
        completed: dict[str, Any] = {"requestId": request_id, "result": result}
        if tool_call_id is not None:
            completed["toolCallId"] = tool_call_id
        self._events.emit("permission.completed", completed)

    def resolve(self, request_id: str, decision: Mapping[str, Any], decided_by: str) -> bool:
        """Answer a pending request with a decision of the SDK's kinds (``{"kind": "reject",
        "feedback": ...}``); False if it is not pending (answered already, or unknown).

        Raises:
            ValueError: the decision's kind is not one of :data:`DECISION_KINDS`.
        """
        kind = decision.get("kind")
        if kind not in DECISION_KINDS:
            raise ValueError(f"permission decision kind {kind!r} is not one of {', '.join(sorted(DECISION_KINDS))}")
        return self._settle(request_id, dict(decision), decided_by)

    def _settle(self, request_id: str, decision: dict[str, Any], decided_by: str, why: str | None = None) -> bool:
        future = self._pending.get(request_id)
        if future is None or future.done():
            return False
        future.set_result(_outcome(request_id, decision, decided_by, why))
        return True

    async def _ask(self, request_id: str, permission_request: Mapping[str, Any]) -> None:
        assert self._on_ask is not None
        tool = str(permission_request.get("toolName") or permission_request.get("kind"))
        arguments = permission_request.get("toolArgs", permission_request.get("args"))
        reason = permission_request.get("hookMessage")
        try:
            answer = self._on_ask(tool, arguments, reason if isinstance(reason, str) else None)
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception as exc:  # an answerer that fails denies, saying why
            self._settle(request_id, {"kind": "user-not-available"}, "host", f"the ask handler failed: {exc}")
            return
        self._settle(request_id, {"kind": "approve-once" if answer else "reject"}, "user")


def _cut(text: Any) -> str | None:
    return text[:MAX_FEEDBACK_CHARS] if isinstance(text, str) and text else None


def _outcome(request_id: str, decision: dict[str, Any], decided_by: str, why: str | None) -> PermissionOutcome:
    """The completion ``result`` for a decision (the SDK's ``PermissionResult`` kinds)."""
    kind = decision["kind"]
    if kind in APPROVE_KINDS:
        return PermissionOutcome(request_id, True, {"kind": "approved"}, decided_by)
    feedback = _cut(decision.get("feedback")) or _cut(decision.get("message")) or _cut(decision.get("reason")) or why
    if kind in ("reject", "denied-interactively-by-user"):
        result: dict[str, Any] = {"kind": "denied-interactively-by-user"}
        if feedback:
            result["feedback"] = feedback
    elif kind == "user-not-available":
        result = {"kind": _UNANSWERED}
    elif kind == "cancelled":
        result = {"kind": "cancelled", **({"reason": feedback} if feedback else {})}
    elif kind == "denied-by-permission-request-hook":
        result = {"kind": kind, **({"message": feedback} if feedback else {})}
    elif kind == "denied-by-rules":
        rules = decision.get("rules")
        result = {"kind": kind, "rules": rules if isinstance(rules, list) else []}
    elif kind == "denied-by-content-exclusion-policy":
        result = {"kind": kind, "path": str(decision.get("path", "")), "message": feedback or ""}
    else:
        result = {"kind": kind}
    return PermissionOutcome(request_id, False, result, decided_by, feedback)
