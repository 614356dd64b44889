"""AHP 1.0's params are checked at the boundary: whatever a client sends is either taken within
its bounds or refused as ``INVALID_PARAMS`` naming the method, never let through oversized."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from extension_host.serve.ahp1 import params as shapes
from extension_host.serve.params import MAX_TEXT_CHARS, MAX_URI_CHARS
from extension_host.validation import validate
from extension_protocol.connection import RpcError
from extension_protocol.protocol import INVALID_PARAMS

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)


def checked(shape: Any, params: Any, method: str = "initialize") -> dict[str, Any] | RpcError:
    try:
        result: dict[str, Any] = validate(method, shape, params)
    except RpcError as exc:
        assert exc.code == INVALID_PARAMS and method in exc.message
        return exc
    return result


@given(JSON)
def test_any_json_as_initialize_params_is_taken_only_with_the_root_channel_and_versions(params: Any) -> None:
    result = checked(shapes.InitializeParams, params)
    if isinstance(result, dict):
        assert result["channel"] == shapes.ROOT and result["protocolVersions"]


@given(st.integers(min_value=1, max_value=3 * MAX_URI_CHARS))
def test_a_channel_longer_than_the_bound_is_refused(length: int) -> None:
    result = checked(shapes.ChannelParams, {"channel": "a" * length}, "subscribe")
    assert isinstance(result, dict) == (length <= MAX_URI_CHARS)


@given(st.integers(min_value=MAX_TEXT_CHARS - 2, max_value=MAX_TEXT_CHARS + 2))
def test_a_prompt_past_the_bound_is_refused(length: int) -> None:
    action = {"type": "chat/turnStarted", "turnId": "t", "message": {"text": "x" * length}}
    result = checked(shapes.ChatTurnStarted, action, "dispatchAction")
    assert isinstance(result, dict) == (length <= MAX_TEXT_CHARS)


@given(JSON)
def test_any_json_as_a_dispatched_action_is_taken_only_with_its_channel_and_sequence(params: Any) -> None:
    result = checked(shapes.DispatchParams, params, "dispatchAction")
    if isinstance(result, dict):
        assert isinstance(result["channel"], str) and result["clientSeq"] >= 0
