"""The comparison of two checkouts' figures (bench.comparison): which way each figure improves,
the per-round ratios, the WORSE/better verdicts, matching figures across versions of the bench,
and the table."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from bench.comparison import MIN_ROUNDS, THRESHOLD, Comparison, compare_scenario, higher_is_better, table


def fig(key: str | None, label: str, median: float, unit: str = "µs", op: str | None = None) -> dict[str, Any]:
    """A figure as ``python -m bench --json`` writes it (an older bench may write no key)."""
    data: dict[str, Any] = {"label": label, "unit": unit, "median": median, "min": median, "max": median, "runs": 3}
    data["target"] = None if op is None else {"op": op, "value": 1.0}
    if key is not None:
        data["key"] = key
    return data


def comparison(old: list[float], new: list[float], *, higher: bool = False) -> Comparison:
    return Comparison("s.k", "k", "calls/s" if higher else "µs", higher, tuple(old), tuple(new))


@pytest.mark.parametrize(
    ("unit", "label", "op", "higher"),
    [
        ("µs", "host.call_tool, sequential", None, False),
        ("MiB", "idle extension, PSS", None, False),
        ("x", "  host.call_tool / floor", "<=", False),
        ("x", "  MCP / host.call_tool (host is N× faster)", ">=", True),
        ("calls/s", "host.call_tool, 8 in flight", ">=", True),
        ("calls/s", "floor, 8 in flight", None, True),
        ("events/s", "EventLog.emit, small events", None, True),
        ("x", "  host / floor calls/s", None, True),
        ("x", "  persisted / not persisted events/s", None, True),
        ("x", "  MCP / extensions", None, True),
        ("x", "  extension / bare child, PSS", None, False),
        ("ms", "hot reload", "<", False),
        ("calls/s", "a rate with an upper bound", "<=", False),
    ],
)
def test_which_way_a_figure_improves_follows_its_target_then_its_unit_then_its_label(
    unit: str, label: str, op: str | None, higher: bool
) -> None:
    assert higher_is_better(unit, label, op) is higher


def test_a_time_worse_by_more_than_the_threshold_in_every_round_is_flagged_worse() -> None:
    assert comparison([100, 100, 100], [110, 106, 120]).verdict == "WORSE"


def test_a_time_whose_spread_reaches_back_within_the_threshold_is_not_flagged() -> None:
    assert comparison([100, 100, 100], [110, 104, 120]).verdict == ""


def test_a_rate_that_fell_in_every_round_is_worse_and_one_that_rose_is_better() -> None:
    assert comparison([1000, 1000], [900, 940], higher=True).verdict == "WORSE"
    assert comparison([1000, 1000], [1100, 1060], higher=True).verdict == "better"
    assert comparison([100, 100], [90, 94]).verdict == "better"


def test_a_single_round_gives_a_ratio_but_no_verdict() -> None:
    single = comparison([100], [200])
    assert single.ratios == (2.0,)
    assert single.verdict == ""
    assert MIN_ROUNDS == 2


def test_a_figure_with_a_value_that_is_not_positive_gets_no_ratio_and_no_verdict() -> None:
    difference = comparison([0.5, -0.2, 0.4], [3.0, 2.0, 4.0])
    assert difference.ratios is None
    assert difference.verdict == ""
    assert difference.as_json()["ratio"] is None


def test_each_ratio_is_taken_within_its_round_never_across_rounds() -> None:
    # Round 1 slow on both sides, round 2 fast on both: per round nothing changed.
    steady = comparison([200, 100], [210, 105])
    assert steady.ratios == pytest.approx((1.05, 1.05))
    data = steady.as_json()
    assert data["old"] == {"median": 150, "min": 100, "max": 200, "values": [200, 100]}
    assert data["ratio"]["median"] == pytest.approx(1.05)
    assert data["better"] == "lower"


positive = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)
factor = st.floats(min_value=0.25, max_value=4.0, allow_nan=False, allow_infinity=False)


def clear_of_the_threshold(factors: list[float]) -> bool:
    """No factor so close to the threshold that rounding could put its ratio on either side."""
    return all(abs(abs(math.log(f)) - math.log(THRESHOLD)) > 1e-6 for f in factors)


@given(
    old=st.lists(positive, min_size=MIN_ROUNDS, max_size=7),
    factors=st.lists(factor, min_size=7, max_size=7),
    higher=st.booleans(),
)
def test_a_figure_is_worse_exactly_when_every_round_is_beyond_the_threshold_the_bad_way(
    old: list[float], factors: list[float], higher: bool
) -> None:
    factors = factors[: len(old)]
    assume(clear_of_the_threshold(factors))
    compared = comparison(old, [value * f for value, f in zip(old, factors, strict=True)], higher=higher)
    grew, shrank = all(f > THRESHOLD for f in factors), all(f < 1 / THRESHOLD for f in factors)
    if higher:
        grew, shrank = shrank, grew
    assert compared.verdict == ("WORSE" if grew else "better" if shrank else "")


@given(old=st.lists(positive, min_size=MIN_ROUNDS, max_size=7), factors=st.lists(factor, min_size=7, max_size=7))
def test_swapping_the_sides_turns_worse_into_better_and_back(old: list[float], factors: list[float]) -> None:
    factors = factors[: len(old)]
    assume(clear_of_the_threshold(factors))
    new = [value * f for value, f in zip(old, factors, strict=True)]
    forward, backward = comparison(old, new), comparison(new, old)
    mirrored = {"WORSE": "better", "better": "WORSE", "": ""}
    assert backward.verdict == mirrored[forward.verdict]


def test_figures_are_matched_by_key_whatever_their_order_or_label() -> None:
    old = [[fig("s.a", "a", 100), fig("s.b", "old wording", 10)]]
    new = [[fig("s.b", "new wording", 20), fig("s.a", "a", 100)]]
    compared, notes = compare_scenario(old, new)
    assert [(c.key, c.label, c.old, c.new) for c in compared] == [
        ("s.b", "new wording", (10.0,), (20.0,)),
        ("s.a", "a", (100.0,), (100.0,)),
    ]
    assert notes == []


def test_figures_of_a_bench_without_keys_are_matched_by_label_repeated_labels_in_order() -> None:
    old = [[fig(None, "  p99 of those calls", 1), fig(None, "x", 5), fig(None, "  p99 of those calls", 2)]]
    new = [[fig(None, "  p99 of those calls", 3), fig(None, "x", 5), fig(None, "  p99 of those calls", 4)]]
    compared, _ = compare_scenario(old, new)
    assert [(c.old, c.new) for c in compared] == [((1.0,), (3.0,)), ((5.0,), (5.0,)), ((2.0,), (4.0,))]


def test_figures_on_one_side_only_or_missing_from_a_round_are_named_not_compared() -> None:
    old = [[fig("s.a", "a", 1), fig("s.gone", "gone", 1)], [fig("s.a", "a", 1), fig("s.gone", "gone", 1)]]
    new = [
        [fig("s.a", "a", 1), fig("s.added", "added", 1), fig("s.flaky", "flaky", 1)],
        [fig("s.a", "a", 1), fig("s.added", "added", 1)],
    ]
    old[0].append(fig("s.flaky", "flaky", 1))
    compared, notes = compare_scenario(old, new)
    assert [c.key for c in compared] == ["s.a"]
    assert notes == [
        "only in the new checkout: added",
        "only in the baseline: gone",
        "missing from some rounds, not compared: flaky",
    ]


def test_the_direction_of_a_figure_comes_from_the_baselines_target_when_the_new_one_has_none() -> None:
    old = [[fig("s.r", "  ratio", 2, unit="x", op=">=")]]
    new = [[fig("s.r", "  ratio", 3, unit="x")]]
    compared, _ = compare_scenario(old, new)
    assert compared[0].higher_is_better


def test_rounds_of_the_two_sides_must_pair_up() -> None:
    with pytest.raises(ValueError, match="rounds"):
        compare_scenario([[fig("s.a", "a", 1)]], [])


def test_the_table_has_a_line_per_figure_with_its_verdict_and_a_line_per_failure() -> None:
    results = {
        "round_trip": (
            [comparison([100, 100], [120, 130]), comparison([100, 100], [101, 99])],
            ["new: a note"],
        )
    }
    text = table(results, {"hooks": "on the old side, 55ad3fc: exited with 1"})
    lines = text.splitlines()
    assert lines[1] == "[round_trip]"
    assert lines[2].startswith("k ") and lines[2].endswith("WORSE") and "1.25x (1.20–1.30)" in lines[2]
    assert lines[3].endswith("lower") and "1.00x (0.99–1.01)" in lines[3]
    assert lines[4] == "  (new: a note)"
    assert lines[5] == "[hooks] FAILED: on the old side, 55ad3fc: exited with 1"
