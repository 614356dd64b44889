"""Unit tests for extension_protocol.results: ToolResult and the normalisation rules."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pydantic
import pytest

from extension_protocol.results import ToolResult, normalize_result, result_from_wire


@dataclasses.dataclass
class Hit:
    path: str
    line: int


class Summary(pydantic.BaseModel):
    title: str
    count: int


# -- ToolResult --------------------------------------------------------------------------


def test_tool_result_defaults_to_success_with_no_optional_fields() -> None:
    """Only the text is required; the type defaults to success and the rest to None."""
    result = ToolResult("done")
    assert result.result_type == "success"
    assert result.success
    assert (result.error, result.session_log, result.tool_telemetry, result.binary_results_for_llm) == (
        None,
        None,
        None,
        None,
    )


@pytest.mark.parametrize("kind", ["failure", "rejected", "denied", "timeout"])
def test_tool_result_of_a_non_success_type_is_not_success(kind: Any) -> None:
    """Every result type other than success reports success=False."""
    assert not ToolResult("x", kind).success


def test_tool_result_rejects_an_unknown_result_type() -> None:
    """A result_type outside the five is a ValueError naming it."""
    with pytest.raises(ValueError, match="'maybe'"):
        ToolResult("x", "maybe")  # type: ignore[arg-type]


def test_tool_result_rejects_non_string_text() -> None:
    """text_result_for_llm must be a str."""
    with pytest.raises(TypeError, match="must be a str"):
        ToolResult(42)  # type: ignore[arg-type]


def test_to_wire_uses_camel_case_keys_and_omits_unset_fields() -> None:
    """Only fields that are set appear, under their camelCase names."""
    assert ToolResult("hi").to_wire() == {"textResultForLlm": "hi", "resultType": "success"}
    full = ToolResult(
        "t",
        "failure",
        error="e",
        session_log="log",
        tool_telemetry={"ms": 3},
        binary_results_for_llm=[{"data": "AA==", "mimeType": "image/png"}],
    )
    assert full.to_wire() == {
        "textResultForLlm": "t",
        "resultType": "failure",
        "error": "e",
        "sessionLog": "log",
        "toolTelemetry": {"ms": 3},
        "binaryResultsForLlm": [{"data": "AA==", "mimeType": "image/png"}],
    }


def test_to_wire_keeps_empty_but_set_values() -> None:
    """An empty string or empty dict is set, not None, so it is sent."""
    wire = ToolResult("", error="", tool_telemetry={}).to_wire()
    assert wire == {"textResultForLlm": "", "resultType": "success", "error": "", "toolTelemetry": {}}


# -- normalize_result --------------------------------------------------------------------


def test_string_return_is_a_success_with_that_text() -> None:
    """A str becomes a successful result with exactly that text."""
    assert normalize_result("42 files") == ToolResult("42 files", "success")


def test_none_return_is_an_empty_success() -> None:
    """None becomes a success with empty text."""
    assert normalize_result(None) == ToolResult("", "success")


def test_tool_result_return_is_used_as_is() -> None:
    """A ToolResult is returned unchanged (the same object)."""
    given = ToolResult("no", "denied", error="policy")
    assert normalize_result(given) is given


def test_dict_with_snake_case_text_key_is_read_as_a_result() -> None:
    """A dict carrying text_result_for_llm is a result in snake_case."""
    assert normalize_result({"text_result_for_llm": "t", "result_type": "rejected", "error": "e"}) == ToolResult(
        "t", "rejected", error="e"
    )


def test_dict_with_camel_case_text_key_is_read_as_a_result() -> None:
    """A dict carrying textResultForLlm is a result in camelCase."""
    assert normalize_result(
        {"textResultForLlm": "t", "resultType": "timeout", "sessionLog": "s", "toolTelemetry": {"a": 1}}
    ) == ToolResult("t", "timeout", session_log="s", tool_telemetry={"a": 1})


def test_result_dict_without_type_is_a_success() -> None:
    """A result dict that gives no result type means success."""
    assert normalize_result({"textResultForLlm": "ok"}).result_type == "success"


def test_result_dict_with_unknown_result_type_is_a_value_error() -> None:
    """An unknown result_type in a result dict raises ValueError."""
    with pytest.raises(ValueError, match="'partial'"):
        normalize_result({"textResultForLlm": "t", "resultType": "partial"})


def test_result_dict_with_non_string_text_is_a_type_error() -> None:
    """A result dict's text must be a string."""
    with pytest.raises(TypeError):
        normalize_result({"text_result_for_llm": ["not", "text"]})


def test_plain_dict_return_becomes_its_json_text() -> None:
    """A dict without a result text key is written as JSON text, keeping non-ASCII as is."""
    result = normalize_result({"city": "Zürich", "n": [1, 2]})
    assert result.success
    assert result.text_result_for_llm == '{"city": "Zürich", "n": [1, 2]}'


@pytest.mark.parametrize(
    ("value", "expected"),
    [(42, 42), (2.5, 2.5), (True, True), ([1, "a", None], [1, "a", None]), ((1, 2), [1, 2])],
)
def test_other_json_values_become_their_json_text(value: Any, expected: Any) -> None:
    """Numbers, booleans, lists and tuples are written as JSON text."""
    result = normalize_result(value)
    assert result.result_type == "success"
    assert json.loads(result.text_result_for_llm) == expected


