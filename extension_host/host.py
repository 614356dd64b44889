"""The composition root: :class:`ExtensionHost` puts the extension runtime under a session.

This is the one module that knows every other, and the one place users look for what a host
does: every public method is here, most of them a delegation. It builds the parts and hands
each what it needs: the session (its event log, and its id and file through
:mod:`extension_host.session.persisted`), the shared registries (tools, slash commands, hooks),
the trust decision (what the project's extensions may run and be granted), the extension
runtime (:mod:`extension_host.runtime.extension_runtime`: the fork server, supervisor, dispatcher and file
watcher), the session hook points (:mod:`extension_host.hooks.session_hooks`), the turns
(:mod:`extension_host.session.turns`), the permission requests
(:mod:`extension_host.calls.permissions`), and the order in which starting, ``/clear`` and stopping
go through them (:mod:`extension_host.session.lifecycle`). What each part does is its own.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Unpack

from extension_protocol.hook_points import HOOK_POINTS
from extension_protocol.protocol import Event
from extension_protocol.results import ToolResult
from extension_protocol.tools import Tool

from .calls.canvases import Canvases
from .calls.command_registry import CommandEntry, CommandInfo, CommandRegistry, CommandResult
from .calls.dispatch import AskHandler, ToolOrigin
from .calls.permissions import PermissionBroker, PermissionOutcome
from .calls.tool_registry import BUILTIN_OWNER, ToolRegistry
from .errors import UnknownExtensionError
from .events import AgentScope, EventListener, EventLog
from .hooks.foreign_tools import ToolCheck, ToolReview, check_tool_call, review_tool_failure, review_tool_result
from .hooks.runner import HookRecord, HookRunner
from .hooks.session_hooks import SessionHooks
from .hooks.unjudged import warning_message
from .info import ExtensionInfo, ToolInfo, host_version
from .launch.forkserver import ForkServer
from .launch.node_sdk import SDK_PATH_ENV
from .outcomes import (
    ErrorDecision,
    PromptResult,
    ReloadOutcome,
    SessionEndResult,
    SessionStartResult,
    StopDecision,
    ToolCallResult,
)
from .project.discovery import ExtensionSpec
from .project.paths import find_project_root
from .project.paths import user_home as resolve_user_home
from .project.trust import TrustDecision, TrustStore, decide_project_trust
from .runtime.budget import CrashBudget, ReloadBudget
from .runtime.context import SendHandler
from .runtime.extension_runtime import ExtensionRuntime
from .runtime.options import DeprecatedOptions, Limits, Timeouts, options_from
from .runtime.session_rpc import SessionRpcSources
from .session.agent_files import load_agent_files
from .session.agents import Agent, OfferedTool, agent_model, agent_models, agent_usage, ask_once
from .session.canvas_tools import CANVAS_TOOLS, OPEN_TOOL, canvas_tools, catalog_description
from .session.custom_agents import CustomAgent, agent_from_config, merge_agents
from .session.lifecycle import SessionLifecycle
from .session.model_context import ModelContext
from .session.persisted import PersistedSession
from .session.reader import SessionEventReader
from .session.store import SessionStore
from .session.subagents import TASK_TOOL, ParentPipeline, Subagents
from .session.turns import DEFAULT_SEND_TIMEOUT, TurnRunner

if TYPE_CHECKING:
    from .project.manifest import Manifest
    from .project.settings import Delivery

__all__ = ["ExtensionHost"]


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
        timeouts: how long the host waits (:class:`~extension_host.Timeouts`): for an extension
            to join, a tool call, each hook implementation (per hook point too), each step of
            the stop ladder.
        limits: how much the host keeps (:class:`~extension_host.Limits`): bytes queued towards
            an extension that stopped reading, and the history of :attr:`events`.
        on_ask: answers a pre-tool hook's ``ask`` (``(tool, args, reason) -> bool``, may be
            async); without it ``ask`` counts as ``deny``.
        session_hooks: run ``on_session_start("startup")`` when started and
            ``on_session_end("complete")`` when stopped.
        watch: reload an extension when its files change, start new ones, stop removed ones.
        environment: the environment extensions start from (default: this process's). Its
            sensitive variables are withheld from them; an extension gets one only when it asks
            for it and the user granted it.
        fork_server: start Python extensions by forking a warm interpreter that has the SDK
            imported (much faster to start and reload; less memory); ``False``, or
            ``EXTENSION_HOST_FORK_SERVER=0`` in the environment, starts a new interpreter for
            each. Platforms without ``fork`` always do. A :class:`ForkServer` given here is
            shared with other hosts: this one uses it and leaves stopping it to its owner.
        extension_sdk_path: a folder with ``index.js`` and ``extension.js`` (a Copilot SDK build,
            such as the one Copilot CLI unpacks and injects) that JavaScript extensions import
            instead of the pinned ``@github/copilot-sdk`` (default: ``$EXTENSION_HOST_SDK_PATH``);
            as Copilot CLI's ``--extension-sdk-path``.
        on_send: called for each ``session.send`` from an extension, after its checks (an
            observer); with no ``agent`` it stands in for one: the session goes idle when it
            returns. With neither, ``session.send`` fails saying there is no agent.
        agent: answers prompts (:class:`~extension_host.session.agents.Agent`): ``send``,
            ``send_and_wait`` and an extension's ``session.send`` run turns through it. Its
            optional ``models()`` and ``usage()`` answer extensions' ``session.model.list`` and
            ``session.usage.getMetrics`` (:mod:`extension_host.runtime.session_rpc`).
        extension_tools: with an ``agent``, offer it the built-in tools ``extensions_manage``
            and ``extensions_reload`` (:mod:`extension_host.session.manage_tools`); ``False`` leaves them out.
        permission_clients: whether something answers permission requests with
            :meth:`resolve_permission` (a client, a UI listening to events); then an ``ask``
            that neither ``on_ask`` nor an extension answers waits for it.
        trust: whether the project's own extensions may run. ``None`` (the default) follows the
            user's recorded decision (``extensions trust``) or ``EXTENSION_HOST_TRUST_PROJECT=1``;
            until then they are listed as ``untrusted`` and none of their code runs.
            User-scope extensions always run.
        allow_builtin_overrides: whether an extension may replace a tool of ``builtin_tools``
            by declaring ``overridesBuiltInTool`` (each override is announced with a
            ``session.warning``); ``False`` fails such an extension instead.
        crash_budget: with ``watch``, how an extension that crashes after joining is restarted
            (backoff 1, 2, 4 s; at most 3 restarts in 5 minutes, then ``quarantined``).
            Without ``watch`` a crashed extension stays ``failed``.
        reload_budget: with ``watch``, how many reloads caused by one extension's files may
            happen in a window (5 in 10 s) before its watching is paused.
        session: the id of a persisted session to resume (``extensions sessions list``);
            ``None`` starts a new session.
        persist: keep the session under ``<home>/sessions/<id>/`` (its events and its
            workspace); ``False`` writes nothing and cannot resume.

        **deprecated: the keywords ``Timeouts`` and ``Limits`` replaced (``tool_timeout=``,
            ``history_limit=``, ...), kept for one release with a ``DeprecationWarning``
            (:data:`~extension_host.runtime.options.DeprecatedOptions`).

    Raises:
        ProjectRootError: ``project_root`` is given but is not an existing folder.
        SessionIdError: ``session`` is not a session id.
        UnknownSessionError: no persisted session has that id, or it is another project's.
    """

    def __init__(
        self,
        project_root: Path | str | None = None,
        user_home: Path | str | None = None,
        *,
        builtin_tools: Iterable[Tool] = (),
        timeouts: Timeouts | None = None,
        limits: Limits | None = None,
        on_ask: AskHandler | None = None,
        session_hooks: bool = True,
        watch: bool = True,
        environment: Mapping[str, str] | None = None,
        fork_server: bool | ForkServer = True,
        on_send: SendHandler | None = None,
        trust: bool | None = None,
        allow_builtin_overrides: bool = True,
        crash_budget: CrashBudget = CrashBudget(),
        reload_budget: ReloadBudget = ReloadBudget(),
        agent: Agent | None = None,
        permission_clients: bool = False,
        session: str | None = None,
        persist: bool = True,
        extension_tools: bool = True,
        extension_sdk_path: Path | str | None = None,
        custom_agents: Iterable[CustomAgent] = (),
        **deprecated: Unpack[DeprecatedOptions],
    ) -> None:
        timeouts, limits = options_from(timeouts, limits, deprecated)
        self.timeouts: Final = timeouts
        """How long this host waits (:class:`~extension_host.Timeouts`)."""
        self.limits: Final = limits
        """How much this host keeps (:class:`~extension_host.Limits`)."""
        self.project_root: Final = find_project_root(project_root)
        self.user_home: Final = resolve_user_home(user_home)
        self.events: Final = EventLog(limits.history_events, limits.history_bytes, limits.history_event_bytes)
        self._session = PersistedSession(
            self.events,
            SessionStore(self.user_home) if persist else None,
            self.project_root,
            session,
            host_version(),
        )
        self._event_reader = SessionEventReader(self._session, self.events)
        self._registry = ToolRegistry()
        self._canvases = Canvases(self.events, lambda: self.session_id, str(self.project_root))
        self._commands = CommandRegistry(self._commands_changed)
        self._hooks = HookRunner(
            self.events,
            session_id=self.session_id,
            cwd=str(self.project_root),
            timeout=timeouts.hook,
            timeouts=timeouts.hooks,
        )
        self._hook_points = SessionHooks(self._hooks, lambda: _path(self._session.events_path))
        self.trust_store: Final = TrustStore(self.user_home)
        """The user's recorded decisions: trusted projects and granted variables."""
        self._trust = trust
        self._permissions = PermissionBroker(
            self.events, on_ask, lambda: self._runtime.permission_handlers(), clients=permission_clients
        )
        self._given_agents = tuple(custom_agents)
        self._file_agents: tuple[CustomAgent, ...] = ()
        self._subagents = Subagents(
            self.events,
            lambda: self.custom_agents,
            ParentPipeline(
                call_tool=lambda name, arguments, call_id, origin: self.call_tool(
                    name, arguments, tool_call_id=call_id, origin=origin
                ),
                submit_prompt=self.submit_prompt,
                report_error=self.report_error,
                transform_prompt=self._hook_points.transform_prompt,
                start_subagent=lambda child, agent: self._hook_points.start_subagent(
                    child, agent.name, agent.shown_name, agent.description
                ),
                stop_agent=lambda active: self._hook_points.stop_agent(_path(self._session.events_path), active),
                stop_subagent=lambda child, agent, response, active: self._hook_points.stop_subagent(
                    child, agent.name, agent.shown_name, agent.description, response, active
                ),
                tools=lambda: [OfferedTool(t.name, t.description, t.parameters) for t in self.tools.values()],
                agent=lambda: self.agent,
                session_id=lambda: self.session_id,
            ),
        )
        self._runtime = ExtensionRuntime(
            self.project_root,
            self.user_home,
            session_id=self.session_id,
            events=self.events,
            registry=self._registry,
            commands=self._commands,
            hooks=self._hooks,
            permissions=self._permissions,
            session_rpc=SessionRpcSources(
                lambda: self.extensions,
                self._commands,
                lambda: agent_models(self.agent),
                lambda: agent_usage(self.agent),
                lambda: list(self.tools.values()),
                self.run_command,
                self._event_reader,
                self._canvases,
                self._ask_once,
            ),
            builtin_tools=[*builtin_tools, *(self._agent_tools(extension_tools) if agent is not None else ())],
            timeouts=timeouts,
            limits=limits,
            environment=environment,
            fork_server=fork_server,
            on_send=on_send,
            on_ask=on_ask,
            allow_builtin_overrides=allow_builtin_overrides,
            watch=watch,
            crash_budget=crash_budget,
            reload_budget=reload_budget,
            grants=self._granted,
            settings=self._settings,
            untrusted=self._untrusted,
            walk_project=lambda: self.trust.trusted,
            submit=lambda prompt, attachments, extension_id: self._turns.submit_from_extension(
                prompt, attachments, extension_id
            ),
            model_id=lambda: agent_model(self.agent),
            sdk_path=_sdk_path(extension_sdk_path),
            canvases=self._canvases,
        )
        # The runtime's parts, by the names the tests and benches reach for.
        self._supervisor = self._runtime.supervisor
        self._watcher = self._runtime.watcher
        self._fork_server = self._runtime.fork_server
        self._turns = TurnRunner(
            self.events,
            agent=agent,
            call_tool=lambda name, arguments, call_id, origin: self.call_tool(
                name, arguments, tool_call_id=call_id, origin=origin
            ),
            submit_prompt=self.submit_prompt,
            report_error=self.report_error,
            transform_prompt=self._hook_points.transform_prompt,
            stop_agent=lambda active: self._hook_points.stop_agent(_path(self._session.events_path), active),
            tools=self._subagents.offered,
            roots=self._attachment_roots,
            on_send=on_send,
        )
        self._lifecycle = SessionLifecycle(
            self._session, self._runtime, self._turns, self._hook_points, self._event_reader, run_hooks=session_hooks
        )

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

        Extensions start in parallel and each is ``running`` as soon as it joined; of two
        colliding extensions the later in load order fails, whichever joined first.

        Raises:
            ExtensionHostError: the host was already started.
        """
        await self._lifecycle.start()
        self._read_agent_files()

    async def stop(self) -> None:
        """Stop every extension (stop ladder: end of stream, SIGTERM, SIGKILL); idempotent."""
        await self._lifecycle.stop()

    # -- the session --------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        """The current session's id (it changes with :meth:`new_session`)."""
        return self._session.id

    @property
    def workspace_path(self) -> Path | None:
        """The current session's workspace folder (``None`` with ``persist=False``)."""
        return self._session.workspace

    async def new_session(self) -> str:
        """End this session and start a new one, as ``/clear`` does; returns the new id.

        The session-end hooks run, ``session.shutdown`` ends the old session's log, every
        extension is reloaded (whatever they kept in memory is lost), ``session.start`` begins
        the new one and the session-start hooks run with source ``new``.
        """
        return await self._lifecycle.clear()

    def replay(self) -> Iterator[Event]:
        """The current session's persistent events so far, oldest first, streamed from its
        file: what a projection rebuilds itself from. Damaged lines are skipped."""
        return self._session.replay()

    async def reload(self, name: str | None = None) -> list[ReloadOutcome]:
        """Reload one extension (by name or id), transactionally, or all of them.

        One: its new version must join before it replaces the running one; if it fails, the
        running one keeps serving and the outcome says why (``kept``). Extensions added or
        removed on disk are started or stopped too. All (``name=None``): stop everything,
        discover again and start everything, as Copilot's ``extensions_reload`` does.

        Raises:
            UnknownExtensionError: ``name`` is not a discovered extension.
        """
        if name is None:
            self._read_agent_files()
            return await self._runtime.restart_all()
        return await self._runtime.apply({self.extension(name).id})

    async def apply_changes(self, changed: set[str] | None = None) -> list[ReloadOutcome]:
        """Start new extensions (and those now trusted), stop removed ones (and those no longer
        trusted) and reload ``changed`` ids (all if ``None``); what the file watcher calls after
        a batch of saves, and what a trust decision needs."""
        return await self._runtime.apply(changed)

    # -- trust --------------------------------------------------------------------------

    @property
    def trust(self) -> TrustDecision:
        """Whether the project's own extensions may run now, and who decided it."""
        return decide_project_trust(self.project_root, self.trust_store, explicit=self._trust)

    @property
    def custom_agents(self) -> dict[str, CustomAgent]:
        """The custom agents the session's agent may start as subagents (the ``task`` tool),
        by name: those given to the host first, then those its extensions declared, then the
        user's agent files and the project's (read at start and at a reload of everything)."""
        declared = self._runtime.custom_agents()
        if not declared:
            return merge_agents(self._given_agents, self._file_agents)
        return merge_agents(
            self._given_agents,
            (agent_from_config(config, f"extension:{owner}") for owner, config in declared),
            self._file_agents,
        )

    def _read_agent_files(self) -> None:
        """Read the custom agent files (the project's only when it is trusted); one
        ``session.warning`` for each file that gives no agent."""
        found = load_agent_files(self.project_root if self.trust.trusted else None, self.user_home)
        self._file_agents = found.agents
        for problem in found.problems:
            self.events.emit("session.warning", {"warningType": "agents", "message": problem})

    def _agent_tools(self, extension_tools: bool) -> list[Tool]:
        """The agent's own built-in tools: ``task``, the canvas tools, and ``extensions_manage``
        and ``extensions_reload`` unless turned off."""
        return [
            self._subagents.tool(),
            *canvas_tools(self._canvases),
            *(self._extension_tools() if extension_tools else ()),
        ]

    def _extension_tools(self) -> list[Tool]:
        """``extensions_manage`` and ``extensions_reload`` over this host."""
        from .session.manage_tools import ManageSources, extension_tools  # a host with an agent's only

        return extension_tools(
            ManageSources(
                self.project_root,
                self.user_home,
                lambda: self.extensions,
                self.extension,
                lambda: self.trust,
                self.reload,
                self._permissions,
                lambda: self._runtime.activity.released(),
            )
        )

    def _untrusted(self) -> str | None:
        return self.trust.withheld

    def _granted(self, spec: ExtensionSpec) -> frozenset[str]:
        return self.trust_store.granted(self.project_root, spec.source, spec.name)

    def _settings(self, spec: ExtensionSpec, manifest: Manifest) -> Delivery:
        from .project.settings import deliver  # read when an extension starts, not at import
        from .project.settings_store import SettingsStore

        return deliver(SettingsStore(self.user_home), self.project_root, spec, manifest)

    # -- what is loaded -----------------------------------------------------------------

    @property
    def extensions(self) -> list[ExtensionInfo]:
        """Every discovered extension in load order, including shadowed and failed ones."""
        return self._supervisor.infos()

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
    def not_running(self) -> list[ExtensionInfo]:
        """The extensions that should be running and are not (not joined yet, ``failed``,
        ``quarantined``), in load order: their hooks judge nothing. While there are any, each
        guarded call (:meth:`call_tool`, :meth:`submit_prompt`, :meth:`check_tool_call`) emits
        a ``session.warning`` per extension."""
        return self._supervisor.not_running()

    @property
    def tools(self) -> dict[str, ToolInfo]:
        """Every tool offered right now, by name (the ``task`` tool only while there are custom
        agents to start, the canvas tools only while a canvas is declared)."""
        hidden: tuple[str, ...] = ()
        if self._registry.builtin(TASK_TOOL) is not None and not self.custom_agents:
            hidden = (TASK_TOOL,)
        declared = self._canvases.declared
        if not declared:
            hidden = (*hidden, *CANVAS_TOOLS)
        tools = {
            entry.name: ToolInfo(entry.name, entry.description, entry.parameters, entry.owner)
            for entry in self._registry.entries()
            if not (entry.owner == BUILTIN_OWNER and entry.name in hidden)
        }
        opener = tools.get(OPEN_TOOL)
        if declared and opener is not None and opener.owner == BUILTIN_OWNER:
            tools[OPEN_TOOL] = ToolInfo(OPEN_TOOL, catalog_description(declared), opener.parameters, opener.owner)
        return tools

    @property
    def canvases(self) -> Canvases:
        """The canvases extensions declare, the instances open, and the clients that show them:
        open, close and act on one (:class:`~extension_host.calls.canvases.Canvases`)."""
        return self._canvases

    async def _ask_once(self, question: str) -> str:
        """The agent's answer to ``question`` outside the conversation (``session.ui.ephemeralQuery``).

        Raises:
            LookupError: no agent answers in this session.
        """
        agent = self.agent
        if agent is None:
            raise LookupError("no agent answers in this session; attach one (agent=) to ask it")
        return await ask_once(agent, self.model_context.messages, question)

    @property
    def commands(self) -> dict[str, CommandInfo]:
        """Every slash command offered right now, by name (without the ``/``)."""
        return {
            entry.name: CommandInfo(entry.name, entry.description, entry.owner) for entry in self._commands.entries()
        }

    def on_event(self, listener: EventListener, replay: bool = False) -> Any:
        """Call ``listener(event)`` for every later session event; returns an unsubscribe function.

        With ``replay``, the session's durable history (streamed from its file) comes first,
        then the live events, with no gap and no duplicate.
        """
        if replay:
            return self._session.subscribe(listener)
        return self.events.subscribe(listener)

    # -- calls --------------------------------------------------------------------------

    async def call_tool(
        self, name: str, arguments: Any = None, *, tool_call_id: str | None = None, origin: ToolOrigin | None = None
    ) -> ToolCallResult:
        """Call a tool through the whole pipeline: pre-tool hooks, the tool, post-tool (or
        failure) hooks; ``origin`` says which agent step asked for it.

        Failures of the tool, its extension or a guard hook come back as a result
        (``failure``, ``timeout``, ``denied``), never as an exception.

        Raises:
            UnknownToolError: no extension or built-in offers ``name``.
        """
        unjudged = self._supervisor.not_running()
        if unjudged:
            self._warn_unjudged(unjudged, f"this call of {name}")
        return await self._runtime.dispatcher.call_tool(name, arguments, tool_call_id=tool_call_id, origin=origin)

    async def run_command(self, name: str, args: str = "", *, timeout: float | None = None) -> CommandResult:
        """Run the slash command ``name`` (``deploy`` or ``/deploy``) with the raw argument
        string ``args`` in the extension that offers it, and return how it ended.

        Never raises for the command's sake: an unknown name, a handler that failed, an
        extension that is gone or goes meanwhile, or no answer within ``timeout`` seconds
        (default: the tool timeout) come back as a :class:`CommandResult` saying so.
        """
        bare = name.removeprefix("/")
        entry = self._commands.get(bare)
        if entry is None:
            known = ", ".join(f"/{command}" for command in sorted(self.commands)) or "none"
            return CommandResult(bare, "unknown", f"no command '/{bare}' is offered; commands: {known}")
        return await entry.invoke(args, timeout)

    async def submit_prompt(self, prompt: str) -> PromptResult:
        """Run the prompt hooks on a user prompt; returns it rewritten, or rejected with a reason."""
        self._warn_unjudged(self._supervisor.not_running(), "this prompt")
        return await self._hook_points.submit_prompt(prompt)

    async def start_session(self, source: str = "new", initial_prompt: str | None = None) -> SessionStartResult:
        """Run the session-start hooks (``source``: new, resume or startup)."""
        return await self._hook_points.start_session(source, initial_prompt)

    async def end_session(
        self, reason: str = "complete", final_message: str | None = None, error: str | None = None
    ) -> SessionEndResult:
        """Run the session-end hooks (``reason``: complete, error, abort, timeout or user_exit)."""
        return await self._hook_points.end_session(reason, final_message, error)

    async def report_error(self, error: str, context: str = "system", recoverable: bool = True) -> ErrorDecision:
        """Run the error hooks; returns the strongest handling asked for (abort > skip > retry).

        ``context`` is model_call, tool_execution, system or user_input.
        """
        return await self._hook_points.report_error(error, context, recoverable)

    async def check_tool_call(self, name: str, arguments: Any = None) -> ToolCheck:
        """Run only the pre-tool hooks on a call another agent is about to make with its own
        tool ``name``; returns their verdict (an ``ask`` is passed on, not resolved)."""
        self._warn_unjudged(self._supervisor.not_running(), f"this call of {name}")
        return await check_tool_call(self._hooks, name, arguments)

    async def review_tool_result(self, name: str, arguments: Any, result: ToolResult) -> ToolReview:
        """Run only the post-tool hooks on the ``result`` another agent's tool ``name`` gave."""
        return await review_tool_result(self._hooks, name, arguments, result)

    async def review_tool_failure(self, name: str, arguments: Any, error: str) -> str | None:
        """Run only the failed-tool hooks on another agent's tool ``name`` that failed with
        ``error``; returns their guidance for the model, if any."""
        return await review_tool_failure(self._hooks, name, arguments, error)

    async def start_subagent(
        self, agent_id: str, agent_type: str, *, description: str = "", transcript_path: str | None = None
    ) -> str | None:
        """Run the subagent-start hooks for a subagent another agent starts (its id and type),
        as a child of this session; returns the context they add to its prompt."""
        child = AgentScope(agent_id, agent_type, self.session_id, tool_call_id="")
        return await self._hook_points.start_subagent(child, agent_type, agent_type, description, transcript_path)

    async def stop_subagent(
        self,
        agent_id: str,
        agent_type: str,
        response: str,
        *,
        active: bool = False,
        transcript_path: str | None = None,
    ) -> StopDecision:
        """Run the subagent-stop hooks for another agent's subagent that answered ``response``
        (``active``: a follow-up such a hook asked for); a ``block`` keeps it going."""
        child = AgentScope(agent_id, agent_type, self.session_id, tool_call_id="")
        return await self._hook_points.stop_subagent(
            child, agent_type, agent_type, "", response, active, transcript_path
        )

    async def stop_agent(self, transcript_path: str | None = None, active: bool = False) -> StopDecision:
        """Run the agent-stop hooks on an agent (this host's or another) about to stop
        (``active``: it was answering a follow-up such a hook asked for); a ``block`` with its
        reason asks it to go on."""
        return await self._hook_points.stop_agent(transcript_path, active)

    # -- turns and permissions ----------------------------------------------------------

    @property
    def agent(self) -> Agent | None:
        """The agent that answers prompts (``agent=``), if any."""
        return self._turns.agent

    @property
    def model_context(self) -> ModelContext:
        """The messages the agent sees, projected from this session's events."""
        return self._turns.model_context

    async def send(self, prompt: str, attachments: list[dict[str, Any]] | None = None) -> str:
        """Run the prompt hooks and queue a turn for the agent; returns the prompt's message id.

        Raises:
            TurnError: no agent (:class:`~extension_host.session.turns.NoAgentError`), a bad
                attachment, a prompt hook rejected it, or too many prompts wait.
        """
        return await self._turns.submit(prompt, attachments or [])

    async def send_and_wait(
        self, prompt: str, attachments: list[dict[str, Any]] | None = None, timeout: float = DEFAULT_SEND_TIMEOUT
    ) -> Event | None:
        """:meth:`send`, then wait for ``session.idle``; returns the last ``assistant.message``
        of this prompt's run (``None`` if the agent said nothing).

        Raises:
            TimeoutError: not idle within ``timeout`` seconds.
            TurnError: as :meth:`send`, or the run ended with ``session.error``
                (:class:`~extension_host.session.turns.TurnAbortedError`).
        """
        return await self._turns.send_and_wait(prompt, attachments or [], timeout=timeout)

    @property
    def pending_prompts(self) -> list[str]:
        """The message ids of the prompts queued behind the running one."""
        return self._turns.pending

    async def wait_idle(self, timeout: float | None = None) -> None:
        """Wait until no prompt is running or queued."""
        await self._turns.wait_idle(timeout)

    def flush(self) -> None:
        """Write the events the session's file has queued now (before it is read from elsewhere,
        say to fork it at a turn that just ended)."""
        self._session.flush()

    def cancel_turn(self) -> bool:
        """Cancel the running prompt (its tool calls in flight are withdrawn) and drop the queued
        ones; True if a prompt was running or queued. The run ends with ``abort`` and
        ``session.idle`` (``aborted``); see :meth:`~extension_host.session.turns.TurnRunner.cancel`."""
        return self._turns.cancel()

    def resolve_permission(self, request_id: str, approved: bool, feedback: str | None = None) -> bool:
        """Answer a pending ``permission.requested``; a rejection's ``feedback`` reaches the agent
        in the tool result. False if the request is not pending (answered already, or unknown)."""
        decision: dict[str, Any] = {"kind": "approve-once"} if approved else {"kind": "reject"}
        if feedback and not approved:
            decision["feedback"] = feedback
        return self._permissions.resolve(request_id, decision, "user")

    async def request_permission(
        self, permission_request: dict[str, Any], *, tool_call_id: str | None = None
    ) -> PermissionOutcome:
        """Ask for a permission of the application's own, in the SDK's shape
        (``{"kind": "custom-tool", "toolName": ..., "toolDescription": ...}``, ``{"kind": "url",
        ...}``): announced as ``permission.requested`` and answered like a hook's ``ask`` (by
        ``on_ask``, an extension's permission handler or :meth:`resolve_permission`); denied at
        once when nobody can answer.

        Raises:
            ValueError: ``permission_request`` has no string ``kind``.
        """
        if not isinstance(permission_request.get("kind"), str):
            raise ValueError("a permission request needs a 'kind', e.g. {'kind': 'custom-tool', ...}")
        return await self._permissions.request(dict(permission_request), tool_call_id=tool_call_id)

    @property
    def pending_permissions(self) -> list[str]:
        """The ids of the permission requests waiting for an answer."""
        return self._permissions.pending

    def _attachment_roots(self) -> list[Path]:
        roots = [self.project_root]
        workspace = getattr(self, "workspace_path", None)  # the session's workspace, where there is one
        if workspace:
            roots.append(Path(workspace))
        return roots

    # -- in-process plugins -------------------------------------------------------------

    def register_plugin(
        self, plugin: object, name: str | None = None, hook_matchers: Mapping[str, Any] | None = None
    ) -> str:
        """Add an in-process pluggy plugin whose :data:`hookimpl` methods join the hook chains.

        ``hook_matchers`` limits its tool hooks to some tools: ``{"on_pre_tool_use": ["bash"]}``.

        Raises:
            pluggy.PluginValidationError: a method names an unknown hook or unknown arguments,
                or uses wrappers, ``firstresult`` or ``historic`` (the host cannot honour them).
            ValueError: a matcher is unusable (the message names the hook and the pattern).
        """
        return self._hooks.register_plugin(plugin, name, hook_matchers)

    def unregister_plugin(self, name: str) -> None:
        """Remove an in-process plugin by the name :meth:`register_plugin` returned."""
        self._hooks.unregister(name)

    def hook_chain(self, hook: str) -> list[str]:
        """Who implements ``hook`` (extension ids and plugin names), in the order they run."""
        return self._hooks.implementers(hook)

    def skipped_hooks(self, tool_name: str) -> list[tuple[str, str]]:
        """(hook, owner) of the tool hooks not called for ``tool_name``: their matcher does not match."""
        return [
            (hook, owner)
            for hook, point in HOOK_POINTS.items()
            if point.for_tools
            for owner in self._hooks.skipped(hook, tool_name)
        ]

    def recent_hook_calls(self, owner: str) -> list[HookRecord]:
        """The last hook outcomes of one extension (by id) or plugin, oldest first."""
        return list(self._hooks.recent.get(owner, ()))

    # -- internals ----------------------------------------------------------------------

    def _warn_unjudged(self, unjudged: list[ExtensionInfo], subject: str) -> None:
        """A ``session.warning`` per extension in ``unjudged`` (:attr:`not_running`) for ``subject``."""
        for info in unjudged:
            message = warning_message(info, subject)
            self.events.emit(
                "session.warning", {"warningType": "extension", "message": message, "extensionId": info.id}
            )

    def _commands_changed(self, entries: list[CommandEntry]) -> None:
        commands = [{"name": entry.name, "description": entry.description} for entry in entries]
        self.events.emit("commands.changed", {"commands": commands}, ephemeral=True)


def _sdk_path(given: Path | str | None) -> Path | None:
    """The SDK build JavaScript extensions get: the one given, else ``$EXTENSION_HOST_SDK_PATH``."""
    chosen = given if given is not None else os.environ.get(SDK_PATH_ENV) or None
    return Path(chosen) if chosen is not None else None


def _path(path: Path | None) -> str | None:
    """The agent-stop hooks' ``transcriptPath``: the session's persisted event log, if any."""
    return str(path) if path is not None else None
