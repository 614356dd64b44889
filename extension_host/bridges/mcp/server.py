"""``extensions mcp``: the project's extensions as an MCP server, on the official MCP Python SDK.

:class:`McpBridge` puts an MCP low-level ``Server`` in front of an
:class:`~extension_host.host.ExtensionHost`:

- ``tools/list`` offers every running extension's tools with their JSON Schemas and
  descriptions; ``tools/call`` goes through ``host.call_tool`` (pre hooks, the tool, post hooks,
  events, the session log), and a result that is not a success is ``isError`` content saying who
  decided what (:func:`~.shapes.call_answer`);
- when the set of tools changes (``session.tools_updated``/``session.extensions_loaded``: a
  reload, a new or removed extension) the client gets ``notifications/tools/list_changed``;
  when the slash commands change, ``notifications/prompts/list_changed``;
- slash commands are prompts: getting one runs the command, and what it logged and sent while
  it ran (or its error) are the prompt's messages;
- the timeline's ``session.info``/``warning``/``error`` are ``notifications/message`` log
  entries (from the level the client set with ``logging/setLevel``).

It serves over stdio (:meth:`McpBridge.serve_stdio`, one client) or streamable HTTP on a
loopback socket (:meth:`McpBridge.serve_http`: every request must carry the token as
``Authorization: Bearer``, or is answered 401; every client that initialized gets the
notifications). Notifications go out from one task in the order the host made them, at most
:data:`MAX_QUEUED_NOTIFICATIONS` waiting; past that, log entries are dropped and counted (the
list changes never are). Clients of the spec's 2026-07-28 revision, which has no handshake
and no notifications outside ``subscriptions/listen``, get tools, calls and prompts but no
change or log notifications. Only the bridges import ``mcp``; the host and the rest of the CLI
never do (:func:`~.config.mcp_missing` says what to install). It knows the MCP SDK and the
host's public API; what the messages say is :mod:`.shapes`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Final

import anyio
import mcp.types as types
import uvicorn
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server

from ...control.tokens import bearer_token, token_matches
from ...errors import UnknownToolError
from ...host import ExtensionHost
from ...info import host_version
from ...runtime.context import SendHandler
from .shapes import (
    COMMAND_ARGUMENT,
    LogEntry,
    PromptText,
    call_answer,
    command_prompt,
    input_schema,
    log_entry,
    prompt_messages,
    tools_signature,
    unknown_tool_answer,
)
from .stdio import claimed_stdio

__all__ = ["HTTP_SHUTDOWN_SECONDS", "MAX_HTTP_CLIENTS", "MAX_QUEUED_NOTIFICATIONS", "SERVER_NAME", "McpBridge"]

SERVER_NAME: Final = "extensions"
"""The name the server gives itself in ``initialize`` (and the config snippets' key)."""
MAX_QUEUED_NOTIFICATIONS: Final = 1024
"""Notifications waiting to be sent to a slow client; past that, log entries are dropped."""
MAX_HTTP_CLIENTS: Final = 64
"""Clients over HTTP that get notifications (the ones that initialized last)."""
HTTP_SHUTDOWN_SECONDS: Final = 2
"""Seconds the HTTP server gives requests under way when it is stopped."""

_LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class McpBridge:
    """An MCP server offering one host's extensions.

    ``make_host(on_send)`` builds the host; ``on_send`` is how the bridge hears the prompts an
    extension sends (a slash command's output, see the module), so pass it to
    :class:`ExtensionHost`. Serve a client with :meth:`serve` (streams) or :meth:`serve_stdio`.
    """

    def __init__(self, make_host: Callable[[SendHandler], ExtensionHost]) -> None:
        self.host: Final = make_host(self._on_send)
        self._sessions: deque[ServerSession] = deque(maxlen=MAX_HTTP_CLIENTS)
        self._ready = asyncio.Event()
        self._queue: asyncio.Queue[LogEntry | str] = asyncio.Queue(MAX_QUEUED_NOTIFICATIONS)
        self._dropped = 0
        self._min_level = 0
        self._announced = tools_signature(())
        self._collecting: dict[str, list[list[PromptText]]] = {}
        self.server: Final[Server[Any]] = Server(
            SERVER_NAME,
            version=host_version(),
            instructions="Tools, hooks and slash commands of this project's extensions (extension-host).",
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
        )
        # No OpenTelemetry span per message (the SDK's default middleware): the host's events and
        # session log are this server's trail, and the span costs a call ~50 µs even unexported.
        self.server.middleware = []
        self.server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, self._set_level)
        self.server.add_notification_handler("notifications/initialized", types.NotificationParams, self._initialized)
        # From the start: what extensions log while they start is told once a client is there.
        self._unsubscribe = self.host.on_event(self._on_event)

    # -- serving ------------------------------------------------------------------------

    async def serve_stdio(self) -> None:
        """Serve the client on this process's stdin/stdout until it closes stdin.

        File descriptor 1 points at stderr while it serves, so anything else printed (the
        host's own output) cannot reach the protocol stream. Pipes are read and written on the
        event loop (:mod:`.stdio`); anything else through the SDK's own threads.
        """
        async with claimed_stdio() as pipes:
            streams: tuple[Any, Any] = (None, None) if pipes is None else pipes
            async with stdio_server(*streams) as (read, write):
                await self.serve(read, write)

    async def serve(self, read: Any, write: Any) -> None:
        """Serve one client on these SDK streams until it goes; the host must be started.

        A bridge serves once: when it is done, it stops listening to the host.
        """
        options = self.server.create_initialization_options(
            NotificationOptions(prompts_changed=True, tools_changed=True)
        )
        await self._serving(self.server.run(read, write, options))

    async def serve_http(self, sock: socket.socket, token: str) -> None:
        """Serve MCP clients that send ``token`` over streamable HTTP at ``/mcp`` on ``sock``
        (bound and listening, on loopback) until cancelled; then the server shuts down gracefully.

        Every request must carry ``Authorization: Bearer <token>`` (compared in constant time),
        or is answered 401 with ``WWW-Authenticate: Bearer``: other users of the machine reach
        a loopback port too. The SDK's app checks the ``Host`` and ``Origin`` headers of
        loopback servers, so a web page cannot reach it through DNS rebinding. Every client
        that initialized gets the notifications (the last :data:`MAX_HTTP_CLIENTS` of them).
        """
        host = sock.getsockname()[0]
        app = _BearerGate(self.server.streamable_http_app(host=host), token)  # loopback: Host and Origin checked
        config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=HTTP_SHUTDOWN_SECONDS)
        server = _QuietServer(config)
        task = asyncio.ensure_future(server.serve(sockets=[sock]))

        async def run() -> None:
            try:
                await asyncio.shield(task)
            except asyncio.CancelledError:
                server.should_exit = True  # finish the requests under way, then close
                await task
                raise

        await self._serving(run())

    async def _serving(self, run: Awaitable[None]) -> None:
        # What clients will be offered first; later changes are compared with what they saw.
        self._announced = tools_signature(self.host.tools.values())
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self._send_notifications)
                await run
                group.cancel_scope.cancel()
        finally:
            self._unsubscribe()

    # -- requests -----------------------------------------------------------------------

    async def _list_tools(self, ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        tools = list(self.host.tools.values())
        self._announced = tools_signature(tools)
        return types.ListToolsResult(
            tools=[types.Tool(name=t.name, description=t.description, input_schema=input_schema(t)) for t in tools]
        )

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = self.host.tools.get(params.name)
        try:
            outcome = await self.host.call_tool(params.name, dict(params.arguments or {}))
        except UnknownToolError as exc:
            answer = unknown_tool_answer(exc)
        else:
            answer = call_answer(params.name, tool.owner if tool else None, outcome)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text) for text in answer.texts], is_error=answer.is_error
        )

    async def _list_prompts(self, ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        commands = sorted(self.host.commands.values(), key=lambda command: command.name)
        return types.ListPromptsResult(prompts=[types.Prompt.model_validate(command_prompt(c)) for c in commands])

    async def _get_prompt(self, ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        command = self.host.commands.get(params.name)
        args = (params.arguments or {}).get(COMMAND_ARGUMENT, "")
        owner = command.owner if command else ""
        produced: list[PromptText] = []
        self._collecting.setdefault(owner, []).append(produced)
        try:
            result = await self.host.run_command(params.name, args)
        finally:
            collectors = self._collecting[owner]
            collectors.remove(produced)
            if not collectors:
                del self._collecting[owner]
        messages = [
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
            for text in prompt_messages(result, produced)
        ]
        description = f"/{result.command}" + (f" {args}" if args else "") + f": {result.status}"
        return types.GetPromptResult(description=description, messages=messages)

    async def _set_level(self, ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
        self._min_level = _LEVELS.index(params.level)
        return types.EmptyResult()

    async def _initialized(self, ctx: Any, params: types.NotificationParams) -> None:
        # The connection's session: what notifications outside a request are sent on.
        self._sessions.append(ctx.session)
        self._ready.set()

    # -- what the host says -------------------------------------------------------------

    async def _on_send(self, prompt: str, attachments: list[dict[str, Any]], extension_id: str) -> None:
        collectors = self._collecting.get(extension_id)
        if collectors:
            for produced in collectors:
                produced.append(PromptText(prompt, sent=True))
        else:
            # An MCP client takes no prompts from its servers; what was sent is at least shown.
            self._enqueue(LogEntry("info", extension_id, f"{extension_id} sent a prompt: {prompt}"))

    def _on_event(self, event: Any) -> None:
        kind = event["type"]
        if kind in ("session.tools_updated", "session.extensions_loaded"):
            self._enqueue("tools")  # whether the list really changed is decided when it is sent
        elif kind == "commands.changed":
            self._enqueue("prompts")
        elif (entry := log_entry(event)) is not None:
            for produced in self._collecting.get(entry.logger, ()):
                produced.append(PromptText(entry.message))
            if _LEVELS.index(entry.level) >= self._min_level:
                self._enqueue(entry)

    def _enqueue(self, item: LogEntry | str) -> None:
        try:
            self._queue.put_nowait(item)
        except asyncio.QueueFull:
            if isinstance(item, LogEntry):
                self._dropped += 1
            else:
                # A list change must not be lost: make room by dropping the oldest log entry.
                dropped = self._queue.get_nowait()
                self._dropped += isinstance(dropped, LogEntry)
                self._queue.put_nowait(item)

    async def _send_notifications(self) -> None:
        await self._ready.wait()
        while True:
            item = await self._queue.get()
            if self._dropped:
                dropped, self._dropped = self._dropped, 0
                await self._send(LogEntry("warning", "extension-host", f"{dropped} log messages were dropped"))
            if item == "tools":
                signature = tools_signature(self.host.tools.values())
                if signature != self._announced:
                    self._announced = signature
                    await self._send(types.ToolListChangedNotification())
            elif item == "prompts":
                await self._send(types.PromptListChangedNotification())
            elif isinstance(item, LogEntry):
                await self._send(item)

    async def _send(self, item: LogEntry | types.ServerNotification) -> None:
        if isinstance(item, LogEntry):
            params = types.LoggingMessageNotificationParams(level=item.level, logger=item.logger, data=item.message)
            item = types.LoggingMessageNotification(params=params)
        for session in tuple(self._sessions):
            # Best effort: a client that went away (HTTP) drops it, and the others still get it.
            await session.send_notification(item)


class _BearerGate:
    """An ASGI app in front of another that lets through only HTTP requests with one
    ``Authorization: Bearer <token>`` header; the others are answered 401."""

    def __init__(self, app: Any, token: str) -> None:
        self._app = app
        self._token = token

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = [value for name, value in scope["headers"] if name == b"authorization"]
            offered = bearer_token(given[0].decode("latin-1")) if len(given) == 1 else None
            if not token_matches(offered, self._token):
                await send({"type": "http.response.start", "status": 401, "headers": _UNAUTHORIZED_HEADERS})
                await send({"type": "http.response.body", "body": _UNAUTHORIZED_BODY})
                return
        await self._app(scope, receive, send)


_UNAUTHORIZED_HEADERS: Final = [
    (b"www-authenticate", b'Bearer realm="extensions"'),
    (b"content-type", b"text/plain; charset=utf-8"),
]
_UNAUTHORIZED_BODY: Final = b"this server needs its token: send 'Authorization: Bearer <token>'\n"


class _QuietServer(uvicorn.Server):
    """uvicorn's server without its own signal handlers: ``extensions mcp`` cancels it."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield
