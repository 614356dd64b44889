"""The session's canvases: which extension declared which, the instances open now, and opening,
closing and acting on them.

A :class:`Canvases` holds the canvases each running extension declared when it joined
(:class:`CanvasEntry`, registered and withdrawn with its tools), the instances open in the
session (:class:`OpenCanvas`, by the caller's ``instanceId``) and how many clients that can show
a canvas are attached (:meth:`Canvases.attach_client`). Without such a client nothing is opened:
every open says so in one line. Opening sends ``canvas.open`` to the owner and records the
instance (re-opening an ``instanceId`` focuses it: the owner is asked again, no second instance
is made), closing sends ``canvas.close``, an action ``canvas.action.invoke``, each bounded by
the tool timeout; ``session.canvas.opened`` and ``session.canvas.closed`` tell the session. An
extension that leaves (fails, stops, detaches, is replaced by a reload) takes its canvases with
it and its instances close.

Two extensions may declare the same canvas id, as in Copilot CLI: a caller names the extension
(``extensionId``) when the id alone is ambiguous. The errors (:class:`CanvasFailure`) are the
CLI's texts where it has them. The hot path never reaches this module: the host looks here only
when a canvas is declared, opened or asked about.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, NotRequired, TypedDict
from urllib.parse import urlparse

from extension_protocol import canvases as wire
from extension_protocol.connection import ConnectionClosed, RpcError

from ..events import EventLog

__all__ = [
    "MAX_OPEN_CANVASES",
    "CanvasAction",
    "CanvasEntry",
    "CanvasFailure",
    "CanvasRequester",
    "Canvases",
    "OpenCanvas",
]

MAX_OPEN_CANVASES: Final = 64
"""Canvas instances open at once in one session."""
_URL_SCHEMES: Final = ("http", "https")

CanvasRequester = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""Sends a canvas request (method, params) to the owning extension and returns its answer,
bounded in time (raises ``RpcError``, ``ConnectionClosed`` or ``TimeoutError``)."""


class CanvasFailure(Exception):
    """A canvas could not be opened, closed or acted on: one line saying why and what to do."""


@dataclass(frozen=True, slots=True)
class CanvasAction:
    """One action a canvas declares."""

    name: str
    description: str = ""
    input_schema: Mapping[str, Any] | None = None

    def to_wire(self) -> dict[str, Any]:
        """As the SDK's ``CanvasAction``."""
        item: dict[str, Any] = {"name": self.name}
        if self.description:
            item["description"] = self.description
        if self.input_schema is not None:
            item["inputSchema"] = dict(self.input_schema)
        return item


@dataclass(frozen=True, slots=True)
class CanvasEntry:
    """One canvas an extension declared, and how to reach its owner."""

    canvas_id: str
    owner: str
    display_name: str
    description: str
    input_schema: Mapping[str, Any] | None = None
    actions: tuple[CanvasAction, ...] = ()
    request: CanvasRequester | None = field(default=None, compare=False, repr=False)
    holder: object = field(default=None, compare=False, repr=False)
    """The instance that declared it (a reload's new version replaces it under the same owner)."""

    def to_wire(self) -> dict[str, Any]:
        """As the SDK's ``DiscoveredCanvas`` (``session.canvas.list``)."""
        item: dict[str, Any] = {
            "canvasId": self.canvas_id,
            "extensionId": self.owner,
            "displayName": self.display_name,
            "description": self.description,
        }
        if self.input_schema is not None:
            item["inputSchema"] = dict(self.input_schema)
        if self.actions:
            item["actions"] = [action.to_wire() for action in self.actions]
        return item


class _OpenResult(TypedDict):
    url: NotRequired[str]
    title: NotRequired[str]
    status: NotRequired[str]


