"""A state folded from actions, with each run of text deltas folded in one step.

A reducer appends a delta's text to its part by making a new string, so a part streamed as N
deltas copies its text N times: O(N²) for the run, which a long answer (or a replay of
100,000 deltas) makes seconds. A :class:`DeltaFold` keeps the state and, while deltas to one
part follow each other, only collects their texts (an append each); the run goes into the
state as one delta carrying the joined text, when the state is next read or another action
comes. Folding a run of deltas of the same turn and part is folding one delta with their texts
joined, in both protocols' reducers (:func:`extension_host.serve.state.reduce`'s
``session/delta``, :func:`extension_host.serve.ahp1.state.reduce_chat`'s ``chat/delta``), so
the state read is the one the reducer would have made action by action: the same result, O(N)
in all.

This module knows deltas' ``turnId``, ``partId`` and ``content``; the reducer knows the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

__all__ = ["DeltaFold"]

State = dict[str, Any]
Action = dict[str, Any]


class DeltaFold:
    """A state folded by ``reduce``, deltas (actions of type ``delta``) folded a run at a time."""

    __slots__ = ("_delta", "_first", "_reduce", "_state", "_texts")

    def __init__(self, state: State, reduce: Callable[[State, Action], State], delta: str) -> None:
        self._state = state
        self._reduce: Final = reduce
        self._delta: Final = delta
        self._first: Action | None = None
        """The run's first delta (its turn and part are the run's), or ``None`` when no run is open."""
        self._texts: list[str] = []

    @property
    def state(self) -> State:
        """The state after every action given so far."""
        if self._first is not None:
            self._fold()
        return self._state

    @state.setter
    def state(self, state: State) -> None:
        self._first = None
        self._texts = []
        self._state = state

    def apply(self, action: Action) -> None:
        """Fold ``action`` in: a delta joins the run open (or opens one); any other action
        folds the run first."""
        first = self._first
        if action.get("type") == self._delta:
            if first is None:
                self._first = action
                self._texts = [str(action.get("content", ""))]
                return
            if action.get("partId") == first.get("partId") and action.get("turnId") == first.get("turnId"):
                self._texts.append(str(action.get("content", "")))
                return
            self._fold()
            self._first = action
            self._texts = [str(action.get("content", ""))]
            return
        if first is not None:
            self._fold()
        self._state = self._reduce(self._state, action)

    def _fold(self) -> None:
        first, texts = self._first, self._texts
        assert first is not None
        self._first, self._texts = None, []
        run = first if len(texts) == 1 else {**first, "content": "".join(texts)}
        self._state = self._reduce(self._state, run)
