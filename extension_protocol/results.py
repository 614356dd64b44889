"""Tool results: the value object, and the rules that turn whatever a handler returns into one.

Owns :class:`ToolResult` (shared by the SDK and the host) and the normalisation rules of the
contract: ``str`` → success, ``None`` → empty success, a ``ToolResult`` or a dict carrying
``text_result_for_llm``/``textResultForLlm`` → as given, anything else → its JSON text.
It does not know how a result travels or who called the tool.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, Final, cast

from .protocol import RESULT_TYPES, ResultType, WireToolResult

__all__ = ["ToolResult", "normalize_result", "result_from_wire"]

_FIELD_ALIASES: Final = {
    "text_result_for_llm": "textResultForLlm",
    "result_type": "resultType",
    "error": "error",
    "session_log": "sessionLog",
    "tool_telemetry": "toolTelemetry",
    "binary_results_for_llm": "binaryResultsForLlm",
}
_WIRE_TO_FIELD: Final = {wire: name for name, wire in _FIELD_ALIASES.items()}


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool call produced, as the agent's model will see it.

    ``result_type`` is one of ``success``, ``failure``, ``rejected``, ``denied``, ``timeout``.
    ``error`` carries the technical reason of a failure when there is one.
    """

    text_result_for_llm: str
    result_type: ResultType = "success"
    error: str | None = None
    session_log: str | None = None
    tool_telemetry: dict[str, Any] | None = None
    binary_results_for_llm: list[dict[str, Any]] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.text_result_for_llm, str):
            raise TypeError(f"text_result_for_llm must be a str, not {type(self.text_result_for_llm).__name__}")
        if self.result_type not in RESULT_TYPES:
            raise ValueError(f"result_type {self.result_type!r} is not one of {', '.join(RESULT_TYPES)}")

    @property
    def success(self) -> bool:
        """True for ``result_type == "success"``."""
        return self.result_type == "success"

    def to_wire(self) -> WireToolResult:
        """The camelCase object form, with unset optional fields left out."""
        wire: dict[str, Any] = {}
        for name, alias in _FIELD_ALIASES.items():
            value = getattr(self, name)
            if value is not None:
                wire[alias] = value
        return cast(WireToolResult, wire)


def normalize_result(value: Any) -> ToolResult:
    """Turn a handler's return value into a :class:`ToolResult`.

    Raises:
        ValueError: a result dict has an unknown ``result_type``, or the value cannot be
            written as JSON.
        TypeError: a result dict's text is not a string.
    """
    if isinstance(value, ToolResult):
        return value
    if value is None:
        return ToolResult("")
    if isinstance(value, str):
        return ToolResult(value)
    if isinstance(value, dict) and ("text_result_for_llm" in value or "textResultForLlm" in value):
        return _from_mapping(value)
    return ToolResult(_json_text(value))


def result_from_wire(result: Any, error: Any = None) -> ToolResult:
    """Read the ``result``/``error`` pair of ``handlePendingToolCall`` as a :class:`ToolResult`.

    A plain string is a success; an object is taken as given (a missing result type means
    success, or failure when it carries an error); an ``error`` alone is a failure with that
    message.

    Raises:
        ValueError, TypeError: the object form is malformed.
    """
    if error is not None and result is None:
        message = error if isinstance(error, str) else json.dumps(error)
        return ToolResult(message, "failure", error=message)
    if isinstance(result, str):
        return ToolResult(result)
    if result is None:
        return ToolResult("")
    if isinstance(result, dict):
        if "resultType" not in result and "result_type" not in result and result.get("error"):
            result = {**result, "resultType": "failure"}
        return _from_mapping(result)
    raise TypeError(f"a tool result must be a string or an object, not {type(result).__name__}")


def _from_mapping(value: dict[str, Any]) -> ToolResult:
    fields: dict[str, Any] = {}
    for key, item in value.items():
        name = _WIRE_TO_FIELD.get(key, key)
        if name in _FIELD_ALIASES:
            fields[name] = item
    fields.setdefault("text_result_for_llm", "")
    return ToolResult(**fields)


def _json_text(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=_encode_extra)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the tool returned a {type(value).__name__} that is not JSON: {exc}") from None


def _encode_extra(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)  # a pydantic model, without importing pydantic
    if callable(dump):
        return dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
