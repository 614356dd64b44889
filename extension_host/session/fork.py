"""Forking a session at a turn: which of its events the fork holds, and in what chain.

A turn is one prompt's run, named by its user message: the message id ``send`` returned (the
``user.message``'s ``messageId``, or the event's ``id`` where it has none). Its response ends
with the last ``assistant.turn_end`` of the run (each agent step ends with one, the last step
being the answer; see :mod:`extension_host.session.turns`), or with the ``session.error`` that
ended it, whichever comes last before the next ``user.message``. What follows that event and
precedes the next prompt (a command, a warning) is not the turn's. A subagent's events
(``agentId``) belong to the turn whose ``task`` call ran them.

The fork holds every persisted event of the source up to and including that end, but the
source's own lifecycle (``session.start``, ``session.resume``, ``session.shutdown``): it begins
with its own ``session.start``, and each copied event keeps its id and is chained (``parentId``)
to the one before it in the fork. The published SDK's ``session.start`` has no field for where a
session was forked from; the fork's ``session.json`` records it (``forkedFrom``,
``forkedAtTurn``).

Both passes over the source are streamed (:func:`turn_end` finds the end, :func:`forked_events`
copies up to it), so a log of any size costs one event of memory. Folders and locks are
:mod:`extension_host.session.store`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Final

from extension_protocol.protocol import Event

__all__ = ["LIFECYCLE_TYPES", "TurnNotForkable", "forked_events", "turn_end"]

LIFECYCLE_TYPES: Final = frozenset({"session.start", "session.resume", "session.shutdown"})
"""The source's lifecycle events, which a fork does not copy (it has its own)."""
_RESPONSE_ENDS: Final = frozenset({"assistant.turn_end", "session.error"})


class TurnNotForkable(LookupError):
    """No turn of that id, or it has not ended; the message says which."""


def turn_end(events: Iterable[Event], turn_id: str) -> int:
    """The position (among ``events``) of the last event of turn ``turn_id``'s response.

    Raises:
        TurnNotForkable: no user message is named ``turn_id``, or its run has no end yet.
    """
    start: int | None = None
    end: int | None = None
    for index, event in enumerate(events):
        if event.get("agentId"):
            continue  # a subagent's child session runs inside a turn of the session's own
        kind = event["type"]
        if kind == "user.message":
            if start is not None:
                break  # the next prompt's run begins
            if _names(event, turn_id):
                start = index
        elif start is not None and kind in _RESPONSE_ENDS:
            end = index
    if start is None:
        raise TurnNotForkable(f"it has no turn {turn_id!r} (a turn is named by its user message's id)")
    if end is None:
        raise TurnNotForkable(f"turn {turn_id!r} has no response yet (it is still running, or was never answered)")
    return end


def forked_events(events: Iterable[Event], end: int, start: Event) -> Iterator[Event]:
    """``start`` (the fork's ``session.start``), then ``events`` up to position ``end``, the
    source's lifecycle left out, each chained to the one before."""
    yield start
    previous = start["id"]
    for index, event in enumerate(events):
        if index > end:
            return
        if event["type"] in LIFECYCLE_TYPES:
            continue
        copied: Event = {**event, "parentId": previous}
        previous = copied["id"]
        yield copied


def _names(event: Event, turn_id: str) -> bool:
    data = event["data"]
    return data.get("messageId") == turn_id or event["id"] == turn_id
