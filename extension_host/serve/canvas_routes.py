"""A served session's canvases for clients: the actions that show them, and the commands that
act on them.

The host's canvas events become session actions (:func:`canvas_action`, called by
:class:`~extension_host.serve.actions.EventMapper` for the events it does not map itself):

================================  ==============================================================
host event                        action
================================  ==============================================================
``session.canvas.opened``         ``session/canvasOpened {session, canvas}``: ``canvas`` is the
                                  open instance (``instanceId``, ``extensionId``, ``canvasId``,
                                  ``title?``, ``status?``, ``url?``, ``input?``) with what its
                                  declaration says (``displayName``, ``actions``: ``[{name,
                                  description?, inputSchema?}]``); a re-open (focus) of an
                                  ``instanceId`` is another ``canvasOpened`` that replaces it
``session.canvas.closed``         ``session/canvasClosed {session, instanceId}``
================================  ==============================================================

An open input or an action's input schema longer than :data:`MAX_SHOWN_JSON_CHARS` as JSON is
left out of the action (the extension has it whole). The state keeps the open ones under
``openCanvases`` (:mod:`extension_host.serve.state`), so a snapshot shows them.

:class:`CanvasCommands` answers ``invokeCanvasAction {session, instanceId, actionName, input?}``
→ ``{result}`` and ``closeCanvas {session, instanceId}`` → ``{}``, for any client (as a person
pressing a button in it: no hook judges them). An instance that is not open is ``NotFound``;
an input over :data:`MAX_INPUT_BYTES` as JSON is ``INVALID_PARAMS``; an unknown action or an
extension that fails, leaves or does not answer in time is ``INVALID_REQUEST``; each in one
line. This module knows events, actions and these commands; not clients or transports.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from extension_protocol.protocol import INVALID_PARAMS, INVALID_REQUEST

from ..calls.canvases import Canvases, CanvasFailure
from ..validation import validate
from . import params as shapes
from .errors import NOT_FOUND, ServeError

if TYPE_CHECKING:
    from .clients import Client, CommandHandler

__all__ = [
    "CANVAS_EVENTS",
    "MAX_INPUT_BYTES",
    "MAX_SHOWN_JSON_CHARS",
    "CanvasCommands",
    "CanvasDescriber",
    "canvas_action",
    "describe_canvas",
]

CANVAS_EVENTS: Final = frozenset({"session.canvas.opened", "session.canvas.closed"})
"""The host events :func:`canvas_action` maps."""
MAX_SHOWN_JSON_CHARS: Final = 4096
"""An open input or an action's input schema is in the action only when its JSON is at most
this long."""
MAX_INPUT_BYTES: Final = 64 * 1024
"""The largest ``input`` of ``invokeCanvasAction``, as JSON."""
_INSTANCE_KEYS: Final = ("instanceId", "extensionId", "canvasId", "title", "status", "url")

CanvasDescriber = Callable[[str, str], dict[str, Any]]
"""``(extensionId, canvasId)`` → what its declaration adds to a shown canvas (``displayName``,
``actions``); ``{}`` when it is no longer declared."""


def canvas_action(session: str, kind: Any, data: Mapping[str, Any], describe: CanvasDescriber | None) -> Any:
    """The action the canvas event ``kind`` with ``data`` makes for session ``session``; ``None``
    for any other event."""
    if kind == "session.canvas.closed":
        return {"type": "session/canvasClosed", "session": session, "instanceId": str(data.get("instanceId", ""))}
    if kind != "session.canvas.opened":
        return None
    canvas: dict[str, Any] = {key: str(data[key]) for key in _INSTANCE_KEYS if data.get(key) is not None}
    if data.get("input") is not None and _fits(data["input"]):
        canvas["input"] = data["input"]
    if describe is not None:
        canvas.update(describe(canvas.get("extensionId", ""), canvas.get("canvasId", "")))
    canvas.setdefault("actions", [])
    return {"type": "session/canvasOpened", "session": session, "canvas": canvas}


def describe_canvas(canvases: Canvases) -> CanvasDescriber:
    """A :data:`CanvasDescriber` over the canvases declared in ``canvases`` now."""

    def describe(owner: str, canvas_id: str) -> dict[str, Any]:
        for entry in canvases.declared:
            if entry.owner == owner and entry.canvas_id == canvas_id:
                actions = []
                for declared in entry.actions:
                    action: dict[str, Any] = {"name": declared.name}
                    if declared.description:
                        action["description"] = declared.description
                    if declared.input_schema is not None and _fits(declared.input_schema):
                        action["inputSchema"] = dict(declared.input_schema)
                    actions.append(action)
                return {"displayName": entry.display_name, "actions": actions}
        return {}

    return describe


def _fits(value: Any) -> bool:
    try:
        return len(json.dumps(value, ensure_ascii=False, default=str)) <= MAX_SHOWN_JSON_CHARS
    except (TypeError, ValueError):
        return False


class CanvasCommands:
    """``invokeCanvasAction`` and ``closeCanvas`` on the canvases ``canvases_of(uri)`` finds for
    a session (it raises ``SessionNotFound`` for one that is not there)."""

    def __init__(self, canvases_of: Callable[[str], Canvases]) -> None:
        self._canvases_of = canvases_of

    def commands(self) -> dict[str, CommandHandler]:
        """The handlers to add to the server's table."""
        return {"invokeCanvasAction": self._invoke, "closeCanvas": self._close}

    async def _invoke(self, client: Client, params: Any) -> dict[str, Any]:
        method = "invokeCanvasAction"
        checked = validate(method, shapes.InvokeCanvasActionParams, params)
        canvases = self._open(method, checked["session"], checked["instanceId"])
        given = checked.get("input")
        size = len(json.dumps(given, ensure_ascii=False).encode("utf-8", "surrogatepass"))
        if size > MAX_INPUT_BYTES:
            raise ServeError(
                INVALID_PARAMS,
                f"{method}: input has {size} bytes as JSON, over the limit of {MAX_INPUT_BYTES}; send less",
                {"field": "input"},
            )
        try:
            result = await canvases.invoke(checked["instanceId"], checked["actionName"], given)
        except CanvasFailure as exc:
            raise ServeError(INVALID_REQUEST, f"{method}: {exc}") from None
        return {"result": result}

    async def _close(self, client: Client, params: Any) -> dict[str, Any]:
        checked = validate("closeCanvas", shapes.CanvasInstanceParams, params)
        canvases = self._open("closeCanvas", checked["session"], checked["instanceId"])
        try:
            await canvases.close(checked["instanceId"])
        except CanvasFailure:  # closed meanwhile
            instance_id = checked["instanceId"]
            raise ServeError(NOT_FOUND, f"closeCanvas: canvas instance {instance_id!r} was closed meanwhile") from None
        return {}

    def _open(self, method: str, uri: str, instance_id: str) -> Canvases:
        """The canvases of session ``uri``, in which ``instance_id`` is open.

        Raises:
            ServeError: no such session (``SessionNotFound``), or the instance is not open
                (``NotFound``).
        """
        canvases = self._canvases_of(uri)
        open_now = [instance.instance_id for instance in canvases.open_instances]
        if instance_id not in open_now:
            listed = ", ".join(repr(name) for name in open_now[:10]) or "none"
            raise ServeError(
                NOT_FOUND,
                f"{method}: no canvas instance {instance_id!r} is open in session {uri} (open: {listed})",
                {"field": "instanceId"},
            )
        return canvases
