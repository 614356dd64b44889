"""Each protocol surface is one table: every method name is written once in the packages, and
every error code is a row of its protocol's table, with unique codes and names, inside the range
the table declares but for the exceptions it documents."""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from types import ModuleType

import pytest

from extension_host.control.methods import CONTROL_METHODS
from extension_host.runtime.session_rpc import (
    METHOD_ALIASES,
    SESSION_RPC_METHODS,
    UNSUPPORTED_SESSION_METHODS,
)
from extension_host.serve import errors as serve_errors
from extension_host.serve.errors import SERVE_ERRORS
from extension_protocol import error_codes, protocol
from extension_protocol.error_codes import (
    ERROR_CODES,
    JSON_RPC_ERRORS,
    REQUEST_CANCELLED,
    SERVER_ERROR_RANGE,
    WIRE_ERRORS,
    ErrorCode,
)
from helpers import REPO_ROOT

_PACKAGES = ("extension_host", "extension_protocol", "sdk_extension")

_JSON_RPC_CODES = {-32700, -32600, -32601, -32602, -32603}
"""The codes JSON-RPC 2.0 itself defines."""

_TABLE_MODULES = ("extension_protocol/error_codes.py", "extension_host/serve/errors.py")
"""Where error codes are numbers: the one module of each protocol's table."""

_ALSO_EVENT_TYPES = {"session.resume"}
"""Method names that also name a session event (written where the event is meant)."""


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for package in _PACKAGES:
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            yield path.relative_to(REPO_ROOT).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def _docstrings(tree: ast.Module) -> set[int]:
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef))]
    return {
        id(node.body[0].value)
        for node in nodes
        if node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }


def _strings(tree: ast.Module) -> Iterator[ast.Constant]:
    """Every string literal of a module but its docstrings (a string attribute's docstring too)."""
    skip = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            yield node


def _wire_method_names() -> set[str]:
    values = (getattr(protocol, name) for name in protocol.__all__ if name.startswith(("METHOD_", "RPC_")))
    names = {value for value in values if isinstance(value, str)}  # METHOD_NOT_FOUND is an error code
    return names | set(CONTROL_METHODS) | set(METHOD_ALIASES) | set(UNSUPPORTED_SESSION_METHODS)


@pytest.mark.slow
def test_every_method_name_is_written_once_in_the_packages() -> None:
    """A method's name is a string in one place, its table (the protocol's constants, the control
    socket's table, the session-rpc table's aliases and refusals); everyone else imports it."""
    names = _wire_method_names()
    places: dict[str, list[str]] = defaultdict(list)
    for path, tree in _modules():
        for node in _strings(tree):
            if node.value in names:
                places[node.value].append(f"{path}:{node.lineno}")
    copies = {name: where for name, where in places.items() if len(where) > 1 and name not in _ALSO_EVENT_TYPES}
    assert copies == {}, "import the name from its table instead"
    assert set(places) == names


def test_the_host_answers_every_session_rpc_name_of_the_protocol_and_no_other() -> None:
    """The SDK calls the protocol's ``RPC_*`` names; the host's table has a row for each."""
    named = {getattr(protocol, name) for name in protocol.__all__ if name.startswith("RPC_")}
    assert set(SESSION_RPC_METHODS) == named
    assert all(name == method.name for name, method in SESSION_RPC_METHODS.items())
    assert set(METHOD_ALIASES).isdisjoint(named | set(UNSUPPORTED_SESSION_METHODS))


def _check_table(table: tuple[ErrorCode, ...]) -> None:
    codes = [error.code for error in table]
    names = [error.name for error in table]
    assert len(set(codes)) == len(codes), codes
    assert len(set(names)) == len(names), names
    for error in table:
        assert error.name and error.meaning, error
        if error.origin == "JSON-RPC":
            assert error.code in _JSON_RPC_CODES, error
        elif error.origin == "this protocol":
            assert error.code in SERVER_ERROR_RANGE, error
    assert table[: len(JSON_RPC_ERRORS)] == JSON_RPC_ERRORS


def test_each_error_table_has_each_code_and_name_once_and_json_rpc_s_codes_as_json_rpc_numbers_them() -> None:
    assert {error.code for error in JSON_RPC_ERRORS} == _JSON_RPC_CODES
    _check_table(WIRE_ERRORS)
    _check_table(SERVE_ERRORS)


def test_the_project_s_codes_lie_in_the_server_error_range_but_for_lsp_s_cancelled_request() -> None:
    assert (SERVER_ERROR_RANGE[0], SERVER_ERROR_RANGE[-1]) == (-32099, -32000)
    outside = [error for error in WIRE_ERRORS if error.origin != "JSON-RPC" and error.code not in SERVER_ERROR_RANGE]
    assert [(error.code, error.origin) for error in outside] == [(REQUEST_CANCELLED, "LSP")]
    assert REQUEST_CANCELLED == -32800  # LSP's RequestCancelled, which peers that speak LSP know
    assert all(error.code in SERVER_ERROR_RANGE for error in SERVE_ERRORS if error.origin != "JSON-RPC")


def _code_constants(module: ModuleType) -> dict[str, int]:
    return {
        name: value
        for name, value in vars(module).items()
        if name.isupper() and isinstance(value, int) and not isinstance(value, bool)
    }


def test_every_code_constant_has_its_row_named_after_it() -> None:
    """``HOOK_FAILED`` is the row "hook failed"; the client protocol's ``NOT_FOUND`` is its ``NotFound``."""
    wire = {error.code: error.name for error in WIRE_ERRORS}
    constants = _code_constants(error_codes)
    assert sorted(constants.values()) == sorted(wire)
    assert {name.lower().replace("_", " "): code for name, code in constants.items()} == {
        name: code for code, name in wire.items()
    }
    assert wire == ERROR_CODES
    serve = {error.code: error.name for error in SERVE_ERRORS if error.origin != "JSON-RPC"}
    constants = _code_constants(serve_errors)
    assert {name.title().replace("_", ""): code for name, code in constants.items()} == {
        name: code for code, name in serve.items()
    }


def _int_literals(tree: ast.Module) -> Iterator[tuple[int, int]]:
    """(value, line) of every integer literal, a negative one as a whole."""
    negated = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            negated.add(id(node.operand))
            if isinstance(node.operand.value, int):
                yield -node.operand.value, node.lineno
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and type(node.value) is int and id(node) not in negated:
            yield node.value, node.lineno


@pytest.mark.slow
def test_error_codes_are_numbers_only_in_their_tables() -> None:
    """Anything that answers with an error code imports it: a number in JSON-RPC's reserved range
    (-32768..-32000) outside the tables' modules would be a code no table lists; in them, each
    number is a constant with its row (the test above)."""
    stray = [
        f"{path}:{line}: {value}"
        for path, tree in _modules()
        if path not in _TABLE_MODULES
        for value, line in _int_literals(tree)
        if -32768 <= value <= -32000
    ]
    assert stray == []
