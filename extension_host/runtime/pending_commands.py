"""The slash-command runs in flight to one extension: each one sent, answered once, never left hanging.

:class:`PendingCommands` sends a run as a ``command.execute`` event to the owning extension only
(another extension's SDK would answer "Unknown command"), matches its
``session.commands.handlePendingCommand`` by request id, and settles the run with a
:class:`~extension_host.calls.command_registry.CommandResult`: ``ok`` or ``error`` as answered, ``timeout``
after the timeout, ``unavailable`` when the extension goes away (:meth:`end_all`). Each settled
run is announced with ``command.completed`` through ``on_completed``. It knows the connection
and the shape of these messages; not the extension's process, its status, or the registry.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from extension_protocol import protocol as p
from extension_protocol.commands import MAX_COMMAND_ARGS_CHARS, MAX_COMMAND_ERROR_CHARS
from extension_protocol.connection import Connection, RpcError

from ..calls.command_registry import CommandResult
from ..events import make_event, unique_ids
from ..validation import validate

__all__ = ["PendingCommands"]


class PendingCommands:
    """The command runs in flight to the extension ``owner`` (its id, for messages)."""

    def __init__(self, owner: str, session_id: str, on_completed: Callable[[str], None] | None = None) -> None:
        """``on_completed(request_id)`` is told when a run that was sent is settled."""
        self._owner = owner
        self._session_id = session_id
        self._on_completed = on_completed
        self._pending: dict[str, tuple[asyncio.Future[CommandResult], str]] = {}
        self._ids = unique_ids()

    async def run(self, connection: Connection, name: str, args: str, timeout: float) -> CommandResult:
        """Send one run of ``/name args`` and return how it ended (see the module)."""
        if len(args) > MAX_COMMAND_ARGS_CHARS:
            return CommandResult(
                name,
                "invalid",
                f"the arguments of command '/{name}' have {len(args)} characters, over the limit of "
                f"{MAX_COMMAND_ARGS_CHARS}; pass less (the path of a file, say)",
                self._owner,
            )
        request_id = next(self._ids)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[CommandResult] = loop.create_future()
        self._pending[request_id] = (future, name)
        data: p.CommandExecuteData = {
            "requestId": request_id,
            "commandName": name,
            "command": f"/{name} {args}" if args else f"/{name}",
            "args": args,
        }
        event = make_event("command.execute", dict(data), ephemeral=True)
        timer = loop.call_later(timeout, self._time_out, future, name, request_id, timeout)
        try:
            connection.notify(p.METHOD_SESSION_EVENT, {"sessionId": self._session_id, "event": event})
            return await future
        except Exception as exc:  # the pipe broke under us: the owner's exit watcher will say why
            text = f"command '/{name}' could not be sent to {self._owner}: {exc}"
            return CommandResult(name, "unavailable", text, self._owner, request_id)
        finally:
            timer.cancel()
            self._pending.pop(request_id, None)
            if self._on_completed is not None:
                self._on_completed(request_id)

    def answer(self, params: Any) -> dict[str, Any]:
        """Handle ``session.commands.handlePendingCommand``: settle the run it answers.

        Raises:
            RpcError: the params are malformed, no such run is pending, or its error is
                over the limit (the run then fails, saying so).
        """
        try:
            answer = validate(p.METHOD_HANDLE_PENDING_COMMAND, p.HandlePendingCommandParams, params)
        except RpcError as exc:
            # A run it names is ended now, not left to its timeout.
            request_id = params.get("requestId") if isinstance(params, dict) else None
            pending = self._pending.get(request_id) if isinstance(request_id, str) else None
            if pending is not None and not pending[0].done():
                text = f"extension {self._owner} sent a malformed answer for command '/{pending[1]}': {exc.message}"
                pending[0].set_result(CommandResult(pending[1], "error", text, self._owner, request_id))
            raise
        request_id = answer["requestId"]
        pending = self._pending.get(request_id)
        if pending is None:
            raise RpcError(
                p.INVALID_PARAMS,
                f"{p.METHOD_HANDLE_PENDING_COMMAND}: no pending command with requestId {request_id[:80]!r} "
                "(it finished, timed out, or never existed)",
            )
        future, name = pending
        error = answer.get("error")
        if error is not None and len(error) > MAX_COMMAND_ERROR_CHARS:
            text = (
                f"extension {self._owner} answered command '/{name}' with an error of {len(error)} characters, "
                f"over the limit of {MAX_COMMAND_ERROR_CHARS}"
            )
            if not future.done():
                future.set_result(CommandResult(name, "error", text, self._owner, request_id))
            raise RpcError(p.INVALID_PARAMS, f"{p.METHOD_HANDLE_PENDING_COMMAND}: {text}")
        if not future.done():
            outcome = CommandResult(name, "ok", None, self._owner, request_id)
            if error is not None:
                outcome = CommandResult(name, "error", error, self._owner, request_id)
            future.set_result(outcome)
        return {"success": True}

    def end_all(self, reason: str) -> None:
        """Settle every run in flight at once as ``unavailable``, saying ``reason``."""
        for request_id, (future, name) in list(self._pending.items()):
            if not future.done():
                text = f"command '/{name}' could not finish: {reason}"
                future.set_result(CommandResult(name, "unavailable", text, self._owner, request_id))

    def _time_out(self, future: asyncio.Future[CommandResult], name: str, request_id: str, timeout: float) -> None:
        if not future.done():
            text = f"command '/{name}' of {self._owner} did not finish within {timeout:g} s"
            future.set_result(CommandResult(name, "timeout", text, self._owner, request_id))
