"""Supervisor in memory: start, apply, swap, collisions in load order, crash and reload budgets.

Discovery is real (folders in a temporary project and home); the instances are
:class:`FakeInstance`, an :class:`~extension_host.runtime.instance.ExtensionInstance` without a process
whose join the test scripts (when it joins, with which tools, or how it fails) through a
:class:`Plan` per extension name. Joining goes through the instance's real ``session.resume``
handling, so registration, collisions and eviction are the host's own. The process boundary
(launch, crash, stdout, signals) stays with tests/faults/test_supervisor.py and test_reload.py.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest

from extension_host.calls.activity import ActivityTracker
from extension_host.calls.tool_registry import ToolEntry, ToolRegistry
from extension_host.events import EventLog
from extension_host.hooks.runner import HookRunner
from extension_host.outcomes import ReloadOutcome
from extension_host.project.discovery import ExtensionSpec
from extension_host.runtime.budget import CrashBudget, ReloadBudget
from extension_host.runtime.context import SessionContext
from extension_host.runtime.instance import Arbiter, ExtensionInstance
from extension_host.runtime.supervisor import Supervisor
from extension_protocol.connection import RpcError
from helpers import Project, run

T = TypeVar("T")
SESSION = "session-1"


class Plan:
    """How the next instance of one extension behaves: it joins declaring ``tools`` once ``go``
    is set (at once without ``gate``), or fails with ``fails`` instead. The instance after it
    joins at once with the same tools."""

    def __init__(self, *tools: str, fails: str | None = None, gate: bool = False) -> None:
        self.tools = tools
        self.fails = fails
        self.go: asyncio.Event | None = asyncio.Event() if gate else None
        self.asked = asyncio.Event()
        """Set when its join found a tool taken and asked the supervisor who keeps it."""
        self.done = asyncio.Event()
        """Set once its join is decided (running or failed)."""


class FakeInstance(ExtensionInstance):
    """An extension instance without a process: ``start`` plays its :class:`Plan`."""

    def __init__(
        self, spec: ExtensionSpec, context: SessionContext, *, arbiter: Arbiter, plan: Plan, **rest: Any
    ) -> None:
        """``rest``: the supervisor's other keywords (see ``InstanceFactory``), passed on."""

        async def arbitrate(joiner: ExtensionInstance, entries: list[ToolEntry]) -> list[ExtensionInstance] | None:
            plan.asked.set()
            return await arbiter(joiner, entries)

        super().__init__(spec, context, arbiter=arbitrate, **rest)
        self.plan = plan
        self.stopped = asyncio.Event()

    async def start(self) -> None:
        plan = self.plan
        try:
            if plan.go is not None:
                await plan.go.wait()
            if plan.fails is not None:
                self._fail(plan.fails)
                return
            tools = [{"name": name, "description": f"{name} of {self.id}"} for name in plan.tools]
            try:
                await self._on_resume({"sessionId": SESSION, "tools": tools})
            except RpcError:
                pass  # the join failed the instance, which says why
        finally:
            plan.done.set()

    async def stop(self) -> None:
        await super().stop()
        self.stopped.set()

    def crash(self, reason: str = "exited with code 1 while running") -> None:
        """Fail by itself, as when its process dies after joining."""
        self._fail(reason)


