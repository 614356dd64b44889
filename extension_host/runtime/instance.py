"""One running extension's lifecycle: start, join, fail, detach, stop; and the calls to it.

An :class:`ExtensionInstance` starts the process, serves its connection (the handler table is
:mod:`~extension_host.runtime.inbound`'s), answers its ``session.resume`` by registering its tools,
hooks and slash commands the moment it joins (never waiting for another extension) and
granting the environment variables the user granted, forwards the session events it is
interested in (:mod:`~extension_host.runtime.interests`), calls its tools, hooks and commands, and
turns every way it can go wrong (crash, protocol error, collision, a variable nobody granted,
no join in time) into status ``failed`` with a one-line reason. Whatever happens to it, its
pending calls end at once and its tools leave the registry (:mod:`~extension_host.runtime.withdrawal`).
Before its stdin is closed, the requests it already sent are answered. A grant taken back from
it while it holds the value (:meth:`ExtensionInstance.revoke`) stops it at once and leaves it
``failed``, saying which grant it needs.
A Python extension with requirements runs on its own environment's interpreter, built first
(:mod:`~extension_host.runtime.requirements`); a JavaScript one's npm dependencies are installed
first when its ``package.json`` asks (:mod:`~extension_host.launch.npm_deps`).

It knows nothing of other extensions beyond the shared registry and event log it is given:
who wins a tool-name collision with a running extension is its arbiter's call, and what
follows a crash after joining (restart, quarantine) its crash handler's, both the supervisor's.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from extension_protocol import protocol as p
from extension_protocol.connection import Connection, ConnectionClosed, QueueOverflow, RpcError
from extension_protocol.framing import MAX_DEPTH, FramingError
from extension_protocol.matchers import Matcher
from extension_protocol.results import ToolResult
from extension_protocol.tasks import BackgroundTasks

from ..calls.command_registry import CommandCollisionError, CommandEntry, CommandResult
from ..calls.tool_registry import ToolEntry
from ..errors import ExtensionHostError, ExtensionLoadError, ToolCollisionError
from ..info import CanvasInfo, ExtensionInfo, ExtensionStatus
from ..launch.node_sdk import ensure_sdk, find_node, node_argv, sdk_build
from ..launch.npm_deps import (
    SCRIPTS_SKIPPED,
    install_dependencies,
    npm_environment,
    npm_plan,
    scripts_allowed,
)
from ..launch.process import ExtensionProcess, LaunchSpec, describe_exit, python_argv, spawn
from ..project.discovery import ExtensionSpec
from ..project.environment import EnvironmentGrant, extension_environment
from ..validation import prepare, validate
from .context import SessionContext, announce_tools
from .defaults import STOP_QUIET
from .handshake import (
    JoinRefused,
    builtin_overrides,
    canvases_of,
    declared_agents,
    declared_commands,
    declared_hooks,
    declared_matchers,
    declared_tools,
    grant_command,
    granted_environment,
    join_answer,
)
from .inbound import ExtensionRequests, inbound_handlers
from .interests import MAX_INTEREST_HANDLES, Interests
from .pending_commands import PendingCommands
from .pending_tools import PendingCalls
from .requirements import own_interpreter
from .withdrawal import announce_departure, withdraw

if TYPE_CHECKING:
    from ..project.settings import Delivery
    from .agent_configs import CustomAgentConfig

__all__ = [
    "MAX_INTEREST_HANDLES",
    "NOT_JOINED_GRACE",
    "STOP_IDLE_LIMIT",
    "STOP_QUIET",
    "Arbiter",
    "CrashHandler",
    "ExtensionInstance",
    "JoinHandler",
]

Arbiter = Callable[["ExtensionInstance", "list[ToolEntry]"], Awaitable["list[ExtensionInstance] | None"]]
"""Asked when an extension joins declaring tools that others hold: which running instances give
them up (evicted), or ``None``: the joiner fails. It may wait, for the extensions whose joining
could still change who holds them."""

CrashHandler = Callable[["ExtensionInstance"], None]
"""Told when a running extension fails by itself (exit, protocol error): not when it is stopped,
replaced, or loses a tool-name collision."""

JoinHandler = Callable[["ExtensionInstance"], None]
"""Told when an extension first joins (not when it joins again after detaching), once it is
running and before its join is answered: what the handler sends reaches the extension before
anything the extension can do after joining."""

STOP_IDLE_LIMIT: Final = 1.0
"""The longest a stop waits for that quiet (s): a chatty extension is stopped anyway."""

NOT_JOINED_GRACE: Final = 0.5
"""Each step of the stop ladder for an extension that failed before joining (s)."""


class ExtensionInstance:
    """One extension process and everything the host knows about it."""

    def __init__(
        self,
        spec: ExtensionSpec,
        context: SessionContext,
        *,
        order: int = 0,
        arbiter: Arbiter | None = None,
        on_crash: CrashHandler | None = None,
        on_join: JoinHandler | None = None,
    ) -> None:
        """``arbiter`` settles a collision with a running extension in its favour (see
        :data:`Arbiter`); without it the joiner always fails. ``on_crash``: see
        :data:`CrashHandler`; ``on_join``: see :data:`JoinHandler`."""
        self.spec = spec
        self.order = order
        """Its place in the load order, which is also its place in every hook chain."""
        self._context = context
        self._arbiter = arbiter
        self._on_crash = on_crash
        self._on_join = on_join
        self._evicted = False
        self._arbitrating = False
        """Joined, and waiting to learn whether it may take a tool name another holds."""
        self.status: ExtensionStatus = "starting"
        self.error: str | None = None
        self.hooks: tuple[str, ...] = ()
        self.hook_matchers: dict[str, Matcher] = {}
        self.lost_tools: tuple[str, ...] = ()
        """The tools it had when it failed (so a call to one can say why it is gone)."""
        self.environment = EnvironmentGrant((), {}, ())
        """What it asked for of the environment when it joined, and what it got."""
        self.settings: Delivery | None = None
        """What it got of its settings when it started (``None``: it has none, or has not started)."""
        self.overrides_builtin: tuple[str, ...] = ()
        """The built-in tools it replaces."""
        self.activity: str | None = None
        """What it is doing while ``starting``, when that is not quick (``installing 2 requirements``)."""
        self.note: str | None = None
        """A remark on how it was started (its dependencies' scripts were not run)."""
        self._preparing: asyncio.Future[tuple[tuple[str, ...], bool]] | None = None
        """Its command line being made (its environment built, say), until it is."""
        self.settled = asyncio.Event()
        """Set once the extension is running or has failed (its registration is decided)."""
        self._interests = Interests()
        self.handles_permissions = False
        """It joined with a permission handler (``requestPermission``) and is not failed."""
        self.custom_agents: tuple[CustomAgentConfig, ...] = ()
        """The custom agents it declared when it joined (``customAgents``)."""
        self._process: ExtensionProcess | None = None
        self._connection: Connection | None = None
        self._calls = PendingCalls(
            spec.id,
            context.session_id,
            context.tool_timeout,
            context.events,
            str(context.project_root),
            self._interests.wants,
        )
        self._command_runs = PendingCommands(spec.id, context.session_id, self._command_completed)
        self._declared_commands: list[CommandEntry] = []
        self._tasks = BackgroundTasks(f"extension {spec.id}")
        self._stopping = False
        self.retired = False
        """Set when a newer version took over: it is draining and its end is no news."""
        self.revoked: tuple[str, ...] = ()
        """The variables taken back from it while it held them: it was stopped for that, and
        nothing restarts it until it is granted them again (or reloaded)."""

    @property
    def id(self) -> str:
        """``<source>:<name>``."""
        return self.spec.id

    @functools.cached_property
    def log_path(self) -> Path:
        """The extension's log file (its stderr, and whatever it prints)."""
        return self._context.logs_dir / f"{self.spec.source}-{self.spec.name}.log"

    @property
    def process(self) -> ExtensionProcess | None:
        """The process, once started."""
        return self._process

    def info(self) -> ExtensionInfo:
        """A snapshot for the API and the CLI."""
        return ExtensionInfo(
            id=self.id,
            name=self.spec.name,
            source=self.spec.source,
            path=self.spec.folder,
            status=self.status,
            pid=self._process.pid if self._process else None,
            tools=tuple(e.name for e in self._context.registry.entries() if e.holder is self),
            hooks=self.hooks,
            hook_matchers=tuple((hook, matcher.patterns) for hook, matcher in self.hook_matchers.items()),
            error=self.error,
            log_path=self.log_path,
            link_target=self.spec.link_target,
            environment_requested=self.environment.requested,
            environment_granted=self.environment.granted,
            environment_missing=self.environment.missing,
            overrides_builtin=self.overrides_builtin,
            commands=tuple(self._context.commands.held_by(self)),
            settings=self.settings.names if self.settings else (),
            settings_unset=self.settings.unset if self.settings else (),
            activity=self.activity,
            note=self.note,
            canvases=self._canvas_infos(),
        )

    def _canvas_infos(self) -> tuple[CanvasInfo, ...]:
        canvases = self._context.canvases
        if canvases is None or not canvases.declared:
            return ()
        return tuple(
            CanvasInfo(
                entry.canvas_id,
                entry.display_name,
                entry.description,
                tuple((action.name, action.description) for action in entry.actions),
            )
            for entry in canvases.held_by(self)
        )

    # -- lifecycle ----------------------------------------------------------------------

    async def start(self) -> None:
        """Launch the process and wait until it has joined or failed (bounded by the readiness timeout)."""
        context = self._context
        env = extension_environment(
            context.environment,
            session_id=context.session_id,
            extension_id=self.id,
            parent_pid=os.getpid(),
        )
        from ..project.manifest import read_manifest  # pydantic: when an extension starts, not at import

        try:  # read once: its settings and its requirements both come from it
            manifest = read_manifest(self.spec.folder)
            if context.settings is not None:
                self.settings = context.settings(self.spec, manifest)
        except ExtensionHostError as exc:  # a wrong manifest, a damaged settings file
            self._fail(str(exc))
            return
        if self.settings is not None:
            env.update(self.settings.environment)
        preparing = self._preparing = asyncio.ensure_future(self._command_line(env, manifest.requires))
        try:
            await asyncio.wait([preparing])  # a stop cancels it: that is no error of the start
        finally:
            self._preparing = None
            if not preparing.done():  # this start was cancelled: so is what it waited for
                preparing.cancel()
                await asyncio.wait([preparing])  # its installer is gone before the start ends
        if preparing.cancelled():
            return
        try:
            argv, forkable = preparing.result()
        except ExtensionHostError as exc:  # no Node.js, a wrong manifest, a failed install (pip, npm)
            self._fail(str(exc))
            return
        python_entry = self.spec.entry if self.spec.runtime == "python" else None
        launch = LaunchSpec(self.id, argv, context.project_root, env, self.log_path, python_entry, forkable)
        try:
            self._process = await spawn(launch, context.fork_server)
        except OSError as exc:
            self._fail(f"could not start: {exc}")
            return
        if self._stopping:  # stopped while it was being launched
            await self._process.stop(context.stop_grace)
            return
        # The join's validator, built once per process: now, while the extension boots on
        # another core, rather than once its join has arrived.
        prepare(p.ResumeParams)
        self._connection = Connection(
            self._process.stdout,
            self._process.stdin,
            handlers=inbound_handlers(
                ExtensionRequests(self.id, context, self._interests),
                context,
                resume=self._on_resume,
                detach=self._on_detach,
                tool_answer=self._calls.answer,
                command_answer=self._command_runs.answer,
            ),
            max_outbound_depth=MAX_DEPTH,  # deeper, and the extension would drop the connection
            max_queued_bytes=context.max_queued_bytes,
        )
        self._tasks.spawn(self._serve(self._connection))
        self._tasks.spawn(self._watch_exit(self._process))
        try:
            async with asyncio.timeout(context.readiness_timeout):
                await self.settled.wait()
        except TimeoutError:
            if self._arbitrating:
                # It joined in time; who gets a colliding tool name waits for the extensions
                # before it, each bounded by its own readiness timeout.
                await self.settled.wait()
            else:
                self._fail(
                    f"did not join within {context.readiness_timeout:g} s "
                    "(join_session() was not called or did not finish)"
                )

    async def _command_line(self, env: dict[str, str], requires: tuple[str, ...]) -> tuple[tuple[str, ...], bool]:
        """Its command line (a Python one's on its own environment when it ``requires`` packages),
        and whether a fork server may start it instead."""
        if self.spec.runtime == "python":
            python = await own_interpreter(self.spec, requires, self._context, env, self.log_path, self._doing)
            return python_argv(self.spec.entry, python), python is None
        node = find_node(env)
        await self._npm_dependencies()
        if self._context.sdk_path is not None:
            build = sdk_build(self._context.sdk_path)
            env["EXTENSION_HOST_SDK_BUILD"] = env["COPILOT_SDK_PATH"] = str(build)
        else:
            sdk = await ensure_sdk(self._context.cache_dir, env)
            env["EXTENSION_HOST_NODE_SDK"] = str(sdk)
            env["COPILOT_SDK_PATH"] = str(sdk / "node_modules" / "@github" / "copilot-sdk")
        return node_argv(node, self.spec.entry), False

    def _doing(self, activity: str | None) -> None:
        self.activity = activity

    def abandon_start(self) -> None:
        """Give up a start that is still preparing (its environment being built): the start
        returns at once, its installer ended, and it is being stopped. Nothing else changes."""
        if self._preparing is not None:
            self._stopping = True
            self._preparing.cancel()

    async def _npm_dependencies(self) -> None:
        """Install the npm dependencies its ``package.json`` declares, if not done already
        (:mod:`~extension_host.launch.npm_deps`); what it does shows as its :attr:`activity`."""
        context, scripts = self._context, scripts_allowed(self.spec.source)
        state = context.cache_dir / "npm-installs"
        plan = npm_plan(self.spec.folder, scripts=scripts, state_dir=state)
        if plan is None:
            return
        self.activity = "installing npm dependencies…"
        try:
            environment = npm_environment(context.environment, context.host_environment)
            ran = await install_dependencies(
                plan, environment=environment, log_path=self.log_path, state_dir=state, timeout=context.install_timeout
            )
        finally:
            self.activity = None
        if ran and not scripts:
            self.note = SCRIPTS_SKIPPED

    async def stop(self) -> None:
        """Stop the process (stop ladder) and release its tools; safe to call in any state."""
        self.abandon_start()
        self._stopping = True
        self._withdraw("the extension is stopping")
        self.settled.set()  # a start still waiting for the join returns
        if self._connection is not None and self._process is not None and self._process.returncode is None:
            # Requests it already sent are answered before its stdin closes: it may be stopped
            # right after joining (a one-shot command), when its first requests are on the way.
            await self._connection.wait_idle(self._context.stop_quiet, STOP_IDLE_LIMIT, self._process.busy)
        if self._process is not None:
            await self._process.stop(self._context.stop_grace)
        if self._connection is not None:
            self._connection.close("the extension was stopped")
        await self._tasks.cancel(self._context.stop_grace)

    async def revoke(self, names: tuple[str, ...]) -> None:
        """Stop it at once, because the user took back the grants of ``names``, whose values it
        holds: its calls end, the whole stop ladder ends its process group (whatever it is
        doing, joined or draining), and it stays ``failed`` with ``needs grant: NAME``. Not a
        crash: nothing restarts it."""
        self.revoked = names
        self._stopping = True  # its end is not a crash, and a start under way gives up
        from ..project.settings import config_command  # only here: a revocation is rare

        held = self.settings.secrets if self.settings else {}
        granted = tuple(name for name in names if name not in held)
        reasons = (
            [
                f"needs grant: {', '.join(granted)} (the grant was revoked, so it was stopped); "
                f"to grant it again: {grant_command(self.spec, granted)}"
            ]
            if granted
            else []
        )
        for key in (held[name] for name in names if name in held):
            reasons.append(
                f"needs setting: {key} (the secret was unset, so it was stopped); "
                f"to set it again: {config_command(self.spec, key, secret=True)}"
            )
        reason = "; ".join(reasons)
        if self.status in ("failed", "quarantined"):
            self.status, self.error = "failed", reason
        else:
            self._fail(reason)
        self.environment = self.environment.taken_back(names)
        if self.settings is not None:
            self.settings = self.settings.without(names)
        await self.stop()

    def secret_settings_now(self) -> frozenset[str]:
        """The variables of its secret settings that are set now (none when the settings cannot
        be read: nothing vouches for them then); what it may go on holding of them."""
        if not (self.settings and self.settings.secrets) or self._context.settings is None:
            return frozenset()
        from ..project.manifest import read_manifest

        try:  # read again: the manifest may have changed since it started
            return frozenset(self._context.settings(self.spec, read_manifest(self.spec.folder)).secrets)
        except ExtensionHostError:
            return frozenset()

    def kill(self) -> None:
        """Kill the process group at once (used when the host itself is going down hard)."""
        if self._process is not None:
            self._process.kill()

    def evict(self, reason: str) -> None:
        """Fail it because an extension earlier in load order joined later and claimed one of
        its tools (its in-flight calls end with a failure); not a crash."""
        self._evicted = True
        self._fail(reason)

    def quarantine(self) -> None:
        """Mark a failed instance as one its supervisor will not restart any more."""
        if self.status == "failed":
            self.status = "quarantined"

    def _fail(self, reason: str) -> None:
        if self.status in ("failed", "quarantined"):
            return
        was_running = self.status == "running"
        self.status = "failed"
        self.error = reason
        removed = self._withdraw(f"extension {self.id} failed: {reason}")
        self.lost_tools = tuple(removed)
        self.settled.set()
        if was_running and not self.retired:
            announce_departure(self._context, self.id, "warning", f"extension {self.id} failed: {reason}", removed)
        if self._process is not None and self._process.returncode is None and not self._stopping:
            # One that never joined has no calls to finish and may not read its stdin at all
            # (stuck at import): it gets a short ladder, so a one-shot command is not held up.
            grace = self._context.stop_grace
            if not was_running:
                grace = min(grace, NOT_JOINED_GRACE)
            self._tasks.spawn(self._process.stop(grace))
        if was_running and not self.retired and not self._evicted and not self._stopping and self._on_crash:
            self._on_crash(self)

    async def _serve(self, connection: Connection) -> None:
        try:
            await connection.serve()
        except FramingError as exc:
            self._fail(f"protocol error: {exc}")
        except QueueOverflow as exc:
            self._fail(str(exc))

    async def _watch_exit(self, process: ExtensionProcess) -> None:
        code = await process.wait()
        if self._stopping or self.status in ("failed", "quarantined", "detached"):
            return
        reason = process.failure_reason()
        when = "before joining" if self.status == "starting" else "while running"
        text = f"{describe_exit(code)} {when}"
        self._fail(f"{text}: {reason}" if reason else text)

    def _on_detach(self, params: Any) -> dict[str, Any]:
        """``session.detach`` (the JS SDK's ``disconnect()``): its SDK has dropped every handler,
        so its tools, commands and hooks leave the session now; its process may run on, and
        join again (``connect`` and ``session.resume`` on the same stdio)."""
        if self.status == "running":
            self.status = "detached"
            message = f"extension {self.id} detached from the session"
            announce_departure(self._context, self.id, "info", message, self._withdraw(message))
        return {"success": True}

    def _withdraw(self, why: str) -> list[str]:
        """Take back its tools, hooks and commands and end what is in flight to it (see
        :mod:`~extension_host.runtime.withdrawal`); returns the tools it held."""
        return withdraw(self._context, self.id, self, [self._calls, self._command_runs], why)

    # -- its join -------------------------------------------------------------------------

    async def _on_resume(self, params: Any) -> p.ResumeResult:
        try:
            return await self._join(params)
        except RpcError as exc:
            if self.status in ("starting", "detached") and not self._stopping:
                # A refused join is the end of this start: say why here, not only in the answer,
                # which an extension may not log before it exits.
                self._fail(f"its join was refused: {exc.message}")
            raise

    async def _join(self, params: Any) -> p.ResumeResult:
        # A detached extension may join again from the same process, as Copilot CLI allows.
        if self.status not in ("starting", "detached"):
            raise RpcError(p.INVALID_REQUEST, f"extension {self.id} has already joined (status {self.status})")
        rejoining = self.status == "detached"
        resume = validate(p.METHOD_SESSION_RESUME, p.ResumeParams, params)
        if resume["sessionId"] != self._context.session_id:
            raise RpcError(
                p.INVALID_PARAMS,
                f"session.resume: sessionId {resume['sessionId']!r} is not this host's session "
                f"(use the SESSION_ID environment variable)",
            )
        context = self._context
        try:
            hooks = declared_hooks(resume)
            matchers = declared_matchers(resume, hooks)
            agents = declared_agents(resume)
            commands = declared_commands(resume)
            canvases = canvases_of(resume, self.id, self.request_canvas, self) if "canvases" in resume else []
            secrets = self.settings.secret_values if self.settings else None
            self.environment = granted_environment(self.spec, resume, context.host_environment, context.grants, secrets)
        except JoinRefused as refused:
            raise self._refuse(refused) from None
        if self._stopping or self.retired:
            raise RpcError(p.INVALID_REQUEST, f"extension {self.id} is being stopped")
        self._declared_commands = [
            CommandEntry(name, description, self.id, functools.partial(self.invoke_command, name), holder=self)
            for name, description in commands
        ]
        entries = declared_tools(resume, self.id, self.invoke_tool, self)
        try:
            overrides = builtin_overrides(entries, context.registry, context.allow_builtin_overrides)
        except JoinRefused as refused:
            raise self._refuse(refused) from None
        try:
            # Checked against the other extensions only: an earlier version of this one is
            # swapped out in the same step (hot reload), or there is none.
            await self._claim(entries)
        except CommandCollisionError as exc:
            raise self._refuse(JoinRefused(str(exc), p.TOOL_REGISTRATION_FAILED, {"command": exc.command})) from None
        except ExtensionLoadError as exc:
            tool = getattr(exc, "tool", None)
            raise self._refuse(JoinRefused(str(exc), p.TOOL_REGISTRATION_FAILED, {"tool": tool})) from None
        self.hooks = hooks
        self.hook_matchers = matchers
        self.handles_permissions = bool(resume.get("requestPermission"))
        self.custom_agents = agents
        self._interests.join(resume.get("eventTypes"), self.handles_permissions)
        self._context.hooks.register_extension(
            self.id, self.order, hooks, self.invoke_hook, holder=self, matchers=matchers
        )
        self.overrides_builtin = overrides
        self.status = "running"
        self.settled.set()
        # Its commands are checked in _claim; registered once it runs, so the commands.changed
        # this causes reaches it too, as in Copilot CLI.
        self._context.commands.replace(self.id, self._declared_commands)
        if context.canvases is not None and (canvases or context.canvases.declared):
            context.canvases.replace(self.id, canvases, self)
        # As Copilot CLI does, every join says the tools on offer changed (to the joiner too).
        announce_tools(self._context, added=[entry.name for entry in entries], extensionId=self.id)
        if rejoining:
            self._context.events.emit(
                "session.info",
                {"infoType": "extension", "message": f"extension {self.id} joined again", "extensionId": self.id},
            )
        elif self._on_join is not None:
            self._on_join(self)
        for name in overrides:
            self._context.events.emit(
                "session.warning",
                {
                    "warningType": "extension",
                    "message": f"extension {self.id} overrides the built-in tool {name!r}",
                    "extensionId": self.id,
                },
            )
        return join_answer(self._context, resume, self.environment.values)

    def _refuse(self, refused: JoinRefused) -> RpcError:
        """Fail it for a refused join; returns the error its ``session.resume`` is answered with."""
        if refused.grant is not None:
            self.environment = refused.grant
        self._fail(refused.reason)
        return RpcError(refused.code, refused.reason, refused.data)

    async def _claim(self, entries: list[ToolEntry]) -> None:
        """Register ``entries``; each extension registers as it joins, whatever the others do.

        A name another extension holds fails this one, unless the arbiter names running holders
        that yield every such name (later ones in load order, while extensions start together):
        those are evicted with the collision error naming this one, so the end state is the one
        joining in load order gives.

        Raises:
            ExtensionLoadError: a name is invalid, declared twice, or taken and not yielded.
        """
        registry = self._context.registry
        if self._collisions(entries) and self._arbiter is not None:
            self._arbitrating = True
            try:
                yielding = await self._arbiter(self, entries)
            finally:
                self._arbitrating = False
            taken = self._collisions(entries)
            for holder in yielding or ():
                kind, name = next((kind, name) for kind, name, owner in taken if owner == holder.id)
                error = ToolCollisionError if kind == "tool" else CommandCollisionError
                holder.evict(str(error(holder.id, name, self.id)))
        if self._stopping or self.retired:
            raise RpcError(p.INVALID_REQUEST, f"extension {self.id} is being stopped")
        for name, holder_id in self._context.commands.conflicts(self.id, self._declared_commands).items():
            raise CommandCollisionError(self.id, name, holder_id)
        registry.replace(self.id, entries)

    def _collisions(self, entries: list[ToolEntry]) -> list[tuple[str, str, str]]:
        """(kind, name, holder) of each tool and command it declares that another extension holds."""
        tools = self._context.registry.conflicts(self.id, entries)
        commands = self._context.commands.conflicts(self.id, self._declared_commands)
        return [("tool", name, owner) for name, owner in tools.items()] + [
            ("command", name, owner) for name, owner in commands.items()
        ]

    def colliding_owners(self, entries: list[ToolEntry]) -> list[str]:
        """The extensions holding a tool of ``entries`` or a command it declared (its arbiter asks)."""
        return [owner for _, _, owner in self._collisions(entries)]

    # -- calls to it ----------------------------------------------------------------------

    async def invoke_tool(self, tool_name: str, arguments: Any, tool_call_id: str) -> ToolResult:
        """Ask the extension to run ``tool_name``; always returns a result, never hangs.

        The result is ``timeout`` after the host's tool timeout, and ``failure`` at once if the
        extension dies or is stopped meanwhile.
        """
        connection = self._connection
        if self.status != "running" or connection is None or connection.closed:
            text = f"tool {tool_name!r} is unavailable: extension {self.id} is {self.status}"
            return ToolResult(text, "failure", error=text)
        return await self._calls.call(connection, tool_name, arguments, tool_call_id)

    async def invoke_hook(self, hook: str, wire_input: Mapping[str, Any], timeout: float) -> Any:
        """Call one of the extension's hooks and return its answer as received (``{"output":
        ...}``); the hook runner checks its shape.

        Raises:
            RpcError: the hook raised or returned something the SDK refused.
            TimeoutError: no answer in time (the extension is told to cancel).
            ConnectionClosed: the extension is not running.
        """
        connection = self._connection
        if self.status != "running" or connection is None:
            raise ConnectionClosed(f"extension {self.id} is {self.status}")
        params: p.HooksInvokeParams = {
            "sessionId": self._context.session_id,
            "hookType": p.HOOK_WIRE_NAMES[hook],
            "input": dict(wire_input),
        }
        return await connection.request(p.METHOD_HOOKS_INVOKE, params, timeout=timeout)

    async def invoke_command(self, name: str, args: str, timeout: float | None = None) -> CommandResult:
        """Run the extension's command ``name`` with the argument string ``args``; always
        returns a result (``timeout`` after ``timeout`` s, default the tool timeout), never hangs."""
        connection = self._connection
        if self.status != "running" or connection is None or connection.closed:
            text = f"command '/{name}' is unavailable: extension {self.id} is {self.status}"
            return CommandResult(name, "unavailable", text, self.id)
        limit = self._context.tool_timeout if timeout is None else timeout
        return await self._command_runs.run(connection, name, args, limit)

    async def request_canvas(self, method: str, params: dict[str, Any]) -> Any:
        """Send a canvas request (``canvas.open``, ``canvas.close``, ``canvas.action.invoke``)
        and return the answer, bounded by the tool timeout.

        Raises:
            RpcError: the extension's handler failed. ConnectionClosed: it is not running, or
                ends meanwhile. TimeoutError: no answer in time (it is told to cancel).
        """
        connection = self._connection
        if self.status != "running" or connection is None or connection.closed:
            raise ConnectionClosed(f"extension {self.id} is {self.status}")
        return await connection.request(method, params, timeout=self._context.tool_timeout)

    def _command_completed(self, request_id: str) -> None:
        self._context.events.emit("command.completed", {"requestId": request_id}, ephemeral=True)

    def deliver(self, event: p.Event) -> None:
        """Forward a session event if this extension asked for its type."""
        if self.status != "running" or self._connection is None:
            return
        if self._interests.wants(event["type"]):
            try:
                self._connection.notify(p.METHOD_SESSION_EVENT, {"sessionId": self._context.session_id, "event": event})
            except Exception:
                pass  # a dying extension misses events; its exit watcher reports it

    def deliver_lifecycle(self, frame: bytes) -> None:
        """Forward a ``session.lifecycle`` notification, encoded (see
        :mod:`~extension_host.runtime.lifecycle`). As Copilot CLI, to every extension connected
        to the session, whatever event types it asked for, and while it is detached (its
        connection is still open; it may join again). Nothing waits on it: it goes out after
        what this turn of the loop sends (a tool call, say), in the same write, or waits for the
        next message (see :meth:`~extension_protocol.connection.Connection.send_later`)."""
        if self.status not in ("running", "detached") or self._connection is None:
            return
        try:
            self._connection.send_later(frame)
        except Exception:
            pass  # as for events
