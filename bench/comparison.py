"""Figures of two checkouts' runs side by side: new/old per round, its spread, and a verdict.

Input is what ``python -m bench --json`` wrote, one file per side, round and scenario (any
version of the bench: a figure is matched by its ``key``, or by its label where an older bench
wrote none). Each round gives one value per side for a figure (the median that run reported);
the comparison of a figure is the median of each side's values and the median, min and max of
the per-round ratios new/old (never a ratio across rounds).

Which way is better:

1. a figure with a target: its operator (``<=``/``<`` lower, ``>=``/``>`` higher);
2. else a rate (``calls/s``, ``events/s``): higher;
3. else a ratio (``x``) whose label names a rate (``host / floor calls/s``), or whose label
   starts with ``MCP`` (the MCP SDK over the host: "the host is N× faster"): higher;
4. everything else (times, memory, other ratios): lower.

The verdict, given from two rounds on (one round has no spread to judge by): a figure is
``WORSE`` when every round's ratio is more than 5 % the bad way (lower is better: min ratio >
1.05; higher is better: max ratio < 1/1.05), so that the whole spread lies beyond the
threshold; ``better`` when every round's ratio is as far the good way; nothing otherwise. A
ratio is only taken of positive values: a figure with a zero or negative value (a difference
of two timings) gets none, and no verdict. Nothing here runs anything.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from .stats import readable

__all__ = [
    "MIN_ROUNDS",
    "THRESHOLD",
    "Comparison",
    "Verdict",
    "compare_scenario",
    "higher_is_better",
    "table",
]

THRESHOLD: Final = 1.05
"""A figure is flagged when all its per-round ratios are beyond this factor (or its inverse)."""

MIN_ROUNDS: Final = 2
"""Rounds a verdict needs."""

_RATES: Final = ("calls/s", "events/s")
_HIGHER_OPS: Final = frozenset({">=", ">"})
_LOWER_OPS: Final = frozenset({"<=", "<"})

Verdict = Literal["WORSE", "better", ""]
"""What a comparison says of a figure (see the module)."""


def higher_is_better(unit: str, label: str, target_op: str | None) -> bool:
    """Which way a figure improves (rules 1-4 of the module)."""
    if target_op in _HIGHER_OPS:
        return True
    if target_op in _LOWER_OPS:
        return False
    if unit in _RATES:
        return True
    words = label.strip()
    return unit == "x" and (words.endswith(_RATES) or words.startswith("MCP"))


@dataclass(frozen=True, slots=True)
class Comparison:
    """One figure in both checkouts: each side's value per round, in round order."""

    key: str
    label: str
    unit: str
    higher_is_better: bool
    old: tuple[float, ...]
    new: tuple[float, ...]

    @property
    def ratios(self) -> tuple[float, ...] | None:
        """new/old of each round; ``None`` when a value is not positive."""
        if any(value <= 0 for value in self.old + self.new):
            return None
        return tuple(new / old for old, new in zip(self.old, self.new, strict=True))

    @property
    def verdict(self) -> Verdict:
        """``WORSE``, ``better`` or ``""`` (see the module)."""
        ratios = self.ratios
        if ratios is None or len(ratios) < MIN_ROUNDS:
            return ""
        # How many times worse each round is: > 1 is worse, whichever way the figure improves.
        worse_by = [1 / ratio if self.higher_is_better else ratio for ratio in ratios]
        if min(worse_by) > THRESHOLD:
            return "WORSE"
        if max(worse_by) < 1 / THRESHOLD:
            return "better"
        return ""

    def as_json(self) -> dict[str, Any]:
        """The comparison as plain data."""
        ratios = self.ratios
        return {
            "key": self.key,
            "label": self.label,
            "unit": self.unit,
            "better": "higher" if self.higher_is_better else "lower",
            "old": _summary(self.old),
            "new": _summary(self.new),
            "ratio": None if ratios is None else _summary(ratios),
            "verdict": self.verdict,
        }


def _summary(values: Sequence[float]) -> dict[str, Any]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "values": list(values)}


