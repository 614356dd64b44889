"""The canvases an extension declares when it joins, checked at the trust boundary.

:func:`declared_canvases` reads ``session.resume``'s ``canvases`` with pydantic (:data:`CanvasList`:
types, lengths, the id and name pattern, counts), then the rules a type does not state
(:func:`extension_protocol.canvases.check_canvas_rules`: reserved action names, an id or action
given twice, schema sizes), and returns :class:`~extension_host.calls.canvases.CanvasEntry`\\ s.
Anything wrong is one ``ValueError`` line naming the canvas (and action) at fault. It registers
nothing.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, NotRequired

from pydantic import Field, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from extension_protocol import canvases as wire

from .canvases import CanvasAction, CanvasEntry, CanvasRequester

__all__ = ["CanvasList", "declared_canvases"]

_Id = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$", max_length=wire.MAX_CANVAS_ID_CHARS)]
"""A canvas id or action name: :data:`extension_protocol.canvases.CANVAS_ID_PATTERN`."""
_Description = Annotated[str, Field(max_length=wire.MAX_CANVAS_DESCRIPTION_CHARS)]


class _Action(TypedDict):
    name: _Id
    description: NotRequired[_Description]
    inputSchema: NotRequired[dict[str, Any]]


class _Canvas(TypedDict):
    id: _Id
    displayName: Annotated[str, Field(min_length=1, max_length=wire.MAX_CANVAS_NAME_CHARS)]
    description: _Description
    inputSchema: NotRequired[dict[str, Any] | None]
    actions: NotRequired[Annotated[list[_Action], Field(max_length=wire.MAX_CANVAS_ACTIONS)] | None]


CanvasList = Annotated[list[_Canvas], Field(max_length=wire.MAX_CANVASES)]
"""``session.resume``'s ``canvases``, as the host accepts them."""


def declared_canvases(
    raw: Any, owner: str, request: CanvasRequester | None = None, holder: object = None
) -> list[CanvasEntry]:
    """The canvases of ``raw`` (``session.resume``'s ``canvases``) as entries of ``owner``,
    reached through ``request``.

    Raises:
        ValueError: one line: the canvas (and action) at fault and why.
    """
    if raw is None:
        return []
    if isinstance(raw, list) and len(raw) > wire.MAX_CANVASES:
        raise ValueError(f"{len(raw)} canvases declared, over the limit of {wire.MAX_CANVASES}")
    try:
        canvases: list[_Canvas] = _adapter().validate_python(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        why = _PATTERN if first["type"] == "string_pattern_mismatch" else first["msg"]
        raise ValueError(_located([str(part) for part in first["loc"]], why, raw)) from None
    wire.check_canvas_rules(canvases)
    return [
        CanvasEntry(
            canvas_id=canvas["id"],
            owner=owner,
            display_name=canvas["displayName"],
            description=canvas["description"],
            input_schema=canvas.get("inputSchema"),
            actions=tuple(
                CanvasAction(action["name"], action.get("description", ""), action.get("inputSchema"))
                for action in canvas.get("actions") or ()
            ),
            request=request,
            holder=holder,
        )
        for canvas in canvases
    ]


_PATTERN = "must be letters, digits, '_', '-', '.' or ':', starting with a letter or digit"


@functools.cache
def _adapter() -> TypeAdapter[list[_Canvas]]:
    return TypeAdapter(CanvasList)


def _located(parts: list[str], why: str, raw: Any) -> str:
    """Where pydantic found ``why`` (``0.actions.1.name``), with the canvas's id where it has one."""
    if not parts:
        return f"canvases: {why}"
    if parts[0].isdigit() and isinstance(raw, list):
        item = raw[int(parts[0])]
        canvas_id = item.get("id") if isinstance(item, dict) else None
        label = f"canvas {canvas_id[:64]!r}" if isinstance(canvas_id, str) else f"canvas {int(parts[0]) + 1}"
        rest = ".".join(parts[1:])
        return f"{label}: {rest}: {why}" if rest else f"{label}: {why}"
    return f"canvases: {'.'.join(parts)}: {why}"
