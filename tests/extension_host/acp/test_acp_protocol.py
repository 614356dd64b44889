"""The params of ACP's methods, checked at the boundary: whatever a client sends is either the
method's shape or one ``INVALID_PARAMS`` naming the member at fault."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extension_host.acp import protocol
from extension_host.acp.protocol import AGENT_METHODS, parse
from extension_host.acp.server import AcpOptions, AcpServer
from extension_host.acp.updates import UPDATES
from extension_protocol.connection import RpcError
from extension_protocol.protocol import INVALID_PARAMS
from helpers import doc_section

MODELS = (
    protocol.InitializeParams,
    protocol.NewSessionParams,
    protocol.LoadSessionParams,
    protocol.PromptParams,
    protocol.CancelParams,
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
shaped = st.fixed_dictionaries(
    {},
    optional={
        "protocolVersion": json_values,
        "sessionId": json_values | st.just("a-session"),
        "cwd": json_values | st.just("/tmp") | st.just("relative"),
        "mcpServers": json_values,
        "prompt": st.lists(
            st.fixed_dictionaries({"type": st.sampled_from(["text", "image", "resource_link", "resource", "x"])})
            | json_values,
            max_size=3,
        ),
    },
)


@settings(max_examples=300)
@given(st.sampled_from(MODELS), shaped | json_values)
def test_any_params_are_the_shape_or_one_invalid_params_error(model: Any, params: Any) -> None:
    try:
        parse(model, params, "m")
    except RpcError as exc:
        assert exc.code == INVALID_PARAMS
        assert exc.message.startswith("m: ")
        assert "\n" not in exc.message


def test_the_cwd_must_be_absolute_and_a_prompt_holds_at_least_one_block() -> None:
    with pytest.raises(RpcError, match="cwd: Value error, must be an absolute path"):
        parse(protocol.NewSessionParams, {"cwd": "src"}, "session/new")
    with pytest.raises(RpcError, match="prompt: List should have at least 1 item"):
        parse(protocol.PromptParams, {"sessionId": "s", "prompt": []}, "session/prompt")


def test_the_server_binds_every_method_of_the_table_and_no_other() -> None:
    async def no_agent() -> Any:
        raise AssertionError("no session is opened here")

    server = AcpServer(AcpOptions(no_agent))
    assert {*server.handlers, "session/cancel"} == set(AGENT_METHODS)
    assert [name for name, method in AGENT_METHODS.items() if method.notification] == ["session/cancel"]


def test_the_acp_page_lists_the_methods_and_updates_of_the_tables_and_no_other() -> None:
    methods = doc_section("acp.md", "## What it answers", "### What it sends")
    rows = [line.split("|")[1:3] for line in methods.splitlines() if line.startswith("| `")]
    assert {name.strip(" `"): does.strip() for name, does in rows} == {
        name: method.does for name, method in AGENT_METHODS.items()
    }
    sent = doc_section("acp.md", "### What it sends", "### What it does not do")
    events = [line.split("|")[1].strip(" `") for line in sent.splitlines() if line.startswith("| `")]
    assert events == list(UPDATES)
