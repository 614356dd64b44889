"""Canvases an extension provides: :class:`Canvas`, :class:`CanvasAction`, :class:`CanvasError`,
and running the host's requests to them.

A canvas is a panel the host can open (the published SDK's ``createCanvas``): ``open`` is called
with a :class:`CanvasContext` and returns where it is rendered (``{"url": ..., "title": ...,
"status": ...}``, each optional, or ``None``); ``close`` (optional) is told when an instance is
closed; each :class:`CanvasAction`'s handler runs when the agent or a client invokes it and its
result goes back as JSON. Handlers may be sync (run on a worker thread) or ``async``. Raising
:class:`CanvasError` answers with its ``code``; any other exception with
``canvas_handler_error``, as the JS SDK does. :func:`run_canvas_request` routes ``canvas.open``,
``canvas.close`` and ``canvas.action.invoke`` by ``canvasId``; :mod:`sdk_extension.session`
wires it to the connection. The wire rules are :mod:`extension_protocol.canvases`'s.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from extension_protocol import canvases as wire
from extension_protocol import protocol as p
from extension_protocol.connection import RpcError
from extension_protocol.errors import ExtensionError
from extension_protocol.workers import run_in_worker

__all__ = ["Canvas", "CanvasAction", "CanvasContext", "CanvasError", "check_canvases", "run_canvas_request"]

CanvasHandler = Callable[["CanvasContext"], Any]


class CanvasError(Exception):
    """A canvas handler's failure with a code of its own (``code``, ``message``), answered to
    the host as the JS SDK's ``CanvasError`` is."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class CanvasContext:
    """One request to a canvas, as its handler gets it (the SDK's ``CanvasProvider*Request``)."""

    session_id: str
    extension_id: str
    canvas_id: str
    instance_id: str
    input: Any = None
    """What the canvas was opened with, or the action's input (``None``: none)."""
    action_name: str | None = None
    """The action invoked (``None`` for open and close)."""
    can_show: bool = False
    """Whether the host has a client that shows canvases (``host.capabilities.canvases``)."""
    working_directory: str | None = None


@dataclass(frozen=True)
class CanvasAction:
    """An action of a canvas, which the agent or a client may invoke on an open instance.

    Raises:
        ExtensionError: the name is not a canvas name, starts with ``canvas.``, or the handler
            is not callable.
    """

    name: str
    handler: CanvasHandler
    description: str = ""
    input_schema: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        _check_name(self.name, "action name")
        if self.name.startswith(wire.RESERVED_ACTION_PREFIX):
            raise ExtensionError(
                f"canvas action {self.name!r}: names beginning with {wire.RESERVED_ACTION_PREFIX!r} are reserved"
            )
        if not callable(self.handler):
            raise ExtensionError(f"canvas action {self.name!r}: handler is not callable")

    def to_wire(self) -> wire.CanvasActionDeclaration:
        """The action as declared in ``session.resume``."""
        item: wire.CanvasActionDeclaration = {"name": self.name}
        if self.description:
            item["description"] = self.description
        if self.input_schema is not None:
            item["inputSchema"] = dict(self.input_schema)
        return item


@dataclass(frozen=True)
class Canvas:
    """A canvas: its id, the name shown for it, a one-sentence description for the agent, its
    ``open`` handler (required), an optional ``close`` handler, actions and open-input schema.

    Raises:
        ExtensionError: the id is not a canvas id, the display name is empty, a handler is not
            callable, or an action is given twice.
    """

    id: str
    display_name: str
    description: str
    open: CanvasHandler
    actions: Sequence[CanvasAction] = ()
    close: CanvasHandler | None = None
    input_schema: Mapping[str, Any] | None = None
    _actions: dict[str, CanvasAction] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_name(self.id, "canvas id")
        if not isinstance(self.display_name, str) or not self.display_name:
            raise ExtensionError(f"canvas {self.id!r}: display_name must be a non-empty string")
        if not isinstance(self.description, str):
            raise ExtensionError(f"canvas {self.id!r}: description must be a string")
        for handler, what in ((self.open, "open"), (self.close, "close")):
            if handler is not None and not callable(handler):
                raise ExtensionError(f"canvas {self.id!r}: {what} is not callable")
        actions: dict[str, CanvasAction] = {}
        for action in self.actions:
            if not isinstance(action, CanvasAction):
                raise ExtensionError(f"canvas {self.id!r}: actions must be CanvasAction objects")
            if action.name in actions:
                raise ExtensionError(f"canvas {self.id!r}: action {action.name!r} is given twice")
            actions[action.name] = action
        object.__setattr__(self, "_actions", actions)

    def to_wire(self) -> wire.CanvasDeclaration:
        """The canvas as declared in ``session.resume`` (handlers stay here)."""
        item: wire.CanvasDeclaration = {
            "id": self.id,
            "displayName": self.display_name,
            "description": self.description,
        }
        if self.input_schema is not None:
            item["inputSchema"] = dict(self.input_schema)
        if self.actions:
            item["actions"] = [action.to_wire() for action in self.actions]
        return item


