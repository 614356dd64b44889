"""The composition root: :class:`ExtensionHost` wires discovery, launch, registry and dispatch.

This is the one module that knows every other. It owns the session (its event log, and its id
and file through :mod:`extension_host.session.persisted`),
decides what extensions may have (trust in the project, the environment without its secrets,
the grants), starts every discovered extension in parallel, reports the outcome, and routes
tool calls.
Each concern it wires lives in its own module; the host only decides the order of things.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from sdk_extension.hooks import (
    HOOK_POINTS,
    ErrorOccurredInput,
    SessionEndInput,
    SessionStartInput,
    UserPromptSubmittedInput,
)
from sdk_extension.tasks import BackgroundTasks
from sdk_extension.tools import Tool
from sdk_extension.wire.protocol import Event

from .activity import ActivityTracker
from .budget import CrashBudget, ReloadBudget
from .commands import CommandEntry, CommandInfo, CommandRegistry, CommandResult
from .context import MAX_QUEUED_BYTES, SendHandler, SessionContext
from .discovery import ExtensionSpec
from .dispatch import AskHandler, Dispatcher, builtin_entry
from .environment import protect_host_environment, scrub, sdk_environment
from .errors import ExtensionHostError, UnknownExtensionError
from .events import HISTORY_BYTES, HISTORY_EVENT_BYTES, HISTORY_LIMIT, EventListener, EventLog
from .hooks.runner import DEFAULT_HOOK_TIMEOUT, HookRecord, HookRunner
from .info import ExtensionInfo, ToolInfo
from .launch.forkserver import ForkServer, fork_server_supported
from .launch.logs import rotate_log
from .launch.process import STOP_GRACE_SECONDS
from .outcomes import (
    ErrorDecision,
    PromptResult,
    ReloadOutcome,
    SessionEndResult,
    SessionStartResult,
    ToolCallResult,
)
from .paths import cache_dir, find_project_root, project_logs_dir
from .paths import user_home as resolve_user_home
from .permissions import PermissionBroker, PermissionOutcome
from .registry import BUILTIN_OWNER, ToolRegistry
from .reload import ExtensionWatcher
from .session.agents import Agent, OfferedTool, agent_models, agent_usage
from .session.model_context import ModelContext
from .session.persisted import PersistedSession
from .session.store import SessionStore
from .session.turns import DEFAULT_SEND_TIMEOUT, TurnRunner
from .session_rpc import SessionRpcSources
from .supervisor import Supervisor
from .trust import TrustDecision, TrustStore, decide_project_trust, untrusted_reason

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
        hook_timeout: seconds each hook implementation may take (default 30).
        hook_timeouts: per hook point overrides, e.g. ``{"on_session_end": 5}``.
        on_ask: answers a pre-tool hook's ``ask`` (``(tool, args, reason) -> bool``, may be
            async); without it ``ask`` counts as ``deny``.
        session_hooks: run ``on_session_start("startup")`` when started and
            ``on_session_end("complete")`` when stopped.
        watch: reload an extension when its files change, start new ones, stop removed ones.
        stop_grace: seconds each step of the stop ladder waits.
        environment: the environment extensions start from (default: this process's). Its
            sensitive variables are withheld from them; an extension gets one only when it asks
            for it and the user granted it.
        fork_server: start Python extensions by forking a warm interpreter that has the SDK
            imported (much faster to start and reload; less memory); ``False``, or
            ``EXTENSION_HOST_FORK_SERVER=0`` in the environment, starts a new interpreter for
            each. Platforms without ``fork`` always do. A :class:`ForkServer` given here is
            shared with other hosts: this one uses it and leaves stopping it to its owner.
        on_send: called for each ``session.send`` from an extension, after its checks (an
            observer); with no ``agent`` it stands in for one: the session goes idle when it
            returns. With neither, ``session.send`` fails saying there is no agent.
        agent: answers prompts (:class:`~extension_host.session.agents.Agent`): ``send``,
            ``send_and_wait`` and an extension's ``session.send`` run turns through it. Its
            optional ``models()`` and ``usage()`` answer extensions' ``session.model.list`` and
            ``session.usage.getMetrics`` (:mod:`extension_host.session_rpc`).
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
        max_queued_bytes: bytes queued towards an extension that does not read its input
            before it is failed (default 64 MiB, :data:`~extension_host.context.MAX_QUEUED_BYTES`).
        crash_budget: with ``watch``, how an extension that crashes after joining is restarted
            (backoff 1, 2, 4 s; at most 3 restarts in 5 minutes, then ``quarantined``).
            Without ``watch`` a crashed extension stays ``failed``.
        reload_budget: with ``watch``, how many reloads caused by one extension's files may
            happen in a window (5 in 10 s) before its watching is paused.
        history_limit: events :attr:`events` keeps (its history; listeners see every event).
        history_bytes: estimated bytes the kept events may take together.
        history_event_bytes: an event larger than this is kept with its long strings cut
            (listeners still get it whole); see :mod:`extension_host.events`.
        session: the id of a persisted session to resume (``extensions sessions list``);
            ``None`` starts a new session.
        persist: keep the session under ``<home>/sessions/<id>/`` (its events and its
            workspace); ``False`` writes nothing and cannot resume.

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
        readiness_timeout: float = DEFAULT_READINESS_TIMEOUT,
        tool_timeout: float = DEFAULT_TOOL_TIMEOUT,
        hook_timeout: float = DEFAULT_HOOK_TIMEOUT,
        hook_timeouts: Mapping[str, float] | None = None,
        on_ask: AskHandler | None = None,
        session_hooks: bool = True,
        watch: bool = True,
        stop_grace: float = STOP_GRACE_SECONDS,
        environment: Mapping[str, str] | None = None,
        fork_server: bool | ForkServer = True,
        on_send: SendHandler | None = None,
        trust: bool | None = None,
        allow_builtin_overrides: bool = True,
        max_queued_bytes: int = MAX_QUEUED_BYTES,
        crash_budget: CrashBudget = CrashBudget(),
        reload_budget: ReloadBudget = ReloadBudget(),
        history_limit: int = HISTORY_LIMIT,
        history_bytes: int = HISTORY_BYTES,
        history_event_bytes: int = HISTORY_EVENT_BYTES,
        agent: Agent | None = None,
        permission_clients: bool = False,
        session: str | None = None,
        persist: bool = True,
    ) -> None:
        self.project_root: Final = find_project_root(project_root)
        self.user_home: Final = resolve_user_home(user_home)
        self.events: Final = EventLog(history_limit, history_bytes, history_event_bytes)
        self._session = PersistedSession(
            self.events,
            SessionStore(self.user_home) if persist else None,
            self.project_root,
            session,
            _version(),
        )
        self._registry = ToolRegistry()
        self._commands = CommandRegistry(self._commands_changed)
        self._hooks = HookRunner(
            self.events,
            session_id=self.session_id,
            cwd=str(self.project_root),
            timeout=hook_timeout,
            timeouts=hook_timeouts,
        )
        self._session_hooks = session_hooks
        self._session_ended = False
        self._builtin_tools = list(builtin_tools)
        self.trust_store: Final = TrustStore(self.user_home)
        """The user's recorded decisions: trusted projects and granted variables."""
        self._trust = trust
        host_environment = dict(os.environ if environment is None else environment)
        base_environment = scrub(host_environment)
        logs = project_logs_dir(self.user_home, self.project_root)
        # A ForkServer given is shared (e.g. by the sessions of `extensions serve`): its owner stops it.
        self._owns_fork_server = not isinstance(fork_server, ForkServer)
        self._fork_server = (
            fork_server
            if isinstance(fork_server, ForkServer)
            else ForkServer(sdk_environment(base_environment), logs / "fork-server.log")
            if fork_server and fork_server_supported() and os.environ.get("EXTENSION_HOST_FORK_SERVER") != "0"
            else None
        )
        if self._fork_server is not None and self._owns_fork_server:
            rotate_log(logs / "fork-server.log")  # the server appends to it for this host's life
        self._permissions = PermissionBroker(self.events, on_ask, self._permission_handlers, clients=permission_clients)
        self._context = SessionContext(
            session_id=self.session_id,
            project_root=self.project_root,
            logs_dir=logs,
            registry=self._registry,
            events=self.events,
            hooks=self._hooks,
            environment=base_environment,
            readiness_timeout=readiness_timeout,
            tool_timeout=tool_timeout,
            stop_grace=stop_grace,
            cache_dir=cache_dir(),
            on_send=on_send,
            fork_server=self._fork_server,
            host_environment=host_environment,
            grants=self._granted,
            allow_builtin_overrides=allow_builtin_overrides,
            max_queued_bytes=max_queued_bytes,
            submit=lambda prompt, attachments, extension_id: self._turns.submit_from_extension(
                prompt, attachments, extension_id
            ),
            permissions=self._permissions,
            commands=self._commands,
            session_rpc=SessionRpcSources(
                lambda: self.extensions,
                self._commands,
                lambda: agent_models(self.agent),
                lambda: agent_usage(self.agent),
                lambda: list(self.tools.values()),
                self.run_command,
            ),
        )
        self._activity = ActivityTracker()
        self._crash_reports = BackgroundTasks("the host (error hooks on crashes)")
        self._supervisor = Supervisor(
            self._context,
            self._activity,
            project_root=self.project_root,
            user_home=self.user_home,
            drain_timeout=tool_timeout,
            untrusted=self._untrusted,
            crash_budget=crash_budget if watch else None,
            reload_budget=reload_budget if watch else None,
            crash_listener=self._extension_crashed,
        )
        self._dispatcher = Dispatcher(
            self._registry,
            self.events,
            self._hooks,
            self._supervisor.unavailable_reason,
            on_ask,
            self._activity,
            self._unknown_tool_hint,
            self._permissions,
        )
        self._turns = TurnRunner(
            self.events,
            agent=agent,
            call_tool=lambda name, arguments, call_id: self.call_tool(name, arguments, tool_call_id=call_id),
            submit_prompt=self.submit_prompt,
            report_error=self.report_error,
            tools=lambda: [OfferedTool(t.name, t.description, t.parameters) for t in self.tools.values()],
            roots=self._attachment_roots,
            on_send=on_send,
        )
        self._watcher = (
            # An untrusted project's extension folders are not walked: only their root is watched.
            ExtensionWatcher(
                self.project_root,
                self.user_home,
                self._supervisor.apply_watched,
                walk=lambda source: source == "user" or self.trust.trusted,
            )
            if watch
            else None
        )
        self._watching: asyncio.Task[None] | None = None
        self._stop_watching = asyncio.Event()
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

        Extensions start in parallel and each is ``running`` as soon as it joined; of two
        colliding extensions the later in load order fails, whichever joined first.

        Raises:
            ExtensionHostError: the host was already started.
        """
        if self._started:
            raise ExtensionHostError("this ExtensionHost was already started; create a new one")
        self._started = True
        protect_host_environment()
        self._session.begin()
        self._use_session()
        if self._session.resumed:
            self._turns.begin(self._session.replay())  # the context and turn numbers the log holds
        self.events.subscribe(self._forward_to_extensions)
        await self._supervisor.start_all()
        if self._watcher is not None:
            self._watching = asyncio.ensure_future(self._watcher.watch(self._stop_watching))
            # The watch task's first step sets up the OS watches before it first suspends;
            # yielding once lets it run, so a save right after start() is never missed.
            await asyncio.sleep(0)
        if self._session_hooks:
            await self.start_session("resume" if self._session.resumed else "startup")

    async def stop(self) -> None:
        """Stop every extension (stop ladder: end of stream, SIGTERM, SIGKILL); idempotent."""
        if self._stopped:
            return
        self._stopped = True
        await self._turns.close()
        await self._crash_reports.cancel(self._context.stop_grace)
        if self._watching is not None:
            self._stop_watching.set()
            try:
                async with asyncio.timeout(5):
                    await self._watching
            except TimeoutError:
                self._watching.cancel()
        if self._session_hooks and self._started and not self._session_ended:
            await self.end_session("complete")
        await self._supervisor.stop_all()
        if self._fork_server is not None and self._owns_fork_server:
            await self._fork_server.stop(self._context.stop_grace)
        self._session.end()

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
        await self._turns.abandon("the session was cleared (new_session) before the prompt's run ended")
        if self._session_hooks and not self._session_ended:
            await self.end_session("complete")
        # The new id begins once the old extensions have stopped, so what they say while
        # stopping stays in the old session's log and the new ones join the new session.
        await self._supervisor.restart_all(between=self._renew_session)
        await self._refresh_watch()
        self._session_ended = False
        if self._session_hooks:
            await self.start_session("new")
        return self.session_id

    def _renew_session(self) -> None:
        self._session.renew()
        self._use_session()
        self._turns.begin()

    def replay(self) -> Iterator[Event]:
        """The current session's persistent events so far, oldest first, streamed from its
        file: what a projection rebuilds itself from. Damaged lines are skipped."""
        return self._session.replay()

    def _use_session(self) -> None:
        """Hand the current session's id and workspace to what starts from now on."""
        self._context = dataclasses.replace(
            self._context, session_id=self._session.id, workspace_path=self._session.workspace
        )
        self._supervisor.use_context(self._context)
        self._hooks.use_session(self._session.id)
        self._registry.replace(BUILTIN_OWNER, [builtin_entry(tool, self._session.id) for tool in self._builtin_tools])

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
            outcomes = await self._supervisor.restart_all()
        else:
            outcomes = await self._supervisor.apply({self.extension(name).id})
        await self._refresh_watch()
        return outcomes

    async def apply_changes(self, changed: set[str] | None = None) -> list[ReloadOutcome]:
        """Start new extensions (and those now trusted), stop removed ones (and those no longer
        trusted) and reload ``changed`` ids (all if ``None``); what the file watcher calls after
        a batch of saves, and what a trust decision needs."""
        outcomes = await self._supervisor.apply(changed)
        await self._refresh_watch()
        return outcomes

    async def _refresh_watch(self) -> None:
        # Trust may have changed, and with it which extension folders are walked.
        if self._watcher is not None:
            await self._watcher.refresh()

    # -- trust --------------------------------------------------------------------------

    @property
    def trust(self) -> TrustDecision:
        """Whether the project's own extensions may run now, and who decided it."""
        return decide_project_trust(self.project_root, self.trust_store, explicit=self._trust)

    def _untrusted(self) -> str | None:
        decision = self.trust
        return None if decision.trusted else untrusted_reason(decision.problem)

    def _granted(self, spec: ExtensionSpec) -> frozenset[str]:
        return self.trust_store.granted(self.project_root, spec.source, spec.name)

    def _unknown_tool_hint(self) -> str | None:
        untrusted = self._supervisor.untrusted()
        if not untrusted:
            return None
        return (
            f"{len(untrusted)} project extension{'s' if len(untrusted) > 1 else ''} did not run because "
            f"this project is not trusted ({', '.join(untrusted)}); review them, then run 'extensions trust'"
        )

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
    def tools(self) -> dict[str, ToolInfo]:
        """Every tool offered right now, by name."""
        return {
            entry.name: ToolInfo(entry.name, entry.description, entry.parameters, entry.owner)
            for entry in self._registry.entries()
        }

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

    async def call_tool(self, name: str, arguments: Any = None, *, tool_call_id: str | None = None) -> ToolCallResult:
        """Call a tool through the whole pipeline: pre-tool hooks, the tool, post-tool hooks.

        Failures of the tool, its extension or a guard hook come back as a result
        (``failure``, ``timeout``, ``denied``), never as an exception.

        Raises:
            UnknownToolError: no extension or built-in offers ``name``.
        """
        return await self._dispatcher.call_tool(name, arguments, tool_call_id=tool_call_id)

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
        outcome = await self._hooks.run(
            "on_user_prompt_submitted", UserPromptSubmittedInput(timestamp=_now(), cwd=self._cwd, prompt=prompt)
        )
        rejected = outcome.decision == "deny"
        return PromptResult(
            prompt=outcome.prompt if outcome.prompt is not None else prompt,
            additional_context=outcome.additional_context,
            rejected=rejected,
            reason=outcome.reason if rejected else None,
            rejected_by=outcome.decided_by if rejected else None,
        )

    async def start_session(self, source: str = "new", initial_prompt: str | None = None) -> SessionStartResult:
        """Run the session-start hooks (``source``: startup, resume or new)."""
        outcome = await self._hooks.run(
            "on_session_start",
            SessionStartInput(timestamp=_now(), cwd=self._cwd, source=source, initial_prompt=initial_prompt),
        )
        return SessionStartResult(outcome.additional_context)

    async def end_session(
        self, reason: str = "complete", final_message: str | None = None, error: str | None = None
    ) -> SessionEndResult:
        """Run the session-end hooks (``reason``: complete, error, abort, timeout or user_exit)."""
        self._session_ended = True
        outcome = await self._hooks.run(
            "on_session_end",
            SessionEndInput(timestamp=_now(), cwd=self._cwd, reason=reason, final_message=final_message, error=error),
        )
        return SessionEndResult(outcome.merged_value("session_summary"), tuple(outcome.merged_value("cleanup_actions")))

    async def report_error(self, error: str, context: str = "system", recoverable: bool = True) -> ErrorDecision:
        """Run the error hooks; returns the strongest handling asked for (abort > skip > retry).

        ``context`` is model_call, tool_execution, system or user_input.
        """
        outcome = await self._hooks.run(
            "on_error_occurred",
            ErrorOccurredInput(
                timestamp=_now(), cwd=self._cwd, error=error, error_context=context, recoverable=recoverable
            ),
        )
        return ErrorDecision(
            outcome.merged_value("error_handling"),
            outcome.merged_value("retry_count"),
            outcome.merged_value("user_notification"),
        )

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

    def _extension_crashed(self, extension_id: str, error: str) -> None:
        self._crash_reports.spawn(self._turns.report_crash(extension_id, error))

    def _permission_handlers(self) -> bool:
        return any(i.handles_permissions and i.status == "running" for i in self._supervisor.current())

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

    def _commands_changed(self, entries: list[CommandEntry]) -> None:
        commands = [{"name": entry.name, "description": entry.description} for entry in entries]
        self.events.emit("commands.changed", {"commands": commands}, ephemeral=True)

    def _forward_to_extensions(self, event: Event) -> None:
        for instance in self._supervisor.current():
            instance.deliver(event)

    @property
    def _cwd(self) -> str:
        return self._hooks.cwd


def _now() -> datetime:
    return datetime.now(UTC)


def _version() -> str:
    try:
        return metadata.version("extension-host")
    except metadata.PackageNotFoundError:
        return "0"
