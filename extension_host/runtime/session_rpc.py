"""The session-scoped RPC methods extensions may call (the JS SDK's ``session.rpc``), in one table.

Each row of :data:`SESSION_RPC_METHODS` (a :class:`SessionMethod`) pairs one method of the
published SDK's ``rpc.d.ts`` that concerns what this host knows with its params and result shapes
(:mod:`.session_rpc_shapes`), its handler, what it does and the other names it is answered under
(:data:`METHOD_ALIASES`, derived); ``api.schema.json`` is generated from the same rows. The names
are the wire's, :mod:`extension_protocol.protocol`'s ``METHOD_*``. The methods cover its
extensions, their tools and slash commands, the agent's models and usage (through optional
providers, ``None`` while no agent reports them), MCP servers (this host runs none), GitHub
sign-in (this host has none), and the session's events (``session.getMessages``,
``session.eventLog.read`` and ``tail``, answered by an :class:`EventLogSource`,
:mod:`extension_host.session.reader`). What it cannot answer truthfully (a question to the model
from a UI, enabling or disabling an extension for the session) is refused with ``NOT_SUPPORTED``
and a message that names the method (:data:`UNSUPPORTED_SESSION_METHODS`); any method of neither
kind is "method not found". Answers use the SDK's field names exactly (camelCase).

This module reads what :class:`SessionRpcSources` hands it and answers; it changes nothing.
``session.detach`` is the instance's (it changes the instance), not this table's.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from extension_protocol import protocol as p
from extension_protocol.connection import RpcError

from ..calls.canvases import Canvases, CanvasFailure
from ..calls.command_registry import CommandRegistry, CommandResult
from ..info import SDK_STATUS, ExtensionInfo, ToolInfo
from ..validation import validate
from . import session_rpc_shapes as shapes

__all__ = [
    "METHOD_ALIASES",
    "SESSION_RPC_METHODS",
    "UNSUPPORTED_SESSION_METHODS",
    "EventLogSource",
    "ModelsProvider",
    "SessionMethod",
    "SessionRpcSources",
    "UsageProvider",
    "session_rpc_handlers",
]

ModelsProvider = Callable[[], Sequence[Mapping[str, Any]] | None]
"""The agent's models as the SDK's ``Model`` objects (``id``, ``name``, ``capabilities``...), or
``None`` when it does not know them."""

UsageProvider = Callable[[], Mapping[str, Any] | None]
"""The usage the agent reported as the SDK's ``UsageGetMetricsResult``
(``totalPremiumRequestCost``, ``totalUserRequests``, ``modelMetrics``...), or ``None``."""


class EventLogSource(Protocol):
    """Reads the session's events by cursor (the session layer's reader answers)."""

    def events(self) -> list[Any]:
        """Every persisted event of the current session, oldest first."""
        ...

    def tail(self) -> str:
        """A cursor at the current end of the session's events."""
        ...

    async def read(self, request: shapes.EventLogReadRequest) -> shapes.EventsReadResult:
        """One page of events for a validated ``session.eventLog.read`` request."""
        ...


@dataclass(frozen=True, slots=True)
class SessionRpcSources:
    """Where the answers come from: the host's extensions and commands, the agent's providers."""

    extensions: Callable[[], list[ExtensionInfo]]
    commands: CommandRegistry
    models: ModelsProvider | None = None
    usage: UsageProvider | None = None
    tools: Callable[[], Sequence[ToolInfo]] | None = None
    """Every tool offered now (``None``: the method answers ``tools: null``, not initialised)."""
    run_command: Callable[[str, str], Awaitable[CommandResult]] | None = None
    """Runs a slash command, ``(name, args)`` (``None``: ``session.commands.execute`` is refused)."""
    event_log: EventLogSource | None = None
    """Reads the session's events (``None``: ``session.eventLog.read`` and ``tail`` are refused)."""
    canvases: Canvases | None = None
    """The session's canvases (``None``: the ``session.canvas.*`` methods are refused)."""
    ask: Callable[[str], Awaitable[str]] | None = None
    """Asks the session's agent a question outside the conversation and returns its answer;
    raises :class:`LookupError` saying why when there is no agent (``None``: refused)."""


def _extensions_list(sources: SessionRpcSources, params: Any) -> dict[str, Any]:
    extensions = []
    for info in sources.extensions():
        item = info.to_sdk()
        if info.pid is not None and SDK_STATUS.get(info.status) == "running":
            item["pid"] = info.pid
        extensions.append(item)
    return {"extensions": extensions}