def _identities(figures: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Each figure under its key, or under its label (numbered if repeated) where it has none."""
    found: dict[str, Mapping[str, Any]] = {}
    for fig in figures:
        identity = fig.get("key") or f"label:{fig['label']}"
        numbered, count = identity, 1
        while numbered in found:
            count += 1
            numbered = f"{identity}#{count}"
        found[numbered] = fig
    return found


def _op(fig: Mapping[str, Any]) -> str | None:
    target = fig.get("target")
    return None if not target else str(target["op"])


def compare_scenario(
    old_rounds: Sequence[Sequence[Mapping[str, Any]]], new_rounds: Sequence[Sequence[Mapping[str, Any]]]
) -> tuple[list[Comparison], list[str]]:
    """The figures of one scenario, each side's figures given per round (as the bench's JSON
    lists them); with notes naming figures that are not in every round of both sides."""
    if len(old_rounds) != len(new_rounds):
        raise ValueError(f"{len(old_rounds)} rounds of the old side, {len(new_rounds)} of the new")
    old = [_identities(figures) for figures in old_rounds]
    new = [_identities(figures) for figures in new_rounds]
    if not new:
        return [], []
    comparisons: list[Comparison] = []
    partial: list[str] = []
    for identity, fig in new[0].items():
        if not all(identity in run for run in old + new):
            if any(identity in run for run in old):
                partial.append(fig["label"].strip())
            continue
        comparisons.append(
            Comparison(
                key=fig.get("key") or "",
                label=fig["label"],
                unit=fig["unit"],
                higher_is_better=higher_is_better(fig["unit"], fig["label"], _op(fig) or _op(old[0][identity])),
                old=tuple(float(run[identity]["median"]) for run in old),
                new=tuple(float(run[identity]["median"]) for run in new),
            )
        )
    notes = []
    only_new = [fig["label"].strip() for identity, fig in new[0].items() if all(identity not in run for run in old)]
    only_old = [fig["label"].strip() for identity, fig in old[0].items() if all(identity not in run for run in new)]
    if only_new:
        notes.append(f"only in the new checkout: {'; '.join(only_new)}")
    if only_old:
        notes.append(f"only in the baseline: {'; '.join(only_old)}")
    if partial:
        notes.append(f"missing from some rounds, not compared: {'; '.join(partial)}")
    return comparisons, notes


def _with_unit(value: float, unit: str) -> str:
    return f"{readable(value)}{unit}" if unit == "x" else f"{readable(value)} {unit}"


def _ratio(comparison: Comparison) -> str:
    ratios = comparison.ratios
    if ratios is None:
        return "n/a (a value ≤ 0)"
    spread = "" if len(ratios) == 1 else f" ({min(ratios):.2f}–{max(ratios):.2f})"
    return f"{statistics.median(ratios):.2f}x{spread}"


def table(
    results: Mapping[str, tuple[Sequence[Comparison], Sequence[str]]],
    errors: Mapping[str, str],
) -> str:
    """The report: per figure, each side's median, new/old with its min–max over rounds, which
    way is better and the verdict."""
    header = ("what", "old", "new", "new/old (min–max over rounds)", "better", "")
    rows: list[tuple[str, ...]] = []
    for comparisons, _notes in results.values():
        for c in comparisons:
            old, new = statistics.median(c.old), statistics.median(c.new)
            better = "higher" if c.higher_is_better else "lower"
            rows.append((c.label, _with_unit(old, c.unit), _with_unit(new, c.unit), _ratio(c), better, c.verdict))
    widths = [max(len(row[column]) for row in [header, *rows]) for column in range(5)]

    def line(row: tuple[str, ...]) -> str:
        cells = [f"{cell:<{widths[column]}}" for column, cell in enumerate(row[:5])]
        return "  ".join([*cells, row[5]]).rstrip()

    lines = [line(header)]
    figures = iter(rows)
    for name, (comparisons, notes) in results.items():
        lines.append(f"[{name}]")
        lines += [line(next(figures)) for _ in comparisons]
        lines += [f"  ({note})" for note in notes]
    lines += [f"[{name}] FAILED: {error}" for name, error in errors.items()]
    return "\n".join(lines)
