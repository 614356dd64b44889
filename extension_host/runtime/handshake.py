"""The join handshake of one extension: what its ``session.resume`` declares, checked.

Each function reads a validated :class:`~extension_protocol.protocol.ResumeParams` and returns
what the extension declared (its hooks and their matchers, its slash commands, its tools and
the built-in tools they replace) or what it gets (the environment variables it asked for and
was granted, and :func:`join_answer`: the session as Copilot CLI describes it), or refuses with
:class:`JoinRefused`, whose reason names what is wrong and what to do. The instance applies
the answers; this module registers nothing and knows no process.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from extension_protocol import protocol as p
from extension_protocol.hook_points import HOOK_NAMES, hook_point
from extension_protocol.matchers import Matcher, compile_matchers
from extension_protocol.results import ToolResult

from ..calls.canvas_declarations import declared_canvases
from ..calls.canvases import CanvasEntry, CanvasRequester
from ..calls.command_registry import declared_commands as check_commands
from ..calls.tool_registry import ToolEntry, ToolRegistry
from ..errors import ExtensionHostError
from ..events import SESSION_MODE
from ..project.discovery import ExtensionSpec
from ..project.environment import EnvironmentGrant, resolve_request, validate_request
from .context import GrantLookup, SessionContext

if TYPE_CHECKING:
    from .agent_configs import CustomAgentConfig

__all__ = [
    "JoinRefused",
    "builtin_overrides",
    "canvases_of",
    "declared_agents",
    "declared_commands",
    "declared_hooks",
    "declared_matchers",
    "declared_tools",
    "grant_command",
    "granted_environment",
    "join_answer",
]


class JoinRefused(Exception):
    """The join cannot be accepted: ``reason`` (one line), the wire ``code`` and ``data`` to
    answer with, and, for a refused environment request, the ``grant`` as far as it went."""

    def __init__(
        self, reason: str, code: int = p.INVALID_PARAMS, data: Any = None, grant: EnvironmentGrant | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code
        self.data = data
        self.grant = grant


def declared_agents(resume: p.ResumeParams) -> tuple[CustomAgentConfig, ...]:
    """The custom agents it gives the session (``customAgents``)."""
    if resume.get("customAgents") is None:
        return ()
    from .agent_configs import check_agents

    try:
        return check_agents(resume.get("customAgents"))
    except ValueError as exc:
        raise JoinRefused(f"{exc} (in session.resume)") from None


def declared_hooks(resume: p.ResumeParams) -> tuple[str, ...]:
    """The hook points it implements (``hookTypes``; without them, ``hooks: true`` means all)."""
    if "hookTypes" not in resume:
        return HOOK_NAMES if resume.get("hooks") else ()
    names: list[str] = []
    for hook_type in resume["hookTypes"]:
        point = hook_point(hook_type)
        if point is None:
            raise JoinRefused(f"session.resume: unknown hook type {hook_type!r}")
        names.append(point.name)
    return tuple(names)


def declared_matchers(resume: p.ResumeParams, hooks: tuple[str, ...]) -> dict[str, Matcher]:
    """Its ``hookMatchers``, compiled, for the hooks it implements."""
    try:
        return compile_matchers(resume.get("hookMatchers"), hooks)
    except ValueError as exc:
        raise JoinRefused(f"session.resume: hookMatchers: {exc}") from None


def declared_commands(resume: p.ResumeParams) -> list[tuple[str, str]]:
    """The ``(name, description)`` of its slash commands (``commands``), checked."""
    try:
        return check_commands(resume.get("commands", []))
    except ValueError as exc:
        raise JoinRefused(f"session.resume: commands: {exc}") from None


def canvases_of(resume: p.ResumeParams, owner: str, request: CanvasRequester, holder: object) -> list[CanvasEntry]:
    """Its ``canvases`` as entries of ``owner``, reached through ``request``, checked (see
    :mod:`~extension_host.calls.canvas_declarations`)."""
    try:
        return declared_canvases(resume.get("canvases"), owner, request, holder)
    except ValueError as exc:
        raise JoinRefused(f"session.resume: canvases: {exc}") from None


def declared_tools(
    resume: p.ResumeParams,
    owner: str,
    invoke: Callable[[str, Any, str], Awaitable[ToolResult]],
    holder: object,
) -> list[ToolEntry]:
    """Its ``tools`` as registry entries of ``owner``, each run by ``invoke(name, arguments,
    tool_call_id)``; their names are checked when they are registered."""
    return [
        ToolEntry(
            name=tool["name"],
            description=tool.get("description", ""),
            parameters=tool.get("parameters"),
            owner=owner,
            invoke=functools.partial(invoke, tool["name"]),
            overrides_built_in_tool=tool.get("overridesBuiltInTool", False),
            holder=holder,
        )
        for tool in resume.get("tools", [])
    ]


def builtin_overrides(entries: list[ToolEntry], registry: ToolRegistry, allowed: bool) -> tuple[str, ...]:
    """The built-in tools that ``entries`` replace (``overridesBuiltInTool``); refuses the join
    when there is one and the host does not allow it."""
    overrides = tuple(
        entry.name for entry in entries if entry.overrides_built_in_tool and registry.builtin(entry.name) is not None
    )
    if overrides and not allowed:
        reason = (
            f"overrides the built-in tool {overrides[0]!r} (overridesBuiltInTool), "
            "which this host does not allow; rename the tool"
        )
        raise JoinRefused(reason, p.TOOL_REGISTRATION_FAILED, {"tool": overrides[0]})
    return overrides


def granted_environment(
    spec: ExtensionSpec,
    resume: p.ResumeParams,
    host_environment: Mapping[str, str],
    grants: GrantLookup,
    secret_settings: Mapping[str, str] | None = None,
) -> EnvironmentGrant:
    """The values of the sensitive variables it asks for, every one of them granted by the user
    (``grants(spec)`` names them); a request for one not granted refuses the join, saying how to
    grant it. ``secret_settings`` (variable → value): the secret settings the user set for it,
    granted by that, which it gets in place of the host's variable of the same name, and holds
    as withheld (unsetting one takes it back)."""
    requested = resume.get("requestedEnvironmentVariables", [])
    try:
        validate_request(requested)
    except ValueError as exc:
        raise JoinRefused(f"session.resume: requestedEnvironmentVariables: {exc}") from None
    if not requested:
        return EnvironmentGrant((), {}, ())
    try:
        granted = grants(spec)
    except ExtensionHostError as exc:
        raise JoinRefused(f"its environment grants cannot be checked: {exc}", p.ENVIRONMENT_NOT_GRANTED) from None
    if secret_settings:
        host_environment = {**host_environment, **secret_settings}
        granted = granted | secret_settings.keys()
    grant = resolve_request(requested, host_environment, granted)
    if secret_settings:
        held = (*grant.withheld, *(name for name in grant.granted if name in secret_settings))
        grant = EnvironmentGrant(grant.requested, grant.values, grant.missing, tuple(dict.fromkeys(held)))
    if grant.missing:
        names = ", ".join(grant.missing)
        reason = (
            f"requests environment variable{'s' if len(grant.missing) > 1 else ''} {names}, not granted; "
            f"to grant: {grant_command(spec, grant.missing)}"
        )
        raise JoinRefused(reason, p.ENVIRONMENT_NOT_GRANTED, {"variables": list(grant.missing)}, grant)
    return grant


def grant_command(spec: ExtensionSpec, names: Iterable[str]) -> str:
    """The command line that grants ``names`` to the extension of ``spec``."""
    who = spec.name if spec.source == "project" else spec.id
    return f"extensions grant {who} {' '.join(names)}"


def join_answer(context: SessionContext, resume: p.ResumeParams, granted: Mapping[str, str]) -> p.ResumeResult:
    """The answer to an accepted ``session.resume``, with Copilot CLI's fields: a local session
    in ``interactive`` mode; no elicitation or MCP apps (this host routes none), canvases only
    while a client that shows them is attached, and ``extensions`` false as in Copilot CLI's own
    sessions; the canvas instances open (``openCanvases``, when any are); ``granted``: the values
    of the variables it asked for (sent only when it asked)."""
    session_id = context.session_id
    result: p.ResumeResult = {"sessionId": session_id, "nativeSessionId": session_id}
    if context.start_time:
        result["startTime"] = context.start_time
    result["isRemote"] = False
    result["mode"] = SESSION_MODE
    if context.workspace_path is not None:
        result["workspacePath"] = str(context.workspace_path)
    canvases = context.canvases
    can_show = canvases is not None and canvases.can_show
    result["capabilities"] = {"ui": {"elicitation": False, "mcpApps": False, "canvases": can_show}, "extensions": False}
    if canvases is not None and canvases.open_instances:
        result["openCanvases"] = [instance.to_wire() for instance in canvases.open_instances]
    model_id = context.model_id() if context.model_id is not None else None
    result["modelState"] = {"modelId": model_id} if model_id else {}
    if "requestedEnvironmentVariables" in resume:
        result["grantedEnvironmentVariables"] = dict(granted)
    return result