def _commands_list(sources: SessionRpcSources, params: Any) -> dict[str, Any]:
    if isinstance(params, dict) and params.get("includeClientCommands") is False:
        return {"commands": []}  # every command of this host is a client's (an extension's)
    return {
        "commands": [
            {
                "name": entry.name,
                "description": entry.description,
                "kind": "client",
                "allowDuringAgentExecution": False,
            }
            for entry in sources.commands.entries()
        ]
    }


def _tools_metadata(sources: SessionRpcSources, params: Any) -> dict[str, Any]:
    if sources.tools is None:
        return {"tools": None}
    tools = []
    for tool in sources.tools():
        item: dict[str, Any] = {"name": tool.name, "description": tool.description}
        if tool.parameters is not None:
            item["input_schema"] = tool.parameters
        tools.append(item)
    return {"tools": tools}


async def _commands_execute(sources: SessionRpcSources, params: Any) -> dict[str, Any]:
    method = p.RPC_COMMANDS_EXECUTE
    request = validate(method, p.ExecuteCommandParams, params)
    if sources.run_command is None:
        raise _unsupported(method, "this host runs no commands for extensions")
    result = await sources.run_command(request["commandName"], request.get("args", ""))
    return {} if result.ok else {"error": result.error or result.status}


def _model_list(sources: SessionRpcSources, params: Any) -> dict[str, Any]:
    models = sources.models() if sources.models is not None else None
    if models is None:
        raise _unsupported(p.RPC_MODEL_LIST, "no agent attached to this host reports its models")
    return {"models": [dict(model) for model in models]}


def _usage_metrics(sources: SessionRpcSources, params: Any) -> dict[str, Any]:
    usage = sources.usage() if sources.usage is not None else None
    if usage is None:
        raise _unsupported(p.RPC_USAGE_METRICS, "no agent attached to this host reports its usage")
    return dict(usage)


def _mcp_list(sources: SessionRpcSources, params: Any) -> dict[str, Any]:
    return {"servers": []}  # this host runs no MCP servers


def _mcp_reload(sources: SessionRpcSources, params: Any) -> dict[str, Any]:
    return {}  # no MCP servers: nothing to reload


async def _event_log_read(sources: SessionRpcSources, params: Any) -> dict[str, Any]:
    method = p.RPC_EVENT_LOG_READ
    try:
        request = validate(method, shapes.EventLogReadRequest, params)
    except RpcError as exc:
        field = exc.data.get("field", "") if isinstance(exc.data, dict) else ""
        if not field.startswith("types."):
            raise
        # pydantic names the branch of the union that failed last; say what types may be.
        raise RpcError(
            p.INVALID_PARAMS,
            f'{method}: types: must be "*" or a non-empty list of event types (at most {shapes.MAX_TYPES})',
            {"field": "types"},
        ) from None
    if sources.event_log is None:
        raise _unsupported(method, "this host keeps no event log for extensions to read")
    return dict(await sources.event_log.read(request))


def _get_messages(sources: SessionRpcSources, params: Any) -> dict[str, Any]:
    if sources.event_log is None:
        raise _unsupported(p.RPC_GET_MESSAGES, "this host keeps no event log for extensions to read")
    return {"events": sources.event_log.events()}


def _github_auth_status(sources: SessionRpcSources, params: Any) -> dict[str, Any]:
    return {"isAuthenticated": False, "statusMessage": "Not authenticated"}  # no GitHub sign-in here


def _event_log_tail(sources: SessionRpcSources, params: Any) -> dict[str, Any]:
    if sources.event_log is None:
        raise _unsupported(p.RPC_EVENT_LOG_TAIL, "this host keeps no event log for extensions to read")
    return {"cursor": sources.event_log.tail()}


def _canvases(sources: SessionRpcSources, method: str) -> Canvases:
    if sources.canvases is None:
        raise _unsupported(method, "this host has no canvases")
    return sources.canvases


def _canvas_list(sources: SessionRpcSources, params: Any) -> dict[str, Any]:
    return {"canvases": [entry.to_wire() for entry in _canvases(sources, p.RPC_CANVAS_LIST).declared]}


def _canvas_list_open(sources: SessionRpcSources, params: Any) -> dict[str, Any]:
    canvases = _canvases(sources, p.RPC_CANVAS_LIST_OPEN)
    return {"openCanvases": [instance.to_wire() for instance in canvases.open_instances]}


