"""Tool parameters from a Python signature: the JSON Schema to declare, and argument checking.

Plain annotations (``str``, ``int``, ``float``, ``bool``, ``list[T]``, ``dict[str, T]``,
``Optional``/unions, ``Literal``, ``Enum``, ``Annotated[T, "description"]``) are handled here
without any library, so an extension that does not use pydantic never imports it. A parameter
annotated with a pydantic model is validated by pydantic (which the extension already imported).

This module knows signatures and JSON values; it does not know tools, results or the wire.
"""

from __future__ import annotations

import enum
import inspect
import sys
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["ArgumentError", "Parameter", "Signature", "signature_of"]

_INVOCATION_PARAMETER = "invocation"
"""A handler parameter of this name receives the call's invocation instead of an argument."""


class ArgumentError(Exception):
    """An argument does not fit its parameter; ``field`` is its dotted path."""

    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True, slots=True)
class Parameter:
    """One JSON argument of a tool, read from a handler parameter."""

    name: str
    annotation: Any
    required: bool
    default: Any
    description: str | None


@dataclass(frozen=True, slots=True)
class Signature:
    """What a handler's signature says about its arguments."""

    parameters: tuple[Parameter, ...]
    wants_invocation: bool
    accepts_extra: bool

    def json_schema(self) -> dict[str, Any]:
        """The JSON Schema of the arguments object."""
        properties: dict[str, Any] = {}
        for parameter in self.parameters:
            schema = _schema(parameter.annotation)
            if parameter.description:
                schema = {**schema, "description": parameter.description}
            properties[parameter.name] = schema
        schema_obj: dict[str, Any] = {"type": "object", "properties": properties}
        required = [p.name for p in self.parameters if p.required]
        if required:
            schema_obj["required"] = required
        if not self.accepts_extra:
            schema_obj["additionalProperties"] = False
        return schema_obj

    def bind(self, arguments: Any) -> dict[str, Any]:
        """Check ``arguments`` and return the keyword arguments for the handler.

        Raises:
            ArgumentError: naming the first missing, unknown or ill-typed argument.
        """
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise ArgumentError(None, f"expected an object of arguments, got {_describe(arguments)}")
        known = {p.name for p in self.parameters}
        if not self.accepts_extra:
            for key in arguments:
                if key not in known:
                    expected = ", ".join(sorted(known)) or "none"
                    raise ArgumentError(key, f"unknown argument (expected: {expected})")
        bound: dict[str, Any] = {}
        for parameter in self.parameters:
            if parameter.name in arguments:
                bound[parameter.name] = _check(parameter.annotation, arguments[parameter.name], parameter.name)
            elif parameter.required:
                raise ArgumentError(parameter.name, "is required")
        if self.accepts_extra:
            bound.update({k: v for k, v in arguments.items() if k not in known})
        return bound


def signature_of(function: Callable[..., Any]) -> Signature:
    """Read a handler's parameters and their type hints.

    Raises:
        TypeError: a parameter is positional-only or ``*args``, which JSON arguments cannot fill.
        NameError: a type hint names something that does not exist.
    """
    hints = _parameter_hints(function)
    parameters: list[Parameter] = []
    wants_invocation = False
    accepts_extra = False
    for parameter in inspect.signature(function).parameters.values():
        if parameter.name == _INVOCATION_PARAMETER:
            wants_invocation = True
            continue
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            accepts_extra = True
            continue
        if parameter.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.VAR_POSITIONAL):
            raise TypeError(
                f"parameter {parameter.name!r} cannot be filled from named JSON arguments; "
                "make it a regular or keyword-only parameter"
            )
        annotation = hints.get(parameter.name, Any)
        description = None
        if typing.get_origin(annotation) is typing.Annotated:
            annotation, *extras = typing.get_args(annotation)
            description = next((e for e in extras if isinstance(e, str)), None)
        required = parameter.default is inspect.Parameter.empty
        parameters.append(
            Parameter(
                parameter.name,
                annotation,
                required,
                None if required else parameter.default,
                description,
            )
        )
    return Signature(tuple(parameters), wants_invocation, accepts_extra)


def _parameter_hints(function: Callable[..., Any]) -> dict[str, Any]:
    """Evaluate the parameters' annotations only: the return type is no business of the schema
    (and may name something imported only for type checkers)."""
    target = inspect.unwrap(function)
    namespace = getattr(target, "__globals__", {})
    hints: dict[str, Any] = {}
    for name, annotation in inspect.get_annotations(target).items():
        if name == "return":
            continue
        if isinstance(annotation, str):
            annotation = eval(annotation, namespace)  # what typing.get_type_hints does, per name
        hints[name] = annotation
    return hints


