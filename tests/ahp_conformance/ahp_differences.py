"""The reviewed table of how ``extensions serve`` may differ from ``copilot --ahp-host`` on the
AHP 1.0 wire, for the client script of :mod:`ahp_client`.

A :class:`~conformance.compare.Difference` the differential test observes is allowed only when an
entry of :data:`INTENDED` matches it: a difference by design, with its reason. Entries are the
extension conformance suite's :class:`~conformance.differences.Entry` (subject and key path by
glob; ``path=""`` is the subject as a whole, ``kind`` narrows it); the subject starts with the
step (``turn: action chat/toolCallStart``), so ``*: ...`` matches it in any step. An entry that
matches nothing in a run is stale and fails the test too, so the table says only what is true.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from conformance.compare import Difference
from conformance.differences import Entry

__all__ = ["INTENDED", "classify", "stale"]

INTENDED: Final[tuple[Entry, ...]] = ()
"""Differences by design (each with its reason)."""


def classify(difference: Difference, table: Iterable[Entry] = INTENDED) -> Entry | None:
    """The entry of ``table`` that allows ``difference``, or ``None``."""
    return next((entry for entry in table if entry.matches(difference, "", "")), None)


def stale(differences: Iterable[Difference], table: Iterable[Entry] = INTENDED) -> list[Entry]:
    """The entries of ``table`` that allow none of ``differences``."""
    found = list(differences)
    return [entry for entry in table if not any(entry.matches(d, "", "") for d in found)]
