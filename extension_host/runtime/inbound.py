"""What an extension may ask of the host once connected: the handler table of its connection.

:func:`inbound_handlers` maps every method an extension may call to its handler:
``connect`` and ``ping``, ``session.log`` (a timeline message), ``session.send`` (a prompt for
the session's turns), ``session.permissions.handlePendingPermissionRequest`` (its answer to a
permission request), ``session.eventLog.registerInterest`` and ``releaseInterest`` (which event
types it is sent), and the session-scoped methods of :mod:`~extension_host.runtime.session_rpc`; the
methods that change the extension itself (``session.resume``, ``session.detach``) and the
answers to what is in flight to it (tool calls, command runs) are handed in by its instance.
Every parameter is validated before use. This module knows the shared session context and
the extension's id; not its process, its status or its registrations.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from extension_protocol import protocol as p
from extension_protocol.connection import Handler, RpcError

from ..errors import ExtensionHostError
from ..events import SESSION_MODE, iso_now
from ..info import host_version
from ..validation import validate
from .context import SessionContext
from .interests import Interests, TooManyInterests

__all__ = ["ExtensionRequests", "inbound_handlers"]


class ExtensionRequests:
    """The handlers of the requests ``extension_id`` may send that concern the session."""

    def __init__(self, extension_id: str, context: SessionContext, interests: Interests) -> None:
        self._id = extension_id
        self._context = context
        self._interests = interests

    def on_connect(self, params: Any) -> p.ConnectResult:
        """``connect``, answered as Copilot CLI does: the protocol version, this host's version,
        and the task kinds it may return: none, as it runs no session tasks."""
        return {"ok": True, "protocolVersion": p.PROTOCOL_VERSION, "version": host_version(), "taskKinds": []}

    def on_ping(self, params: Any) -> p.PingResult:
        """``ping``: ``pong`` (``pong: <message>`` when one was sent), the time and the protocol version."""
        message = params.get("message") if isinstance(params, dict) else None
        return {
            "message": f"pong: {message}" if isinstance(message, str) and message else "pong",
            "timestamp": iso_now(),
            "protocolVersion": p.PROTOCOL_VERSION,
        }

    def on_log(self, params: Any) -> dict[str, Any]:
        """``session.log``: a ``session.info``, ``session.warning`` or ``session.error``."""
        log = validate(p.METHOD_SESSION_LOG, p.LogParams, params)
        level = log.get("level", "info")
        # As the SDK's session.log: the category (default "notification") becomes the event's
        # infoType, warningType or errorType.
        data: dict[str, Any] = {f"{level}Type": log.get("type", "notification"), "message": log["message"]}
        if "url" in log:
            data["url"] = log["url"]
        if "tip" in log and level == "info":
            data["tip"] = log["tip"]
        data["extensionId"] = self._id
        event = self._context.events.emit(f"session.{level}", data, ephemeral=log.get("ephemeral", False))
        return {"eventId": event["id"]}

    async def on_send(self, params: Any) -> dict[str, Any]:
        """``session.send``: to the session's turns, or else to ``on_send``."""
        send = validate(p.METHOD_SESSION_SEND, p.SendParams, params)
        attachments = send.get("attachments", [])
        context = self._context
        if context.submit is not None:
            try:
                return {"messageId": await context.submit(send["prompt"], attachments, self._id)}
            except ExtensionHostError as exc:
                raise RpcError(p.INVALID_REQUEST, f"session.send: {exc}") from None
        event = context.events.emit(
            "user.message", {"content": send["prompt"], "attachments": attachments, "source": self._id}
        )
        if context.on_send is not None:
            await context.on_send(send["prompt"], attachments, self._id)
        else:
            # No agent is attached: the turn is over as soon as it starts.
            context.events.emit("session.idle", {"mode": SESSION_MODE}, ephemeral=True)
        return {"messageId": event["id"]}

    def on_permission_answer(self, params: Any) -> dict[str, Any]:
        """``session.permissions.handlePendingPermissionRequest``: its answer to a request."""
        answer = validate(p.METHOD_HANDLE_PENDING_PERMISSION, p.HandlePendingPermissionParams, params)
        permissions = self._context.permissions
        if permissions is None:
            return {"success": False}
        try:
            return {"success": permissions.resolve(answer["requestId"], answer["result"], self._id)}
        except ValueError as exc:
            raise RpcError(p.INVALID_PARAMS, f"{p.METHOD_HANDLE_PENDING_PERMISSION}: {exc}") from None

    def on_register_interest(self, params: Any) -> dict[str, Any]:
        """``session.eventLog.registerInterest``: one more event type, and its handle."""
        interest = validate(p.METHOD_REGISTER_INTEREST, p.RegisterInterestParams, params)
        try:
            return {"handle": self._interests.register(interest["eventType"])}
        except TooManyInterests as exc:
            raise RpcError(
                p.INVALID_REQUEST,
                f"{p.METHOD_REGISTER_INTEREST}: extension {self._id} {exc}; "
                "release some (session.eventLog.releaseInterest) first",
            ) from None

    def on_release_interest(self, params: Any) -> dict[str, Any]:
        """``session.eventLog.releaseInterest``."""
        release = validate(p.METHOD_RELEASE_INTEREST, p.ReleaseInterestParams, params)
        self._interests.release(release["handle"])
        return {"success": True}


def inbound_handlers(
    requests: ExtensionRequests,
    context: SessionContext,
    *,
    resume: Handler,
    detach: Handler,
    tool_answer: Handler,
    command_answer: Handler,
) -> dict[str, Callable[[Any], Any]]:
    """The whole handler table of one extension's connection."""
    return {
        p.METHOD_CONNECT: requests.on_connect,
        p.METHOD_PING: requests.on_ping,
        p.METHOD_SESSION_RESUME: resume,
        p.METHOD_SESSION_LOG: requests.on_log,
        p.METHOD_SESSION_SEND: requests.on_send,
        p.METHOD_HANDLE_PENDING_TOOL_CALL: tool_answer,
        p.METHOD_REGISTER_INTEREST: requests.on_register_interest,
        p.METHOD_HANDLE_PENDING_PERMISSION: requests.on_permission_answer,
        p.METHOD_RELEASE_INTEREST: requests.on_release_interest,
        p.METHOD_HANDLE_PENDING_COMMAND: command_answer,
        p.METHOD_SESSION_DETACH: detach,
        **context.session_rpc,
    }
