"""Reading the session's events from an extension: ``session.event_log`` (the JS SDK's
``session.rpc.eventLog``).

::

    page = session.event_log.read(max=100)
    while page.has_more:
        page = session.event_log.read(page.cursor, max=100)
    newer = session.event_log.read(session.event_log.tail(), wait=10)  # waits up to 10 s

Each read is one ``session.eventLog.read`` request; the host owns cursors, paging, the byte
budget per page and the wait (see ``docs/protocol.md``). This module shapes params and
answers; it keeps no state of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from extension_protocol.protocol import RPC_EVENT_LOG_READ, RPC_EVENT_LOG_TAIL

__all__ = ["EventLogReader", "EventPage"]


@dataclass(frozen=True, slots=True)
class EventPage:
    """One page of events, oldest first, and where the next read in its direction starts."""

    events: list[dict[str, Any]]
    cursor: str
    """Pass back to :meth:`EventLogReader.read` to go on."""
    has_more: bool
    """More events lie in the read's direction (a page may hold fewer than ``max``)."""
    expired: bool
    """The cursor's position was gone (an earlier session's, or forgotten): the page starts over
    at the oldest event still readable."""


class SessionRpc(Protocol):
    """What the reader uses of a :class:`~sdk_extension.session.Session`: its session-scoped calls."""

    async def rpc_async(self, method: str, params: Mapping[str, Any] | None = None) -> Any: ...

    def rpc(self, method: str, params: Mapping[str, Any] | None = None) -> Any: ...


class EventLogReader:
    """The session's event log, read by cursor (``session.event_log``)."""

    def __init__(self, session: SessionRpc) -> None:
        self._session = session

    async def read_async(
        self,
        cursor: str | None = None,
        *,
        max: int | None = None,
        wait: float = 0,
        types: Sequence[str] | None = None,
        backward: bool = False,
        include_ephemeral: bool = True,
    ) -> EventPage:
        """One page from ``cursor`` (``None``: the start; backward: the newest).

        Args:
            max: events at most (1–1000; the host's default is 200).
            wait: seconds to wait for new events when the cursor is at the end (up to 30).
            types: only these event types.
            backward: newest first, page by page toward the oldest (each page oldest first).
            include_ephemeral: with ``wait``, also live events that are never persisted.

        Raises:
            SessionRpcError: the host refused the read (a cursor it did not give, a bad ``max``).
        """
        params = _params(cursor, max, wait, types, backward, include_ephemeral)
        return _page(await self._session.rpc_async(RPC_EVENT_LOG_READ, params))

    def read(
        self,
        cursor: str | None = None,
        *,
        max: int | None = None,
        wait: float = 0,
        types: Sequence[str] | None = None,
        backward: bool = False,
        include_ephemeral: bool = True,
    ) -> EventPage:
        """Blocking form of :meth:`read_async` (not for use inside async handlers)."""
        return _page(
            self._session.rpc(RPC_EVENT_LOG_READ, _params(cursor, max, wait, types, backward, include_ephemeral))
        )

    async def tail_async(self) -> str:
        """A cursor at the current end of the log: reading from it gives only later events."""
        answer = await self._session.rpc_async(RPC_EVENT_LOG_TAIL)
        return str(answer["cursor"])

    def tail(self) -> str:
        """Blocking form of :meth:`tail_async` (not for use inside async handlers)."""
        return str(self._session.rpc(RPC_EVENT_LOG_TAIL)["cursor"])


def _params(
    cursor: str | None, max: int | None, wait: float, types: Sequence[str] | None, backward: bool, ephemeral: bool
) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if cursor is not None:
        params["cursor"] = cursor
    if max is not None:
        params["max"] = max
    if wait > 0:
        params["waitMs"] = round(wait * 1000)
    if types is not None:
        params["types"] = list(types)
    if backward:
        params["direction"] = "backward"
    if not ephemeral:
        params["includeEphemeral"] = False
    return params


def _page(answer: Any) -> EventPage:
    return EventPage(
        events=list(answer["events"]),
        cursor=str(answer["cursor"]),
        has_more=bool(answer["hasMore"]),
        expired=answer.get("cursorStatus") == "expired",
    )