class Stage:
    """A supervisor over a temporary project and home, whose instances are fakes."""

    def __init__(
        self,
        tmp_path: Path,
        *,
        crash_budget: CrashBudget | None = None,
        reload_budget: ReloadBudget | None = None,
        untrusted: str | None = None,
    ) -> None:
        self.project = Project(tmp_path / "project", tmp_path / "home")
        self.project.root.mkdir()
        self.project.home.mkdir()
        self.plans: dict[str, Plan] = {}
        self.built: list[FakeInstance] = []
        self.events = EventLog()
        self.registry = ToolRegistry()
        self.hooks = HookRunner(self.events, session_id=SESSION, cwd=str(self.project.root))
        self.activity = ActivityTracker()
        self.context = SessionContext(
            session_id=SESSION,
            project_root=self.project.root,
            logs_dir=tmp_path / "logs",
            registry=self.registry,
            events=self.events,
            hooks=self.hooks,
            environment={},
            readiness_timeout=5.0,
            tool_timeout=5.0,
            stop_grace=1.0,
            cache_dir=tmp_path / "cache",
            host_environment={},
            grants=lambda spec: frozenset(),
        )
        self.supervisor = Supervisor(
            self.context,
            self.activity,
            project_root=self.project.root,
            user_home=self.project.home,
            drain_timeout=5.0,
            untrusted=lambda: untrusted,
            crash_budget=crash_budget,
            reload_budget=reload_budget,
            instance_factory=self._build,
        )

    def _build(self, spec: ExtensionSpec, context: SessionContext, **options: Any) -> ExtensionInstance:
        plan = self.plans.get(spec.name) or Plan()
        self.plans[spec.name] = Plan(*plan.tools)  # the next instance joins at once, with the same tools
        instance = FakeInstance(spec, context, plan=plan, **options)
        self.built.append(instance)
        return instance

    def add(self, name: str, plan: Plan | None = None, *, source: str = "project") -> None:
        self.project.add_extension(name, "# stands in for an extension\n", source=source)
        if plan is not None:
            self.plans[name] = plan

    def current(self, name: str) -> FakeInstance:
        found = [i for i in self.supervisor.current() if i.spec.name == name]
        assert len(found) == 1, f"{name} is not current"
        instance = found[0]
        assert isinstance(instance, FakeInstance)
        return instance

    def owner(self, tool: str) -> str | None:
        entry = self.registry.get(tool)
        return entry.owner if entry else None

    def holder(self, tool: str) -> object:
        """The instance whose registration ``tool`` is."""
        entry = self.registry.get(tool)
        assert entry is not None, f"nobody offers {tool}"
        return entry.holder

    async def next_event(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 2) -> dict[str, Any]:
        """The first event, past or future, matching ``predicate`` (bounded)."""
        for event in self.events.history():
            if predicate(dict(event)):
                return dict(event)
        found: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

        def listen(event: Any) -> None:
            if not found.done() and predicate(dict(event)):
                found.set_result(dict(event))

        unsubscribe = self.events.subscribe(listen)
        try:
            async with asyncio.timeout(timeout):
                return await found
        finally:
            unsubscribe()


