"""Joining the host's session: ``join_session`` and ``join_session_async``.

``join_session`` (a plain script's form) runs the protocol on a background thread and returns
once joined; ``join_session_async`` runs it on the caller's event loop. Both check what the
author gave (tools, hooks as ``@hook`` functions or a mapping, matchers, requested variables),
claim stdio for the protocol first (:mod:`sdk_extension._stdio`), and hand the streams to the
client of :mod:`sdk_extension.session`.
Calls start once the script has stored the returned session.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeAlias, TypeVar

from extension_protocol import protocol as p
from extension_protocol.connection import Connection
from extension_protocol.errors import (
    ExtensionError,
    InvalidCommandError,
    InvalidHookError,
    JoinError,
    NotUnderHostError,
)
from extension_protocol.json_codec import use_orjson
from extension_protocol.nesting import MAX_DEPTH
from extension_protocol.pipes import PipeReader, open_pipe_writer
from extension_protocol.tools import Tool

from ._lifeline import end_if_host_gone
from ._stdio import claim_protocol_stdio, flush_std_streams
from .session import Session, _Client
from .subagents import CustomAgent

if TYPE_CHECKING:  # what only some extensions use loads when one gives it (see _begin)
    from extension_protocol.commands import Command

    from .canvases import Canvas
    from .hooks import Hook
    from .permissions import PermissionHandler

    Hooks: TypeAlias = Mapping[str, Callable[..., Any]] | Iterable[Hook[Any, Any]]
    """What ``join_session(hooks=...)`` takes: ``@hook`` functions, or a mapping of hook names to functions."""

__all__ = [
    "DEFAULT_JOIN_TIMEOUT",
    "join_session",
    "join_session_async",
    "registered_hooks",
    "resolve_hooks",
    "wire_hook_matchers",
]

DEFAULT_JOIN_TIMEOUT: Final = 30.0
"""Seconds to wait for the host to accept the join; the host's own readiness timeout is the same."""


def _session_id() -> str:
    session_id = os.environ.get("SESSION_ID")
    if not session_id:
        raise NotUnderHostError(
            "join_session() must run in an extension started by the extension host "
            "(SESSION_ID is not set). Put the file at .github/extensions/<name>/extension.py "
            "and run 'extensions list' or 'extensions dev'."
        )
    return session_id


@dataclass(frozen=True, slots=True)
class _Joining:
    """A join whose arguments were checked and whose protocol descriptors were claimed."""

    session_id: str
    tools: list[Tool]
    hooks: dict[str, Callable[..., Any]]
    requested: tuple[str, ...]
    matchers: dict[str, list[str]]
    read_fd: int
    write_fd: int
    commands: tuple[Command, ...] = ()
    custom_agents: tuple[CustomAgent, ...] = ()
    canvases: tuple[Canvas, ...] = ()

    async def client(self) -> _Client:
        """The client over the protocol streams (on the running loop), not yet joined."""
        # Nothing deeper than the host reads: a result nested deeper fails its call, not the connection.
        connection = Connection(
            PipeReader(self.read_fd), await open_pipe_writer(self.write_fd), max_outbound_depth=MAX_DEPTH
        )
        return _Client(
            self.session_id,
            self.tools,
            self.hooks,
            connection,
            self.requested,
            self.matchers,
            self.commands,
            self.custom_agents,
            self.canvases,
        )


def _begin(
    tools: Iterable[Tool],
    hooks: Hooks | None,
    hook_matchers: Mapping[str, Iterable[str]] | None,
    requested_environment_variables: Iterable[str],
    commands: Iterable[Command] = (),
    custom_agents: Iterable[CustomAgent] = (),
    canvases: Iterable[Canvas] = (),
) -> _Joining:
    """Check what the author gave, then claim the protocol's descriptors (once per process)."""
    use_orjson()  # loaded already under the fork server
    tool_list = _tools(tools)
    hook_map, matchers = registered_hooks(hooks, hook_matchers)
    command_list = _commands(commands)
    agents = _custom_agents(custom_agents)
    canvas_list = _canvases(canvases)
    requested = _requested(requested_environment_variables)
    session_id = _session_id()
    _claim_join()
    read_fd, write_fd = claim_protocol_stdio()
    return _Joining(
        session_id, tool_list, hook_map, requested, matchers, read_fd, write_fd, command_list, agents, canvas_list
    )


