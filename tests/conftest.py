"""Shared fixtures: an isolated project and home per test, no process left behind, and every
event the host makes checked against the session-events schema; and how the suite is split.

How the suite runs (``pyproject.toml``, ``[tool.pytest.ini_options]``):

- ``pytest`` runs every test in parallel worker processes (pytest-xdist, ``-n 4``: most tests
  wait on processes they start, so more workers than the two cores of a small machine pay).
  ``pytest -n 0`` runs them in this process, one by one, for a debugger or ``-s``.
- ``--dist loadgroup``: the tests that share a fixture of module scope run on one worker, so it
  is made once (:func:`pytest_collection_modifyitems` groups them, by value for a parametrized
  one; ``tests/test_worker_groups.py`` checks it); fixtures of session scope
  are made once per worker, except :func:`sdk_cache`, shared by all workers.
- ``pytest -m fast`` is the fast lane (under a minute): every test not marked ``subprocess``,
  ``slow`` or ``real_agent``, i.e. the pure logic, framing, tables, rendering and properties of every
  package. ``pytest -m "not real_agent"`` leaves out only the tiers that run real agent
  programs.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import importlib.util
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest

import extension_host.events
import extension_host.launch.process
import extension_host.runtime.instance
from extension_host.launch.forkserver import ForkServer
from extension_host.launch.node_sdk import NodeUnavailable, ensure_sdk
from extension_host.launch.process import ExtensionProcess, LaunchSpec
from extension_host.launch.process_groups import signal_group
from extension_host.project.paths import CACHE_ENV
from extension_host.project.trust import TRUST_ENV
from extension_host.schemas.event_models import check_event
from helpers import OtherUser, Project, other_user


def _bench_importable() -> None:
    """The bench is the repository's tool, not part of the installed package: its modules are
    made importable on their own (``tests/bench``), never putting the checkout's packages ahead
    of the installed ones."""
    folder = Path(__file__).resolve().parents[1] / "bench"
    spec = importlib.util.spec_from_file_location(
        "bench", folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    if "bench" in sys.modules or spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench"] = module
    spec.loader.exec_module(module)


_bench_importable()

FAST: Final = "fast"
"""The fast lane's marker: given to every test that has none of :data:`SLOW_MARKERS`."""
SLOW_MARKERS: Final = ("subprocess", "slow", "real_agent", "browser")
"""The markers that keep a test out of the fast lane: it starts real processes, or takes a second."""
SHARED_SCOPES: Final = frozenset({"module", "class", "package"})
"""Fixture scopes whose value several tests share: those tests must run on one worker."""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the fast lane, and group each test that uses a fixture of module (class, package)
    scope with the others that use it, so ``--dist loadgroup`` sends them to one worker.

    Runs before the ``-m`` selection and before xdist reads the groups."""
    for item in items:
        if not any(item.get_closest_marker(name) for name in SLOW_MARKERS):
            item.add_marker(FAST)
        group = _shared_fixture_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


def _shared_fixture_group(item: pytest.Item) -> str | None:
    """The file (or package) whose shared fixture ``item`` uses, or ``None`` if it uses none; for
    a parametrized one, with the parameter: each parameter's value is made once, and the tests of
    different values can run side by side on different workers."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    for name, definitions in info.name2fixturedefs.items():
        scope = definitions[-1].scope
        if scope in SHARED_SCOPES:
            path = Path(str(item.path))
            group = str(path.parent if scope == "package" else path)
            callspec = getattr(item, "callspec", None)
            if callspec is not None and name in callspec.indices:
                group += f"::{name}={callspec.indices[name]}"  # no "]" at the end: xdist would not see a group
            return group
    return None


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Project]:
    """An empty project and home; EXTENSION_HOST_HOME points at the home, and the project is
    trusted through EXTENSION_HOST_TRUST_PROJECT (tests of trust itself remove that)."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("EXTENSION_HOST_HOME", str(home))
    monkeypatch.setenv(TRUST_ENV, "1")
    monkeypatch.setenv("EXTENSION_HOST_HOOK_IDLE", "0")  # a hook call starts no background host unless a test asks
    # Control sockets need a short path (AF_UNIX), shorter than pytest's tmp_path can be.
    runtime = tempfile.mkdtemp(prefix="eh-")
    monkeypatch.setenv("EXTENSION_HOST_RUNTIME_DIR", runtime)
    yield Project(root, home)
    shutil.rmtree(runtime, ignore_errors=True)


@pytest.fixture
def another_user() -> OtherUser:
    """Another local user of this machine, for attacks that come from one; the test is skipped,
    with the reason in one line, where this process cannot act as another user."""
    user = other_user()
    if isinstance(user, str):
        pytest.skip(user)
    return user


@pytest.fixture
def reachable_tmp() -> Iterator[Path]:
    """A temporary folder every user of the machine may enter (mode 0755), unlike pytest's own
    (private to this user, which would hide from another user what a test of modes must show):
    what is put in it is kept from other users by its own modes alone."""
    folder = Path(tempfile.mkdtemp(prefix="eh-open-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(autouse=True)
def reap_extension_processes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Record every extension process (and fork server) the host starts and SIGKILL its group
    after the test."""
    spawned: list[int] = []
    real_spawn = extension_host.launch.process.spawn
    real_start = ForkServer._start

    async def recording_spawn(spec: LaunchSpec, fork_server: ForkServer | None = None) -> ExtensionProcess:
        process = await real_spawn(spec, fork_server)
        spawned.append(process.pid)
        return process

    async def recording_start(self: ForkServer) -> int:
        try:
            return await real_start(self)
        finally:
            if self.pid is not None:
                spawned.append(self.pid)

    monkeypatch.setattr(extension_host.runtime.instance, "spawn", recording_spawn)
    monkeypatch.setattr(ForkServer, "_start", recording_start)
    yield spawned
    for pid in spawned:
        signal_group(pid, signal.SIGKILL)


