"""Canvases on the wire: their declarations, the methods that open, close and act on them, and
the rules both sides check.

A canvas is a panel an extension provides (the published SDK's ``createCanvas``): it declares
it in ``session.resume`` (``canvases``: id, display name, description, an optional JSON Schema
of its open input, and actions, each a name, a description and an input schema); the host asks
it to open an instance (``canvas.open``, answered with an optional ``url``, ``title`` and
``status``), to close one (``canvas.close``) and to run one of its actions on one
(``canvas.action.invoke``). A handler's failure is answered as the JS SDK answers it:
``INTERNAL_ERROR`` with ``data: {code, message}`` (``code`` is the author's, or
``canvas_handler_error``).

This module holds names, limits and :func:`check_canvas_rules`, the rules a type check does
not state (reserved action names, ids given twice, schema sizes), which the SDK runs when an
extension joins and the host runs on what arrives; the host checks types and lengths with
pydantic first. It knows no process, connection or handler.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, NotRequired, TypedDict

__all__ = [
    "CANVAS_HANDLER_ERROR",
    "CANVAS_ID_PATTERN",
    "CANVAS_NO_HANDLER",
    "MAX_CANVASES",
    "MAX_CANVAS_ACTIONS",
    "MAX_CANVAS_DESCRIPTION_CHARS",
    "MAX_CANVAS_ID_CHARS",
    "MAX_CANVAS_NAME_CHARS",
    "MAX_CANVAS_SCHEMA_BYTES",
    "MAX_CANVAS_TEXT_CHARS",
    "MAX_INSTANCE_ID_CHARS",
    "METHOD_CANVAS_ACTION",
    "METHOD_CANVAS_CLOSE",
    "METHOD_CANVAS_OPEN",
    "RESERVED_ACTION_PREFIX",
    "CanvasActionDeclaration",
    "CanvasDeclaration",
    "check_canvas_rules",
]

METHOD_CANVAS_OPEN: Final = "canvas.open"
"""Host → extension: open (or focus) an instance; answered ``{url?, title?, status?}``."""
METHOD_CANVAS_CLOSE: Final = "canvas.close"
"""Host → extension: an instance was closed; the answer is ignored."""
METHOD_CANVAS_ACTION: Final = "canvas.action.invoke"
"""Host → extension: run an action on an open instance; answered with the action's result."""

CANVAS_HANDLER_ERROR: Final = "canvas_handler_error"
"""The ``data.code`` of a handler's failure that named no code of its own."""
CANVAS_NO_HANDLER: Final = "canvas_action_no_handler"
"""The ``data.code`` of an action declared with no handler."""
RESERVED_ACTION_PREFIX: Final = "canvas."
"""Action names may not start with it: it is the lifecycle verbs' (``canvas.open``...)."""

MAX_CANVASES: Final = 32
"""Canvases one extension may declare."""
MAX_CANVAS_ACTIONS: Final = 64
"""Actions one canvas may declare."""
MAX_CANVAS_ID_CHARS: Final = 128
"""Characters of a canvas id or an action name."""
MAX_CANVAS_NAME_CHARS: Final = 200
"""Characters of a canvas's display name."""
MAX_CANVAS_DESCRIPTION_CHARS: Final = 2048
"""Characters of a canvas's or an action's description (the model reads them)."""
MAX_CANVAS_SCHEMA_BYTES: Final = 64 * 1024
"""Bytes of one input schema, as JSON."""
MAX_INSTANCE_ID_CHARS: Final = 256
"""Characters of an instance id (chosen by whoever opens the canvas)."""
MAX_CANVAS_TEXT_CHARS: Final = 2048
"""Characters of an open result's ``url``, ``title`` or ``status``."""

CANVAS_ID_PATTERN: Final = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}\Z")
"""Canvas ids and action names: a letter or digit, then letters, digits, ``_``, ``-``, ``.``
or ``:``, at most 128 in all."""


class CanvasActionDeclaration(TypedDict):
    """One action of a canvas as declared in ``session.resume``."""

    name: str
    description: NotRequired[str]
    inputSchema: NotRequired[dict[str, Any]]


class CanvasDeclaration(TypedDict):
    """One canvas as declared in ``session.resume`` (the SDK's ``CanvasDeclaration``)."""

    id: str
    displayName: str
    description: str
    inputSchema: NotRequired[dict[str, Any]]
    actions: NotRequired[list[CanvasActionDeclaration]]


def check_canvas_rules(declarations: Sequence[Mapping[str, Any]]) -> None:
    """Check what a type check of ``declarations`` leaves out: at most :data:`MAX_CANVASES`,
    no id given twice, no action name given twice in a canvas or starting with
    :data:`RESERVED_ACTION_PREFIX`, each input schema at most :data:`MAX_CANVAS_SCHEMA_BYTES`.

    Raises:
        ValueError: one line naming the canvas (and action) at fault and what to do.
    """
    if len(declarations) > MAX_CANVASES:
        raise ValueError(f"{len(declarations)} canvases declared, over the limit of {MAX_CANVASES}")
    seen: set[str] = set()
    for canvas in declarations:
        canvas_id = str(canvas.get("id"))
        if canvas_id in seen:
            raise ValueError(f"canvas {canvas_id!r} is declared twice; give each canvas its own id")
        seen.add(canvas_id)
        _check_schema(canvas.get("inputSchema"), f"canvas {canvas_id!r}")
        actions = canvas.get("actions") or ()
        if len(actions) > MAX_CANVAS_ACTIONS:
            raise ValueError(
                f"canvas {canvas_id!r} declares {len(actions)} actions, over the limit of {MAX_CANVAS_ACTIONS}"
            )
        names: set[str] = set()
        for action in actions:
            name = str(action.get("name"))
            if name.startswith(RESERVED_ACTION_PREFIX):
                raise ValueError(
                    f"canvas {canvas_id!r}: action names beginning with {RESERVED_ACTION_PREFIX!r} are reserved: "
                    f"{name!r}; rename the action"
                )
            if name in names:
                raise ValueError(f"canvas {canvas_id!r}: action {name!r} is declared twice")
            names.add(name)
            _check_schema(action.get("inputSchema"), f"canvas {canvas_id!r}: action {name!r}")


def _check_schema(schema: Any, what: str) -> None:
    if schema is None:
        return
    try:
        size = len(json.dumps(schema, separators=(",", ":")).encode())
    except (TypeError, ValueError):
        raise ValueError(f"{what}: the input schema is not JSON") from None
    if size > MAX_CANVAS_SCHEMA_BYTES:
        raise ValueError(
            f"{what}: the input schema has {size} bytes, over the limit of {MAX_CANVAS_SCHEMA_BYTES}; shorten it"
        )
