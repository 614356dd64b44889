"""The :class:`Session` an extension talks to once joined, and the client behind it.

The client sends ``connect`` and ``session.resume`` with the extension's tools, hook types and
matchers, then answers ``external_tool.requested`` events and ``hooks.invoke`` requests until the
host closes the connection; :mod:`sdk_extension.join` sets it up (``join_session``).

Every request (a tool call, a hook call, a permission request) is first resolved to the joined
session or to a subagent's child session of it (:mod:`sdk_extension.subagents`); handlers see
the child's id when it came from a child, and one for no joined session is refused.

Every tool call is answered: a result that cannot be sent (larger than the host accepts, not
JSON) is replaced by a ``failure`` that says why. A call the host withdraws
(``external_tool.completed`` while it runs: its turn was cancelled) is cancelled instead, and
not answered. A sync hook stuck in calls the host gave up
on is not started again once a few are (the call is answered with an error at once), and sync
hooks run on threads of their own (:mod:`extension_protocol.workers`), so a hung hook never starves
the extension's tools.

This module maps protocol messages to tools, hooks and event handlers; framing and request
correlation are :mod:`~extension_protocol.connection`'s.
"""

from __future__ import annotations

import asyncio
import functools
import os
import sys
import threading
import traceback
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

from extension_protocol import protocol as p
from extension_protocol.connection import Connection, ConnectionClosed, RpcError
from extension_protocol.errors import ExtensionError, JoinError, SessionRpcError
from extension_protocol.framing import MessageTooLarge, describe_size
from extension_protocol.results import ToolResult
from extension_protocol.tasks import BackgroundTasks
from extension_protocol.tools import Tool, ToolInvocation, run_tool
from extension_protocol.workers import STUCK_CALLS_PER_KEY, AbandonableRunner, StillRunning, hook_workers

from .subagents import SUBAGENT_EVENTS, ChildSessions, CustomAgent, not_supported

if TYPE_CHECKING:  # what only some extensions use loads on first use
    from extension_protocol.commands import Command

    from .canvases import Canvas
    from .event_log import EventLogReader
    from .permissions import PermissionHandler

__all__ = ["Session"]

EventHandler = Callable[[dict[str, Any]], Any]

_ROUTING_EVENTS: Final = SUBAGENT_EVENTS | {"session.shutdown"}
"""Events every join asks for: they start, end and clean up child sessions."""