@pytest.fixture(autouse=True)
def events_match_the_schema(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Check every event the host makes in this process against session-events.schema.json's
    models; the test fails if one does not match, or has a type without a model (so a new
    event gets one). A test that makes up events on purpose is marked ``made_up_events``.
    Yields the problems found so far (one line each)."""
    problems: list[str] = []
    if request.node.get_closest_marker("made_up_events"):
        yield problems
        return
    real = extension_host.events.make_event

    def checked_make_event(*args: Any, **kwargs: Any) -> Any:
        event = real(*args, **kwargs)
        problem = check_event(event)
        if problem is not None and problem not in problems:
            problems.append(problem)
        return event

    # Every module that imported make_event by name holds its own reference.
    for name, module in tuple(sys.modules.items()):
        if name.startswith("extension_host") and getattr(module, "make_event", None) is real:
            monkeypatch.setattr(module, "make_event", checked_make_event)
    yield problems
    if problems:
        pytest.fail(
            "events that do not match session-events.schema.json (extension_host/schemas):\n  "
            + "\n  ".join(problems[:10]),
            pytrace=False,
        )


@pytest.fixture(scope="session")
def sdk_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One Copilot SDK install shared by every test of the run that starts JavaScript extensions,
    in every xdist worker: the first worker to need it installs it (the slow part) while the
    others wait on a file lock, so no two installs race over the folder. Where the install
    cannot be made (no npm, offline), the folder is left empty for the tests to say so."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the run's folder, above each worker's own
    cache = shared / "sdk-cache"
    cache.mkdir(exist_ok=True)
    with (shared / "sdk-cache.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with contextlib.suppress(NodeUnavailable):
            asyncio.run(ensure_sdk(cache, os.environ))
    return cache


@pytest.fixture
def use_sdk_cache(sdk_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hosts of this test install the SDK into the session's shared cache folder."""
    monkeypatch.setenv(CACHE_ENV, str(sdk_cache))
