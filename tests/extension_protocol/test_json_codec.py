"""orjson and the standard library write the same messages and log lines (see ``json_codec``)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from extension_host.events import make_event
from extension_host.session.log import encode_event
from extension_protocol import json_codec
from extension_protocol.framing import FrameDecoder, encode_message

pytest.importorskip("orjson", reason="the fast extra (orjson) is not installed")
json_codec.use_orjson()

# Text with lone surrogates, integers beyond 64 bits, NaN and infinities: what orjson declines.
SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.characters(categories=["Cs"])
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@pytest.fixture
def standard_library(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Within the block, as without the fast extra."""
    with monkeypatch.context() as patch:
        patch.setattr(json_codec, "orjson", None)
        yield


def both(monkeypatch: pytest.MonkeyPatch, work: Any) -> tuple[Any, Any]:
    """``work()`` with orjson, then with the standard library alone."""
    fast = work()
    with monkeypatch.context() as patch:
        patch.setattr(json_codec, "orjson", None)
        return fast, work()


def has_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(has_float(item) for item in value.values())
    if isinstance(value, list):
        return any(has_float(item) for item in value)
    return False


@given(value=VALUES)
def test_a_message_is_the_same_with_either_library(value: Any) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, standard = both(monkeypatch, lambda: encode_message({"jsonrpc": "2.0", "method": "m", "params": value}))
    if has_float(value):  # the same numbers, perhaps written differently (1e16, 1e+16)
        assert FrameDecoder().feed(fast) == FrameDecoder().feed(standard)
    else:
        assert fast == standard


@pytest.mark.slow
@given(value=VALUES)
def test_a_log_line_is_the_same_ascii_with_either_library(value: Any) -> None:
    event = make_event("tool.execution_complete", {"result": value})
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, standard = both(monkeypatch, lambda: encode_event(event))
    assert fast.isascii() and standard.isascii()
    if has_float(value):
        assert json.loads(fast) == json.loads(standard)
    else:
        assert fast == standard


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
@pytest.mark.usefixtures("standard_library")
def test_a_nan_or_infinity_goes_out_as_null_without_the_fast_extra_too(number: float) -> None:
    (message,) = FrameDecoder().feed(encode_message({"jsonrpc": "2.0", "method": "m", "params": [number]}))
    assert message["params"] == [None]
    assert json.loads(encode_event(make_event("x", {"n": number})))["data"] == {"n": None}


@pytest.mark.parametrize("params", [object(), {1j: 2}], ids=["an object", "a complex key"])
def test_what_no_json_can_hold_is_refused_with_either_library(params: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(TypeError):
        encode_message({"params": params})
    monkeypatch.setattr(json_codec, "orjson", None)
    with pytest.raises(TypeError):
        encode_message({"params": params})


def test_the_backend_is_named() -> None:
    assert json_codec.use_orjson() and json_codec.backend() == "orjson"
