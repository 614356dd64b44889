"""One client of ``extensions serve``: its connection, its id and subscriptions, and the
notifications held back until an answer is written.

Sending to a client is this module's; what is sent, and to whom, is the server's
(:mod:`extension_host.serve.server`). A notification that cannot go to a client costs that
client its connection (:meth:`Client.send`), never another client's.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from extension_protocol.connection import Connection, ConnectionClosed

__all__ = ["Client", "CommandHandler"]


@dataclass(eq=False)
class Client:
    """One connected client: its connection, id and subscriptions."""

    connection: Connection
    client_id: str | None = None
    ahp1: bool = False
    """It speaks AHP 1.0 (its subscriptions are channels), not the seed protocol."""
    subscriptions: set[str] = field(default_factory=set)
    held: list[tuple[str | None, Any, bool]] | None = None
    """Notifications waiting for an answer to be written first (see :meth:`hold`): method,
    params and urgency, or ``None``, the frames already encoded (:meth:`send_encoded`) and theirs."""
    shows_canvases: bool = False
    """It said in ``initialize`` that it shows canvases (``capabilities.canvases``)."""
    canvas_views: dict[str, Callable[[], None]] = field(default_factory=dict)
    """The sessions it shows canvases of now, each with how to stop counting it there."""

    def sync_canvases(self, attach: Callable[[str], Callable[[], None] | None]) -> None:
        """Count it as a client that shows canvases in each session it is subscribed to now
        (``attach(uri)`` returns the detach, or ``None`` for a session gone), and no longer in
        the others."""
        wanted = self.subscriptions if self.shows_canvases else set()
        for uri in [uri for uri in self.canvas_views if uri not in wanted]:
            self.canvas_views.pop(uri)()
        for uri in wanted - self.canvas_views.keys():
            detach = attach(uri)
            if detach is not None:
                self.canvas_views[uri] = detach

    def send(self, method: str, params: Any, *, urgent: bool = True) -> None:
        """Send a notification now, or after the answer being written (see :meth:`hold`);
        one that is not ``urgent`` makes no write of its own
        (:meth:`~extension_protocol.connection.Connection.notify_later`).

        Raises:
            ConnectionClosed: the connection has ended, or ends now: the client stopped reading,
                or the notification is larger or deeper than its connection carries (the client
                is dropped, saying why on the server's stderr: its state would stay behind).
        """
        if self.held is not None:
            self.held.append((method, params, urgent))
            return
        self._notify(method, params, urgent)

    def encode(self, method: str, params: Any) -> bytes:
        """A notification encoded for :meth:`send_encoded` to this client, or to any other whose
        connection has the same ``outbound_encoding``.

        Raises:
            ConnectionClosed: it is larger or deeper than the connection carries: the client is
                dropped, as :meth:`send` drops it.
        """
        try:
            return self.connection.encode_notification(method, params)
        except ValueError as exc:  # MessageTooLarge, MessageTooDeep
            raise self._drop(method, exc) from None

    def send_encoded(self, frames: bytes, *, urgent: bool = True) -> None:
        """Send notifications made by :meth:`encode` (joined: they go in one write), as
        :meth:`send` sends one.

        Raises:
            ConnectionClosed: the connection has ended, or ends now (it stopped reading).
        """
        if self.held is not None:
            self.held.append((None, frames, urgent))
            return
        self.connection.notify_encoded(frames, urgent=urgent)

    def _notify(self, method: str | None, params: Any, urgent: bool) -> None:
        if method is None:
            self.connection.notify_encoded(params, urgent=urgent)
            return
        try:
            if urgent:
                self.connection.notify(method, params)
            else:
                self.connection.notify_later(method, params)
        except ValueError as exc:  # MessageTooLarge, MessageTooDeep
            raise self._drop(method, exc) from None

    def _drop(self, method: str, exc: ValueError) -> ConnectionClosed:
        reason = f"the {method} notification could not be sent: {exc}"
        print(f"extensions serve: dropped client {self.client_id}: {reason}", file=sys.stderr, flush=True)
        self.connection.close(reason)
        return ConnectionClosed(reason)

    def hold(self) -> None:
        """Keep notifications back until the answer the current command is about to send
        has been written: the connection writes it at the loop's next turn, so they follow
        two turns later."""
        if self.held is not None:
            return
        self.held = []
        loop = asyncio.get_running_loop()
        loop.call_soon(loop.call_soon, self._release)

    def _release(self) -> None:
        held, self.held = self.held or [], None
        for method, params, urgent in held:
            try:
                self._notify(method, params, urgent)
            except ConnectionClosed:
                return  # the rest cannot follow what is missing


CommandHandler = Callable[[Client, Any], Awaitable[Any]]
"""A command: the client that sent it and its params → the result (or a ``ServeError``)."""
