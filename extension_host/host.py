"""The composition root: :class:`ExtensionHost` wires discovery, launch, registry and dispatch.

This is the one module that knows every other. It owns the session (its id and event log),
starts every discovered extension in parallel, reports the outcome, and routes tool calls.
Each concern it wires lives in its own module; the host only decides the order of things.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from sdk_extension.protocol import Event
from sdk_extension.results import ToolResult
from sdk_extension.tools import Tool

from .discovery import discover
from .dispatch import Dispatcher, builtin_entry
from .errors import ExtensionHostError, UnknownExtensionError
from .events import EventListener, EventLog
from .info import ExtensionInfo, ToolInfo
from .instance import ExtensionInstance, SendHandler, SessionContext
from .paths import find_project_root, logs_dir
from .paths import user_home as resolve_user_home
from .process import STOP_GRACE_SECONDS
from .registry import BUILTIN_OWNER, ToolRegistry

__all__ = ["DEFAULT_READINESS_TIMEOUT", "DEFAULT_TOOL_TIMEOUT", "ExtensionHost"]

DEFAULT_READINESS_TIMEOUT: Final = 30.0
"""Seconds an extension has to join after it is started (contract §3)."""
DEFAULT_TOOL_TIMEOUT: Final = 600.0
"""Seconds a tool call may run before its result is ``timeout``; generous, as tools build and test."""


class ExtensionHost:
    """Runs the extensions of one project for one session.

    ::

        async with ExtensionHost(project_root) as host:
            result = await host.call_tool("add", {"a": 1, "b": 2})

    Args:
        project_root: any folder of the project; its git root is used (default: the cwd).
        user_home: the user's extension-host folder (default: ``$EXTENSION_HOST_HOME`` or the
            platform's user config folder).
        builtin_tools: tools of the embedding application; extensions cannot take their names.
        readiness_timeout: seconds each extension has to join.
        tool_timeout: seconds a tool call may take before it yields a ``timeout`` result.
        stop_grace: seconds each step of the stop ladder waits.
        environment: the base environment of extension processes (default: this process's).
        on_send: called for ``session.send`` from an extension (the agent's turn); without it
            the session goes idle at once.
    """

    def __init__(
        self,
        project_root: Path | str | None = None,
        user_home: Path | str | None = None,
        *,
        builtin_tools: Iterable[Tool] = (),
        readiness_timeout: float = DEFAULT_READINESS_TIMEOUT,
        tool_timeout: float = DEFAULT_TOOL_TIMEOUT,
        stop_grace: float = STOP_GRACE_SECONDS,
        environment: Mapping[str, str] | None = None,
        on_send: SendHandler | None = None,
    ) -> None:
        self.project_root: Final = find_project_root(project_root)
        self.user_home: Final = resolve_user_home(user_home)
        self.session_id: Final = str(uuid.uuid4())
        self.events: Final = EventLog()
        self._registry = ToolRegistry()
        self._builtin_tools = list(builtin_tools)
        self._context = SessionContext(
            session_id=self.session_id,
            project_root=self.project_root,
            logs_dir=logs_dir(self.user_home),
            registry=self._registry,
            events=self.events,
            environment=dict(os.environ if environment is None else environment),
            readiness_timeout=readiness_timeout,
            tool_timeout=tool_timeout,
            stop_grace=stop_grace,
            on_send=on_send,
        )
        self._dispatcher = Dispatcher(self._registry, self.events, self._unavailable_reason)
        self._instances: list[ExtensionInstance] = []
        self._not_started: list[ExtensionInfo] = []
        self._order: list[str] = []
        self._started = False
        self._stopped = False

    # -- lifecycle ----------------------------------------------------------------------

    async def __aenter__(self) -> ExtensionHost:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()

    async def start(self) -> None:
        """Discover and start every extension; return when each is running or failed.

        Extensions start in parallel; tools are registered in load order, so which of two
        colliding extensions fails never depends on timing.

        Raises:
            ExtensionHostError: the host was already started.
        """
        if self._started:
            raise ExtensionHostError("this ExtensionHost was already started; create a new one")
        self._started = True
        self._registry.register(
            BUILTIN_OWNER, [builtin_entry(tool, self.session_id) for tool in self._builtin_tools]
        )
        previous: asyncio.Event | None = None
        for found in discover(self.project_root, self.user_home):
            spec = found.spec
            self._order.append(spec.id)
            if found.shadowed_by is not None or found.problem is not None:
                self._not_started.append(
                    ExtensionInfo(
                        id=spec.id,
                        name=spec.name,
                        source=spec.source,
                        path=spec.folder,
                        status="shadowed" if found.shadowed_by else "failed",
                        error=found.problem,
                        shadowed_by=found.shadowed_by,
                    )
                )
                continue
            instance = ExtensionInstance(spec, self._context, after=previous)
            previous = instance.settled
            self._instances.append(instance)
        self.events.subscribe(self._forward_to_extensions)
        await asyncio.gather(*(instance.start() for instance in self._instances))
        self.events.emit(
            "session.extensions_loaded",
            {"extensions": [info.to_json() for info in self.extensions]},
            ephemeral=True,
        )

    async def stop(self) -> None:
        """Stop every extension (stop ladder: end of stream, SIGTERM, SIGKILL); idempotent."""
        if self._stopped:
            return
        self._stopped = True
        try:
            await asyncio.gather(*(instance.stop() for instance in self._instances))
        except BaseException:
            for instance in self._instances:
                instance.kill()
            raise

    # -- what is loaded -----------------------------------------------------------------

    @property
    def extensions(self) -> list[ExtensionInfo]:
        """Every discovered extension in load order, including shadowed and failed ones."""
        by_id = {info.id: info for info in self._not_started}
        by_id.update({instance.id: instance.info() for instance in self._instances})
        return [by_id[extension_id] for extension_id in self._order]

    def extension(self, name: str) -> ExtensionInfo:
        """One extension by id (``project:lint``) or name (the one that is not shadowed).

        Raises:
            UnknownExtensionError: nothing of that name or id was discovered.
        """
        infos = self.extensions
        for info in infos:
            if info.id == name:
                return info
        matches = [info for info in infos if info.name == name]
        if not matches:
            raise UnknownExtensionError(name, [info.id for info in infos])
        return next((info for info in matches if info.status != "shadowed"), matches[0])

    @property
    def tools(self) -> dict[str, ToolInfo]:
        """Every tool offered right now, by name."""
        return {
            entry.name: ToolInfo(entry.name, entry.description, entry.parameters, entry.owner)
            for entry in self._registry.entries()
        }

    def on_event(self, listener: EventListener) -> Any:
        """Call ``listener(event)`` for every later session event; returns an unsubscribe function."""
        return self.events.subscribe(listener)

    # -- calls --------------------------------------------------------------------------

    async def call_tool(
        self, name: str, arguments: Any = None, *, tool_call_id: str | None = None
    ) -> ToolResult:
        """Call a tool through the host and return its result.

        Failures of the tool or its extension come back as a result (``failure``, ``timeout``),
        never as an exception.

        Raises:
            UnknownToolError: no extension or built-in offers ``name``.
        """
        return await self._dispatcher.call_tool(name, arguments, tool_call_id=tool_call_id)

    # -- internals ----------------------------------------------------------------------

    def _unavailable_reason(self, tool_name: str) -> str | None:
        for instance in self._instances:
            if tool_name in instance.lost_tools and instance.status == "failed":
                return f"tool {tool_name!r} is unavailable: extension {instance.id} failed: {instance.error}"
        return None

    def _forward_to_extensions(self, event: Event) -> None:
        for instance in self._instances:
            instance.deliver(event)
