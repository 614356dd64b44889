"""A one-shot command's own host: its fork server boots while the host is imported, and goes with it."""

from __future__ import annotations

import gc

import pytest

from extension_host.host import ExtensionHost
from extension_host.launch.forkserver import FORK_SERVER_ENV
from helpers import CALC, Project, wait_for_exit

pytestmark = pytest.mark.subprocess


def test_list_starts_the_fork_server_before_the_host_and_stops_both(
    project: Project,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    reap_extension_processes: list[int],
) -> None:
    """The host gets a fork server that is already running, forks the extension from it, and
    nothing of either is left once the command has returned."""
    project.add_extension("calc", CALC)
    under_way: list[bool] = []
    real_start = ExtensionHost.start

    async def start(host: ExtensionHost) -> None:
        server = host._fork_server
        assert server is not None and not host._runtime._owns_fork_server  # the command's, not its own
        under_way.append(server.pid is not None or server._lock.locked())  # running, or its start under way
        await real_start(host)

    monkeypatch.setattr(ExtensionHost, "start", start)
    assert project.cli("list") == 0
    assert "project:calc  running" in capsys.readouterr().out
    assert under_way == [True], "the fork server was not started before the host"
    assert len(reap_extension_processes) == 2  # the fork server and the extension it forked
    for pid in reap_extension_processes:
        assert wait_for_exit(pid, 15)


@pytest.mark.parametrize("setup", ["no extension", "fork server off"])
def test_a_one_shot_command_with_nothing_to_fork_starts_no_fork_server(
    setup: str,
    project: Project,
    monkeypatch: pytest.MonkeyPatch,
    reap_extension_processes: list[int],
) -> None:
    if setup == "fork server off":
        project.add_extension("calc", CALC)
        monkeypatch.setenv(FORK_SERVER_ENV, "0")
    assert project.cli("list") == 0
    assert len(reap_extension_processes) == (1 if setup == "fork server off" else 0)  # the extension alone


def test_a_one_shot_host_starts_without_collections_and_its_command_leaves_the_collector_as_it_was(
    project: Project,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    reap_extension_processes: list[int],
) -> None:
    """Off while the host starts; on again, with what the start made frozen, while the command
    runs; afterwards on and nothing frozen, as before the command."""
    project.add_extension("calc", CALC)
    seen: dict[str, object] = {}
    real_start, real_stop = ExtensionHost.start, ExtensionHost.stop

    async def start(host: ExtensionHost) -> None:
        seen["starting"] = gc.isenabled()
        await real_start(host)

    async def stop(host: ExtensionHost) -> None:
        seen["running"] = (gc.isenabled(), gc.get_freeze_count() > 0)
        await real_stop(host)

    monkeypatch.setattr(ExtensionHost, "start", start)
    monkeypatch.setattr(ExtensionHost, "stop", stop)
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert project.cli("list") == 0
    assert "project:calc  running" in capsys.readouterr().out
    assert seen == {"starting": False, "running": (True, True)}
    assert gc.isenabled() and gc.get_freeze_count() == 0
    for pid in reap_extension_processes:
        assert wait_for_exit(pid, 15)
