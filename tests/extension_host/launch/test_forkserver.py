"""The fork server: forked extensions are the same processes as spawned ones, and failures fall back."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import extension_host.launch.forkserver
from extension_host import Timeouts
from extension_host.launch.forkserver import FORK_SERVER_ENV, ForkServer, fork_server_supported, fork_server_wanted
from helpers import Project, assert_orphan_exits_when_host_is_killed, run, wait_for_event, wait_for_exit

pytestmark = pytest.mark.subprocess

INTROSPECT = """
    import os, sys
    from sdk_extension import join_session, tool

    print("printed at import")

    @tool(description="What this process looks like")
    def describe() -> dict:
        return {
            "pid": os.getpid(),
            "session_leader": os.getsid(0) == os.getpid(),
            "group_leader": os.getpgid(0) == os.getpid(),
            "cwd": os.getcwd(),
            "argv": sys.argv,
            "path0": sys.path[0],
            "main": __name__,
            "extension_id": os.environ.get("EXTENSION_ID"),
            "session_id": os.environ.get("SESSION_ID"),
            "parent_pid": os.environ.get("EXTENSION_HOST_PARENT_PID"),
            "marker": os.environ.get("FORK_TEST_MARKER"),
        }

    join_session(tools=[describe])
"""


def _parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[1])


def _command_line(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


@pytest.mark.parametrize("fork_server", [True, False], ids=["forked", "spawned"])
def test_an_extension_sees_the_same_process_setup_whether_forked_or_spawned(
    project: Project, fork_server: bool
) -> None:
    folder = project.add_extension("probe", INTROSPECT)

    async def scenario() -> None:
        environment = {**os.environ, "FORK_TEST_MARKER": "from-the-host"}
        async with project.host(environment=environment, fork_server=fork_server) as host:
            result = await host.call_tool("describe")
            assert result.result_type == "success", result.text_result_for_llm
            seen = json.loads(result.text_result_for_llm)
            info = host.extension("probe")
            assert seen["pid"] == info.pid
            assert seen["session_leader"] and seen["group_leader"]
            assert seen["cwd"] == str(project.root)
            assert seen["argv"] == [str(folder / "extension.py")]
            assert seen["path0"] == str(folder)
            assert seen["main"] == "__main__"
            assert seen["extension_id"] == info.id
            assert seen["session_id"] == host.session_id
            assert seen["parent_pid"] == str(os.getpid())
            assert seen["marker"] == "from-the-host"
            assert info.pid is not None and info.log_path is not None
            parent = _parent_of(info.pid)
            if fork_server:
                assert parent != os.getpid()
                assert "sdk_extension._forkserver" in _command_line(parent)
            else:
                assert parent == os.getpid()
        assert "printed at import" in info.log_path.read_text()

    run(scenario())


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        ("raise SystemExit(3)", "exited with code 3 before joining"),
        ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", "exited with code -9 before joining"),
        ("raise ValueError('broken on purpose')", "ValueError: broken on purpose"),
    ],
    ids=["exit-code", "signal", "exception"],
)
def test_a_forked_extension_that_ends_early_fails_with_its_exit_code_and_reason(
    project: Project, code: str, reason: str
) -> None:
    project.add_extension("early", code + "\n")

    async def scenario() -> None:
        async with project.host() as host:
            info = host.extension("early")
            assert info.status == "failed"
            assert reason in (info.error or "")

    run(scenario())


def test_a_forked_extension_exits_cleanly_on_end_of_stream_and_the_server_stops_with_the_host(
    project: Project,
) -> None:
    project.add_extension("probe", INTROSPECT)

    async def scenario() -> tuple[int, int]:
        host = project.host(timeouts=Timeouts(stop_grace=10))
        await host.start()
        try:
            pid = host.extension("probe").pid
            assert pid is not None
            server = _parent_of(pid)
            instance = next(iter(host._supervisor.current()))
            assert instance.process is not None and instance.process.forked
        finally:
            await host.stop()
        # Stopped at the first step of the ladder (end of stream): exit code 0, no signal.
        assert instance.process.returncode == 0
        return pid, server

    pid, server = run(scenario())
    assert wait_for_exit(pid, timeout=5)
    assert wait_for_exit(server, timeout=5), "the fork server outlived its host"


def test_when_the_fork_server_dies_its_extensions_keep_running_and_a_reload_forks_from_a_new_one(
    project: Project,
) -> None:
    project.add_extension("probe", INTROSPECT)

    async def scenario() -> None:
        async with project.host(watch=False) as host:
            first = host.extension("probe").pid
            assert first is not None
            server = _parent_of(first)
            os.kill(server, signal.SIGKILL)
            assert wait_for_exit(server, timeout=10)
            assert host.extension("probe").status == "running"
            seen = json.loads((await host.call_tool("describe")).text_result_for_llm)
            assert seen["pid"] == first and _parent_of(first) != server
            await host.reload("probe")
            info = host.extension("probe")
            assert info.status == "running" and info.pid != first
            assert await asyncio.to_thread(wait_for_exit, first, 10)  # the loop stops it meanwhile
            new_server = _parent_of(info.pid or 0)
            assert new_server != server and "sdk_extension._forkserver" in _command_line(new_server)
            result = await host.call_tool("describe")
            assert result.result_type == "success"

    run(scenario())


def test_without_pidfds_an_extension_that_exits_after_its_server_died_is_found_by_polling(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.add_extension("probe", INTROSPECT)

    monkeypatch.setattr(extension_host.launch.forkserver, "_pidfd_open", None)
    monkeypatch.setattr(extension_host.launch.forkserver, "ORPHAN_POLL_SECONDS", 0.05)

    async def scenario() -> None:
        async with project.host(watch=False) as host:
            pid = host.extension("probe").pid
            assert pid is not None
            server = _parent_of(pid)
            os.kill(server, signal.SIGKILL)
            assert await asyncio.to_thread(wait_for_exit, server, 10)
            assert (await host.call_tool("describe")).result_type == "success"
            os.kill(pid, signal.SIGKILL)
            event = await wait_for_event(host, lambda e: e["type"] == "session.warning", timeout=15)
            assert "exited with an unknown exit code" in event["data"]["message"]
            assert host.extension("probe").status == "failed"

    run(scenario())


def test_the_host_starts_extensions_itself_when_the_fork_server_cannot_start(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.add_extension("probe", INTROSPECT)

    async def broken_start(self: ForkServer) -> int:
        raise OSError("no fork server today")

    monkeypatch.setattr(ForkServer, "_start", broken_start)

    async def scenario() -> None:
        async with project.host() as host:
            info = host.extension("probe")
            assert info.status == "running"
            assert _parent_of(info.pid or 0) == os.getpid()
            assert host._fork_server is not None
            assert "no fork server today" in (host._fork_server.failure or "")

    run(scenario())


def test_a_fork_server_that_stops_answering_is_killed_and_the_extension_starts_without_it(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.add_extension("probe", INTROSPECT)
    monkeypatch.setattr(extension_host.launch.forkserver, "REQUEST_TIMEOUT", 1.0)

    async def scenario() -> None:
        async with project.host(watch=False) as host:
            server = _parent_of(host.extension("probe").pid or 0)
            os.kill(server, signal.SIGSTOP)
            outcome = await host.reload("probe")
            assert [change.action for change in outcome] == ["reloaded"]
            info = host.extension("probe")
            assert info.status == "running"
            assert _parent_of(info.pid or 0) == os.getpid()
            assert "nothing within 1 s" in (host._fork_server.failure or "")  # type: ignore[union-attr]
            assert wait_for_exit(server, timeout=10), "the stuck fork server was left running"

    run(scenario())


def test_setting_extension_host_fork_server_to_0_starts_a_new_interpreter_per_extension(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.add_extension("probe", INTROSPECT)
    monkeypatch.setenv("EXTENSION_HOST_FORK_SERVER", "0")

    async def scenario() -> None:
        async with project.host() as host:
            assert _parent_of(host.extension("probe").pid or 0) == os.getpid()

    run(scenario())


def test_a_spawned_extension_still_exits_when_its_host_dies(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    project.add_extension("never", "import time\ntime.sleep(600)\n")
    monkeypatch.setenv("EXTENSION_HOST_FORK_SERVER", "0")
    assert_orphan_exits_when_host_is_killed(project, "project:never")


def test_the_server_refuses_a_request_without_three_streams_and_exits_when_the_host_goes() -> None:
    host_end, server_end = socket.socketpair()
    read_fd, write_fd = os.pipe()
    server = subprocess.Popen(
        [sys.executable, "-P", "-m", "sdk_extension._forkserver", str(server_end.fileno()), str(write_fd)],
        pass_fds=(server_end.fileno(), write_fd),
        stdin=subprocess.DEVNULL,
    )
    server_end.close()
    os.close(write_fd)
    replies = os.fdopen(read_fd, "rb")
    try:
        assert json.loads(replies.readline()) == {"ready": server.pid}
        body = json.dumps({"id": 7, "path": "/nowhere.py", "cwd": "/", "env": {}, "parent": server.pid}).encode()
        with open(os.devnull, "rb") as only_one:
            socket.send_fds(host_end, [len(body).to_bytes(4, "big")], [only_one.fileno()])
        host_end.sendall(body)
        assert json.loads(replies.readline()) == {"id": 7, "error": "expected 3 descriptors, got 1"}
        host_end.close()
        assert server.wait(timeout=15) == 0
    finally:
        server.kill()
        server.wait()
        host_end.close()
        replies.close()


def test_a_fork_server_given_sigterm_ends_what_it_has_and_exits_cleanly(tmp_path: Path) -> None:
    async def scenario() -> int:
        server = ForkServer(os.environ, tmp_path / "forkserver.log")
        pid = await server._running()
        process = server._process
        assert process is not None
        os.kill(pid, signal.SIGTERM)
        try:
            async with asyncio.timeout(15):
                return await process.wait()
        finally:
            await server.stop(0)

    assert run(scenario()) == 0  # its own exit, after ending its children: not killed by the signal


def test_a_fork_server_is_wanted_where_the_platform_can_fork_unless_the_switch_is_zero() -> None:
    assert fork_server_wanted({}) is fork_server_supported()
    assert fork_server_wanted({FORK_SERVER_ENV: "1"}) is fork_server_supported()
    assert fork_server_wanted({FORK_SERVER_ENV: "0"}) is False


PRELOAD_PROBE = """
import os, sys
with open(os.environ["PROBE_OUT"], "w") as out:
    out.write("loaded" if "extension_protocol.hook_points" in sys.modules else "not loaded")
