"""The extension runtime under one host: what runs the extensions and routes calls to them.

An :class:`ExtensionRuntime` wires the parts below the session layer from the shared registries
it is given: the fork server (Python extensions), the :class:`~extension_host.runtime.context.SessionContext`
every extension shares (the environment without its secrets, the limits), the
:class:`~extension_host.runtime.supervisor.Supervisor` (which instances run), the
:class:`~extension_host.calls.dispatch.Dispatcher` (one tool call through the pipeline) and the file
watcher. It starts them, points what starts later at a new session (:meth:`use_session`),
reloads and restarts extensions (and then looks again at which folders to watch), forwards
session events to the extensions and stops them. What the session is, its turns, its
permissions policy and the trust decision are the host's; they reach here as callables.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final

from extension_protocol.json_codec import use_orjson
from extension_protocol.protocol import Event
from extension_protocol.tools import Tool

from ..calls.activity import ActivityTracker
from ..calls.canvases import Canvases
from ..calls.command_registry import CommandRegistry
from ..calls.dispatch import AskHandler, Dispatcher, builtin_entry
from ..calls.permissions import PermissionBroker
from ..calls.tool_registry import BUILTIN_OWNER, ToolRegistry
from ..events import EventLog
from ..hooks.runner import HookRunner
from ..launch.forkserver import ForkServer, fork_server_wanted, host_fork_server
from ..outcomes import ReloadOutcome
from ..project.environment import scrub
from ..project.paths import cache_dir, project_logs_dir
from ..project.private_files import private_folder, tighten_files_in
from .budget import CrashBudget, ReloadBudget
from .context import GrantLookup, PromptSubmitter, SendHandler, SessionContext, SettingsLookup
from .lifecycle import SessionUpdated
from .options import Limits, Timeouts
from .session_rpc import SessionRpcSources, session_rpc_handlers
from .supervisor import Supervisor

if TYPE_CHECKING:
    from .agent_configs import CustomAgentConfig
    from .reload import ExtensionWatcher

__all__ = ["ExtensionRuntime"]

_WATCH_STOP_TIMEOUT: Final = 5.0
"""Seconds the file watcher has to stop before it is cancelled."""


class ExtensionRuntime:
    """The fork server, shared context, supervisor, dispatcher and watcher of one host.

    The host's constructor arguments of the same names mean the same here; ``settings`` reads
    an extension's settings as it starts; ``grants``,
    ``untrusted`` and ``walk_project`` ask the host's trust decision, ``submit`` its turns,
    ``on_crash`` is told ``(extension_id, error)`` when a running extension crashes.
    """

    def __init__(
        self,
        project_root: Path,
        user_home: Path,
        *,
        session_id: str,
        events: EventLog,
        registry: ToolRegistry,
        commands: CommandRegistry,
        hooks: HookRunner,
        permissions: PermissionBroker,
        session_rpc: SessionRpcSources,
        builtin_tools: Iterable[Tool],
        timeouts: Timeouts,
        limits: Limits,
        environment: Mapping[str, str] | None,
        fork_server: bool | ForkServer,
        on_send: SendHandler | None,
        on_ask: AskHandler | None,
        allow_builtin_overrides: bool,
        watch: bool,
        crash_budget: CrashBudget,
        reload_budget: ReloadBudget,
        grants: GrantLookup,
        settings: SettingsLookup,
        untrusted: Callable[[], str | None],
        walk_project: Callable[[], bool],
        submit: PromptSubmitter,
        on_crash: Callable[[str, str], None] | None = None,
        model_id: Callable[[], str | None] | None = None,
        sdk_path: Path | None = None,
        canvases: Canvases | None = None,
    ) -> None:
        self._registry = registry
        self._hooks = hooks
        self._builtin_tools = list(builtin_tools)
        host_environment = dict(os.environ if environment is None else environment)
        base_environment = scrub(host_environment)
        logs = project_logs_dir(user_home, project_root)
        self._user_home = user_home
        # A ForkServer given is shared (e.g. by the sessions of `extensions serve`): its owner stops it.
        self._owns_fork_server = not isinstance(fork_server, ForkServer)
        self.fork_server = (
            fork_server
            if isinstance(fork_server, ForkServer)
            else host_fork_server(logs, base_environment)
            if fork_server and fork_server_wanted()
            else None
        )
        self.context = SessionContext(
            session_id=session_id,
            project_root=project_root,
            logs_dir=logs,
            registry=registry,
            events=events,
            hooks=hooks,
            environment=base_environment,
            readiness_timeout=timeouts.readiness,
            tool_timeout=timeouts.tool,
            stop_grace=timeouts.stop_grace,
            install_timeout=timeouts.install,
            stop_quiet=timeouts.stop_quiet,
            cache_dir=cache_dir(),
            on_send=on_send,
            fork_server=self.fork_server,
            host_environment=host_environment,
            grants=grants,
            settings=settings,
            allow_builtin_overrides=allow_builtin_overrides,
            max_queued_bytes=limits.queued_bytes,
            submit=submit,
            permissions=permissions,
            commands=commands,
            session_rpc=session_rpc_handlers(session_rpc),
            model_id=model_id,
            sdk_path=sdk_path,
            canvases=canvases,
        )
        self.activity = ActivityTracker()
        self._updated = SessionUpdated()
        self.supervisor = Supervisor(
            self.context,
            self.activity,
            project_root=project_root,
            user_home=user_home,
            drain_timeout=timeouts.tool,
            untrusted=untrusted,
            crash_budget=crash_budget if watch else None,
            reload_budget=reload_budget if watch else None,
            crash_listener=on_crash,
        )
        self.dispatcher = Dispatcher(
            registry,
            events,
            hooks,
            self.supervisor.unavailable_reason,
            on_ask,
            self.activity,
            self._unknown_tool_hint,
            permissions,
        )
        self.watcher: ExtensionWatcher | None = None
        if watch:
            from .reload import ExtensionWatcher  # the file watcher's library only for a host that watches

            # An untrusted project's extension folders are not walked (only their root is watched),
            # nor a disabled extension's.
            self.watcher = ExtensionWatcher(
                project_root,
                user_home,
                self.supervisor.apply_watched,
                walk=lambda source: source != "project" or walk_project(),
                skip=self.supervisor.is_disabled,
                copilot_root=self.supervisor.copilot_root,
            )
        self._events = events
        self._watching: asyncio.Task[None] | None = None
        self._stop_watching = asyncio.Event()

    def use_session(self, session_id: str, workspace: Path | None, start_time: str = "") -> None:
        """Hand the session's id, workspace and start time to what starts from now on."""
        self.context = dataclasses.replace(
            self.context, session_id=session_id, workspace_path=workspace, start_time=start_time
        )
        self.supervisor.use_context(self.context)
        self._hooks.use_session(session_id)
        self._registry.replace(BUILTIN_OWNER, [builtin_entry(tool, session_id) for tool in self._builtin_tools])

    async def start(self) -> None:
        """Forward session events to the extensions, start every extension, start watching."""
        # What extensions print lands here: the home, every folder down to the logs and the logs
        # are the user's alone. A folder that cannot be made fails each start, saying so, not the host.
        with contextlib.suppress(OSError):
            tighten_files_in(private_folder(self.context.logs_dir, within=self._user_home))
        use_orjson()  # every message and log line from now on, when the fast extra is installed
        self._events.subscribe(self._forward_to_extensions)
        await self.supervisor.start_all()
        if self.watcher is not None:
            self._watching = asyncio.ensure_future(self.watcher.watch(self._stop_watching))
            # The watch task's first step sets up the OS watches before it first suspends;
            # yielding once lets it run, so a save right after start() is never missed.
            await asyncio.sleep(0)

    async def stop_watching(self) -> None:
        """Stop the file watcher (cancelled if it takes longer than 5 s)."""
        if self._watching is not None:
            self._stop_watching.set()
            try:
                async with asyncio.timeout(_WATCH_STOP_TIMEOUT):
                    await self._watching
            except TimeoutError:
                self._watching.cancel()

    async def stop(self) -> None:
        """Stop every extension, then the fork server (unless it is shared: its owner stops it)."""
        await self.supervisor.stop_all()
        if self.fork_server is not None and self._owns_fork_server:
            await self.fork_server.stop(self.context.stop_grace)

    async def apply(self, changed: set[str] | None = None) -> list[ReloadOutcome]:
        """Bring the running extensions in line with the disk, reloading ``changed`` ids (all if
        ``None``; see :meth:`Supervisor.apply <extension_host.runtime.supervisor.Supervisor.apply>`),
        then look again at what to watch."""
        outcomes = await self.supervisor.apply(changed)
        await self._refresh_watch()
        return outcomes

    async def restart_all(self, between: Callable[[], None] | None = None) -> list[ReloadOutcome]:
        """Stop every extension, discover again and start them all (``between()`` runs in the
        gap), then look again at what to watch."""
        outcomes = await self.supervisor.restart_all(between=between)
        await self._refresh_watch()
        return outcomes

    async def _refresh_watch(self) -> None:
        # Trust or an enable/disable decision may have changed, and with it which folders are walked.
        if self.watcher is not None:
            await self.watcher.refresh()

    def custom_agents(self) -> list[tuple[str, CustomAgentConfig]]:
        """The custom agents the running extensions declared, with who declared each, in load order."""
        return [(i.id, agent) for i in self.supervisor.current() if i.status == "running" for agent in i.custom_agents]

    def permission_handlers(self) -> bool:
        """Whether a running extension answers permission requests."""
        return any(i.handles_permissions and i.status == "running" for i in self.supervisor.current())

    def _unknown_tool_hint(self) -> str | None:
        """Why a tool may be missing: the extensions that failed (they offered nothing), and
        those that did not run because the project is not trusted."""
        hints = [  # one a line, the further lines of an error (its source line) indented under it
            f"extension {info.id} {info.status}: {info.error}".replace("\n", "\n  ")
            for info in self.supervisor.infos()
            if info.status in ("failed", "quarantined") and info.error
        ]
        untrusted = self.supervisor.untrusted()
        if untrusted:
            hints.append(
                f"{len(untrusted)} project extension{'s' if len(untrusted) > 1 else ''} did not run because "
                f"this project is not trusted ({', '.join(untrusted)}); review them, then run 'extensions trust'"
            )
        return "\n".join(hints) or None

    def _forward_to_extensions(self, event: Event) -> None:
        if event["type"] == "external_tool.requested":
            return  # as in Copilot CLI, only the tool's owner is sent it (by its pending calls)
        instances = self.supervisor.current()
        for instance in instances:
            instance.deliver(event)
        if "ephemeral" not in event:
            # Copilot CLI tells its extensions the session changed after each persisted event.
            context = self.context
            updated = self._updated.frame(context.session_id, context.start_time, event["timestamp"])
            for instance in instances:
                instance.deliver_lifecycle(updated)