async def join_session_async(
    tools: Iterable[Tool] = (),
    hooks: Hooks | None = None,
    *,
    join_timeout: float = DEFAULT_JOIN_TIMEOUT,
    requested_environment_variables: Iterable[str] = (),
    hook_matchers: Mapping[str, Iterable[str]] | None = None,
    commands: Iterable[Command] = (),
    on_permission_request: PermissionHandler | None = None,
    custom_agents: Iterable[CustomAgent] = (),
    canvases: Iterable[Canvas] = (),
) -> Session:
    """Join the host's session on the running event loop and return the :class:`Session`.

    Keep the loop running afterwards (``await session.wait_closed()``); the host ends the
    extension by closing the connection. ``requested_environment_variables``,
    ``hook_matchers``, ``on_permission_request``, ``commands``, ``custom_agents`` and ``canvases``
    work as in :func:`join_session`.

    Raises:
        NotUnderHostError: not started by an extension host.
        InvalidToolError, InvalidHookError: a tool or hook definition is unusable.
        JoinError: the host refused the join (e.g. a tool name is taken, or a requested
            variable is not granted) or did not answer.
    """
    joining = _begin(tools, hooks, hook_matchers, requested_environment_variables, commands, custom_agents, canvases)
    client = await joining.client()
    client.permission_handler = on_permission_request
    session = await client.join(join_timeout)
    client.released.set()  # waiting calls run after the caller has stored the session
    return session


def join_session(
    tools: Iterable[Tool] = (),
    hooks: Hooks | None = None,
    *,
    join_timeout: float = DEFAULT_JOIN_TIMEOUT,
    requested_environment_variables: Iterable[str] = (),
    hook_matchers: Mapping[str, Iterable[str]] | None = None,
    commands: Iterable[Command] = (),
    on_permission_request: PermissionHandler | None = None,
    custom_agents: Iterable[CustomAgent] = (),
    canvases: Iterable[Canvas] = (),
) -> Session:
    """Join the host's session and return the :class:`Session` once joined.

    The protocol runs on a background thread, so a plain script needs nothing more: the
    process lives until the host closes the connection, then exits.

    Sensitive variables (``GITHUB_TOKEN``, ``*_API_KEY``...) are withheld from extensions.
    Name the ones this extension needs in ``requested_environment_variables``: once the user
    has granted them (``extensions grant NAME VAR...``), their values are in ``os.environ``
    when this returns; if one is not granted, the host refuses the join.

    ``hooks`` are ``@hook`` functions (:mod:`sdk_extension.hooks`), each saying its hook point
    and, for a tool hook, the tools it is for: ``@hook("pre_tool_use", tools=["bash", "run_*"])``.
    Or a mapping ``{"on_pre_tool_use": function}`` with ``hook_matchers`` saying which tools a
    tool hook is for: ``{"on_pre_tool_use": ["bash", "run_*"]}`` (tool names or ``fnmatch``
    patterns). Either way the host calls it only for those tools; a hook without them is called
    for every tool.

    ``on_permission_request(request, invocation)`` answers the host's permission requests (a
    hook's ``ask``): True, False, feedback text (a rejection), a dict of the SDK's decision
    kinds, or None to leave it to others (see :mod:`sdk_extension.permissions`).

    ``commands`` are slash commands (:class:`~extension_protocol.commands.Command`, or ``@command``
    functions) the user can run as ``/name args``; their names are unique across extensions.

    ``custom_agents`` are agents (:class:`~sdk_extension.subagents.CustomAgent`) the session may
    start as subagents; each one's ``tools`` allowlist decides which of this extension's tools
    its child sessions may call (``None`` all, ``[]`` none). Requests from a child reach the
    handlers with the child's id as ``invocation.session_id``.

    ``canvases`` are panels (:class:`~sdk_extension.canvases.Canvas`) the agent or a client may
    open; the host routes ``canvas.open``, ``canvas.close`` and ``canvas.action.invoke`` to their
    handlers. Their ids are unique within the extension.

    Raises:
        NotUnderHostError: not started by an extension host.
        InvalidToolError, InvalidHookError: a tool or hook definition (or a matcher) is unusable.
        InvalidCommandError: a command is given twice, or is not a ``Command``.
        ExtensionError: a custom agent is given twice (``TypeError``: one is not a ``CustomAgent``),
            or a canvas is unusable (an id given twice, a reserved action name).
        JoinError: the host refused the join (e.g. a tool name is taken, or a requested
            variable is not granted) or did not answer.
    """
    joining = _begin(tools, hooks, hook_matchers, requested_environment_variables, commands, custom_agents, canvases)
    joined = threading.Event()
    outcome: list[Session | BaseException] = []

    async def serve() -> None:
        try:
            client = await joining.client()
            client.permission_handler = on_permission_request
            session = await client.join(join_timeout)
        except BaseException as exc:
            outcome.append(exc)
            joined.set()
            return
        outcome.append(session)
        joined.set()
        await session.wait_closed()

    def run() -> None:
        asyncio.run(serve())
        end_if_host_gone()  # the end of stream was the host's death: take the group down too
        if threading.main_thread().is_alive() and isinstance(outcome[0], Session):
            # The host ended the session while the script's main thread is still busy:
            # the contract is a prompt, clean exit on end of stream.
            flush_std_streams()
            os._exit(0)

    threading.Thread(target=run, name="sdk-extension-protocol").start()
    if not joined.wait(join_timeout + 5):
        raise JoinError(f"the host did not accept the join within {join_timeout:g} s")
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    client = result._client
    _release_once_stored(lambda: client.loop.call_soon_threadsafe(client.released.set), sys._getframe(1))
    return result