async def _canvas_open(sources: SessionRpcSources, params: Any) -> dict[str, Any]:
    method = p.RPC_CANVAS_OPEN
    request = validate(method, shapes.CanvasOpenRequest, params)
    canvases = _canvases(sources, method)
    try:
        opened = await canvases.open(
            request["canvasId"], request["instanceId"], request.get("input"), request.get("extensionId")
        )
    except CanvasFailure as exc:
        raise RpcError(p.INVALID_REQUEST, f"{method}: {exc}") from None
    return opened.to_wire()


async def _canvas_close(sources: SessionRpcSources, params: Any) -> dict[str, Any]:
    method = p.RPC_CANVAS_CLOSE
    request = validate(method, shapes.CanvasCloseRequest, params)
    try:
        await _canvases(sources, method).close(request["instanceId"])
    except CanvasFailure as exc:
        raise RpcError(p.INVALID_REQUEST, f"{method}: {exc}") from None
    return {}


async def _canvas_action(sources: SessionRpcSources, params: Any) -> Any:
    method = p.RPC_CANVAS_ACTION
    request = validate(method, shapes.CanvasActionInvokeRequest, params)
    canvases = _canvases(sources, method)
    try:
        return await canvases.invoke(request["instanceId"], request["actionName"], request.get("input"))
    except CanvasFailure as exc:
        raise RpcError(p.INVALID_REQUEST, f"{method}: {exc}") from None


async def _ephemeral_query(sources: SessionRpcSources, params: Any) -> dict[str, Any]:
    method = p.RPC_EPHEMERAL_QUERY
    request = validate(method, shapes.EphemeralQueryRequest, params)
    if sources.ask is None:
        raise _unsupported(method, "this host has no agent to ask")
    try:
        return {"answer": await sources.ask(request["question"])}
    except LookupError as exc:
        raise _unsupported(method, str(exc).strip("'\"")) from None


Handler = Callable[[SessionRpcSources, Any], Any]


@dataclass(frozen=True, slots=True)
class SessionMethod:
    """One session-scoped method: its wire name, the shapes of its params and result (the
    ``TypedDict``s of :mod:`.session_rpc_shapes`), how it is answered, what it does, and the other
    names it is answered under."""

    name: str
    params: Any
    result: Any
    answer: Handler
    description: str
    aliases: tuple[str, ...] = ()