@dataclass(frozen=True, slots=True)
class OpenCanvas:
    """One open canvas instance: its id (the opener's), its canvas, and what the owner answered."""

    instance_id: str
    canvas_id: str
    owner: str
    input: Any = None
    title: str | None = None
    status: str | None = None
    url: str | None = None
    holder: object = field(default=None, compare=False, repr=False)

    def to_wire(self) -> dict[str, Any]:
        """As the SDK's ``OpenCanvasInstance`` (also the data of ``session.canvas.opened``)."""
        item: dict[str, Any] = {"instanceId": self.instance_id, "extensionId": self.owner, "canvasId": self.canvas_id}
        for key in ("title", "status", "url", "input"):
            value = getattr(self, key)
            if value is not None:
                item[key] = value
        return item


class Canvases:
    """The session's declared canvases, open instances and attached canvas clients."""

    def __init__(
        self,
        events: EventLog,
        session_id: Callable[[], str],
        working_directory: str,
    ) -> None:
        self._events = events
        self._session_id = session_id
        self._working_directory = working_directory
        self._declared: dict[str, list[CanvasEntry]] = {}
        self._open: dict[str, OpenCanvas] = {}
        self._clients = 0

    # -- declarations ---------------------------------------------------------------------

    @property
    def declared(self) -> list[CanvasEntry]:
        """Every canvas declared now, in the order the extensions joined."""
        return [entry for entries in self._declared.values() for entry in entries]

    def held_by(self, holder: object) -> list[CanvasEntry]:
        """The canvases ``holder`` (an extension's instance) declared."""
        return [entry for entries in self._declared.values() for entry in entries if entry.holder is holder]

    def replace(self, owner: str, entries: list[CanvasEntry], holder: object) -> None:
        """``owner``'s canvases are now ``entries``, declared by ``holder``; instances an earlier
        holder opened (a version a reload replaced) close."""
        if entries:
            self._declared[owner] = list(entries)
        else:
            self._declared.pop(owner, None)
        self._close_where(lambda instance: instance.owner == owner and instance.holder is not holder)

    def unregister(self, owner: str, holder: object) -> None:
        """``holder`` left: its canvases go and its instances close (without asking it)."""
        entries = self._declared.get(owner)
        if entries and all(entry.holder is holder for entry in entries):
            del self._declared[owner]
        self._close_where(lambda instance: instance.owner == owner and instance.holder is holder)

    def find(self, canvas_id: str, extension_id: str | None = None) -> CanvasEntry:
        """The canvas ``canvas_id`` (of ``extension_id`` when given).

        Raises:
            CanvasFailure: none matches, or several extensions declare it and none was named.
        """
        matches = [
            entry
            for entry in self.declared
            if entry.canvas_id == canvas_id and (extension_id is None or entry.owner == extension_id)
        ]
        if len(matches) == 1:
            return matches[0]
        if matches:
            owners = ", ".join(entry.owner for entry in matches)
            raise CanvasFailure(
                f'Canvas "{canvas_id}" is provided by multiple extensions ({owners}). '
                f"Call open_canvas again with extensionId set to one of: {owners}"
            )
        known = ", ".join(sorted({entry.canvas_id for entry in self.declared})) or "none"
        owner = f" of extension {extension_id}" if extension_id is not None else ""
        raise CanvasFailure(f'No canvas matches canvasId "{canvas_id}"{owner}. Declared canvases: {known}')

    # -- clients that show canvases ---------------------------------------------------------

    @property
    def can_show(self) -> bool:
        """Whether a client that can show canvases is attached."""
        return self._clients > 0

    def attach_client(self) -> Callable[[], None]:
        """Count one more client that shows canvases; returns its detach (idempotent). The
        first attached and the last detached are ``capabilities.changed``."""
        self._clients += 1
        if self._clients == 1:
            self._events.emit("capabilities.changed", {"ui": {"canvases": True}}, ephemeral=True)
        attached = [True]

        def detach() -> None:
            if not attached:
                return
            attached.clear()
            self._clients -= 1
            if self._clients == 0:
                self._events.emit("capabilities.changed", {"ui": {"canvases": False}}, ephemeral=True)

        return detach

    # -- instances --------------------------------------------------------------------------

    @property
    def open_instances(self) -> list[OpenCanvas]:
        """The instances open now, oldest first."""
        return list(self._open.values())

    def instance(self, instance_id: str) -> OpenCanvas:
        """The open instance ``instance_id``.

        Raises:
            CanvasFailure: it is not open (the CLI's text, listing those that are).
        """
        found = self._open.get(instance_id)
        if found is not None:
            return found
        if self._open:
            listed = ", ".join(self._open)
            raise CanvasFailure(
                f'Canvas instance "{instance_id}" is not open. Currently open instances: [{listed}]. '
                f'Verify open_canvas succeeded for "{instance_id}" and that you\'re passing the instanceId '
                "(not the canvasId)."
            )
        raise CanvasFailure(
            f'Canvas instance "{instance_id}" is not open. No canvases are currently open \u2014 call open_canvas '
            "first (and remember instanceId is the caller-chosen panel handle, not the canvasId)."
        )

    async def open(
        self, canvas_id: str, instance_id: str, input: Any = None, extension_id: str | None = None
    ) -> OpenCanvas:
        """Open ``canvas_id`` as ``instance_id`` (or focus that instance) with ``input``.

        Raises:
            CanvasFailure: no client can show it, the canvas or instance id is wrong, or the
                owner failed, left or did not answer in time.
        """
        if not self.can_show:
            raise CanvasFailure(
                "No canvas can be shown here: no client that shows canvases is attached to this session "
                "(the web page of 'extensions serve' is one)"
            )
        _check_instance_id(instance_id)
        entry = self.find(canvas_id, extension_id)
        existing = self._open.get(instance_id)
        if existing is not None and (existing.owner, existing.canvas_id) != (entry.owner, entry.canvas_id):
            raise CanvasFailure(
                f'Canvas instance ID "{instance_id}" ({existing.owner}/{existing.canvas_id}) is already owned by '
                "a different canvas. Pick a new instanceId."
            )
        if existing is None and len(self._open) >= MAX_OPEN_CANVASES:
            raise CanvasFailure(f"{MAX_OPEN_CANVASES} canvases are open, the most a session may have; close one first")
        params = self._params(entry, instance_id)
        if input is not None:
            params["input"] = input
        answer = await self._ask(entry, wire.METHOD_CANVAS_OPEN, params)
        result = _open_result(answer, entry)
        opened = OpenCanvas(instance_id, entry.canvas_id, entry.owner, input, holder=entry.holder, **result)
        if self._holder(entry.owner) is not entry.holder:
            raise CanvasFailure(f"extension {entry.owner} left while opening canvas {entry.canvas_id!r}")
        self._open[instance_id] = opened
        self._events.emit("session.canvas.opened", opened.to_wire(), ephemeral=True)
        return opened

    async def close(self, instance_id: str) -> OpenCanvas:
        """Close the open instance ``instance_id``: it is gone at once, then its owner is told
        (``canvas.close``; its failure is not the caller's).

        Raises:
            CanvasFailure: it is not open.
        """
        instance = self.instance(instance_id)
        self._forget(instance)
        entry = self._entry_of(instance)
        if entry is not None:
            try:
                await self._ask(entry, wire.METHOD_CANVAS_CLOSE, self._params(entry, instance_id))
            except CanvasFailure:
                pass  # as in the SDK: a close handler's failure is the extension's own business
        return instance

    async def invoke(self, instance_id: str, action_name: str, input: Any = None) -> Any:
        """Run ``action_name`` on the open instance ``instance_id`` with ``input``; returns the
        action's result.

        Raises:
            CanvasFailure: the instance is not open, the action unknown, or the owner failed,
                left or did not answer in time.
        """
        instance = self.instance(instance_id)
        entry = self._entry_of(instance)
        if entry is None:
            raise CanvasFailure(
                f'Canvas instance "{instance_id}" cannot be reached: its owning provider "{instance.owner}" is not '
                "connected. Re-issue open_canvas to rehydrate."
            )
        if not any(action.name == action_name for action in entry.actions):
            known = ", ".join(action.name for action in entry.actions)
            raise CanvasFailure(
                f'Unknown action "{action_name}" on canvas "{entry.canvas_id}". Known actions: [{known}]. '
                "Call list_canvas_capabilities to inspect the expected input schemas."
            )
        params = self._params(entry, instance_id)
        params["actionName"] = action_name
        if input is not None:
            params["input"] = input
        return await self._ask(entry, wire.METHOD_CANVAS_ACTION, params)

    # -- internals ----------------------------------------------------------------------------

    def _holder(self, owner: str) -> object:
        """Who declares ``owner``'s canvases now (``None``: nobody)."""
        entries = self._declared.get(owner)
        return entries[0].holder if entries else None

    def _entry_of(self, instance: OpenCanvas) -> CanvasEntry | None:
        return next(
            (
                entry
                for entry in self._declared.get(instance.owner, ())
                if entry.canvas_id == instance.canvas_id and entry.holder is instance.holder
            ),
            None,
        )

    def _params(self, entry: CanvasEntry, instance_id: str) -> dict[str, Any]:
        return {
            "sessionId": self._session_id(),
            "extensionId": entry.owner,
            "canvasId": entry.canvas_id,
            "instanceId": instance_id,
            "host": {"capabilities": {"canvases": self.can_show}},
            "session": {"workingDirectory": self._working_directory},
        }

    async def _ask(self, entry: CanvasEntry, method: str, params: dict[str, Any]) -> Any:
        if entry.request is None:
            raise CanvasFailure(f"extension {entry.owner} cannot be asked about canvas {entry.canvas_id!r}")
        try:
            return await entry.request(method, params)
        except RpcError as exc:
            raise CanvasFailure(f"Canvas operation failed: {entry.owner}: {exc.message}") from None
        except ConnectionClosed:
            raise CanvasFailure(
                f"Canvas operation failed: extension {entry.owner} stopped before answering {method}"
            ) from None
        except TimeoutError:
            raise CanvasFailure(
                f"Canvas operation failed: extension {entry.owner} did not answer {method} in time"
            ) from None

    def _forget(self, instance: OpenCanvas) -> None:
        if self._open.get(instance.instance_id) is instance:
            del self._open[instance.instance_id]
            closed = {"canvasId": instance.canvas_id, "extensionId": instance.owner, "instanceId": instance.instance_id}
            self._events.emit("session.canvas.closed", closed, ephemeral=True)

    def _close_where(self, gone: Callable[[OpenCanvas], bool]) -> None:
        for instance in [instance for instance in self._open.values() if gone(instance)]:
            self._forget(instance)


def _check_instance_id(instance_id: Any) -> None:
    if not isinstance(instance_id, str) or not instance_id.strip():
        raise CanvasFailure("instanceId must be a non-empty string: a handle you choose for this panel")
    if len(instance_id) > wire.MAX_INSTANCE_ID_CHARS:
        raise CanvasFailure(
            f"instanceId has {len(instance_id)} characters, over the limit of {wire.MAX_INSTANCE_ID_CHARS}"
        )


def _open_result(answer: Any, entry: CanvasEntry) -> _OpenResult:
    """The owner's answer to ``canvas.open``, checked (``url``: http or https only)."""
    if answer is None:
        return {}
    if not isinstance(answer, dict):
        raise CanvasFailure(f"extension {entry.owner} answered canvas.open with {type(answer).__name__}, not an object")
    result: _OpenResult = {}
    for key in ("url", "title", "status"):
        value = answer.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or len(value) > wire.MAX_CANVAS_TEXT_CHARS:
            raise CanvasFailure(
                f"extension {entry.owner} answered canvas.open with a {key} that is not a string of at most "
                f"{wire.MAX_CANVAS_TEXT_CHARS} characters"
            )
        result[key] = value
    url = result.get("url")
    if url is not None and urlparse(url).scheme not in _URL_SCHEMES:
        raise CanvasFailure(f"Canvas provider returned a URL with a disallowed scheme: {url[:200]} (use http or https)")
    return result
