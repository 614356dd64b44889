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

Project extensions run only while their project is trusted: trust is asked again at every
discovery, so a decision recorded while the host runs takes effect at its next change. Changes
are applied one batch at a time, extensions in load order, so outcomes never depend on timing.
The supervisor knows instances, discovery and the registries; not files being watched, and not
the CLI.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from .activity import ActivityTracker
from .discovery import Discovered, discover
from .info import ExtensionInfo
from .instance import ExtensionInstance, SessionContext
from .outcomes import ReloadOutcome

__all__ = ["Supervisor"]


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
    ) -> None:
        """``untrusted()`` says why the project's own extensions may not run now (``None``:
        they may)."""
        self._context = context
        self._untrusted = untrusted
        self._activity = activity
        self._project_root = project_root
        self._user_home = user_home
        self._drain_timeout = drain_timeout
        self._found: list[Discovered] = []
        self._current: dict[str, ExtensionInstance] = {}
        self._reload_errors: dict[str, str] = {}
        self._retiring: set[asyncio.Task[None]] = set()
        self._lock = asyncio.Lock()

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
                        status="untrusted" if found.untrusted else "shadowed" if found.shadowed_by else "failed",
                        error=found.untrusted or found.problem,
                        shadowed_by=found.shadowed_by,
                        link_target=spec.link_target,
                    )
                )
        return infos

    def untrusted(self) -> list[str]:
        """The ids of the extensions that did not run because their project is not trusted."""
        return [found.spec.id for found in self._found if found.untrusted]

    def unavailable_reason(self, tool_name: str) -> str | None:
        """Why a tool that used to be offered is gone, if its extension failed."""
        for instance in self._current.values():
            if tool_name in instance.lost_tools and instance.status == "failed":
                return f"tool {tool_name!r} is unavailable: extension {instance.id} failed: {instance.error}"
        return None

    # -- changing -----------------------------------------------------------------------

    async def start_all(self) -> list[ReloadOutcome]:
        """Discover and start every extension in parallel (tools register in load order)."""
        async with self._lock:
            return await self._start_all()

    def _discover(self) -> list[Discovered]:
        return discover(self._project_root, self._user_home, untrusted=self._untrusted())

    async def _start_all(self) -> list[ReloadOutcome]:
        self._found = self._discover()
        previous: asyncio.Event | None = None
        started: list[ExtensionInstance] = []
        for index, found in enumerate(self._found):
            if found.startable:
                instance = ExtensionInstance(found.spec, self._context, order=index, after=previous)
                previous = instance.settled
                self._current[found.spec.id] = instance
                started.append(instance)
        await asyncio.gather(*(instance.start() for instance in started))
        outcomes = [_outcome("started", instance) for instance in started]
        outcomes += self._newly_untrusted(set())
        self._announce(outcomes)
        return outcomes

    async def apply(self, changed: set[str] | None = None) -> list[ReloadOutcome]:
        """Bring the running set in line with the disk.

        Extensions that appeared are started, ones that disappeared (or are now shadowed or
        invalid) are stopped, and those in ``changed`` (ids; ``None`` means all) are reloaded.
        """
        async with self._lock:
            tools_before = self._tool_owners()
            untrusted_before = set(self.untrusted())
            self._found = self._discover()
            wanted = {f.spec.id: (index, f) for index, f in enumerate(self._found) if f.startable}
            outcomes: list[ReloadOutcome] = []
            for extension_id, instance in list(self._current.items()):
                if extension_id not in wanted:
                    del self._current[extension_id]
                    self._reload_errors.pop(extension_id, None)
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

    async def restart_all(self) -> list[ReloadOutcome]:
        """Stop everything, discover again, start everything (Copilot's ``extensions_reload``)."""
        async with self._lock:  # held throughout, so a watcher batch cannot start things in between
            tools_before = self._tool_owners()
            for instance in self._current.values():
                self._retire(instance)
            self._current.clear()
            self._reload_errors.clear()
            await self.drain()
            outcomes = await self._start_all()
            self._announce([], tools_before)
            return outcomes

    async def stop_all(self) -> None:
        """Stop every instance, current and retiring; safe to call twice."""
        async with self._lock:
            instances = list(self._current.values())
            self._current.clear()
        try:
            await asyncio.gather(*(instance.stop() for instance in instances))
            await self.drain()
        except BaseException:
            for instance in instances:
                instance.kill()
            raise

    async def drain(self) -> None:
        """Wait for every retiring instance to finish stopping."""
        while self._retiring:
            await asyncio.gather(*self._retiring, return_exceptions=True)

    # -- internals ----------------------------------------------------------------------

    async def _start_one(self, found: Discovered, index: int) -> ReloadOutcome:
        instance = ExtensionInstance(found.spec, self._context, order=index)
        self._current[found.spec.id] = instance
        await instance.start()
        return _outcome("started", instance)

    async def _reload_one(self, found: Discovered, index: int, old: ExtensionInstance) -> ReloadOutcome:
        new = ExtensionInstance(found.spec, self._context, order=index)
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
        self._current[found.spec.id] = new
        return _outcome("failed", new)

    def _retire(self, instance: ExtensionInstance) -> None:
        """Take an instance out of service now; stop it once the calls it may serve are done."""
        instance.retired = True
        self._context.registry.unregister(instance.id, holder=instance)
        self._context.hooks.unregister(instance.id, holder=instance)
        generation = self._activity.advance()

        async def drain_then_stop() -> None:
            await self._activity.wait_idle(generation, self._drain_timeout)
            await instance.stop()

        task = asyncio.ensure_future(drain_then_stop())
        self._retiring.add(task)
        task.add_done_callback(self._retiring.discard)

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
                return found.untrusted or found.problem or f"shadowed by {found.shadowed_by}"
        return "its folder or extension.py was removed"

    def _tool_owners(self) -> dict[str, str]:
        return {entry.name: entry.owner for entry in self._context.registry.entries()}

    def _announce(self, outcomes: list[ReloadOutcome], tools_before: dict[str, str] | None = None) -> None:
        events = self._context.events
        if tools_before is not None:
            after = self._tool_owners()
            added = sorted(name for name in after if tools_before.get(name) != after[name])
            removed = sorted(name for name in tools_before if name not in after)
            if added or removed:
                events.emit("session.tools_updated", {"added": added, "removed": removed})
        if outcomes or tools_before is None:
            events.emit(
                "session.extensions_loaded",
                {
                    "extensions": [info.to_json() for info in self.infos()],
                    "changes": [outcome.to_json() for outcome in outcomes],
                },
                ephemeral=True,
            )


def _outcome(action: str, instance: ExtensionInstance) -> ReloadOutcome:
    if instance.status != "running":
        return ReloadOutcome(instance.id, "failed", instance.status, instance.error)
    return ReloadOutcome(instance.id, action, instance.status, None, instance.info().tools)
