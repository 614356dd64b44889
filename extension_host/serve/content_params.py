"""The params of the client protocol's content commands, checked at the trust boundary.

``completions`` and the ``resource*`` family, as the agent host protocol shapes them (camelCase, the session's
URI in ``session``; fields the newer protocol added, such as ``resourceWrite``'s ``mode``, are
let through and not acted on; ``resourceCopy`` and ``resourceMove`` also take
``resourceDelete``'s ``recursive``). :func:`checked` validates with pydantic, strictly (no ``"1"``
for ``1``), and turns a failure into one ``InvalidParams`` (-32602) :class:`ServeError` naming the
method and the field. This module knows shapes, not files.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Annotated, Any, Final, Literal, NotRequired, TypeVar, cast

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError, with_config
from typing_extensions import TypedDict

from extension_protocol.protocol import INVALID_PARAMS

from .errors import ServeError

__all__ = [
    "MAX_URI_CHARS",
    "CompletionsParams",
    "ResourceCopyParams",
    "ResourceDeleteParams",
    "ResourceListParams",
    "ResourceReadParams",
    "ResourceRequestParams",
    "ResourceWriteParams",
    "checked",
]

MAX_URI_CHARS: Final = 8192
"""The longest URI accepted in any of these commands."""
MAX_DATA_CHARS: Final = 12 * 1024 * 1024
"""The longest ``data`` string ``resourceWrite`` accepts (the byte limit is checked after
decoding, see :data:`~extension_host.serve.resources.MAX_WRITE_BYTES`)."""
MAX_COMPLETION_TEXT_CHARS: Final = 100_000
"""The longest input ``completions`` accepts."""

Uri = Annotated[str, Field(min_length=1, max_length=MAX_URI_CHARS)]
Encoding = Literal["base64", "utf-8"]
_STRICT: Final = ConfigDict(strict=True)


@with_config(_STRICT)
class ResourceReadParams(TypedDict):
    """``resourceRead``."""

    uri: Uri
    encoding: NotRequired[Encoding]


@with_config(_STRICT)
class ResourceWriteParams(TypedDict):
    """``resourceWrite``."""

    uri: Uri
    data: Annotated[str, Field(max_length=MAX_DATA_CHARS)]
    encoding: Encoding
    contentType: NotRequired[str]
    createOnly: NotRequired[bool]


@with_config(_STRICT)
class ResourceListParams(TypedDict):
    """``resourceList``."""

    uri: Uri


@with_config(_STRICT)
class ResourceCopyParams(TypedDict):
    """``resourceCopy`` and ``resourceMove``; ``recursive`` (as ``resourceDelete``'s) lets a
    folder with something in it at the destination be replaced."""

    source: Uri
    destination: Uri
    failIfExists: NotRequired[bool]
    recursive: NotRequired[bool]


@with_config(_STRICT)
class ResourceDeleteParams(TypedDict):
    """``resourceDelete``."""

    uri: Uri
    recursive: NotRequired[bool]


@with_config(_STRICT)
class ResourceRequestParams(TypedDict):
    """``resourceRequest``; also the ``request`` a ``PermissionDenied`` error's data carries."""

    uri: Uri
    read: NotRequired[bool]
    write: NotRequired[bool]


@with_config(_STRICT)
class CompletionsParams(TypedDict):
    """``completions``: ``offset`` is in UTF-16 code units, ``0 <= offset <= len(text)``."""

    kind: Annotated[str, Field(max_length=64)]
    session: NotRequired[Uri]
    text: Annotated[str, Field(max_length=MAX_COMPLETION_TEXT_CHARS)]
    offset: Annotated[int, Field(ge=0)]


T = TypeVar("T")


@functools.cache
def _adapter(shape: Any) -> TypeAdapter[Any]:
    return TypeAdapter(shape)


def checked(method: str, shape: type[T], params: Any) -> T:
    """``params`` of ``method`` if they have ``shape``.

    Raises:
        ServeError: ``InvalidParams`` naming the method, the first bad field and why.
    """
    if isinstance(params, Mapping) and not isinstance(params, dict):
        params = dict(params)
    try:
        return cast(T, _adapter(cast(Any, shape)).validate_python(params))
    except ValidationError as exc:
        first = exc.errors()[0]
        location = ".".join(str(part) for part in first["loc"]) or "params"
        raise ServeError(INVALID_PARAMS, f"{method}: {location}: {first['msg']}", {"field": location}) from None