def fast(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run in memory: nothing here should take more than a moment."""
    return run(coroutine, timeout=5)


def actions(outcomes: list[ReloadOutcome]) -> dict[str, str]:
    return {outcome.extension: outcome.action for outcome in outcomes}


def message(text: str) -> Callable[[dict[str, Any]], bool]:
    return lambda event: text in str(event["data"].get("message", ""))


# -- starting --------------------------------------------------------------------------------


def test_start_all_starts_every_extension_and_reports_failures_beside_the_running_ones(tmp_path: Path) -> None:
    """One joins, one fails before joining, one is shadowed: outcomes, listing and announcement say so."""

    async def scenario() -> None:
        stage = Stage(tmp_path)
        stage.add("alpha", Plan("read"))
        stage.add("beta", Plan(fails="exited with code 1 before joining: ImportError: no module named x"))
        stage.add("alpha", source="user")
        outcomes = await stage.supervisor.start_all()
        assert [(o.extension, o.action, o.status, o.tools) for o in outcomes] == [
            ("project:alpha", "started", "running", ("read",)),
            ("project:beta", "failed", "failed", ()),
        ]
        assert outcomes[1].error == "exited with code 1 before joining: ImportError: no module named x"
        infos = {info.id: info for info in stage.supervisor.infos()}
        assert [info.status for info in infos.values()] == ["running", "failed", "shadowed"]
        assert infos["user:alpha"].shadowed_by == "project:alpha"
        assert stage.owner("read") == "project:alpha"
        # The start is announced as the extension joins; the failure once the start is over.
        joined, loaded = stage.events.history("session.extensions_loaded")
        assert [(c["extension"], c["action"]) for c in joined["data"]["changes"]] == [("project:alpha", "started")]
        assert [(c["extension"], c["action"]) for c in loaded["data"]["changes"]] == [("project:beta", "failed")]
        for event in (joined, loaded):
            assert [e["id"] for e in event["data"]["extensions"]] == ["project:alpha", "project:beta", "user:alpha"]

    fast(scenario())


def test_project_extensions_of_an_untrusted_project_are_reported_and_never_built(tmp_path: Path) -> None:
    """Only the user extension is built; the project one is an ``untrusted`` outcome with the reason."""

    async def scenario() -> None:
        stage = Stage(tmp_path, untrusted="the project is not trusted; run: extensions trust")
        stage.add("local")
        stage.add("mine", source="user")
        outcomes = await stage.supervisor.start_all()
        assert actions(outcomes) == {"user:mine": "started", "project:local": "untrusted"}
        assert [instance.id for instance in stage.built] == ["user:mine"]
        assert stage.supervisor.untrusted() == ["project:local"]

    fast(scenario())


def test_extensions_started_together_join_in_parallel(tmp_path: Path) -> None:
    """A later extension joins while an earlier one is still starting: nobody waits without a collision."""

    async def scenario() -> None:
        stage = Stage(tmp_path)
        slow, quick = Plan("a", gate=True), Plan("b")
        stage.add("first", slow)
        stage.add("second", quick)
        starting = asyncio.ensure_future(stage.supervisor.start_all())
        await quick.done.wait()
        assert stage.owner("b") == "project:second" and not slow.done.is_set()
        assert slow.go is not None
        slow.go.set()
        assert actions(await starting) == {"project:first": "started", "project:second": "started"}

    fast(scenario())


# -- applying changes --------------------------------------------------------------------------


def test_apply_starts_new_folders_and_stops_removed_ones(tmp_path: Path) -> None:
    """A new folder is started, a deleted one stopped with the reason; tools_updated says both."""

    async def scenario() -> None:
        stage = Stage(tmp_path)
        stage.add("old", Plan("gone"))
        await stage.supervisor.start_all()
        old = stage.current("old")
        shutil.rmtree(old.spec.folder)
        stage.add("new", Plan("fresh"))
        outcomes = await stage.supervisor.apply(set())
        assert [(o.extension, o.action) for o in outcomes] == [("project:old", "stopped"), ("project:new", "started")]
        assert outcomes[0].error == "its folder or extension.py was removed"
        await stage.supervisor.drain()
        assert old.stopped.is_set() and old.retired
        *joined, updated = stage.events.history("session.tools_updated")  # each join announces its tools too
        assert {"added": ["fresh"], "extensionId": "project:new"} in [event["data"] for event in joined]
        assert updated["data"] == {"added": ["fresh"], "removed": ["gone"]}

    fast(scenario())


def test_a_changed_extension_whose_new_version_fails_keeps_the_old_one_serving(tmp_path: Path) -> None:
    """``kept``: the old instance stays current with its tools, the listing shows the reload error,
    and the failed new instance is stopped."""

    async def scenario() -> None:
        stage = Stage(tmp_path)
        stage.add("lint", Plan("check"))
        await stage.supervisor.start_all()
        old = stage.current("lint")
        stage.plans["lint"] = Plan(fails="exited with code 1 before joining: SyntaxError: invalid syntax (line 3)")
        [outcome] = await stage.supervisor.apply({"project:lint"})
        assert (outcome.action, outcome.status, outcome.tools) == ("kept", "running", ("check",))
        assert outcome.error == "exited with code 1 before joining: SyntaxError: invalid syntax (line 3)"
        assert stage.current("lint") is old and not old.retired
        assert stage.holder("check") is old
        [info] = stage.supervisor.infos()
        assert info.status == "running" and info.reload_error == outcome.error
        await stage.supervisor.drain()
        assert stage.built[-1].stopped.is_set() and not old.stopped.is_set()

    fast(scenario())


def test_a_changed_extension_whose_new_version_joins_is_swapped_in_and_the_old_one_stopped_after_its_calls(
    tmp_path: Path,
) -> None:
    """The new version takes over the tools at once; the old one is stopped only when the call
    in flight at the swap is over; a later successful reload clears the reload error."""

    async def scenario() -> None:
        stage = Stage(tmp_path)
        stage.add("lint", Plan("check"))
        await stage.supervisor.start_all()
        old = stage.current("lint")
        stage.plans["lint"] = Plan(fails="did not join within 5 s")
        await stage.supervisor.apply({"project:lint"})
        stage.plans["lint"] = Plan("check", "fix")
        with stage.activity.track():  # a call that began before the swap
            [outcome] = await stage.supervisor.apply({"project:lint"})
            new = stage.current("lint")
            assert (outcome.action, outcome.tools) == ("reloaded", ("check", "fix"))
            assert new is not old and old.retired
            assert stage.holder("check") is new and stage.holder("fix") is new
            for _ in range(5):  # let a retirement that does not wait for the call go wrong
                await asyncio.sleep(0)
            assert not old.stopped.is_set()
        await stage.supervisor.drain()
        assert old.stopped.is_set() and not new.stopped.is_set()
        assert stage.supervisor.infos()[0].reload_error is None
        updated = stage.events.history("session.tools_updated")[-1]
        assert updated["data"] == {"added": ["fix"], "removed": []}

    fast(scenario())


def test_a_failed_extension_whose_new_version_fails_too_still_explains_its_tools(tmp_path: Path) -> None:
    """A call to a tool the extension offered before it crashed says why it is unavailable, with
    the new version's reason, rather than that no such tool exists."""

    async def scenario() -> None:
        stage = Stage(tmp_path)
        stage.add("lint", Plan("check"))
        await stage.supervisor.start_all()
        first = stage.current("lint")
        first.crash()
        stage.plans["lint"] = Plan(fails="exited with code 1 before joining: SyntaxError: invalid syntax")
        [outcome] = await stage.supervisor.apply({"project:lint"})
        assert (outcome.action, outcome.status) == ("failed", "failed")
        reason = stage.supervisor.unavailable_reason("check")
        assert reason == (
            "tool 'check' is unavailable: extension project:lint failed: "
            "exited with code 1 before joining: SyntaxError: invalid syntax"
        )
        await stage.supervisor.drain()
        assert first.stopped.is_set()

    fast(scenario())


def test_a_new_version_whose_tool_another_extension_holds_is_rejected_and_the_old_one_serves(
    tmp_path: Path,
) -> None:
    """A reload never evicts a running extension, even a later one in load order."""

    async def scenario() -> None:
        stage = Stage(tmp_path)
        stage.add("alpha", Plan("a"))
        stage.add("beta", Plan("b"))
        await stage.supervisor.start_all()
        stage.plans["alpha"] = Plan("a", "b")
        [outcome] = await stage.supervisor.apply({"project:alpha"})
        assert outcome.action == "kept"
        assert outcome.error is not None and "tool 'b' is already provided by extension project:beta" in outcome.error
        assert stage.owner("a") == "project:alpha" and stage.owner("b") == "project:beta"
        assert stage.current("beta").status == "running"

    fast(scenario())


def test_apply_reloads_only_the_changed_extensions_and_none_means_all(tmp_path: Path) -> None:
    """``apply({id})`` rebuilds that one; ``apply(None)`` rebuilds every one; ``apply(set())`` none."""

    async def scenario() -> None:
        stage = Stage(tmp_path)
        stage.add("alpha")
        stage.add("beta")
        await stage.supervisor.start_all()
        assert await stage.supervisor.apply(set()) == []
        assert actions(await stage.supervisor.apply({"project:beta"})) == {"project:beta": "reloaded"}
        assert actions(await stage.supervisor.apply(None)) == {"project:alpha": "reloaded", "project:beta": "reloaded"}
        assert [instance.spec.name for instance in stage.built] == ["alpha", "beta", "beta", "alpha", "beta"]

    fast(scenario())


# -- collisions ----------------------------------------------------------------------------------


def test_an_earlier_extension_that_joins_late_evicts_the_later_holder_of_its_tool(tmp_path: Path) -> None:
    """b joins first with t; a (earlier in load order) joins after and takes t; b fails naming a.
    An eviction is not a crash: b is not restarted, even with a crash budget."""

    async def scenario() -> None:
        stage = Stage(tmp_path, crash_budget=CrashBudget(restarts=3, window=60, backoff=0.001))
        early, late = Plan("t", gate=True), Plan("t")
        stage.add("a", early)
        stage.add("b", late)
        starting = asyncio.ensure_future(stage.supervisor.start_all())
        await late.done.wait()
        assert stage.owner("t") == "project:b"
        assert early.go is not None
        early.go.set()
        outcomes = await starting
        assert actions(outcomes) == {"project:a": "started", "project:b": "failed"}
        assert stage.owner("t") == "project:a"
        evicted = stage.current("b")
        assert evicted.error is not None and "tool 't' is already provided by extension project:a" in evicted.error
        assert evicted.lost_tools == ("t",)
        # A restart would have been announced the moment b failed ("crashed ...; restarting it").
        assert not any("restart" in str(e["data"].get("message")) for e in stage.events.history())
        assert len(stage.built) == 2

    fast(scenario())


def test_a_later_extension_that_finds_its_tool_held_by_an_earlier_one_fails(tmp_path: Path) -> None:
    """a holds t; b asks the supervisor, which says no: b fails, a keeps t."""

    async def scenario() -> None:
        stage = Stage(tmp_path)
        late = Plan("t")
        stage.add("a", Plan("t"))
        stage.add("b", late)
        outcomes = await stage.supervisor.start_all()
        assert actions(outcomes) == {"project:a": "started", "project:b": "failed"}
        assert late.asked.is_set()
        assert stage.owner("t") == "project:a"
        assert "tool 't' is already provided by extension project:a" in str(stage.current("b").error)

    fast(scenario())


def test_a_collision_chain_ends_as_load_order_says_when_the_extensions_join_in_reverse(tmp_path: Path) -> None:
    """a{t} b{t,u} c{u}, joining c, then b, then a: b waits for a, then fails; a has t, c has u."""

    async def scenario() -> None:
        stage = Stage(tmp_path)
        a, b, c = Plan("t", gate=True), Plan("t", "u", gate=True), Plan("u", gate=True)
        stage.add("a", a)
        stage.add("b", b)
        stage.add("c", c)
        starting = asyncio.ensure_future(stage.supervisor.start_all())
        assert a.go and b.go and c.go
        c.go.set()
        await c.done.wait()
        b.go.set()
        await b.asked.wait()  # u is held by c, a later one: b must first learn what a does
        assert not b.done.is_set()
        a.go.set()
        outcomes = await starting
        assert actions(outcomes) == {"project:a": "started", "project:b": "failed", "project:c": "started"}
        assert stage.owner("t") == "project:a" and stage.owner("u") == "project:c"
        assert "tool 't' is already provided by extension project:a" in str(stage.current("b").error)

    fast(scenario())


def test_an_extension_that_starts_on_its_own_never_evicts_a_running_one(tmp_path: Path) -> None:
    """A new folder earlier in load order whose tool a running extension holds fails instead."""

    async def scenario() -> None:
        stage = Stage(tmp_path)
        stage.add("b", Plan("t"))
        await stage.supervisor.start_all()
        stage.add("a", Plan("t"))
        outcomes = await stage.supervisor.apply(set())
        assert actions(outcomes) == {"project:a": "failed"}
        assert stage.owner("t") == "project:b" and stage.current("b").status == "running"

    fast(scenario())


# -- crashes ----------------------------------------------------------------------------------


def test_a_crashed_extension_is_restarted_after_its_backoff_then_quarantined_past_the_budget(
    tmp_path: Path,
) -> None:
    """Two restarts allowed: two crashes bring it back, the third quarantines it; its tool's
    absence is explained; a reload by name lifts the quarantine."""

    async def scenario() -> None:
        stage = Stage(tmp_path, crash_budget=CrashBudget(restarts=2, window=60, backoff=0.001))
        stage.add("flaky", Plan("t"))
        await stage.supervisor.start_all()
        for attempt in (1, 2):
            stage.current("flaky").crash()
            await stage.next_event(message(f"restarted after a crash (restart {attempt} of 2 within 1 min)"))
            assert stage.current("flaky").status == "running" and stage.owner("t") == "project:flaky"
        crashed = stage.current("flaky")
        crashed.crash("exited with code 1 while running: RuntimeError: boom")
        warning = await stage.next_event(message("quarantined"))
        assert warning["data"]["message"] == (
            "extension project:flaky crashed again after 2 restarts within 1 min; quarantined: it is not "
            "restarted until its files change or 'extensions reload flaky'"
        )
        assert stage.current("flaky") is crashed and crashed.status == "quarantined"
        assert len(stage.built) == 3
        assert stage.supervisor.unavailable_reason("t") == (
            "tool 't' is unavailable: extension project:flaky quarantined: "
            "exited with code 1 while running: RuntimeError: boom"
        )
        [outcome] = await stage.supervisor.apply({"project:flaky"})
        assert (outcome.action, outcome.status) == ("reloaded", "running")

    fast(scenario())


def test_the_crash_warning_says_when_the_restart_comes(tmp_path: Path) -> None:
    """The first crash is announced with its reason, the backoff and the budget."""

    async def scenario() -> None:
        stage = Stage(tmp_path, crash_budget=CrashBudget(restarts=3, window=300, backoff=0.001))
        stage.add("flaky")
        await stage.supervisor.start_all()
        stage.current("flaky").crash("killed by signal 9 while running")
        await stage.next_event(message("restarted after a crash"))
        texts = [event["data"]["message"] for event in stage.events.history("session.warning")]
        assert (
            "extension project:flaky crashed (killed by signal 9 while running); "
            "restarting it in 0.001 s (restart 1 of 3 within 5 min)"
        ) in texts

    fast(scenario())


def test_a_restart_that_fails_to_join_is_reported_and_not_retried_without_a_crash(tmp_path: Path) -> None:
    """The restarted version fails before joining (not a crash after joining): it stays failed."""

    async def scenario() -> None:
        stage = Stage(tmp_path, crash_budget=CrashBudget(restarts=3, window=60, backoff=0.001))
        stage.add("flaky", Plan("t"))
        await stage.supervisor.start_all()
        stage.plans["flaky"] = Plan(fails="exited with code 2 before joining")
        stage.current("flaky").crash()
        warning = await stage.next_event(message("did not come back"))
        assert warning["data"]["message"] == (
            "extension project:flaky did not come back after a crash: exited with code 2 before joining; "
            "fix it and save, or 'extensions reload flaky'"
        )
        assert stage.current("flaky").status == "failed" and len(stage.built) == 2

    fast(scenario())


def test_stopping_while_a_restart_waits_for_its_backoff_stops_at_once_without_restarting(tmp_path: Path) -> None:
    """A backoff of a minute does not hold up stop_all, and nothing is started after it."""

    async def scenario() -> None:
        stage = Stage(tmp_path, crash_budget=CrashBudget(restarts=3, window=60, backoff=60))
        stage.add("flaky")
        await stage.supervisor.start_all()
        crashed = stage.current("flaky")
        crashed.crash()
        await stage.next_event(message("restarting it in 60 s"))
        await stage.supervisor.stop_all()
        assert len(stage.built) == 1 and crashed.stopped.is_set()
        assert list(stage.supervisor.current()) == []

    fast(scenario())


def test_without_a_crash_budget_a_crashed_extension_stays_failed(tmp_path: Path) -> None:
    """A one-shot host: no restart, and a call to its tool says why it is gone."""

    async def scenario() -> None:
        stage = Stage(tmp_path)
        stage.add("flaky", Plan("t"))
        await stage.supervisor.start_all()
        stage.current("flaky").crash("exited with code 3 while running")
        await stage.next_event(message("failed: exited with code 3"))
        await asyncio.sleep(0)
        assert len(stage.built) == 1 and stage.owner("t") is None
        assert stage.supervisor.unavailable_reason("t") == (
            "tool 't' is unavailable: extension project:flaky failed: exited with code 3 while running"
        )

    fast(scenario())


def test_a_crash_of_a_retired_version_is_no_news(tmp_path: Path) -> None:
    """The old version failing while it drains triggers neither a warning nor a restart."""

    async def scenario() -> None:
        stage = Stage(tmp_path, crash_budget=CrashBudget(restarts=3, window=60, backoff=0.001))
        stage.add("lint")
        await stage.supervisor.start_all()
        old = stage.current("lint")
        with stage.activity.track():
            await stage.supervisor.apply({"project:lint"})
            old.crash()
        await stage.supervisor.drain()
        assert stage.events.history("session.warning") == [] and len(stage.built) == 2

    fast(scenario())


# -- reload storms ----------------------------------------------------------------------------


def test_an_extension_past_its_reload_budget_has_its_watching_paused_until_reloaded_by_name(
    tmp_path: Path,
) -> None:
    """Two watched reloads pass; the third is ignored with a warning; a reload by name resumes."""

    async def scenario() -> None:
        stage = Stage(tmp_path, reload_budget=ReloadBudget(reloads=2, window=60))
        stage.add("writer")
        await stage.supervisor.start_all()
        for _ in range(2):
            assert actions(await stage.supervisor.apply_watched({"project:writer"})) == {"project:writer": "reloaded"}
        assert await stage.supervisor.apply_watched({"project:writer"}) == []
        assert stage.supervisor.paused() == {"project:writer"}
        [warning] = stage.events.history("session.warning")
        assert warning["data"]["message"] == (
            "extension project:writer reloaded 2 times within 60 s (does it write into its own folder?); "
            "its file changes are ignored until 'extensions reload writer'"
        )
        assert await stage.supervisor.apply_watched({"project:writer"}) == []
        assert len(stage.built) == 3
        assert actions(await stage.supervisor.apply({"project:writer"})) == {"project:writer": "reloaded"}
        assert stage.supervisor.paused() == set()
        assert actions(await stage.supervisor.apply_watched({"project:writer"})) == {"project:writer": "reloaded"}

    fast(scenario())


def test_a_paused_extension_whose_folder_is_deleted_is_stopped_and_watched_again_when_put_back(
    tmp_path: Path,
) -> None:
    """Pausing ignores changes, not removal: the next watched batch discovers and stops it, and
    the pause ends with it."""

    async def scenario() -> None:
        stage = Stage(tmp_path, reload_budget=ReloadBudget(reloads=1, window=60))
        stage.add("writer")
        await stage.supervisor.start_all()
        await stage.supervisor.apply_watched({"project:writer"})
        await stage.supervisor.apply_watched({"project:writer"})
        assert stage.supervisor.paused() == {"project:writer"}
        shutil.rmtree(stage.current("writer").spec.folder)
        assert actions(await stage.supervisor.apply_watched({"project:writer"})) == {"project:writer": "stopped"}
        assert stage.supervisor.paused() == set()
        stage.add("writer")  # put back: a new start, watched again
        assert actions(await stage.supervisor.apply_watched({"project:writer"})) == {"project:writer": "started"}
        assert stage.supervisor.paused() == set()

    fast(scenario())


@pytest.mark.parametrize("budget", [None, CrashBudget(restarts=1, window=60, backoff=0.001)])
def test_restart_all_stops_every_instance_and_starts_fresh_ones(tmp_path: Path, budget: CrashBudget | None) -> None:
    """Every old instance is stopped before the new ones start; tools keep their owners."""

    async def scenario() -> None:
        stage = Stage(tmp_path, crash_budget=budget)
        stage.add("alpha", Plan("a"))
        stage.add("beta", Plan("b"))
        await stage.supervisor.start_all()
        old = [stage.current("alpha"), stage.current("beta")]
        stage.plans.update(alpha=Plan("a"), beta=Plan("b"))
        outcomes = await stage.supervisor.restart_all()
        assert actions(outcomes) == {"project:alpha": "started", "project:beta": "started"}
        assert all(instance.stopped.is_set() for instance in old)
        assert stage.owner("a") == "project:alpha" and stage.current("alpha") not in old

    fast(scenario())