def test_dataclass_return_becomes_json_of_its_fields() -> None:
    """A dataclass instance is written as a JSON object of its fields."""
    result = normalize_result(Hit("a.py", 3))
    assert json.loads(result.text_result_for_llm) == {"path": "a.py", "line": 3}


def test_list_of_dataclasses_becomes_a_json_array_of_objects() -> None:
    """Dataclasses nested in a list are converted too."""
    result = normalize_result([Hit("a", 1), Hit("b", 2)])
    assert json.loads(result.text_result_for_llm) == [{"path": "a", "line": 1}, {"path": "b", "line": 2}]


def test_pydantic_model_return_becomes_json_of_its_dump() -> None:
    """A pydantic model is written as JSON of its model_dump."""
    result = normalize_result(Summary(title="t", count=2))
    assert json.loads(result.text_result_for_llm) == {"title": "t", "count": 2}


def test_set_return_becomes_a_json_array() -> None:
    """A set (and frozenset) is written as a JSON array of its members."""
    assert sorted(json.loads(normalize_result({3, 1, 2}).text_result_for_llm)) == [1, 2, 3]
    assert json.loads(normalize_result(frozenset({"x"})).text_result_for_llm) == ["x"]


def test_non_serializable_return_is_a_value_error_naming_the_type() -> None:
    """A value JSON cannot carry raises ValueError saying what the tool returned."""

    class Opaque:
        pass

    with pytest.raises(ValueError, match="Opaque"):
        normalize_result(Opaque())
    with pytest.raises(ValueError):
        normalize_result({"nested": object()})


def test_a_dataclass_class_itself_is_not_serialized_as_an_instance() -> None:
    """Returning the dataclass type (not an instance) is not JSON."""
    with pytest.raises(ValueError):
        normalize_result(Hit)


# -- result_from_wire --------------------------------------------------------------------


def test_wire_string_result_is_a_success() -> None:
    """A plain string result is a success with that text."""
    assert result_from_wire("output") == ToolResult("output")


def test_wire_object_result_is_taken_as_given() -> None:
    """An object result keeps its type, error and other fields."""
    wire = {"textResultForLlm": "t", "resultType": "denied", "error": "no", "sessionLog": "s"}
    assert result_from_wire(wire) == ToolResult("t", "denied", error="no", session_log="s")


def test_wire_object_without_type_is_a_success() -> None:
    """An object with no resultType and no error is a success."""
    assert result_from_wire({"textResultForLlm": "fine"}) == ToolResult("fine", "success")


def test_wire_object_with_error_but_no_result_type_is_a_failure() -> None:
    """An object carrying an error and no resultType means failure."""
    assert result_from_wire({"textResultForLlm": "t", "error": "crashed"}) == ToolResult(
        "t", "failure", error="crashed"
    )


def test_wire_object_with_error_and_explicit_success_type_keeps_the_type() -> None:
    """An explicit resultType wins over the presence of an error."""
    assert result_from_wire({"textResultForLlm": "t", "resultType": "success", "error": "w"}).result_type == "success"


def test_wire_object_without_text_gets_empty_text() -> None:
    """A missing textResultForLlm becomes an empty string."""
    assert result_from_wire({"resultType": "rejected"}) == ToolResult("", "rejected")


def test_wire_error_alone_is_a_failure_with_that_message() -> None:
    """No result but an error string: failure whose text and error are the message."""
    assert result_from_wire(None, "tool crashed") == ToolResult("tool crashed", "failure", error="tool crashed")


def test_wire_error_object_alone_is_a_failure_with_its_json() -> None:
    """A non-string error is carried as its JSON text."""
    result = result_from_wire(None, {"code": 1})
    assert result.result_type == "failure"
    assert json.loads(result.text_result_for_llm) == {"code": 1}
    assert result.error == result.text_result_for_llm


def test_wire_result_wins_over_an_error_next_to_it() -> None:
    """When both result and error are given, the result is read."""
    assert result_from_wire("text", "ignored") == ToolResult("text")


def test_wire_neither_result_nor_error_is_an_empty_success() -> None:
    """Nothing at all is an empty success."""
    assert result_from_wire(None) == ToolResult("")


def test_wire_result_of_another_type_is_a_type_error() -> None:
    """A number or list is neither form of result."""
    with pytest.raises(TypeError):
        result_from_wire(42)
    with pytest.raises(TypeError):
        result_from_wire(["a"])


def test_wire_object_with_unknown_result_type_is_a_value_error() -> None:
    """A malformed object result raises ValueError."""
    with pytest.raises(ValueError):
        result_from_wire({"textResultForLlm": "t", "resultType": "weird"})


def test_to_wire_then_from_wire_round_trips() -> None:
    """result_from_wire(result.to_wire()) gives back an equal ToolResult."""
    original = ToolResult("t", "failure", error="e", session_log="l", tool_telemetry={"k": [1]})
    assert result_from_wire(original.to_wire()) == original
