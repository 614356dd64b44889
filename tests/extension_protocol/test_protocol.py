"""Unit tests for extension_protocol.protocol: error codes, method names and hook wire names."""

from __future__ import annotations

import pytest

from extension_protocol import protocol
from extension_protocol.protocol import (
    ENVIRONMENT_NOT_GRANTED,
    ERROR_CODES,
    HOOK_FAILED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LOG_LEVELS,
    METHOD_NOT_FOUND,
    NOT_SUPPORTED,
    PARSE_ERROR,
    PROTOCOL_VERSION,
    REQUEST_CANCELLED,
    RESULT_TYPES,
    TOO_MANY_CONNECTIONS,
    TOOL_REGISTRATION_FAILED,
    UNKNOWN_EXTENSION,
    camel_case,
    hook_name,
)
from helpers import REPO_ROOT

ALL_CODES = {
    "PARSE_ERROR": PARSE_ERROR,
    "INVALID_REQUEST": INVALID_REQUEST,
    "METHOD_NOT_FOUND": METHOD_NOT_FOUND,
    "INVALID_PARAMS": INVALID_PARAMS,
    "INTERNAL_ERROR": INTERNAL_ERROR,
    "TOOL_REGISTRATION_FAILED": TOOL_REGISTRATION_FAILED,
    "NOT_SUPPORTED": NOT_SUPPORTED,
    "HOOK_FAILED": HOOK_FAILED,
    "REQUEST_CANCELLED": REQUEST_CANCELLED,
    "UNKNOWN_EXTENSION": UNKNOWN_EXTENSION,
    "TOO_MANY_CONNECTIONS": TOO_MANY_CONNECTIONS,
    "ENVIRONMENT_NOT_GRANTED": ENVIRONMENT_NOT_GRANTED,
}


def test_error_code_constants_are_all_distinct() -> None:
    """No two error constants share a number."""
    assert len(set(ALL_CODES.values())) == len(ALL_CODES)


def test_every_error_code_constant_is_named_in_error_codes_and_nothing_else_is() -> None:
    """ERROR_CODES has exactly one non-empty short name per error constant."""
    assert set(ERROR_CODES) == set(ALL_CODES.values())
    assert all(isinstance(name, str) and name for name in ERROR_CODES.values())
    assert len(set(ERROR_CODES.values())) == len(ERROR_CODES)


def test_every_exported_integer_error_constant_is_in_the_known_list() -> None:
    """Any int constant exported besides PROTOCOL_VERSION is one of the error codes checked here."""
    exported_ints = {
        name: getattr(protocol, name)
        for name in protocol.__all__
        if isinstance(getattr(protocol, name), int) and name != "PROTOCOL_VERSION"
    }
    assert exported_ints == ALL_CODES


def test_standard_json_rpc_codes_have_the_standard_values() -> None:
    """The five JSON-RPC 2.0 codes are the numbers the specification gives."""
    assert (PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR) == (
        -32700,
        -32600,
        -32601,
        -32602,
        -32603,
    )


def test_project_error_codes_are_in_the_server_error_range() -> None:
    """Custom codes lie in the implementation-defined -32000..-32099 range."""
    for code in (
        TOOL_REGISTRATION_FAILED,
        NOT_SUPPORTED,
        HOOK_FAILED,
        UNKNOWN_EXTENSION,
        TOO_MANY_CONNECTIONS,
        ENVIRONMENT_NOT_GRANTED,
    ):
        assert -32099 <= code <= -32000


def test_method_names_are_distinct() -> None:
    """Each METHOD_* constant names a different method."""
    methods = [
        value
        for name in protocol.__all__
        if name.startswith("METHOD_") and isinstance(value := getattr(protocol, name), str)
    ]
    assert len(methods) == 15
    assert len(set(methods)) == len(methods)
    assert protocol.METHOD_HANDLE_PENDING_TOOL_CALL == "session.tools.handlePendingToolCall"


def test_protocol_version_result_types_and_log_levels() -> None:
    """The protocol is version 3 with five result types and three log levels."""
    assert PROTOCOL_VERSION == 3
    assert RESULT_TYPES == ("success", "failure", "rejected", "denied", "timeout")
    assert LOG_LEVELS == ("info", "warning", "error")


@pytest.mark.parametrize(
    ("snake", "camel"),
    [("on_pre_tool_use", "onPreToolUse"), ("text_result_for_llm", "textResultForLlm"), ("cwd", "cwd")],
)
def test_camel_case_joins_snake_case_words(snake: str, camel: str) -> None:
    """camel_case lowercases nothing and capitalises every word after the first."""
    assert camel_case(snake) == camel


@pytest.mark.parametrize("alias", ["on_session_end", "onSessionEnd", "sessionEnd"])
def test_hook_name_maps_every_spelling_to_the_python_name(alias: str) -> None:
    """Python, Copilot and wire spellings all resolve to on_session_end."""
    assert hook_name(alias) == "on_session_end"


def test_hook_name_of_an_unknown_spelling_is_none() -> None:
    """Names that are no hook give None."""
    assert hook_name("on_session_ending") is None
    assert hook_name("SessionEnd") is None


def test_the_result_types_are_spelled_out_in_one_place_only() -> None:
    """Every other module names ``ResultType``; a second list of the five would drift."""
    spelled = '"success", "failure", "rejected", "denied", "timeout"'
    found = [
        str(path.relative_to(REPO_ROOT))
        for package in ("extension_host", "extension_protocol", "sdk_extension")
        for path in (REPO_ROOT / package).rglob("*.py")
        if spelled in path.read_text(encoding="utf-8")
    ]
    assert found == ["extension_protocol/protocol.py"]
    assert protocol.RESULT_TYPES == ("success", "failure", "rejected", "denied", "timeout")
