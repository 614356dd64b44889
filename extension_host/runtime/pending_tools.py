"""The tool calls in flight to one extension: each one sent, answered once, never left hanging.

:class:`PendingCalls` sends a call as an ``external_tool.requested`` event (persisted, with the
``workingDirectory``, and sent to the tool's owner only, as Copilot CLI does), matches the
extension's ``session.tools.handlePendingToolCall`` to it by request id (an ``error`` answer, a
handler that threw, is worded as Copilot CLI words it: :func:`thrown`), and settles it with a
``timeout`` after the tool timeout or a ``failure`` when the extension goes away (:meth:`end_all`).
An answered call, or one withdrawn by its caller (the turn was cancelled), is announced as
``external_tool.completed`` (persisted, to every extension that wants it); a withdrawn call's
late answer is refused saying it was cancelled.
Arguments larger, or nested deeper, than the extension accepts fail that call only. It knows
the connection and the shape of these two messages; not the extension's process, its status,
or hooks.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Callable
from typing import Any, Final

from extension_protocol import protocol as p
from extension_protocol.connection import Connection, RpcError
from extension_protocol.framing import MessageTooDeep, MessageTooLarge
from extension_protocol.protocol import ResultType
from extension_protocol.results import ToolResult, result_from_wire

from ..events import EventLog, unique_ids

__all__ = ["REMEMBERED_CANCELLED_CALLS", "THROWN", "PendingCalls", "thrown"]

REMEMBERED_CANCELLED_CALLS: Final = 256
"""Withdrawn calls remembered per extension, so a late answer is told why it is not wanted."""


THROWN: Final = "Tool execution failed"
"""The error hooks and events are told of a tool that answered with an ``error`` (its handler
threw), as Copilot CLI tells them: the extension's own message goes to the session log only."""


def thrown(tool_name: str, arguments: Any, error: Any) -> ToolResult:
    """The failure of a tool whose handler threw ``error``, worded as Copilot CLI words it for the model."""
    said = json.dumps(arguments, separators=(",", ":"), ensure_ascii=False, default=str)
    message = error if isinstance(error, str) else json.dumps(error, default=str)
    return ToolResult(
        f"Failed to execute `{tool_name}` tool with arguments: {said} due to error: Error: {THROWN}",
        "failure",
        error=THROWN,
        session_log=f"{tool_name} failed: {message}",
    )


def _failure(text: str, result_type: ResultType = "failure") -> ToolResult:
    return ToolResult(text, result_type, error=text)


class PendingCalls:
    """The calls in flight to the extension ``owner`` (its id, for messages)."""

    def __init__(
        self,
        owner: str,
        session_id: str,
        tool_timeout: float,
        events: EventLog,
        working_directory: str,
        wants: Callable[[str], bool] = lambda event_type: True,
    ) -> None:
        """``wants(event_type)``: whether the owner is sent events of that type anyway (its interests)."""
        self._owner = owner
        self._wants = wants
        self._session_id = session_id
        self._tool_timeout = tool_timeout
        self._events = events
        self._working_directory = working_directory
        self._pending: dict[str, tuple[asyncio.Future[ToolResult], str, Any]] = {}
        self._ids = unique_ids()
        self._cancelled: deque[str] = deque(maxlen=REMEMBERED_CANCELLED_CALLS)

    async def call(self, connection: Connection, tool_name: str, arguments: Any, tool_call_id: str) -> ToolResult:
        """Send one call and return its result; always returns, never hangs (see the module)."""
        request_id = next(self._ids)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[ToolResult] = loop.create_future()
        self._pending[request_id] = (future, tool_name, arguments)
        data: p.ToolRequestedData = {
            "requestId": request_id,
            "sessionId": self._session_id,
            "toolCallId": tool_call_id,
            "toolName": tool_name,
            "arguments": arguments,
            "workingDirectory": self._working_directory,
        }
        # Persisted like every event; the runtime forwards this type to nobody, the owner gets it here.
        event = self._events.emit("external_tool.requested", dict(data))
        timer: asyncio.TimerHandle | None = None
        try:
            connection.notify(p.METHOD_SESSION_EVENT, {"sessionId": self._session_id, "event": event})
            # A timer that settles the future: cheaper than asyncio.timeout, which cancels the task.
            timer = loop.call_later(self._tool_timeout, self._time_out, future, tool_name)
            return await future
        except asyncio.CancelledError:
            self._withdraw(connection, request_id)
            raise
        except MessageTooLarge as exc:
            return _failure(
                f"tool {tool_name!r} of {self._owner} was not called: its arguments are too large ({exc}); "
                "pass less, e.g. the path of a file"
            )
        except MessageTooDeep as exc:
            return _failure(
                f"tool {tool_name!r} of {self._owner} was not called: its arguments nest too deeply ({exc}); "
                "pass them with less nesting"
            )
        except Exception as exc:  # the pipe broke under us: the owner's exit watcher will say why
            return _failure(f"tool {tool_name!r} could not be sent to {self._owner}: {exc}")
        finally:
            if timer is not None:
                timer.cancel()
            self._pending.pop(request_id, None)

    def answer(self, params: Any) -> dict[str, Any]:
        """Handle ``session.tools.handlePendingToolCall``: settle the call it answers.

        Raises:
            RpcError: no such call is pending, or the result is malformed (the call then fails).
        """
        request_id = params.get("requestId") if isinstance(params, dict) else None
        pending = self._pending.get(request_id) if isinstance(request_id, str) else None
        if pending is None and request_id in self._cancelled:
            raise RpcError(
                p.INVALID_PARAMS,
                f"the tool call with requestId {request_id!r} was cancelled (its turn was cancelled); "
                "its result is not needed",
            )
        if pending is None:
            raise RpcError(
                p.INVALID_PARAMS,
                f"no pending tool call with requestId {request_id!r} (it finished, timed out, or never existed)",
            )
        future, tool_name, arguments = pending
        try:
            error, answered = params.get("error"), params.get("result")
            result = (
                thrown(tool_name, arguments, error)
                if error is not None and answered is None
                else result_from_wire(answered)
            )
        except (TypeError, ValueError) as exc:
            text = f"extension {self._owner} returned an invalid result for tool {tool_name!r}: {exc}"
            if not future.done():
                future.set_result(_failure(text))
            raise RpcError(p.INVALID_PARAMS, text) from None
        if not future.done():
            future.set_result(result)
        self._events.emit("external_tool.completed", {"requestId": request_id})
        return {"success": True}

    def end_all(self, reason: str) -> None:
        """Fail every call in flight at once, saying ``reason``."""
        for future, tool_name, _ in self._pending.values():
            if not future.done():
                future.set_result(_failure(f"tool {tool_name!r} could not finish: {reason}"))
        self._pending.clear()

    def _withdraw(self, connection: Connection, request_id: str) -> None:
        """Tell the extensions a call is over without its answer (the SDK's
        ``external_tool.completed``: dismiss the request); the owner is told even when it did
        not ask for that event type (the Python SDK cancels the call on it)."""
        self._cancelled.append(request_id)
        event = self._events.emit("external_tool.completed", {"requestId": request_id})
        if not self._wants("external_tool.completed"):
            try:
                connection.notify(p.METHOD_SESSION_EVENT, {"sessionId": self._session_id, "event": event})
            except Exception:
                pass  # the pipe is gone: the extension has nothing left to be told

    def _time_out(self, future: asyncio.Future[ToolResult], tool_name: str) -> None:
        if not future.done():
            text = f"tool {tool_name!r} of {self._owner} did not answer within {self._tool_timeout:g} s"
            future.set_result(_failure(text, "timeout"))