def check_canvases(canvases: Iterable[Canvas]) -> tuple[Canvas, ...]:
    """``canvases`` as ``join_session`` takes them: each a :class:`Canvas`, within the wire's rules.

    Raises:
        ExtensionError: one is not a ``Canvas``, or they break a rule (an id given twice...).
    """
    checked = tuple(canvases)
    for canvas in checked:
        if not isinstance(canvas, Canvas):
            raise ExtensionError(f"canvases must be Canvas objects, got {type(canvas).__name__}")
    try:
        wire.check_canvas_rules([canvas.to_wire() for canvas in checked])
    except ValueError as exc:
        raise ExtensionError(str(exc)) from None
    return checked


async def run_canvas_request(canvases: Mapping[str, Canvas], method: str, params: Any) -> Any:
    """Run the host's ``canvas.open``, ``canvas.close`` or ``canvas.action.invoke`` on the
    canvas it names; returns the answer.

    Raises:
        RpcError: ``INTERNAL_ERROR``: no such canvas or action, or the handler failed
            (``data: {code, message}``, as the JS SDK answers).
    """
    request = params if isinstance(params, dict) else {}
    canvas = canvases.get(str(request.get("canvasId")))
    if canvas is None:
        raise RpcError(p.INTERNAL_ERROR, f'No canvas registered with id "{request.get("canvasId")}"')
    context = _context(request, method == wire.METHOD_CANVAS_ACTION)
    if method == wire.METHOD_CANVAS_OPEN:
        handler: CanvasHandler | None = canvas.open
    elif method == wire.METHOD_CANVAS_CLOSE:
        handler = canvas.close
    else:
        action = canvas._actions.get(str(context.action_name))
        if action is None:
            raise _error(CanvasError(wire.CANVAS_NO_HANDLER, "No handler implemented for this canvas action"))
        handler = action.handler
    if handler is None:
        return None
    try:
        if inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(type(handler).__call__):
            result = await handler(context)
        else:
            result = await run_in_worker(handler, context)
    except Exception as exc:
        raise _error(exc) from None
    if method == wire.METHOD_CANVAS_OPEN:
        return result if result is not None else {}
    return None if method == wire.METHOD_CANVAS_CLOSE else result


def _context(request: dict[str, Any], is_action: bool) -> CanvasContext:
    host = request.get("host")
    capabilities = host.get("capabilities") if isinstance(host, dict) else None
    session = request.get("session")
    directory = session.get("workingDirectory") if isinstance(session, dict) else None
    return CanvasContext(
        session_id=str(request.get("sessionId", "")),
        extension_id=str(request.get("extensionId", "")),
        canvas_id=str(request.get("canvasId", "")),
        instance_id=str(request.get("instanceId", "")),
        input=request.get("input"),
        action_name=str(request.get("actionName")) if is_action else None,
        can_show=bool(capabilities.get("canvases")) if isinstance(capabilities, dict) else False,
        working_directory=directory if isinstance(directory, str) else None,
    )


def _error(exc: Exception) -> RpcError:
    code = exc.code if isinstance(exc, CanvasError) else wire.CANVAS_HANDLER_ERROR
    message = str(exc) or type(exc).__name__
    return RpcError(p.INTERNAL_ERROR, message, {"code": code, "message": message})


def _check_name(name: Any, what: str) -> None:
    if not isinstance(name, str) or not wire.CANVAS_ID_PATTERN.fullmatch(name):
        raise ExtensionError(
            f"{what} {name!r}: must be 1-{wire.MAX_CANVAS_ID_CHARS} letters, digits, '_', '-', '.' or ':', "
            "starting with a letter or digit"
        )
