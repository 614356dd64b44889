"""extension_protocol.nesting: how deeply JSON from elsewhere may nest, checked without recursion."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extension_protocol.nesting import MAX_DEPTH, TooDeep, check_depth, loads, nests_deeper


def depth_of(value: Any) -> int:
    """The nesting of a (shallow) JSON value, the obvious recursive way: the reference."""
    if isinstance(value, dict):
        return 1 + max((depth_of(child) for child in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth_of(child) for child in value), default=0)
    return 0


_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet="[]{}ab", max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet="[{a", max_size=3), inner, max_size=3),
    max_leaves=40,
)


@pytest.mark.slow
@settings(max_examples=500, deadline=None, database=None)
@given(value=_values, limit=st.integers(0, 12))
def test_a_value_is_refused_exactly_when_it_nests_deeper_than_the_limit(value: Any, limit: int) -> None:
    """Whatever the value and however many brackets its strings hold, the walk agrees with the
    recursive depth, and loads and check_depth refuse exactly what is deeper."""
    text = json.dumps(value)
    deeper = depth_of(value) > limit
    assert nests_deeper(value, limit) == deeper
    if deeper:
        with pytest.raises(TooDeep, match=f"^nested deeper than {limit} levels$"):
            loads(text, limit)
        with pytest.raises(TooDeep):
            check_depth(value, text.encode(), limit)
    else:
        assert loads(text.encode(), limit) == value
        check_depth(value, text, limit)


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000,
        "[" * 100_000 + "]" * 100_000,
        '{"a":' * 5_000 + "1" + "}" * 5_000,
        '{"a":' + "[" * 1_000 + "]" * 1_000 + "}",
    ],
    ids=["unterminated", "lists", "objects", "inside-an-object"],
)
def test_a_document_deeper_than_the_decoder_can_go_is_too_deep_never_a_recursion_error(text: str) -> None:
    with pytest.raises(TooDeep) as caught:
        loads(text)
    assert caught.value.limit == MAX_DEPTH
    with pytest.raises(TooDeep):
        loads(text.encode(), 5_000)


def test_what_is_not_json_is_a_value_error_that_says_so() -> None:
    for text in (b"{", b"\xff", b"1" * 5_000, b""):
        with pytest.raises(ValueError) as caught:
            loads(text)
        assert not isinstance(caught.value, TooDeep)


def test_the_limit_is_100_levels() -> None:
    assert MAX_DEPTH == 100
    assert loads("[" * 100 + "]" * 100) is not None
    with pytest.raises(TooDeep):
        loads("[" * 101 + "]" * 101)
