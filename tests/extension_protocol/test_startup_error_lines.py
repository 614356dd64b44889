"""The line the SDK's launcher leaves in the log when an extension file cannot start."""

from __future__ import annotations

import json

import pytest

from extension_protocol.startup_errors import (
    STARTUP_ERROR_PREFIX,
    StartupError,
    read_startup_error,
    startup_error_line,
)


def test_a_syntax_error_is_read_back_with_its_place_and_its_source_line() -> None:
    """File, line, column, the end of the marked span and the line itself survive the log."""
    with pytest.raises(SyntaxError) as raised:
        compile("x = 1\n    y = (1 +\n", "/p/extension.py", "exec")
    line = startup_error_line(raised.value)
    assert line is not None and "\n" not in line
    error = read_startup_error(line)
    assert error is not None
    assert (error.exception, error.file, error.line) == (type(raised.value).__name__, "/p/extension.py", 2)
    assert error.column == raised.value.offset and error.text == "    y = (1 +"


def test_a_missing_module_is_read_back_with_its_name() -> None:
    """A ModuleNotFoundError keeps the dotted name Python could not find."""
    with pytest.raises(ModuleNotFoundError) as raised:
        __import__("no_such_module_for_this_test.sub")
    error = read_startup_error(startup_error_line(raised.value) or "")
    assert error == StartupError(
        "ModuleNotFoundError", "No module named 'no_such_module_for_this_test'", module="no_such_module_for_this_test"
    )


def test_other_exceptions_leave_no_line() -> None:
    """Only syntax and import errors are said this way; a crash keeps its traceback alone."""
    assert startup_error_line(ValueError("boom")) is None


@pytest.mark.parametrize(
    "line",
    [
        "SyntaxError: expected ':'",
        STARTUP_ERROR_PREFIX + "{not json",
        STARTUP_ERROR_PREFIX + "[1, 2]",
        STARTUP_ERROR_PREFIX + json.dumps({"exception": 1, "message": "m"}),
        STARTUP_ERROR_PREFIX + json.dumps({"message": "m"}),
    ],
)
def test_a_line_that_is_not_a_well_formed_record_reads_as_none(line: str) -> None:
    """What an extension writes is its own: a malformed record is ignored, not trusted."""
    assert read_startup_error(line) is None


def test_fields_of_the_wrong_type_are_dropped_and_long_text_is_cut() -> None:
    """A bad line number or a megabyte of text cannot reach the host's messages."""
    record = {"exception": "SyntaxError", "message": "m" * 10_000, "line": "2", "column": True, "text": ["x"]}
    error = read_startup_error(STARTUP_ERROR_PREFIX + json.dumps(record))
    assert error is not None
    assert (error.line, error.column, error.text) == (None, None, None)
    assert len(error.message) == 500
