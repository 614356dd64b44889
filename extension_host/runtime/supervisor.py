"""The supervisor: which extension instances run, and how they are started, swapped and stopped.

It keeps one current instance per discovered extension and changes that set as the disk
changes, transactionally:

- a **new** folder is started; a **removed** (or now shadowed, renamed, or no longer trusted)
  one is stopped;
- a **changed** one is reloaded: the new version starts beside the old one and registers its
  tools and hooks against everything *but* the old version; only once it has joined are the
  two swapped, in one step. The old version then drains (calls that began before the swap
  finish on it) and is stopped. If the new version fails (syntax error, crash, collision,
  timeout), the old one keeps serving and the failure is reported as its ``reload_error``.

Extensions started together (the host's start, a reload of all) start in parallel and each
registers its tools as soon as it joins, so one that hangs or crashes delays and fails only
itself. Collisions still end as load order says: one that finds a tool name taken waits until
every extension before it in the batch has joined or failed; then, if only *later* ones hold its
names, they are failed with the collision error naming it and it gets the names, else it fails.
An extension that starts on its own (a new folder, a reload, a restart) never evicts a running
one: it fails if a name is taken.

With a :class:`~extension_host.runtime.budget.CrashBudget` (long-running hosts), an extension that
crashes after joining is restarted as :mod:`~extension_host.runtime.restarter` decides. With a
:class:`~extension_host.runtime.budget.ReloadBudget`, reloads caused by an extension's own files past
the budget pause its watching until it is reloaded by name.

Project extensions run only while their project is trusted, and no extension the user disabled
runs: trust and the enable/disable decisions are asked again at every discovery, so a decision
recorded while the host runs takes effect at its next change. Grants are looked at again at
every change too: an instance, current or draining, that holds the value of a variable no longer
granted to it is stopped at once and left ``failed`` with ``needs grant: NAME``
(:mod:`extension_host.runtime.revocation`), before anything else of the change is done. Changes
are applied one batch at a time, extensions in load order. The supervisor knows instances,
discovery and the registries; not files being watched, and not the CLI.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from extension_protocol.tasks import BackgroundTasks

from ..calls.activity import ActivityTracker
from ..calls.tool_registry import ToolEntry
from ..info import NOT_RUNNING, ExtensionInfo, ExtensionStatus, sdk_entry
from ..outcomes import ReloadOutcome
from ..project.discovery import Discovered, ExtensionSpec, discover
from ..project.enablement import EnablementStore
from .budget import CrashBudget, ReloadBudget, SlidingCount
from .context import SessionContext, announce_tools
from .instance import Arbiter, CrashHandler, ExtensionInstance, JoinHandler
from .restarter import Restarter
from .revocation import stop_revoked

__all__ = ["InstanceFactory", "Supervisor"]


class InstanceFactory(Protocol):
    """Builds the instance of one extension: :class:`ExtensionInstance` itself, or a stand-in
    without a process (the in-memory tests of the supervisor)."""

    def __call__(
        self,
        spec: ExtensionSpec,
        context: SessionContext,
        *,
        order: int,
        arbiter: Arbiter,
        on_crash: CrashHandler,
        on_join: JoinHandler,
    ) -> ExtensionInstance: ...


class Supervisor:
    """Owns the extension instances of one host."""

    def __init__(
        self,
        context: SessionContext,
        activity: ActivityTracker,
        *,
        project_root: Path,
        user_home: Path,
        drain_timeout: float,
        untrusted: Callable[[], str | None],
        crash_budget: CrashBudget | None = None,
        reload_budget: ReloadBudget | None = None,
        instance_factory: InstanceFactory = ExtensionInstance,
        crash_listener: Callable[[str, str], None] | None = None,
    ) -> None:
        """``untrusted()`` says why the project's own extensions may not run now (``None``:
        they may). Without ``crash_budget`` a crashed extension stays failed (one-shot hosts);
        without ``reload_budget`` :meth:`apply_watched` never pauses. ``instance_factory``
        builds each instance (see :class:`InstanceFactory`). ``crash_listener(id, error)`` hears
        of every crash of a running extension, restarted or not."""
        self._crash_listener = crash_listener
        self._instance_factory = instance_factory
        self._context = context
        self._untrusted = untrusted
        self._activity = activity
        self._project_root = project_root
        self._user_home = user_home
        self._drain_timeout = drain_timeout
        self._found: list[Discovered] = []
        self._meant_to_run: tuple[str, ...] = ()
        """The ids of :attr:`_found` that should run (neither untrusted, disabled nor shadowed),
        in load order: what :meth:`not_running` looks at on every call."""
        self._disabled: frozenset[str] = frozenset()
        """The ids of :attr:`_found` that the user disabled."""
        self._copilot_root: Path | None = None
        """Copilot CLI's user extension folder, while the user has it discovered."""
        self._current: dict[str, ExtensionInstance] = {}
        self._reload_errors: dict[str, str] = {}
        self._retiring = BackgroundTasks("the supervisor (retiring instances)")
        self._draining: set[ExtensionInstance] = set()
        """Instances taken out of service and not yet stopped (they may hold granted values)."""
        self._lock = asyncio.Lock()
        self._batch: dict[str, ExtensionInstance] | None = None
        """The instances of the start under way, whose collisions follow load order."""
        self._starting: dict[str, ExtensionInstance] = {}
        """Instances being started (not reloaded or restarted): each one's start is announced
        as part of its join (see :meth:`_joined`)."""
        self._announced: set[str] = set()
        """The ids whose start :meth:`_joined` announced, left out of the next :meth:`_announce`."""
        self._restarter = Restarter(crash_budget, self._restart, self._say) if crash_budget else None
        self._reloads = SlidingCount(reload_budget.reloads, reload_budget.window) if reload_budget else None
        self._paused: set[str] = set()
        """Extensions whose file changes are ignored: they reloaded too often."""
        self._closing = asyncio.Event()

    # -- reading ------------------------------------------------------------------------

    def current(self) -> Iterable[ExtensionInstance]:
        """The current instances in no particular order (cheap: for every event)."""
        return self._current.values()

    def infos(self) -> list[ExtensionInfo]:
        """Every discovered extension in load order, shadowed and failed ones included."""
        infos = []
        for found in self._found:
            spec = found.spec
            instance = self._current.get(spec.id)
            if instance is not None:
                info = instance.info()
                reload_error = self._reload_errors.get(spec.id)
                infos.append(replace(info, reload_error=reload_error) if reload_error else info)
            else:
                infos.append(
                    ExtensionInfo(
                        id=spec.id,
                        name=spec.name,
                        source=spec.source,
                        path=spec.folder,
                        status=_not_started(found),
                        error=found.disabled or found.untrusted or found.problem,
                        shadowed_by=found.shadowed_by,
                        link_target=spec.link_target,
                    )
                )
        return infos

    def not_running(self) -> list[ExtensionInfo]:
        """The extensions that should be running and are not (:data:`~extension_host.info.NOT_RUNNING`),
        in load order. Cheap while every one runs (it is asked on every call): one lookup per
        extension, and no snapshot is made unless one does not run."""
        current = self._current
        for extension_id in self._meant_to_run:
            instance = current.get(extension_id)
            if instance is None or instance.status in NOT_RUNNING:
                return [info for info in self.infos() if info.status in NOT_RUNNING]
        return []

    def untrusted(self) -> list[str]:
        """The ids of the extensions that did not run because their project is not trusted."""
        return [found.spec.id for found in self._found if found.untrusted]

    def copilot_root(self) -> Path | None:
        """Copilot CLI's user extension folder, if the last discovery looked in it."""
        return self._copilot_root

    def is_disabled(self, extension_id: str) -> bool:
        """Whether the user disabled ``extension_id`` (as of the last discovery): its folder is not watched."""
        return extension_id in self._disabled

    def unavailable_reason(self, tool_name: str) -> str | None:
        """Why a tool that used to be offered is gone, if its extension failed."""
        for instance in self._current.values():
            if tool_name in instance.lost_tools and instance.status in ("failed", "quarantined"):
                return f"tool {tool_name!r} is unavailable: extension {instance.id} {instance.status}: {instance.error}"
        return None

    def paused(self) -> set[str]:
        """The ids of the extensions whose file changes are ignored (they reloaded too often)."""
        return set(self._paused)

    # -- changing -----------------------------------------------------------------------

    def use_context(self, context: SessionContext) -> None:
        """Start instances with ``context`` from now on (a new session's); running ones keep
        theirs until they are reloaded."""
        self._context = context

    async def start_all(self) -> list[ReloadOutcome]:
        """Discover and start every extension in parallel (tools register in load order)."""
        async with self._lock:
            return await self._start_all()

    def _discover(self) -> list[Discovered]:
        """Look at the folders again: :attr:`_found` and what of it should run."""
        choices = EnablementStore(self._user_home).choices(self._project_root)
        self._copilot_root = choices.copilot_root
        self._found = discover(self._project_root, self._user_home, untrusted=self._untrusted(), choices=choices)
        self._meant_to_run = tuple(f.spec.id for f in self._found if f.meant_to_run)
        self._disabled = frozenset(f.spec.id for f in self._found if f.disabled)
        return self._found

    async def _start_all(self) -> list[ReloadOutcome]:
        self._discover()
        started: list[ExtensionInstance] = []
        for index, found in enumerate(self._found):
            if found.startable:
                instance = self._instance(found.spec, index)
                self._current[found.spec.id] = instance
                started.append(instance)
        self._batch = {instance.id: instance for instance in started}
        self._starting.update(self._batch)
        try:
            await asyncio.gather(*(instance.start() for instance in started))
        finally:
            self._batch = None
            self._starting.clear()
        outcomes = [_outcome("started", instance) for instance in started]
        outcomes += self._newly_untrusted(set())
        self._announce(outcomes, even_if_unchanged=not self._announced)
        return outcomes

    async def apply(self, changed: set[str] | None = None) -> list[ReloadOutcome]:
        """Bring the running set in line with the disk.

        Extensions that appeared are started, ones that disappeared (or are now shadowed or
        invalid) are stopped, and those in ``changed`` (ids; ``None`` means all) are reloaded.
        Asked for by name, a reload also lifts a quarantine and resumes paused watching.
        """
        for extension_id in changed or ():
            self._paused.discard(extension_id)
            if self._reloads is not None:
                self._reloads.reset(extension_id)
        return await self._apply(changed)

    async def apply_watched(self, changed: set[str]) -> list[ReloadOutcome]:
        """:meth:`apply` for a batch of file changes: an extension past its reload budget has
        its watching paused (its changes ignored, with a ``session.warning``) until it is
        reloaded by name."""
        wanted = changed - self._paused
        if self._reloads is not None:
            for extension_id in sorted(wanted & self._current.keys()):
                if not self._reloads.take(extension_id):
                    wanted.discard(extension_id)
                    self._pause(self._current[extension_id])
        if changed and not wanted and all(self._current_entry_exists(extension_id) for extension_id in changed):
            return []  # only paused extensions changed (and are still there): not even a discovery
        return await self._apply(wanted)

    async def _apply(self, changed: set[str] | None) -> list[ReloadOutcome]:
        async with self._lock:
            if self._closing.is_set():
                return []  # a host that is stopping starts nothing again
            tools_before = self._tool_owners()
            untrusted_before = set(self.untrusted())
            outcomes = await self._stop_revoked()
            self._discover()
            wanted = {f.spec.id: (index, f) for index, f in enumerate(self._found) if f.startable}
            for extension_id, instance in list(self._current.items()):
                if extension_id not in wanted:
                    del self._current[extension_id]
                    self._reload_errors.pop(extension_id, None)
                    self._paused.discard(extension_id)  # a folder put back later is watched again
                    self._retire(instance)
                    outcomes.append(ReloadOutcome(extension_id, "stopped", "stopped", self._why_gone(extension_id)))
            self._context.hooks.reorder({extension_id: index for extension_id, (index, _) in wanted.items()})
            for extension_id, (index, found) in wanted.items():
                old = self._current.get(extension_id)
                if old is None:
                    outcomes.append(await self._start_one(found, index))
                elif changed is None or extension_id in changed:
                    outcomes.append(await self._reload_one(found, index, old))
            stopped = {outcome.extension for outcome in outcomes}
            outcomes += self._newly_untrusted(untrusted_before | stopped)
            self._announce(outcomes, tools_before)
            return outcomes

    async def restart_all(self, between: Callable[[], None] | None = None) -> list[ReloadOutcome]:
        """Stop everything, discover again, start everything (Copilot's ``extensions_reload``);
        ``between()`` runs once everything has stopped, before anything starts."""
        async with self._lock:  # held throughout, so a watcher batch cannot start things in between
            tools_before = self._tool_owners()
            for instance in self._current.values():
                self._retire(instance)
            self._current.clear()
            self._reload_errors.clear()
            self._paused.clear()
            if self._restarter is not None:
                self._restarter.reset()
            await self.drain()
            if between is not None:
                between()
            outcomes = await self._start_all()
            self._announce([], tools_before)
            return outcomes

    async def stop_all(self) -> None:
        """Stop every instance, current and retiring; safe to call twice."""
        self._closing.set()
        if self._restarter is not None:
            self._restarter.close()  # one waiting for its backoff gives up at once
        for instance in self._current.values():
            instance.abandon_start()  # a start building an environment holds the lock for minutes
        async with self._lock:
            instances = list(self._current.values())
            self._current.clear()
        try:
            await asyncio.gather(*(instance.stop() for instance in instances))
            if self._restarter is not None:
                await self._restarter.wait()
            await self.drain()
        except BaseException:
            for instance in instances:
                instance.kill()
            raise

    async def drain(self) -> None:
        """Wait for every retiring instance to finish stopping."""
        await self._retiring.wait()

    # -- internals ----------------------------------------------------------------------

    def _instance(self, spec: ExtensionSpec, index: int) -> ExtensionInstance:
        return self._instance_factory(
            spec, self._context, order=index, arbiter=self._arbitrate, on_crash=self._crashed, on_join=self._joined
        )

    def _joined(self, instance: ExtensionInstance) -> None:
        """An instance being started joined: its start is announced now, before its join is
        answered, so even an extension that detaches at once hears of it, as under Copilot CLI."""
        if self._starting.pop(instance.id, None) is not instance:
            return
        self._announced.add(instance.id)
        self._emit_loaded([_outcome("started", instance)])

    async def _arbitrate(self, joiner: ExtensionInstance, entries: list[ToolEntry]) -> list[ExtensionInstance] | None:
        """Who gives up the tools ``joiner`` declares and others hold: the holders, if every one
        is later in load order and started with it; ``None`` (the joiner fails) otherwise.

        Whether the joiner keeps its place depends on the extensions before it, which may not
        have joined yet: it first waits until each of them has joined or failed (each bounded by
        its readiness timeout). So the end state is the one joining in load order gives, however
        the joins interleave; only an extension whose tools collide ever waits for another.
        """
        batch = self._batch
        if batch is None or batch.get(joiner.id) is not joiner:
            return None
        undecided = [
            instance.settled.wait()
            for instance in batch.values()
            if instance.order < joiner.order and not instance.settled.is_set()
        ]
        if undecided:
            await asyncio.gather(*undecided)
        holders = [batch.get(owner) for owner in joiner.colliding_owners(entries)]
        if any(holder is None or holder.order < joiner.order or holder.status != "running" for holder in holders):
            return None
        return list(dict.fromkeys(holder for holder in holders if holder is not None))

    async def _start_one(self, found: Discovered, index: int) -> ReloadOutcome:
        instance = self._instance(found.spec, index)
        self._current[found.spec.id] = instance
        self._starting[instance.id] = instance
        try:
            await instance.start()
        finally:
            self._starting.pop(instance.id, None)
        return _outcome("started", instance)

    async def _reload_one(self, found: Discovered, index: int, old: ExtensionInstance) -> ReloadOutcome:
        if self._restarter is not None:
            self._restarter.reset(found.spec.id)  # new code, or asked for by name: a fresh budget
        new = self._instance(found.spec, index)
        await new.start()
        if new.status == "running":
            self._current[found.spec.id] = new
            self._reload_errors.pop(found.spec.id, None)
            self._retire(old)
            return _outcome("reloaded", new)
        self._retire(new)
        if old.status == "running":
            error = new.error or "the new version did not start"
            self._reload_errors[found.spec.id] = error
            return ReloadOutcome(found.spec.id, "kept", old.status, error, old.info().tools)
        # Both versions failed: the new one's reason stands for the tools the old one offered.
        new.lost_tools = new.lost_tools or old.lost_tools
        self._retire(old)
        self._current[found.spec.id] = new
        return _outcome("failed", new)

    # -- crashes and storms ---------------------------------------------------------------

    def _crashed(self, instance: ExtensionInstance) -> None:
        """A running extension failed by itself: tell the listener, and the restarter."""
        if self._closing.is_set() or self._current.get(instance.id) is not instance:
            return
        if self._crash_listener is not None:
            self._crash_listener(instance.id, instance.error or "it exited")
        if self._restarter is not None:
            self._restarter.crashed(instance)

    async def _restart(self, old: ExtensionInstance, attempt: int) -> None:
        """Replace a crashed instance, its backoff over (the restarter's ``restart``)."""
        restarter = self._restarter
        assert restarter is not None
        async with self._lock:
            if self._closing.is_set() or self._current.get(old.id) is not old or old.revoked:
                return  # stopped, reloaded or removed meanwhile, or a grant it needs was revoked
            tools_before = self._tool_owners()
            new = self._instance(old.spec, old.order)
            self._current[old.id] = new
            self._retire(old)
            await new.start()
            if new.status == "running":
                self._say(new, f"restarted after a crash ({restarter.describe(attempt)})", "info")
            elif not restarter.waiting(new) and new.status != "quarantined":  # else it crashed once more
                self._say(
                    new,
                    f"did not come back after a crash: {new.error}; fix it and save, or "
                    f"'extensions reload {new.spec.reload_name}'",
                )
            self._announce([_outcome("restarted", new)], tools_before)

    def _pause(self, instance: ExtensionInstance) -> None:
        self._paused.add(instance.id)
        budget = self._reloads
        assert budget is not None
        self._say(
            instance,
            f"reloaded {budget.limit} times within {budget.window:g} s (does it write into its own folder?); "
            f"its file changes are ignored until 'extensions reload {instance.spec.reload_name}'",
        )

    def _say(self, instance: ExtensionInstance, text: str, level: str = "warning") -> None:
        self._context.events.emit(
            f"session.{level}",
            {f"{level}Type": "extension", "message": f"extension {instance.id} {text}", "extensionId": instance.id},
        )

    def _current_entry_exists(self, extension_id: str) -> bool:
        instance = self._current.get(extension_id)
        return instance is not None and instance.spec.entry.is_file()

    def _retire(self, instance: ExtensionInstance) -> None:
        """Take an instance out of service now; stop it once the calls it may serve are done."""
        instance.retired = True
        self._context.registry.unregister(instance.id, holder=instance)
        self._context.hooks.unregister(instance.id, holder=instance)
        generation = self._activity.advance()
        self._draining.add(instance)

        async def drain_then_stop() -> None:
            try:
                await self._activity.wait_idle(generation, self._drain_timeout)
                await instance.stop()
            finally:
                self._draining.discard(instance)

        self._retiring.spawn(drain_then_stop())

    async def _stop_revoked(self) -> list[ReloadOutcome]:
        """Stop every instance, current or draining, that holds a value no longer granted; an
        outcome for each current one (it stays, ``failed``, saying which grant it needs)."""
        stopped = await stop_revoked([*self._current.values(), *self._draining], self._context.grants)
        return [
            ReloadOutcome(instance.id, "stopped", instance.status, instance.error)
            for instance in stopped
            if self._current.get(instance.id) is instance
        ]

    def _newly_untrusted(self, known: set[str]) -> list[ReloadOutcome]:
        """An outcome for each extension not run for want of trust that ``known`` lacks, so a
        folder added to an untrusted project is reported, not silently ignored."""
        return [
            ReloadOutcome(found.spec.id, "untrusted", "untrusted", found.untrusted)
            for found in self._found
            if found.untrusted and found.spec.id not in known
        ]

    def _why_gone(self, extension_id: str) -> str:
        for found in self._found:
            if found.spec.id == extension_id:
                return found.disabled or found.untrusted or found.problem or f"shadowed by {found.shadowed_by}"
        return "its folder or extension.py was removed"

    def _tool_owners(self) -> dict[str, str]:
        return {entry.name: entry.owner for entry in self._context.registry.entries()}

    def _announce(
        self,
        outcomes: list[ReloadOutcome],
        tools_before: dict[str, str] | None = None,
        *,
        even_if_unchanged: bool = False,
    ) -> None:
        """Say what changed: the tools since ``tools_before`` (when given), and ``outcomes``
        less the starts already announced at their join (``session.extensions_loaded``, sent
        even with no change when ``even_if_unchanged``)."""
        if tools_before is not None:
            after = self._tool_owners()
            added = sorted(name for name in after if tools_before.get(name) != after[name])
            removed = sorted(name for name in tools_before if name not in after)
            if added or removed:
                announce_tools(self._context, added=added, removed=removed)
        announced, self._announced = self._announced, set()
        outcomes = [o for o in outcomes if not (o.action == "started" and o.extension in announced)]
        if outcomes or even_if_unchanged:
            self._emit_loaded(outcomes)

    def _emit_loaded(self, outcomes: list[ReloadOutcome]) -> None:
        listed = []
        for found in self._found:  # what infos() lists, without building the rest: every join asks
            spec, instance = found.spec, self._current.get(found.spec.id)
            status = instance.status if instance is not None else _not_started(found)
            listed.append(sdk_entry(spec.id, spec.name, spec.source, status))
        self._context.events.emit(
            "session.extensions_loaded",
            {"extensions": listed, "changes": [outcome.to_json() for outcome in outcomes]},
            ephemeral=True,
        )


def _not_started(found: Discovered) -> ExtensionStatus:
    """The status of a discovered extension that has no instance."""
    if found.disabled:
        return "disabled"
    return "untrusted" if found.untrusted else "shadowed" if found.shadowed_by else "failed"


def _outcome(action: str, instance: ExtensionInstance) -> ReloadOutcome:
    if instance.status != "running":
        return ReloadOutcome(instance.id, "failed", instance.status, instance.error)
    return ReloadOutcome(instance.id, action, instance.status, None, instance.info().tools)
