"""Validation of what extensions send: the protocol's shapes, checked with pydantic.

The shapes are defined once, as ``TypedDict``s in :mod:`extension_protocol.protocol` (so extensions
never import pydantic). This module builds pydantic validators from those same definitions and
turns a validation failure into an ``INVALID_PARAMS`` error that names the method and the field.
It knows shapes; it does not act on messages.
"""

from __future__ import annotations

import functools
import types
import typing
from typing import Any, TypeVar, cast

import typing_extensions
from pydantic import TypeAdapter, ValidationError

from extension_protocol import protocol
from extension_protocol.connection import RpcError

__all__ = ["prepare", "pydantic_shape", "validate"]

T = TypeVar("T")


def _convert(annotation: Any) -> Any:
    """Rebuild an annotation with every ``TypedDict`` in it made pydantic-ready."""
    if typing_extensions.is_typeddict(annotation):
        return _typeddict(annotation)
    args = typing.get_args(annotation)
    if not args:
        return annotation
    converted = tuple(_convert(arg) for arg in args)
    if converted == args:
        return annotation
    origin = typing.get_origin(annotation)
    if origin is types.UnionType:
        return functools.reduce(lambda left, right: left | right, converted)
    if isinstance(annotation, types.GenericAlias):
        return types.GenericAlias(origin, converted)
    return annotation.copy_with(converted)


@functools.cache
def _typeddict(source: Any) -> Any:
    # pydantic needs typing_extensions.TypedDict before Python 3.12; the protocol module uses
    # typing.TypedDict to stay import-light. The clone has the same keys, types and totality.
    hints = typing.get_type_hints(source, include_extras=True)
    fields = {name: _convert(hint) for name, hint in hints.items()}
    clone = typing_extensions.TypedDict(source.__name__, fields)  # type: ignore[misc]
    clone.__doc__ = source.__doc__  # the shape's description in generated schemas
    return clone


def pydantic_shape(shape: Any) -> Any:
    """A protocol shape (a ``TypedDict``, or a type built of them) as pydantic can read it."""
    return _convert(shape)


@functools.cache
def _adapter(shape: Any) -> TypeAdapter[Any]:
    return TypeAdapter(_convert(shape))


def prepare(shape: Any) -> None:
    """Build the validator of a protocol shape now rather than at its first :func:`validate`
    (each is built once per process, on first use)."""
    _adapter(shape)


def validate(method: str, shape: type[T], params: Any) -> T:
    """Check ``params`` of ``method`` against a protocol shape and return them.

    Raises:
        RpcError: ``INVALID_PARAMS`` with the method, the first bad field and why.
    """
    try:
        return cast(T, _adapter(cast(Any, shape)).validate_python(params))
    except ValidationError as exc:
        first = exc.errors()[0]
        location = ".".join(str(part) for part in first["loc"]) or "params"
        raise RpcError(
            protocol.INVALID_PARAMS,
            f"{method}: {location}: {first['msg']}",
            {"field": location},
        ) from None
