"""Unit tests for extension_protocol.schema: JSON Schema and argument checking from Python signatures."""

from __future__ import annotations

import enum
from typing import Annotated, Any, Literal

import pydantic
import pytest

from extension_protocol.schema import ArgumentError, Parameter, Signature, signature_of
from extension_protocol.tools import ToolInvocation

# Types used in annotations live at module level: with postponed annotations, get_type_hints
# resolves names in the function's module globals.


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Point(pydantic.BaseModel):
    x: int
    y: int


class Shape(pydantic.BaseModel):
    name: str
    corners: list[Point]


def bind_error(signature: Signature, arguments: Any) -> ArgumentError:
    """Run bind and return the ArgumentError it must raise."""
    with pytest.raises(ArgumentError) as info:
        signature.bind(arguments)
    return info.value


# -- scalars -----------------------------------------------------------------------------


def scalars(s: str, i: int, f: float, b: bool) -> None:
    """All four scalar types."""


def test_scalar_annotations_map_to_json_schema_types_and_are_required() -> None:
    """str/int/float/bool become string/integer/number/boolean; parameters without defaults are required."""
    assert signature_of(scalars).json_schema() == {
        "type": "object",
        "properties": {
            "s": {"type": "string"},
            "i": {"type": "integer"},
            "f": {"type": "number"},
            "b": {"type": "boolean"},
        },
        "required": ["s", "i", "f", "b"],
        "additionalProperties": False,
    }


def test_scalar_arguments_of_the_right_type_bind_unchanged() -> None:
    """Well-typed scalars come back as keyword arguments."""
    bound = signature_of(scalars).bind({"s": "x", "i": 3, "f": 2.5, "b": False})
    assert bound == {"s": "x", "i": 3, "f": 2.5, "b": False}


def test_int_parameter_rejects_a_boolean() -> None:
    """JSON true is not an integer even though bool subclasses int in Python."""
    error = bind_error(signature_of(scalars), {"s": "x", "i": True, "f": 1.0, "b": True})
    assert error.field == "i"
    assert "integer" in error.message


def test_int_parameter_rejects_a_string_and_a_fractional_number() -> None:
    """'3' and 3.5 are not integers."""
    sig = signature_of(scalars)
    assert bind_error(sig, {"s": "x", "i": "3", "f": 1.0, "b": True}).field == "i"
    assert bind_error(sig, {"s": "x", "i": 3.5, "f": 1.0, "b": True}).field == "i"


def test_int_parameter_accepts_a_whole_float_as_an_int() -> None:
    """3.0 (as some JSON encoders send integers) binds as the int 3."""
    bound = signature_of(scalars).bind({"s": "x", "i": 3.0, "f": 1.0, "b": True})
    assert bound["i"] == 3
    assert type(bound["i"]) is int


def test_float_parameter_accepts_an_int_and_converts_it() -> None:
    """An integer argument for a float parameter binds as a float."""
    bound = signature_of(scalars).bind({"s": "x", "i": 1, "f": 4, "b": True})
    assert bound["f"] == 4.0
    assert type(bound["f"]) is float


def test_float_parameter_rejects_a_boolean_and_a_string() -> None:
    """true and '1.5' are not numbers."""
    sig = signature_of(scalars)
    assert bind_error(sig, {"s": "x", "i": 1, "f": True, "b": True}).field == "f"
    assert bind_error(sig, {"s": "x", "i": 1, "f": "1.5", "b": True}).field == "f"


def test_bool_parameter_rejects_an_integer() -> None:
    """1 is not a boolean."""
    error = bind_error(signature_of(scalars), {"s": "x", "i": 1, "f": 1.0, "b": 1})
    assert error.field == "b"
    assert "boolean" in error.message


def test_str_parameter_rejects_a_number_and_says_what_it_got() -> None:
    """The error message names the expected type and describes the value received."""
    error = bind_error(signature_of(scalars), {"s": 5, "i": 1, "f": 1.0, "b": True})
    assert error.field == "s"
    assert error.message == "expected a string, got integer 5"


# -- optional, unions, literals, enums ---------------------------------------------------


def optionals(a: str | None, b: int | str, c: int | None = None) -> None:
    """Optional and union parameters."""


