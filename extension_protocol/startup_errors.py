"""Why a Python extension could not start, as one line of its log the host reads back.

The SDK's launcher writes :func:`startup_error_line` to stderr (the extension's log) when a
syntax error or a missing module stops the extension file, next to Python's own traceback; the
host finds the last such line of the run with :func:`read_startup_error` and builds the
extension's error from its fields (file, line and column, the source line, the missing module),
which the traceback gives only as text meant for people. The line is the extension's own word
about itself, so the host takes nothing from it but these fields, each checked for its type.

This module knows the line's shape; what the host says about it is the host's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["STARTUP_ERROR_PREFIX", "StartupError", "read_startup_error", "startup_error_line"]

STARTUP_ERROR_PREFIX: Final = "extension-host startup error: "
"""How the line begins; a JSON object follows."""

_MAX_TEXT: Final = 500
"""Longest message or source line kept (a minified file's line can be megabytes)."""


@dataclass(frozen=True, slots=True)
class StartupError:
    """What stopped an extension file: its exception's type and message, and for a syntax
    error where (``file``, 1-based ``line`` and ``column``, ``end_column`` after the last
    character marked, the source ``text``), for a missing module its ``module``."""

    exception: str
    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    end_column: int | None = None
    text: str | None = None
    module: str | None = None


def startup_error_line(exc: BaseException) -> str | None:
    """The log line for ``exc`` if it is a syntax error or an import error, else ``None``."""
    if isinstance(exc, SyntaxError):
        text = exc.text.rstrip("\r\n") if exc.text else None
        record: dict[str, Any] = {
            "exception": type(exc).__name__,
            "message": exc.msg,
            "file": exc.filename,
            "line": exc.lineno,
            "column": exc.offset,
            "end_column": exc.end_offset if exc.end_lineno == exc.lineno else None,
            "text": text[:_MAX_TEXT] if text is not None else None,
        }
    elif isinstance(exc, ImportError):
        record = {"exception": type(exc).__name__, "message": str(exc), "module": exc.name}
    else:
        return None
    return STARTUP_ERROR_PREFIX + json.dumps({key: value for key, value in record.items() if value is not None})


def read_startup_error(line: str) -> StartupError | None:
    """The :class:`StartupError` a log line holds, or ``None`` if it holds none (or a malformed one)."""
    if not line.startswith(STARTUP_ERROR_PREFIX):
        return None
    try:
        record = json.loads(line[len(STARTUP_ERROR_PREFIX) :])
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    exception, message = record.get("exception"), record.get("message")
    if not isinstance(exception, str) or not isinstance(message, str):
        return None
    return StartupError(
        exception[:_MAX_TEXT],
        message[:_MAX_TEXT],
        file=_text(record.get("file")),
        line=_number(record.get("line")),
        column=_number(record.get("column")),
        end_column=_number(record.get("end_column")),
        text=_text(record.get("text")),
        module=_text(record.get("module")),
    )


def _text(value: Any) -> str | None:
    return value[:_MAX_TEXT] if isinstance(value, str) else None


def _number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