def _release_once_stored(release: Callable[[], object], caller: types.FrameType | None) -> None:
    """Let calls run once the caller has stored the returned session (``session =
    join_session(...)``), so a handler that uses that name never finds it unbound.

    The store ends the caller's current line: the caller's frame is traced for just its next
    event (a new line, its return or an exception), then tracing is off again. Where a tracer
    is already set (a debugger, coverage), or the caller never leaves that line (it blocks in
    it), calls are let through anyway, at once or after :data:`_RELEASE_FALLBACK_SECONDS`.
    """
    if caller is None or sys.gettrace() is not None:
        release()
        return
    released = threading.Lock()

    def release_once() -> None:
        if released.acquire(blocking=False):
            release()

    def on_caller_event(frame: types.FrameType, event: str, arg: Any) -> Any:
        frame.f_trace = None
        sys.settrace(None)
        release_once()
        return None

    caller.f_trace = on_caller_event
    sys.settrace(lambda frame, event, arg: None)  # per-frame tracing needs a tracer for the thread
    fallback = threading.Timer(_RELEASE_FALLBACK_SECONDS, release_once)
    fallback.daemon = True
    fallback.start()


_RELEASE_FALLBACK_SECONDS: Final = 1.0
"""How long calls wait for the script to store the session if it never leaves that line."""

_joined_once = threading.Lock()


def _claim_join() -> None:
    # The protocol streams exist once per process; a second join would fight over them.
    if not _joined_once.acquire(blocking=False):
        raise ExtensionError("join_session() was already called in this process; call it once")


class _Named(Protocol):
    @property
    def name(self) -> str: ...


_N = TypeVar("_N", bound=_Named)


def _unique(items: Iterable[Any], kind: type[_N], wrong_type: str, twice: Callable[[str], Exception]) -> list[_N]:
    """``items``, each a ``kind`` and no name twice.

    Raises:
        TypeError: ``wrong_type``, with the type of the item at fault.
        Exception: ``twice(name)`` for a name given twice.
    """
    checked = list(items)
    seen: set[str] = set()
    for item in checked:
        if not isinstance(item, kind):
            raise TypeError(f"{wrong_type}, got {type(item).__name__}")
        if item.name in seen:
            raise twice(item.name)
        seen.add(item.name)
    return checked


def _tools(tools: Iterable[Tool]) -> list[Tool]:
    return _unique(
        tools,
        Tool,
        "tools must be Tool objects (use @tool or Tool(...))",
        lambda name: ExtensionError(f"tool {name!r} is given twice"),
    )


