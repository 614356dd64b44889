"""What every extension of one host shares: its session, registries, environment and limits.

A :class:`SessionContext` is built once by the host and handed to each instance; it holds no
behaviour. This module knows the shapes of those shared things, not what is done with them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..calls.canvases import Canvases
from ..calls.command_registry import CommandRegistry
from ..calls.permissions import PermissionBroker
from ..calls.tool_registry import ToolRegistry
from ..events import EventLog
from ..hooks.runner import HookRunner
from ..launch.forkserver import ForkServer
from ..launch.npm_deps import DEFAULT_INSTALL_TIMEOUT
from ..project.discovery import ExtensionSpec
from .defaults import STOP_QUIET

if TYPE_CHECKING:  # the settings are read when an extension starts, not when the host is imported
    from ..project.manifest import Manifest
    from ..project.settings import Delivery

__all__ = [
    "MAX_QUEUED_BYTES",
    "GrantLookup",
    "PromptSubmitter",
    "SendHandler",
    "SessionContext",
    "SettingsLookup",
    "announce_tools",
]

SendHandler = Callable[[str, list[dict[str, Any]], str], Awaitable[None]]
"""What the embedding application does with ``session.send``: ``(prompt, attachments, extension_id)``."""

PromptSubmitter = Callable[[str, list[dict[str, Any]], str], Awaitable[str]]
"""Queues a prompt an extension sent (``(prompt, attachments, extension_id)``) and returns its
message id; raises :class:`~extension_host.errors.ExtensionHostError` saying why it cannot."""

GrantLookup = Callable[[ExtensionSpec], frozenset[str]]
"""The sensitive variables the user granted to an extension (may raise
:class:`~extension_host.errors.ExtensionHostError` when the record cannot be read)."""

SettingsLookup = Callable[[ExtensionSpec, "Manifest"], "Delivery"]
"""What an extension, with the manifest it starts with, gets of its settings (may raise
:class:`~extension_host.errors.ExtensionHostError`: a settings file cannot be read); asked again
to learn whether a secret it holds is still set."""

MAX_QUEUED_BYTES: Final = 64 * 1024 * 1024
"""Bytes the host keeps queued towards an extension that does not read its input; past that
the extension fails ("stopped reading its input") and its pending calls fail. Checked before
each message is queued, so the queue holds at most this plus one message. The default is the
largest message an extension accepts, so one such message being read still lets small ones
queue behind it."""


@dataclass(frozen=True, slots=True)
class SessionContext:
    """What every extension of one host shares."""

    session_id: str
    project_root: Path
    logs_dir: Path
    registry: ToolRegistry
    events: EventLog
    hooks: HookRunner
    environment: Mapping[str, str]
    """The base environment of extension processes: sensitive variables already removed."""
    readiness_timeout: float
    tool_timeout: float
    stop_grace: float
    cache_dir: Path
    host_environment: Mapping[str, str]
    """Where granted variables take their values from: the environment before stripping."""
    grants: GrantLookup
    """Who was granted what."""
    on_send: SendHandler | None = None
    fork_server: ForkServer | None = None
    allow_builtin_overrides: bool = True
    """Whether an extension may replace a built-in tool (``overridesBuiltInTool``)."""
    stop_quiet: float = STOP_QUIET
    """See :attr:`~extension_host.runtime.options.Timeouts.stop_quiet`."""
    max_queued_bytes: int = MAX_QUEUED_BYTES
    """See :data:`MAX_QUEUED_BYTES`."""
    commands: CommandRegistry = field(default_factory=CommandRegistry)
    """Which slash command belongs to whom (beside ``registry``, the tools)."""
    session_rpc: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)
    """The handlers of the session-scoped RPC methods, by method (see
    :func:`~extension_host.runtime.session_rpc.session_rpc_handlers`; empty: not answered)."""
    submit: PromptSubmitter | None = None
    """Where ``session.send`` goes (the session's turns); without it, ``on_send`` as before."""
    permissions: PermissionBroker | None = None
    """Pending permission requests, which extensions with a permission handler answer."""
    workspace_path: Path | None = None
    """The session's workspace folder (``files/``), given to extensions as ``workspacePath``."""
    sdk_path: Path | None = None
    """The SDK build JavaScript extensions import (``index.js`` and ``extension.js``); ``None``:
    the pinned package (:mod:`~extension_host.launch.node_sdk`)."""
    start_time: str = ""
    """When the session started (ISO 8601; empty: not known), for joins and ``session.lifecycle``."""
    model_id: Callable[[], str | None] | None = None
    """The agent's current model, when it names one (a join's ``modelState``)."""
    settings: SettingsLookup | None = None
    """The settings each extension starts with (``None``: none, as for an embedding without a home)."""
    install_timeout: float = DEFAULT_INSTALL_TIMEOUT
    """How long installing an extension's dependencies (npm) may take before it fails."""
    canvases: Canvases | None = None
    """The canvases extensions declare and the instances open (``None``: canvases are refused)."""


def announce_tools(context: SessionContext, **data: Any) -> None:
    """Emit ``session.tools_updated`` with ``data`` and, as Copilot CLI does, the ``model`` the
    tools are offered to when the agent names one."""
    model = context.model_id() if context.model_id is not None else None
    context.events.emit("session.tools_updated", {"model": model, **data} if model else data, ephemeral=True)