# -- JSON Schema ---------------------------------------------------------------------------

_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_ARRAYS = (list, tuple, set, frozenset)


def _item_type(origin: Any, args: tuple[Any, ...]) -> Any:
    """The one type every item has, or ``Any`` (also for fixed-shape tuples)."""
    if not args:
        return Any
    if origin is tuple:
        return args[0] if len(args) == 2 and args[1] is Ellipsis else Any
    return args[0]


def _schema(annotation: Any) -> dict[str, Any]:
    if annotation is Any or annotation is inspect.Parameter.empty:
        return {}
    if annotation is None or annotation is type(None):
        return {"type": "null"}
    if annotation in _SCALARS:
        return {"type": _SCALARS[annotation]}
    model = _pydantic_model(annotation)
    if model is not None:
        return dict(model.model_json_schema())
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return {"enum": [member.value for member in annotation]}
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _schema(args[0])
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [_schema(arg) for arg in args]}
    if origin in _ARRAYS or annotation in _ARRAYS:
        schema: dict[str, Any] = {"type": "array"}
        item_type = _item_type(origin, args)
        if item_type is not Any:
            schema["items"] = _schema(item_type)
        return schema
    if origin is dict or annotation is dict:
        schema = {"type": "object"}
        if len(args) == 2:
            schema["additionalProperties"] = _schema(args[1])
        return schema
    return {}


# -- checking ------------------------------------------------------------------------------


def _check(annotation: Any, value: Any, path: str) -> Any:
    if annotation is Any or annotation is inspect.Parameter.empty:
        return value
    if annotation is None or annotation is type(None):
        if value is None:
            return None
        raise ArgumentError(path, f"expected null, got {_describe(value)}")
    if annotation is bool:
        if isinstance(value, bool):
            return value
        raise ArgumentError(path, f"expected a boolean, got {_describe(value)}")
    if annotation is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise ArgumentError(path, f"expected an integer, got {_describe(value)}")
    if annotation is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise ArgumentError(path, f"expected a number, got {_describe(value)}")
    if annotation is str:
        if isinstance(value, str):
            return value
        raise ArgumentError(path, f"expected a string, got {_describe(value)}")
    model = _pydantic_model(annotation)
    if model is not None:
        return _check_model(model, value, path)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        try:
            return annotation(value)
        except ValueError:
            allowed = ", ".join(repr(m.value) for m in annotation)
            raise ArgumentError(path, f"expected one of {allowed}, got {_describe(value)}") from None
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        if value in args:
            return value
        allowed = ", ".join(repr(a) for a in args)
        raise ArgumentError(path, f"expected one of {allowed}, got {_describe(value)}")
    if origin in (typing.Union, types.UnionType):
        errors: list[ArgumentError] = []
        for arg in args:
            try:
                return _check(arg, value, path)
            except ArgumentError as exc:
                errors.append(exc)
        raise ArgumentError(path, " or ".join(e.message for e in errors))
    if origin in _ARRAYS or annotation in _ARRAYS:
        if not isinstance(value, list):
            raise ArgumentError(path, f"expected an array, got {_describe(value)}")
        item_type = _item_type(origin, args)
        items = [_check(item_type, item, f"{path}[{i}]") for i, item in enumerate(value)]
        container = origin or annotation
        return items if container is list else container(items)
    if origin is dict or annotation is dict:
        if not isinstance(value, dict):
            raise ArgumentError(path, f"expected an object, got {_describe(value)}")
        value_type = args[1] if len(args) == 2 else Any
        return {k: _check(value_type, v, f"{path}.{k}") for k, v in value.items()}
    return value


def _pydantic_model(annotation: Any) -> Any:
    # Only a module that is already imported can have produced the annotation, so looking in
    # sys.modules finds every pydantic model without importing pydantic for everyone else.
    pydantic = sys.modules.get("pydantic")
    if pydantic is None or not isinstance(annotation, type):
        return None
    return annotation if issubclass(annotation, pydantic.BaseModel) else None


def _check_model(model: Any, value: Any, path: str) -> Any:
    pydantic = sys.modules["pydantic"]
    try:
        return model.model_validate(value)
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        location = ".".join(str(part) for part in first.get("loc", ()))
        raise ArgumentError(f"{path}.{location}" if location else path, str(first.get("msg", "is invalid"))) from None


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    kind = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{kind.get(type(value), type(value).__name__)} {text}"