def registered_hooks(
    hooks: Hooks | None, hook_matchers: Mapping[str, Iterable[str]] | None
) -> tuple[dict[str, Callable[..., Any]], dict[str, list[str]]]:
    """The hook functions by Python name and ``session.resume``'s ``hookMatchers``, from
    ``@hook`` functions or from the mapping and its ``hook_matchers``: both forms are checked
    and sent alike.

    Raises:
        InvalidHookError: a hook, or a matcher, is unusable.
    """
    if hooks is not None and not isinstance(hooks, Mapping):
        from .hooks import hook_registration

        hooks, hook_matchers = hook_registration(hooks, hook_matchers)
    handlers = resolve_hooks(hooks)
    return handlers, wire_hook_matchers(hook_matchers, handlers)


def _commands(commands: Iterable[Command]) -> tuple[Command, ...]:
    given = tuple(commands)
    if not given:
        return ()
    from extension_protocol.commands import MAX_COMMANDS, Command

    checked = _unique(
        given,
        Command,
        "commands must be Command objects (use @command or Command(...))",
        lambda name: InvalidCommandError(name, "is given twice"),
    )
    if len(checked) > MAX_COMMANDS:
        raise InvalidCommandError(checked[-1].name, f"{len(checked)} commands given, over the limit of {MAX_COMMANDS}")
    return tuple(checked)


def _canvases(canvases: Iterable[Canvas]) -> tuple[Canvas, ...]:
    given = tuple(canvases)
    if not given:
        return ()
    from .canvases import check_canvases

    return check_canvases(given)


def _custom_agents(agents: Iterable[CustomAgent]) -> tuple[CustomAgent, ...]:
    return tuple(
        _unique(
            agents,
            CustomAgent,
            "custom_agents must be CustomAgent objects",
            lambda name: ExtensionError(f"custom agent {name!r} is given twice"),
        )
    )


def wire_hook_matchers(matchers: Mapping[str, Iterable[str]] | None, hooks: Mapping[str, Any]) -> dict[str, list[str]]:
    """Check an author's hook matchers against its hooks; give ``session.resume``'s
    ``hookMatchers`` (keyed by wire hook type).

    Raises:
        InvalidHookError: one line naming the hook and the pattern at fault.
    """
    if not matchers:
        return {}
    from extension_protocol.hook_points import HOOK_POINTS
    from extension_protocol.matchers import compile_matchers

    try:
        compiled = compile_matchers(matchers, hooks)
    except ValueError as exc:
        raise InvalidHookError("hook_matchers", str(exc)) from None
    return {HOOK_POINTS[name].wire_name: list(matcher.patterns) for name, matcher in compiled.items()}


def _requested(names: Iterable[str]) -> tuple[str, ...]:
    if isinstance(names, str):
        raise TypeError("requested_environment_variables takes a list of names, e.g. ['GITHUB_TOKEN']")
    requested = tuple(dict.fromkeys(names))
    for name in requested:
        if not isinstance(name, str) or not name:
            raise TypeError(f"requested_environment_variables: {name!r} is not a variable name")
    return requested


def resolve_hooks(hooks: Mapping[str, Any] | None) -> dict[str, Callable[..., Any]]:
    """Check an author's hook mapping and key it by Python name.

    Raises:
        InvalidHookError: a name is not a hook point's (the message lists them), a handler is
            not callable or is an ``@hook`` function (whose ``tools=`` the mapping would drop),
            or two spellings name the same hook.
    """
    resolved: dict[str, Callable[..., Any]] = {}
    if not hooks:
        return resolved
    from .hooks import Hook

    for alias, handler in hooks.items():
        name = p.hook_name(alias) if isinstance(alias, str) else None
        if name is None or alias == p.HOOK_WIRE_NAMES[name]:
            valid = ", ".join(p.HOOK_NAMES)
            raise InvalidHookError(str(alias), f"unknown hook {alias!r}; the hook points are: {valid}")
        if not callable(handler):
            raise InvalidHookError(name, f"hook {alias!r} maps to {type(handler).__name__}, not a function")
        if isinstance(handler, Hook):
            raise InvalidHookError(
                name, f"hook {alias!r} maps to an @hook function; pass @hook functions as a list: hooks=[...]"
            )
        if name in resolved:
            raise InvalidHookError(name, f"hook {name} is given twice (as two spellings)")
        resolved[name] = handler
    return resolved