"""


def test_a_one_shot_fork_server_skips_the_idle_preload_that_a_long_running_one_does(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(PRELOAD_PROBE, encoding="utf-8")

    async def fork_probe(server: ForkServer, out: Path) -> str:
        with open(os.devnull, "rb") as stdin, open(os.devnull, "wb") as stdout, open(os.devnull, "wb") as stderr:
            child = await server.spawn(
                probe,
                tmp_path,
                {**os.environ, "PROBE_OUT": str(out)},
                (stdin.fileno(), stdout.fileno(), stderr.fileno()),
            )
        assert await child.wait() == 0
        return out.read_text(encoding="utf-8")

    async def scenario() -> tuple[list[str], str]:
        lasting = ForkServer(os.environ, tmp_path / "lasting.log")
        one_shot = ForkServer(os.environ, tmp_path / "one-shot.log", one_shot=True)
        try:
            # Each has forked once, so each would preload once idle; the long-running one's
            # children show when it has.
            seen = [await fork_probe(lasting, tmp_path / "lasting-0"), await fork_probe(one_shot, tmp_path / "once-0")]
            async with asyncio.timeout(15):
                while seen[-1] != "loaded":
                    await asyncio.sleep(0.05)
                    seen.append(await fork_probe(lasting, tmp_path / f"lasting-{len(seen)}"))
            return seen, await fork_probe(one_shot, tmp_path / "once-1")
        finally:
            await lasting.stop(1)
            await one_shot.stop(1)

    seen, one_shot_later = run(scenario())
    assert seen[0] == "not loaded" and seen[1] == "not loaded"  # nothing preloaded before the first fork
    assert one_shot_later == "not loaded"