_TABLE: Final = (
    SessionMethod(
        p.RPC_EXTENSIONS_LIST,
        shapes.SessionRpcParams,
        shapes.ExtensionList,
        _extensions_list,
        "Every extension the host discovered, with its status.",
    ),
    SessionMethod(
        p.RPC_COMMANDS_LIST,
        shapes.CommandsListParams,
        shapes.CommandList,
        _commands_list,
        "The slash commands extensions registered.",
    ),
    SessionMethod(
        p.RPC_COMMANDS_EXECUTE,
        p.ExecuteCommandParams,
        shapes.ExecuteCommandResult,
        _commands_execute,
        "Run a slash command and wait for it; error when it failed.",
    ),
    SessionMethod(
        p.RPC_TOOLS_METADATA,
        shapes.SessionRpcParams,
        shapes.ToolsGetCurrentMetadataResult,
        _tools_metadata,
        "The tools offered to the agent now, with their JSON Schemas.",
    ),
    SessionMethod(
        p.RPC_MODEL_LIST,
        shapes.SessionRpcParams,
        shapes.ModelList,
        _model_list,
        "The agent's models (refused while no agent reports them).",
    ),
    SessionMethod(
        p.RPC_USAGE_METRICS,
        shapes.SessionRpcParams,
        dict[str, Any],
        _usage_metrics,
        "The usage the agent reported, as the SDK's UsageGetMetricsResult (refused while none is).",
    ),
    SessionMethod(
        p.RPC_MCP_LIST,
        shapes.SessionRpcParams,
        shapes.McpServerList,
        _mcp_list,
        "MCP servers: none, this host runs none.",
    ),
    SessionMethod(
        p.RPC_MCP_RELOAD,
        shapes.SessionRpcParams,
        dict[str, Any],
        _mcp_reload,
        "Reload MCP servers: nothing to do, an empty answer.",
    ),
    SessionMethod(
        p.RPC_EVENT_LOG_READ,
        shapes.EventLogReadRequest,
        shapes.EventsReadResult,
        _event_log_read,
        "A page of the session's events from a cursor: forward (optionally waiting for new ones) or backward "
        "from the newest; at most max events and 1 MiB.",
    ),
    SessionMethod(
        p.RPC_EVENT_LOG_TAIL,
        shapes.SessionRpcParams,
        shapes.EventLogTailResult,
        _event_log_tail,
        "A cursor at the current end of the session's events, to read only what comes next.",
    ),
    SessionMethod(
        p.RPC_GET_MESSAGES,
        shapes.SessionRpcParams,
        shapes.GetMessagesResult,
        _get_messages,
        "Every persisted event of the session, oldest first (the JS SDK's getEvents(); also as session.getEvents).",
        # the JS SDK's getEvents() sends session.getMessages, the name Copilot CLI answers
        aliases=("session.getEvents",),
    ),
    SessionMethod(
        p.RPC_GITHUB_AUTH_STATUS,
        shapes.SessionRpcParams,
        shapes.AuthStatus,
        _github_auth_status,
        "GitHub sign-in: none on this host (also as session.auth.getStatus).",
        aliases=("session.auth.getStatus",),  # the name SDKs sent before gitHubAuth
    ),
    SessionMethod(
        p.RPC_CANVAS_LIST,
        shapes.SessionRpcParams,
        shapes.CanvasList,
        _canvas_list,
        "The canvases extensions declared.",
    ),
    SessionMethod(
        p.RPC_CANVAS_LIST_OPEN,
        shapes.SessionRpcParams,
        shapes.CanvasListOpenResult,
        _canvas_list_open,
        "The canvas instances open now.",
    ),
    SessionMethod(
        p.RPC_CANVAS_OPEN,
        shapes.CanvasOpenRequest,
        dict[str, Any],
        _canvas_open,
        "Open a canvas as an instance (or focus it); refused while no client that shows canvases is attached.",
    ),
    SessionMethod(
        p.RPC_CANVAS_CLOSE,
        shapes.CanvasCloseRequest,
        dict[str, Any],
        _canvas_close,
        "Close an open canvas instance.",
    ),
    SessionMethod(
        p.RPC_CANVAS_ACTION,
        shapes.CanvasActionInvokeRequest,
        Any,
        _canvas_action,
        "Run an action of an open canvas instance; answered with the action's result.",
    ),
    SessionMethod(
        p.RPC_EPHEMERAL_QUERY,
        shapes.EphemeralQueryRequest,
        shapes.EphemeralQueryResult,
        _ephemeral_query,
        "Ask the session's agent a question outside the conversation (refused when there is no agent).",
    ),
    SessionMethod(
        p.RPC_AUTH_STATUS,
        dict[str, Any],
        shapes.AuthStatus,
        _github_auth_status,
        "GitHub sign-in: none on this host.",
    ),
)

SESSION_RPC_METHODS: Final[dict[str, SessionMethod]] = {method.name: method for method in _TABLE}
"""The table: each session-scoped method this host answers, by name, with its shapes and handler."""

METHOD_ALIASES: Final[dict[str, str]] = {alias: method.name for method in _TABLE for alias in method.aliases}
"""Other names of a method of :data:`SESSION_RPC_METHODS` (its rows' ``aliases``), each answered
as the method."""

UNSUPPORTED_SESSION_METHODS: Final[dict[str, str]] = {
    "session.extensions.enable": "extensions are enabled by their folders; run 'extensions reload NAME'",
    "session.extensions.disable": "remove or rename the extension's folder, or revoke the project's trust",
    "session.extensions.reload": "run 'extensions reload' (or save the extension under 'extensions dev')",
    "session.commands.invoke": "commands are run by the user or the embedding application (host.run_command)",
}
"""Methods of the SDK this host refuses, with what to do instead."""


def _unsupported(method: str, why: str) -> RpcError:
    return RpcError(p.NOT_SUPPORTED, f"{method} is not supported by this host: {why}", {"method": method})


def session_rpc_handlers(sources: SessionRpcSources) -> Mapping[str, Callable[[Any], Any]]:
    """The connection handlers for every method of both tables, answering from ``sources``
    (made once per host: every extension's connection shares them)."""

    def answer(handler: Handler) -> Callable[[Any], Any]:
        if inspect.iscoroutinefunction(handler):

            async def answer_async(params: Any) -> Any:
                return await handler(sources, params)

            return answer_async
        return lambda params: handler(sources, params)

    def refuse(method: str, why: str) -> Callable[[Any], dict[str, Any]]:
        def handler(params: Any) -> dict[str, Any]:
            raise _unsupported(method, why)

        return handler

    handlers = {name: answer(method.answer) for name, method in SESSION_RPC_METHODS.items()}
    handlers.update({alias: handlers[method] for alias, method in METHOD_ALIASES.items()})
    handlers.update({method: refuse(method, why) for method, why in UNSUPPORTED_SESSION_METHODS.items()})
    return handlers