def test_optional_and_union_annotations_become_any_of() -> None:
    """Optional[T] and A | B are anyOf of their members, None as type null."""
    props = signature_of(optionals).json_schema()["properties"]
    assert props["a"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert props["b"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert props["c"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}


def test_optional_parameter_accepts_null_and_its_type() -> None:
    """Optional[str] takes a string or null."""
    sig = signature_of(optionals)
    assert sig.bind({"a": None, "b": 1}) == {"a": None, "b": 1}
    assert sig.bind({"a": "s", "b": 1}) == {"a": "s", "b": 1}


def test_optional_parameter_rejects_another_type() -> None:
    """Optional[str] does not take a number."""
    error = bind_error(signature_of(optionals), {"a": 5, "b": 1})
    assert error.field == "a"


def test_union_accepts_each_member_and_rejects_others_listing_every_reason() -> None:
    """int | str takes 1 and 'x'; a list fails with both members' reasons."""
    sig = signature_of(optionals)
    assert sig.bind({"a": None, "b": 1})["b"] == 1
    assert sig.bind({"a": None, "b": "x"})["b"] == "x"
    error = bind_error(sig, {"a": None, "b": [1]})
    assert error.field == "b"
    assert "integer" in error.message and "string" in error.message


def choices(mode: Literal["fast", "slow"], color: Color, level: Level = Level.LOW) -> None:
    """Literal and Enum parameters."""


def test_literal_and_enum_annotations_become_enum_schemas() -> None:
    """Literal lists its values; an Enum lists its members' values."""
    props = signature_of(choices).json_schema()["properties"]
    assert props["mode"] == {"enum": ["fast", "slow"]}
    assert props["color"] == {"enum": ["red", "green"]}
    assert props["level"] == {"enum": [1, 2]}


def test_literal_accepts_only_its_values() -> None:
    """A value outside the Literal is rejected naming the allowed ones."""
    sig = signature_of(choices)
    assert sig.bind({"mode": "slow", "color": "red"})["mode"] == "slow"
    error = bind_error(sig, {"mode": "medium", "color": "red"})
    assert error.field == "mode"
    assert "'fast'" in error.message and "'slow'" in error.message


def test_enum_argument_binds_as_the_enum_member() -> None:
    """A member's value comes back as the member itself."""
    bound = signature_of(choices).bind({"mode": "fast", "color": "green", "level": 2})
    assert bound["color"] is Color.GREEN
    assert bound["level"] is Level.HIGH


def test_enum_rejects_a_value_that_is_not_a_member() -> None:
    """An unknown value for an Enum is rejected naming the allowed values."""
    error = bind_error(signature_of(choices), {"mode": "fast", "color": "blue"})
    assert error.field == "color"
    assert "'red'" in error.message and "'green'" in error.message


# -- containers --------------------------------------------------------------------------


def containers(items: list[int], pair: tuple[str, ...], counts: dict[str, int], raw: list[Any]) -> None:
    """Container parameters."""


def test_container_annotations_become_array_and_object_schemas() -> None:
    """list[T] and tuple[T, ...] are arrays of T; dict[str, T] is an object of T; list[Any] has no items."""
    props = signature_of(containers).json_schema()["properties"]
    assert props["items"] == {"type": "array", "items": {"type": "integer"}}
    assert props["pair"] == {"type": "array", "items": {"type": "string"}}
    assert props["counts"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert props["raw"] == {"type": "array"}


def test_container_arguments_bind_with_their_python_container_type() -> None:
    """list stays a list, tuple[T, ...] becomes a tuple, dict stays a dict."""
    bound = signature_of(containers).bind({"items": [1, 2], "pair": ["a", "b"], "counts": {"x": 1}, "raw": [None, "z"]})
    assert bound == {"items": [1, 2], "pair": ("a", "b"), "counts": {"x": 1}, "raw": [None, "z"]}
    assert isinstance(bound["pair"], tuple)


def test_bad_list_item_is_reported_with_its_index_in_the_field_path() -> None:
    """The second item of 'items' being wrong names 'items[1]'."""
    error = bind_error(signature_of(containers), {"items": [1, "two", 3], "pair": [], "counts": {}, "raw": []})
    assert error.field == "items[1]"
    assert "integer" in error.message


def test_bad_dict_value_is_reported_with_its_key_in_the_field_path() -> None:
    """A wrong value under key 'b' of 'counts' names 'counts.b'."""
    error = bind_error(signature_of(containers), {"items": [], "pair": [], "counts": {"a": 1, "b": "x"}, "raw": []})
    assert error.field == "counts.b"


def test_array_parameter_rejects_a_non_list() -> None:
    """A string or object for a list parameter is rejected."""
    sig = signature_of(containers)
    assert bind_error(sig, {"items": "1,2", "pair": [], "counts": {}, "raw": []}).field == "items"
    assert bind_error(sig, {"items": [], "pair": [], "counts": [], "raw": []}).field == "counts"


def nested(groups: dict[str, list[int]]) -> None:
    """Nested containers."""


def test_nested_containers_give_the_full_path_of_the_bad_value() -> None:
    """dict of lists: a bad item names 'groups.key[index]'."""
    error = bind_error(signature_of(nested), {"groups": {"ok": [1], "bad": [1, 2, "x"]}})
    assert error.field == "groups.bad[2]"


# -- descriptions, defaults, extras, invocation ------------------------------------------


def described(path: Annotated[str, "the file to read"], limit: Annotated[int, "max lines"] = 10) -> None:
    """Annotated parameters."""


def test_annotated_string_becomes_the_parameter_description() -> None:
    """Annotated[T, "text"] gives T's schema plus a description."""
    props = signature_of(described).json_schema()["properties"]
    assert props["path"] == {"type": "string", "description": "the file to read"}
    assert props["limit"] == {"type": "integer", "description": "max lines"}


def test_annotated_type_is_still_checked() -> None:
    """The type inside Annotated is enforced."""
    assert bind_error(signature_of(described), {"path": 1}).field == "path"


def test_parameters_with_defaults_are_not_required_and_are_left_out_when_absent() -> None:
    """A defaulted parameter is not in 'required' and bind does not fill it in."""
    sig = signature_of(described)
    assert sig.json_schema()["required"] == ["path"]
    assert sig.bind({"path": "a"}) == {"path": "a"}
    limit = next(p for p in sig.parameters if p.name == "limit")
    assert limit == Parameter("limit", int, False, 10, "max lines")


def all_optional(a: int = 1) -> None:
    """Only optional parameters."""


def test_schema_without_required_parameters_has_no_required_key() -> None:
    """'required' is left out rather than given as an empty list."""
    assert "required" not in signature_of(all_optional).json_schema()


def test_missing_required_argument_is_named() -> None:
    """Leaving out a required argument names it."""
    error = bind_error(signature_of(described), {"limit": 3})
    assert error.field == "path"
    assert error.message == "is required"


def test_unknown_argument_is_rejected_naming_it_and_the_expected_ones() -> None:
    """An argument the function does not take is an error naming it and listing the valid names."""
    error = bind_error(signature_of(described), {"path": "a", "colour": "red"})
    assert error.field == "colour"
    assert "limit" in error.message and "path" in error.message


def extras(name: str, **rest: Any) -> None:
    """Accepts extra arguments."""


def test_var_keyword_parameter_accepts_extra_arguments_and_passes_them_on() -> None:
    """With **kwargs, unknown arguments are bound as they are and the schema allows more properties."""
    sig = signature_of(extras)
    assert sig.accepts_extra
    assert sig.bind({"name": "n", "anything": [1], "more": None}) == {"name": "n", "anything": [1], "more": None}
    schema = sig.json_schema()
    assert "additionalProperties" not in schema
    assert list(schema["properties"]) == ["name"]


def test_var_keyword_does_not_excuse_a_missing_or_mistyped_known_argument() -> None:
    """Known parameters are still checked when extras are accepted."""
    sig = signature_of(extras)
    assert bind_error(sig, {"other": 1}).field == "name"
    assert bind_error(sig, {"name": 1}).field == "name"


def with_invocation(query: str, invocation: ToolInvocation) -> None:
    """Wants the invocation."""


def test_invocation_parameter_is_excluded_from_schema_and_binding() -> None:
    """A parameter named 'invocation' is not a JSON argument; the signature records that it is wanted."""
    sig = signature_of(with_invocation)
    assert sig.wants_invocation
    assert [p.name for p in sig.parameters] == ["query"]
    schema = sig.json_schema()
    assert list(schema["properties"]) == ["query"]
    assert schema["required"] == ["query"]
    assert bind_error(sig, {"query": "q", "invocation": {}}).field == "invocation"


def test_function_without_invocation_parameter_does_not_want_it() -> None:
    """wants_invocation is False when no parameter has that name."""
    assert not signature_of(scalars).wants_invocation


def unannotated(a, b=2):  # type: ignore[no-untyped-def]
    """No annotations."""


def test_unannotated_parameters_accept_any_json_value() -> None:
    """A parameter without a hint has an empty schema and takes any value."""
    sig = signature_of(unannotated)
    assert sig.json_schema()["properties"] == {"a": {}, "b": {}}
    assert sig.bind({"a": {"x": [1]}, "b": None}) == {"a": {"x": [1]}, "b": None}


def test_positional_only_parameter_is_a_type_error() -> None:
    """A positional-only parameter cannot be filled from named JSON arguments."""

    def f(a: int, /, b: int) -> None:
        """Positional-only."""

    with pytest.raises(TypeError, match="'a'"):
        signature_of(f)


def test_var_positional_parameter_is_a_type_error() -> None:
    """*args cannot be filled from named JSON arguments."""

    def f(*args: int) -> None:
        """Var-positional."""

    with pytest.raises(TypeError, match="'args'"):
        signature_of(f)


def test_keyword_only_parameters_are_ordinary_arguments() -> None:
    """A keyword-only parameter is a JSON argument like any other."""

    def f(*, a: int, b: str = "x") -> None:
        """Keyword-only."""

    sig = signature_of(f)
    assert sig.json_schema()["required"] == ["a"]
    assert sig.bind({"a": 1}) == {"a": 1}


def test_hint_naming_something_undefined_is_a_name_error() -> None:
    """An annotation that cannot be resolved raises NameError."""

    def f(a: DoesNotExist) -> None:  # type: ignore[name-defined]  # noqa: F821
        """Broken hint."""

    with pytest.raises(NameError):
        signature_of(f)


# -- the arguments object ----------------------------------------------------------------


def test_null_arguments_mean_no_arguments() -> None:
    """bind(None) is bind({}): fine when nothing is required, 'missing' otherwise."""
    assert signature_of(all_optional).bind(None) == {}
    assert bind_error(signature_of(described), None).field == "path"


@pytest.mark.parametrize("arguments", [[1, 2], "text", 5])
def test_arguments_that_are_not_an_object_are_rejected_without_a_field(arguments: Any) -> None:
    """A non-object arguments value is an error about the arguments as a whole."""
    error = bind_error(signature_of(all_optional), arguments)
    assert error.field is None
    assert "expected an object of arguments" in error.message


# -- pydantic models ---------------------------------------------------------------------


def with_model(point: Point, shape: Shape | None = None) -> None:
    """Pydantic parameters."""


def test_pydantic_model_parameter_uses_the_model_json_schema() -> None:
    """A BaseModel annotation's schema is the model's own JSON Schema."""
    props = signature_of(with_model).json_schema()["properties"]
    assert props["point"] == Point.model_json_schema()
    assert props["point"]["properties"]["x"] == {"title": "X", "type": "integer"}


def test_pydantic_model_argument_binds_as_a_model_instance() -> None:
    """A valid object is validated by pydantic into the model."""
    bound = signature_of(with_model).bind({"point": {"x": 1, "y": 2}})
    assert bound["point"] == Point(x=1, y=2)
    assert isinstance(bound["point"], Point)


def test_invalid_pydantic_argument_reports_the_field_path_inside_the_model() -> None:
    """pydantic's error location is appended to the parameter name."""
    error = bind_error(signature_of(with_model), {"point": {"x": 1, "y": "not a number"}})
    assert error.field == "point.y"
    assert error.message  # pydantic's own message, non-empty


def with_shape(shape: Shape) -> None:
    """A nested pydantic parameter."""


def test_invalid_nested_pydantic_argument_reports_the_nested_path() -> None:
    """A bad value deep inside a model names the whole path."""
    error = bind_error(
        signature_of(with_shape),
        {"shape": {"name": "tri", "corners": [{"x": 1, "y": 1}, {"x": 1}]}},
    )
    assert error.field == "shape.corners.1.y"


def test_optional_pydantic_parameter_accepts_null_and_a_valid_object() -> None:
    """Shape | None takes null or a valid model object."""
    sig = signature_of(with_model)
    assert sig.bind({"point": {"x": 0, "y": 0}, "shape": None})["shape"] is None
    bound = sig.bind({"point": {"x": 0, "y": 0}, "shape": {"name": "s", "corners": []}})
    assert bound["shape"] == Shape(name="s", corners=[])


def test_pydantic_argument_that_is_not_an_object_names_the_parameter() -> None:
    """A non-object for a model parameter fails at the parameter itself."""
    error = bind_error(signature_of(with_model), {"point": 5})
    assert error.field == "point"


def test_the_return_annotation_is_never_evaluated() -> None:
    """A return type known only to type checkers does not stop a tool from being declared."""

    def handler(count: int) -> OnlyForTypeCheckers:  # type: ignore[name-defined]  # noqa: F821
        raise AssertionError

    signature = signature_of(handler)
    assert [p.name for p in signature.parameters] == ["count"]
    assert signature.json_schema()["properties"] == {"count": {"type": "integer"}}