class Session:
    """The joined session, as one extension sees it.

    Safe to use from any thread: tool handlers run on worker threads and may call
    :meth:`log` or :meth:`send`. Inside ``async`` code use the ``*_async`` forms.
    """

    def __init__(self, client: _Client, result: Mapping[str, Any]) -> None:
        self._client = client
        self._joined(result)

    def _joined(self, result: Mapping[str, Any]) -> None:
        """Take in what the host answered the join with."""
        self.session_id: str = str(result.get("sessionId") or self._client.session_id)
        """The id of the session this extension joined."""
        self.workspace_path: str | None = result.get("workspacePath")
        """The session's workspace folder, when the host has one."""
        self.capabilities: dict[str, Any] = dict(result.get("capabilities") or {})
        """What the host said it supports (``ui``: ``elicitation``, ``mcpApps``, ``canvases``)."""
        self.start_time: str | None = result.get("startTime")
        """When the session started (ISO 8601), when the host says."""
        model_state = result.get("modelState")
        self.model_id: str | None = model_state.get("modelId") if isinstance(model_state, dict) else None
        """The agent's model when the extension joined, when the host names one."""
        self.host_version: str | None = self._client.host_version
        """The host's version, from its answer to ``connect``."""

    @property
    def closed(self) -> bool:
        """True once the host closed the connection."""
        return self._client.connection.closed

    async def wait_closed(self) -> None:
        """Wait until the host closes the connection (the async form's way to stay alive)."""
        await asyncio.shield(self._client.closed)

    def log(
        self,
        message: str,
        level: p.LogLevel = "info",
        ephemeral: bool = False,
        *,
        category: str | None = None,
        url: str | None = None,
    ) -> None:
        """Add ``message`` to the session timeline; returns at once and never blocks.

        ``category`` becomes the event's ``infoType``/``warningType``/``errorType`` (default
        ``notification``); ``url`` is a link the user can open.

        Raises:
            ValueError: ``level`` is not info, warning or error.
        """
        if level not in p.LOG_LEVELS:
            raise ValueError(f"log level {level!r} is not one of {', '.join(p.LOG_LEVELS)}")
        params: p.LogParams = {"sessionId": self.session_id, "message": str(message), "level": level}
        if ephemeral:
            params["ephemeral"] = True
        if category is not None:
            params["type"] = category
        if url is not None:
            params["url"] = url
        self._client.call_soon(self._client.request_in_background, p.METHOD_SESSION_LOG, params)

    async def send_async(self, prompt: str, attachments: list[dict[str, Any]] | None = None) -> str:
        """Send a prompt into the session; returns the new message's id."""
        params: p.SendParams = {"sessionId": self.session_id, "prompt": prompt}
        if attachments:
            params["attachments"] = attachments
        result = await self._client.connection.request(p.METHOD_SESSION_SEND, params)
        return str((result or {}).get("messageId", ""))

    def send(self, prompt: str, attachments: list[dict[str, Any]] | None = None) -> str:
        """Blocking form of :meth:`send_async` (not for use inside async handlers)."""
        return str(self._client.run_blocking(self.send_async(prompt, attachments), "send", None))

    async def send_and_wait_async(
        self, prompt: str, attachments: list[dict[str, Any]] | None = None, timeout: float = 60.0
    ) -> dict[str, Any] | None:
        """Send a prompt and wait for the session to go idle.

        Returns the last ``assistant.message`` event that arrived meanwhile, or ``None``.

        Raises:
            TimeoutError: the session did not go idle within ``timeout`` seconds.
            ExtensionError: the run ended with a ``session.error`` (as the published SDK's
                ``sendAndWait`` rejects), with its message.
            RpcError: the host refused the prompt (no agent, a bad attachment, a rejection).
        """
        idle = asyncio.get_running_loop().create_future()
        last: list[dict[str, Any]] = []

        def watch(event: dict[str, Any]) -> None:
            kind = event.get("type")
            if kind == "assistant.message":
                last.append(event)
            elif idle.done():
                return
            elif kind == "session.idle":
                idle.set_result(None)
            elif kind == "session.error" and "errorType" in (event.get("data") or {}):
                # Errors of a run carry errorType; an extension's error log does not.
                idle.set_exception(ExtensionError(str(event["data"].get("message", "the run failed"))))

        unsubscribe = [self.on(kind, watch) for kind in ("assistant.message", "session.idle", "session.error")]
        try:
            await self.send_async(prompt, attachments)
            async with asyncio.timeout(timeout):
                await idle
        finally:
            for stop in unsubscribe:
                stop()
        return last[-1] if last else None

    def send_and_wait(
        self, prompt: str, attachments: list[dict[str, Any]] | None = None, timeout: float = 60.0
    ) -> dict[str, Any] | None:
        """Blocking form of :meth:`send_and_wait_async` (not for use inside async handlers)."""
        event: dict[str, Any] | None = self._client.run_blocking(
            self.send_and_wait_async(prompt, attachments, timeout), "send_and_wait", timeout + 5
        )
        return event

    async def rpc_async(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        """Call a session-scoped method of the host (the JS SDK's ``session.rpc``), e.g.
        ``await session.rpc_async("session.extensions.list")``; ``sessionId`` is added for you.

        Raises:
            SessionRpcError: the host refused or failed it (``.code``: ``-32002`` when the host
                does not support it, ``-32601`` when it does not know it).
        """
        try:
            return await self._client.connection.request(method, {**(params or {}), "sessionId": self.session_id})
        except RpcError as exc:
            raise SessionRpcError(method, exc.message, exc.code, exc.data) from None

    def rpc(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        """Blocking form of :meth:`rpc_async` (not for use inside async handlers)."""
        return self._client.run_blocking(self.rpc_async(method, params), "rpc", None)

    @property
    def event_log(self) -> EventLogReader:
        """The session's events, read by cursor (:mod:`sdk_extension.event_log`)."""
        from .event_log import EventLogReader

        return EventLogReader(self)

    async def detach_async(self) -> None:
        """Leave the session (the JS SDK's ``disconnect()``): the host withdraws this
        extension's tools, commands and hooks; the process keeps running until it ends."""
        await self.rpc_async(p.METHOD_SESSION_DETACH)
        self._client.children.unregister(self.session_id)

    def detach(self) -> None:
        """Blocking form of :meth:`detach_async` (not for use inside async handlers)."""
        self._client.run_blocking(self.detach_async(), "detach", None)

    async def rejoin_async(self, timeout: float = 30.0) -> None:
        """Join the session again after :meth:`detach_async`, from this process, with the same
        tools, hooks and commands (``connect`` and ``session.resume`` again, as a JS extension's
        second ``joinSession()`` does).

        Raises:
            JoinError: the host refused the join, or did not answer within ``timeout`` s.
        """
        self._joined(await self._client.handshake(timeout))

    def rejoin(self, timeout: float = 30.0) -> None:
        """Blocking form of :meth:`rejoin_async` (not for use inside async handlers)."""
        self._client.run_blocking(self.rejoin_async(timeout), "rejoin", None)

    def on(self, event_type: str, handler: EventHandler) -> Callable[[], None]:
        """Call ``handler(event)`` for each session event of ``event_type`` (``"*"`` for all).
        ``"session.lifecycle"`` subscribes to the host's ``session.lifecycle`` notifications
        instead: ``handler`` gets ``{type, sessionId, metadata}`` (``session.updated`` after
        each persisted event).

        The handler runs on the protocol loop: keep it quick, or make it ``async``. Its
        exceptions are written to the extension's log. Returns a function that unsubscribes.
        """
        return self._client.subscribe(event_type, handler)


class _Client:
    """The protocol side of one joined extension."""

    def __init__(
        self,
        session_id: str,
        tools: Iterable[Tool],
        hooks: dict[str, Callable[..., Any]],
        connection: Connection,
        requested_environment: tuple[str, ...] = (),
        hook_matchers: dict[str, list[str]] | None = None,
        commands: Iterable[Command] = (),
        custom_agents: Iterable[CustomAgent] = (),
        canvases: Iterable[Canvas] = (),
    ) -> None:
        self.session_id = session_id
        self.children: ChildSessions[_Client] = ChildSessions(custom_agents)
        """The joined session, its subagents' child sessions, and this extension's agents."""
        self.children.register(session_id, self)
        self.hook_matchers = hook_matchers or {}
        """Tool patterns per hook, keyed by wire hook type (``session.resume``'s ``hookMatchers``)."""
        self.requested_environment = requested_environment
        self.tools = {t.name: t for t in tools}
        self.commands = {c.name: c for c in commands}
        self.hooks = hooks
        self.permission_handler: PermissionHandler | None = None
        """Answers ``permission.requested`` (``join_session(on_permission_request=...)``)."""
        self.connection = connection
        self.loop = asyncio.get_running_loop()
        self.loop_thread = threading.get_ident()
        self.closed: asyncio.Future[None] = self.loop.create_future()
        self.released = asyncio.Event()
        """Set once join_session has returned: calls wait for it, so handlers can use ``session``."""
        self.subscribers: dict[str, list[EventHandler]] = {}
        self.interests: set[str] = set()
        self.background = BackgroundTasks("the extension's session")
        self.running_tools: dict[str, asyncio.Task[None]] = {}
        """The tool calls running now, by request id: one the host withdraws is cancelled."""
        self.sync_hooks = AbandonableRunner(hook_workers)
        """Runs plain-``def`` hooks, keyed by hook name, refusing one that is still stuck."""
        self.host_version: str | None = None
        connection.on_notification(p.METHOD_SESSION_EVENT, self.on_session_event)
        connection.on_notification(p.METHOD_SESSION_LIFECYCLE, self.on_lifecycle)
        # Several per tool call: unread until someone subscribes (session.deleted still is).
        connection.skip_unread((p.SESSION_UPDATED_START,))
        connection.on_request(p.METHOD_HOOKS_INVOKE, self.on_hooks_invoke)
        self.canvases = {canvas.id: canvas for canvas in canvases}
        if self.canvases:
            from extension_protocol import canvases as wire_canvases

            for method in (
                wire_canvases.METHOD_CANVAS_OPEN,
                wire_canvases.METHOD_CANVAS_CLOSE,
                wire_canvases.METHOD_CANVAS_ACTION,
            ):
                connection.on_request(method, functools.partial(self.on_canvas_request, method))

    async def join(self, timeout: float) -> Session:
        self.background.spawn(self._serve())
        return Session(self, await self.handshake(timeout))

    async def handshake(self, timeout: float) -> dict[str, Any]:
        """``connect`` and ``session.resume``: the host's answer to the join."""
        try:
            async with asyncio.timeout(timeout):
                answer = await self.connection.request(p.METHOD_CONNECT, {})
                version = (answer or {}).get("protocolVersion")
                if version != p.PROTOCOL_VERSION:
                    raise JoinError(
                        f"the host speaks protocol version {version!r}; this SDK speaks {p.PROTOCOL_VERSION}"
                    )
                host_version = answer.get("version")
                self.host_version = host_version if isinstance(host_version, str) else None
                resume: p.ResumeParams = {
                    "sessionId": self.session_id,
                    "tools": [t.to_wire() for t in self.tools.values()],
                    "hooks": bool(self.hooks),
                    "hookTypes": [p.HOOK_WIRE_NAMES[name] for name in self.hooks],
                    "eventTypes": sorted(self.interests | _ROUTING_EVENTS),
                    "disableResume": True,
                }
                if self.requested_environment:
                    resume["requestedEnvironmentVariables"] = list(self.requested_environment)
                if self.hook_matchers:
                    resume["hookMatchers"] = self.hook_matchers
                if self.commands:
                    resume["commands"] = [c.to_wire() for c in self.commands.values()]
                if self.permission_handler is not None:
                    resume["requestPermission"] = True
                if self.canvases:
                    resume["canvases"] = [dict(canvas.to_wire()) for canvas in self.canvases.values()]
                if self.children.agents:
                    resume["customAgents"] = [agent.to_wire(self.tools) for agent in self.children.agents.values()]
                result = await self.connection.request(p.METHOD_SESSION_RESUME, resume)
        except RpcError as exc:
            self.connection.close()
            raise JoinError(f"the host refused to load this extension: {exc.message}", exc.code) from None
        except ConnectionClosed as exc:
            raise JoinError(f"the connection to the host ended while joining: {exc}") from None
        except TimeoutError:
            self.connection.close()
            raise JoinError(f"the host did not accept the join within {timeout:g} s") from None
        granted = (result or {}).get("grantedEnvironmentVariables") if isinstance(result, dict) else None
        if isinstance(granted, dict):
            # Only names it asked for, as the Copilot SDK does: the host cannot plant others.
            for name, value in granted.items():
                if name in self.requested_environment and isinstance(value, str):
                    os.environ[name] = value
        self.children.register(self.session_id, self)
        return result if isinstance(result, dict) else {}

    async def _serve(self) -> None:
        try:
            await self.connection.serve()
        except Exception as exc:
            print(f"extension protocol stopped: {exc}", file=sys.stderr)
        finally:
            self.children.clear()
            if not self.closed.done():
                self.closed.set_result(None)

    # -- thread plumbing ---------------------------------------------------------------

    def call_soon(self, function: Callable[..., Any], *args: Any) -> None:
        if threading.get_ident() == self.loop_thread:
            function(*args)
        else:
            self.loop.call_soon_threadsafe(function, *args)

    def run_blocking(self, coroutine: Any, name: str, timeout: float | None) -> Any:
        if threading.get_ident() == self.loop_thread:
            coroutine.close()
            raise ExtensionError(
                f"session.{name}() would block the protocol loop; in async code use 'await session.{name}_async(...)'"
            )
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def request_in_background(self, method: str, params: Any) -> None:
        """Write a request now (keeping order); report a failed answer, or a request that
        cannot be sent (too large, not JSON), in the log."""
        try:
            self._send_in_background(method, params)
        except ConnectionClosed:
            return
        except (TypeError, ValueError) as exc:
            print(f"{method} was not sent: {exc}", file=sys.stderr)

    def _send_in_background(self, method: str, params: Any) -> None:
        self.connection.send_request_nowait(method, params, functools.partial(_report_failure, method))

    # -- events ------------------------------------------------------------------------

    def subscribe(self, event_type: str, handler: EventHandler) -> Callable[[], None]:
        def add() -> None:
            self.subscribers.setdefault(event_type, []).append(handler)
            if event_type == p.METHOD_SESSION_LIFECYCLE:
                self.connection.skip_unread(())
            if event_type not in self.interests:
                self.interests.add(event_type)
                params: p.RegisterInterestParams = {"sessionId": self.session_id, "eventType": event_type}
                self.request_in_background(p.METHOD_REGISTER_INTEREST, params)

        def remove() -> None:
            handlers = self.subscribers.get(event_type, [])
            if handler in handlers:
                handlers.remove(handler)

        self.call_soon(add)
        return lambda: self.call_soon(remove)

    def on_lifecycle(self, params: Any) -> None:
        """``session.lifecycle``: to the handlers of ``session.on("session.lifecycle", ...)``."""
        if isinstance(params, dict):
            if params.get("type") == "session.deleted" and isinstance(params.get("sessionId"), str):
                self.children.unregister(params["sessionId"])
            self._dispatch(p.METHOD_SESSION_LIFECYCLE, self.subscribers.get(p.METHOD_SESSION_LIFECYCLE, ()), params)

    def on_session_event(self, params: Any) -> None:
        event = params.get("event") if isinstance(params, dict) else None
        if not isinstance(event, dict):
            return
        event_type = event.get("type")
        stream = params.get("sessionId")
        stream_id = stream if isinstance(stream, str) else self.session_id
        if event_type == "external_tool.requested":
            data = event.get("data") or {}
            selected = self.tools.get(str(data.get("toolName")))
            if selected is not None:
                run = self._run_tool(selected, data, *self._route_tool(selected.name, data, stream_id, event))
                self._track_tool(str(data.get("requestId")), self.background.spawn(run))
        elif event_type == "external_tool.completed":
            # The host no longer waits for this call (its turn was cancelled): stop it. A plain
            # ``def`` tool's thread runs on, but its result is not sent.
            withdrawn = self.running_tools.pop(str((event.get("data") or {}).get("requestId")), None)
            if withdrawn is not None:
                withdrawn.cancel()
        elif event_type == "command.execute":
            self.background.spawn(self._run_command(event.get("data") or {}))
        elif event_type == "permission.requested" and self.permission_handler is not None:
            self._permission_requested(self.permission_handler, event, stream_id)
        elif event_type in _ROUTING_EVENTS:
            if event_type == "session.shutdown":
                self.children.forget_children(stream_id)
            else:
                self.children.on_event(stream_id, event)
        self._dispatch(event_type, (*self.subscribers.get(str(event_type), ()), *self.subscribers.get("*", ())), event)

    def _dispatch(self, event_type: Any, handlers: Iterable[EventHandler], message: dict[str, Any]) -> None:
        for handler in handlers:
            try:
                outcome = handler(message)
                if asyncio.iscoroutine(outcome):
                    self.background.spawn(self._guard_handler(outcome, event_type))
            except Exception:
                print(f"handler for {event_type} events failed:", file=sys.stderr)
                traceback.print_exc()

    async def _guard_handler(self, outcome: Any, event_type: Any) -> None:
        try:
            await outcome
        except Exception:
            print(f"handler for {event_type} events failed:", file=sys.stderr)
            traceback.print_exc()

    def _track_tool(self, request_id: str, task: asyncio.Task[None]) -> None:
        if task.done():
            return
        self.running_tools[request_id] = task
        task.add_done_callback(
            lambda done: self.running_tools.pop(request_id) if self.running_tools.get(request_id) is done else None
        )

    def _route_tool(
        self, tool_name: str, data: dict[str, Any], stream_id: str, event: dict[str, Any]
    ) -> tuple[str, str | None]:
        """The session id a call's handler sees, or why it is refused: a call for no joined
        session, or from a child whose agent may not use this tool."""
        requested = data.get("sessionId")
        session_id = requested if isinstance(requested, str) else stream_id
        _, child, refusal = self.children.route(session_id, event.get("agentId"))
        if child is not None and not self.children.allows(child, tool_name):
            refusal = not_supported(tool_name)
        return child or session_id, refusal

    async def _run_tool(self, selected: Tool, data: dict[str, Any], session_id: str, refusal: str | None) -> None:
        await self.released.wait()
        if refusal is not None:
            result = ToolResult(refusal, "failure", error=refusal)
        else:
            invocation = ToolInvocation(
                session_id=session_id,
                tool_call_id=str(data.get("toolCallId", "")),
                tool_name=selected.name,
                arguments=data.get("arguments"),
            )
            result = await run_tool(selected, data.get("arguments"), invocation)
        self._send_result(selected.name, str(data.get("requestId")), result)

    async def _run_command(self, data: dict[str, Any]) -> None:
        await self.released.wait()
        name = str(data.get("commandName", ""))
        params: p.HandlePendingCommandParams = {"sessionId": self.session_id, "requestId": str(data.get("requestId"))}
        selected = self.commands.get(name)
        if selected is None:
            params["error"] = f"Unknown command: {name}"  # the JS SDK's words
        else:
            from extension_protocol.commands import CommandContext, run_command

            context = CommandContext(
                session_id=self.session_id,
                command_name=name,
                command=str(data.get("command", f"/{name}")),
                args=str(data.get("args", "")),
            )
            error = await run_command(selected, context)
            if error is not None:
                params["error"] = error
        self.request_in_background(p.METHOD_HANDLE_PENDING_COMMAND, params)

    def _permission_requested(self, handler: PermissionHandler, event: dict[str, Any], stream_id: str) -> None:
        """Resolve a permission request's session; one for no joined session is left unanswered."""
        data = event.get("data") or {}
        requested = data.get("sessionId")
        session_id = requested if isinstance(requested, str) else stream_id
        _, child, error = self.children.route(session_id, event.get("agentId"))
        if error is not None:
            print(f"permission request {data.get('requestId')} not answered: {error}", file=sys.stderr)
            return
        self.background.spawn(self._answer_permission(handler, data, child or self.session_id))

    async def _answer_permission(self, handler: PermissionHandler, data: dict[str, Any], session_id: str) -> None:
        await self.released.wait()
        from .permissions import decide_permission

        # Plain handlers run on the hook threads: they may block (asking somebody).
        decision = await decide_permission(
            handler, data, session_id, functools.partial(self.sync_hooks.run, "on_permission_request")
        )
        if decision is not None:
            params: p.HandlePendingPermissionParams = {
                "sessionId": self.session_id,
                "requestId": str(data.get("requestId")),
                "result": decision,
            }
            self.request_in_background(p.METHOD_HANDLE_PENDING_PERMISSION, params)

    def _send_result(self, tool_name: str, request_id: str, result: ToolResult) -> None:
        """Send a tool's result; if it cannot go (too large, not JSON), a failure saying why."""
        params: p.HandlePendingToolCallParams = {
            "sessionId": self.session_id,
            "requestId": request_id,
            "result": result.to_wire(),
        }
        try:
            self._send_in_background(p.METHOD_HANDLE_PENDING_TOOL_CALL, params)
            return
        except ConnectionClosed:
            return
        except MessageTooLarge as exc:
            text = (
                f"the result of tool {tool_name!r} is {describe_size(exc.size)}, "
                f"over the limit of {describe_size(exc.limit)} "
                "a message to the host may be; return less (a summary, or the path of a file)"
            )
        except (TypeError, ValueError) as exc:
            text = f"the result of tool {tool_name!r} could not be sent: {exc}"
        print(text, file=sys.stderr)
        params["result"] = ToolResult(text, "failure", error=text).to_wire()
        self.request_in_background(p.METHOD_HANDLE_PENDING_TOOL_CALL, params)

    # -- hooks -------------------------------------------------------------------------

    async def on_canvas_request(self, method: str, params: Any) -> Any:
        """``canvas.open``, ``canvas.close`` or ``canvas.action.invoke``: to the canvas it names."""
        from .canvases import run_canvas_request

        await self.released.wait()
        return await run_canvas_request(self.canvases, method, params)

    async def on_hooks_invoke(self, params: Any) -> dict[str, Any]:
        hook_type = params.get("hookType") if isinstance(params, dict) else None
        name = p.hook_name(hook_type) if isinstance(hook_type, str) else None
        handler = self.hooks.get(name) if name is not None else None
        if name is None or handler is None:
            return {"output": None}
        requested = params.get("sessionId", self.session_id)
        wire_input = params.get("input") or {}
        # A child's hook names the parent with the child's id as its input's ``sessionId`` (else
        # ``agentId``), or names the child itself. A hook about a child that runs in the parent
        # (subagent start and stop) has the parent's ``sessionId``: it is the parent's.
        agent_id = wire_input.get("sessionId", wire_input.get("agentId")) if isinstance(wire_input, dict) else None
        session_id = str(requested)
        _, child, error = self.children.route(session_id, agent_id)
        if error is not None:
            raise RpcError(p.INVALID_PARAMS, error, {"sessionId": session_id})
        await self.released.wait()
        # Loaded on first use: the typed inputs and outputs cost start-up time otherwise.
        from extension_protocol.errors import HookOutputError
        from extension_protocol.hook_models import HookInvocation
        from extension_protocol.hook_points import HOOK_POINTS

        point = HOOK_POINTS[name]
        try:
            value = point.input_from_wire(wire_input)
        except (TypeError, ValueError) as exc:
            raise RpcError(p.INVALID_PARAMS, str(exc)) from None
        invocation = HookInvocation(session_id=child or session_id)
        try:
            if asyncio.iscoroutinefunction(handler):
                output = await handler(value, invocation)
            else:
                output = await self.sync_hooks.run(name, handler, value, invocation)
        except StillRunning:
            # Each of those holds a thread for good: starting more would only add to them.
            raise RpcError(
                p.HOOK_FAILED,
                f"hook {name} is still running {STUCK_CALLS_PER_KEY} calls the host gave up on; "
                "it is not started again until one of them returns",
                {"hook": name},
            ) from None
        except Exception as exc:
            raise RpcError(
                p.HOOK_FAILED,
                f"hook {name} raised {type(exc).__name__}: {exc}",
                {"hook": name},
            ) from None
        try:
            return {"output": point.output_to_wire(output)}
        except HookOutputError as exc:
            raise RpcError(p.HOOK_FAILED, str(exc), {"hook": exc.hook, "key": exc.key}) from None


def _report_failure(method: str, error: Exception) -> None:
    if not isinstance(error, ConnectionClosed):
        print(f"{method} failed: {error}", file=sys.stderr)
