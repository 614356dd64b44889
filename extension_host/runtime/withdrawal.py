"""What the session takes back from an extension that leaves it, and how the leaving is told.

An extension leaves when it fails, detaches (``session.detach``) or is stopped. :func:`withdraw`
takes back everything it offered the session (its tools, hooks, slash commands and canvases,
whose open instances close) and ends
what is in flight to it (tool calls, command runs) with the reason; :func:`announce_departure`
puts the timeline message on the session and, when tools went, ``session.tools_updated``.
Which of these a departure gets (a stop is silent, a retired version's failure is no news) is
the instance's call; this module knows the shared registries and the event log, not processes.
"""

from __future__ import annotations

from typing import Literal, Protocol

from .context import SessionContext, announce_tools

__all__ = ["InFlight", "announce_departure", "withdraw"]


class InFlight(Protocol):
    """Requests in flight to the extension (its tool calls, its command runs)."""

    def end_all(self, reason: str) -> None:
        """Settle every one of them at once, saying ``reason``."""


def withdraw(
    context: SessionContext, extension_id: str, holder: object, in_flight: list[InFlight], why: str
) -> list[str]:
    """Unregister what ``holder`` (the instance ``extension_id``) holds and end ``in_flight``
    saying ``why``; returns the names of the tools it held."""
    removed = context.registry.unregister(extension_id, holder=holder)
    context.hooks.unregister(extension_id, holder=holder)
    context.commands.unregister(extension_id, holder=holder)
    if context.canvases is not None:
        context.canvases.unregister(extension_id, holder)
    for pending in in_flight:
        pending.end_all(why)
    return removed


def announce_departure(
    context: SessionContext, extension_id: str, level: Literal["info", "warning"], message: str, removed: list[str]
) -> None:
    """Say on the timeline that ``extension_id`` left (``session.info`` or ``session.warning``,
    type ``extension``) and, if it held tools, which went (``session.tools_updated``)."""
    context.events.emit(
        f"session.{level}",
        {f"{level}Type": "extension", "message": message, "extensionId": extension_id},
    )
    if removed:
        announce_tools(context, removed=removed, extensionId=extension_id)
