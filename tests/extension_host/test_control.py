"""The control socket: a running host answers list, inspect and reload for the CLI and other clients."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import Project, run, wait_for_event

from extension_host import ExtensionHost, ExtensionHostError, UnknownExtensionError
from extension_host.cli import main
from extension_host.control import ControlServer, connect_to_host, describe_extension
from extension_host.paths import RUNTIME_ENV, control_socket_path
from sdk_extension.framing import encode_message

pytestmark = pytest.mark.subprocess

CALC = """
    from sdk_extension import join_session, tool

    @tool(description="Add two integers")
    def add(a: int, b: int) -> str:
        return str(a + b)

    join_session(tools=[add])
"""


def which(version: str, before_join: str = "") -> str:
    """An extension whose tool ``which`` says which version of it answers."""
    return f"""
    from sdk_extension import join_session, tool

    @tool(description="Say which version answers")
    def which() -> str:
        return "{version}"
    {before_join}
    join_session(tools=[which])
    """


BROKEN = "def which(:\n"

STALE_NOTE = "removed a stale control socket (its host is gone)"


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """EXTENSION_HOST_RUNTIME_DIR points at a folder that does not exist yet, under a short path
    (a socket path must fit in about 104 bytes, and pytest's tmp_path can be long)."""
    with tempfile.TemporaryDirectory(prefix="eh-") as temp:
        folder = Path(temp) / "run"
        monkeypatch.setenv(RUNTIME_ENV, str(folder))
        yield folder


def host_for(project: Project, **options: Any) -> ExtensionHost:
    options.setdefault("stop_grace", 2.0)
    options.setdefault("readiness_timeout", 10.0)
    options.setdefault("watch", False)  # reloads in these tests come from the control socket only
    return ExtensionHost(project.root, project.home, **options)


def cli(project: Project, *args: str) -> int:
    return main(["--root", str(project.root), "--home", str(project.home), *args])


async def cli_in_thread(project: Project, *args: str) -> int:
    """The CLI calls asyncio.run itself, so it runs on a thread beside the test's loop."""
    async with asyncio.timeout(30):
        return await asyncio.to_thread(cli, project, *args)


def lines_of(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines()]


def test_the_socket_is_private_to_its_user_and_removed_when_the_server_closes(
    project: Project, runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runtime folder (and its missing parents) are created 0700, the socket is 0600, and
    close() removes the socket."""
    nested = runtime / "nested"
    monkeypatch.setenv(RUNTIME_ENV, str(nested))

    async def scenario() -> Path:
        async with host_for(project) as host, ControlServer(host) as server:
            assert server.path == control_socket_path(project.root)
            assert server.path.parent == nested
            info = server.path.lstat()
            assert stat.S_ISSOCK(info.st_mode)
            assert stat.S_IMODE(info.st_mode) == 0o600
            assert [stat.S_IMODE(folder.stat().st_mode) for folder in (runtime, nested)] == [0o700, 0o700]
            assert [entry.name for entry in nested.iterdir()] == [server.path.name]
            return server.path

    path = run(scenario())
    assert not path.exists()


def test_list_and_inspect_answer_from_the_running_host(
    project: Project, runtime: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """list and inspect show the running host's extension process, not a freshly started one."""
    project.add_extension("calc", CALC)

    async def scenario() -> None:
        async with host_for(project) as host, ControlServer(host):
            (info,) = host.extensions
            assert info.pid is not None
            note = f"(from the running host, pid {os.getpid()})"

            assert await cli_in_thread(project, "list", "--json") == 0
            out = capsys.readouterr()
            listing = json.loads(out.out)
            assert listing["root"] == str(project.root.resolve())
            assert [(e["id"], e["status"], e["pid"]) for e in listing["extensions"]] == [
                ("project:calc", "running", info.pid)
            ]
            assert note in out.err

            assert await cli_in_thread(project, "list") == 0
            out = capsys.readouterr()
            assert ["project:calc", "running", str(info.pid), "add", "-"] in lines_of(out.out)
            assert note in out.err

            assert await cli_in_thread(project, "inspect", "calc", "--json") == 0
            detail = json.loads(capsys.readouterr().out)
            assert detail == json.loads(json.dumps(describe_extension(host, "calc")))
            assert detail["pid"] == info.pid
            assert detail["tools"][0]["parameters"]["required"] == ["a", "b"]

            assert await cli_in_thread(project, "inspect", "calc") == 0
            text = capsys.readouterr().out
            assert f"pid:     {info.pid}" in text
            assert "add: Add two integers" in text

            assert await cli_in_thread(project, "inspect", "nope") == 1
            assert "no extension named 'nope'; discovered: project:calc" in capsys.readouterr().err

    run(scenario())


def test_reload_name_makes_the_new_code_answer(
    project: Project, runtime: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """After the file is rewritten, reload NAME swaps in the new version and prints reloaded."""
    project.add_extension("which", which("v1"))

    async def scenario() -> None:
        async with host_for(project) as host, ControlServer(host):
            old_pid = host.extension("which").pid
            project.add_extension("which", which("v2"))
            assert await cli_in_thread(project, "reload", "which") == 0
            out = capsys.readouterr()
            assert lines_of(out.out) == [["project:which", "reloaded", "tools:", "which"]]
            assert f"(from the running host, pid {os.getpid()})" in out.err
            assert (await host.call_tool("which")).text_result_for_llm == "v2"
            assert host.extension("which").pid != old_pid

            assert await cli_in_thread(project, "reload", "--json") == 0
            answer = json.loads(capsys.readouterr().out)
            assert answer["root"] == str(project.root.resolve())
            assert answer["host_running"] is True
            assert [(o["extension"], o["action"]) for o in answer["outcomes"]] == [("project:which", "started")]

    run(scenario())


def test_a_reload_with_a_syntax_error_is_kept_and_exits_1_while_the_old_version_answers(
    project: Project, runtime: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The broken version is reported as kept with its error; the running version keeps serving."""
    project.add_extension("which", which("v1"))

    async def scenario() -> None:
        async with host_for(project) as host, ControlServer(host):
            project.add_extension("which", BROKEN)
            assert await cli_in_thread(project, "reload", "which") == 1
            (line,) = capsys.readouterr().out.splitlines()
            assert line.split()[:5] == ["project:which", "kept", "new", "version", "failed,"]
            assert "SyntaxError" in line
            assert (await host.call_tool("which")).text_result_for_llm == "v1"

            assert await cli_in_thread(project, "reload", "which", "--json") == 1
            (outcome,) = json.loads(capsys.readouterr().out)["outcomes"]
            assert (outcome["action"], outcome["status"]) == ("kept", "running")

            assert await cli_in_thread(project, "reload", "nope") == 1
            assert "no extension named 'nope'" in capsys.readouterr().err

    run(scenario())


def test_reload_without_a_host_loads_every_extension_once_and_says_so(
    project: Project, runtime: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With no host running, reload checks each extension: exit 0 when all run, 1 when one fails."""
    project.add_extension("calc", CALC)
    root = project.root.resolve()

    assert cli(project, "reload") == 0
    out = capsys.readouterr()
    assert f"no host is running for {root}; loading every extension once to check it" in out.err
    assert lines_of(out.out) == [["project:calc", "running", "tools:", "add"]]

    project.add_extension("broken", "raise ImportError('no module named yaml')\n")
    assert cli(project, "reload", "--json") == 1
    answer = json.loads(capsys.readouterr().out)
    assert (answer["root"], answer["host_running"]) == (str(root), False)
    assert [(o["extension"], o["action"]) for o in answer["outcomes"]] == [
        ("project:broken", "failed"),
        ("project:calc", "started"),
    ]

    assert cli(project, "reload", "calc") == 0
    assert lines_of(capsys.readouterr().out) == [["project:calc", "running", "tools:", "add"]]


def leave_stale_socket(path: Path) -> None:
    """What a killed host leaves: a socket file that was bound but nobody listens on any more."""
    path.parent.mkdir(mode=0o700, exist_ok=True)
    leftover = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    leftover.bind(str(path))
    leftover.close()
    assert stat.S_ISSOCK(path.lstat().st_mode)


def test_a_stale_socket_is_removed_and_reported_and_the_command_still_works(
    project: Project, runtime: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """reload and list remove a socket nobody listens on, say so, and go on as with no host."""
    project.add_extension("calc", CALC)
    path = control_socket_path(project.root)

    leave_stale_socket(path)
    assert cli(project, "reload") == 0
    out = capsys.readouterr()
    assert out.err.splitlines()[:2] == [
        STALE_NOTE,
        f"no host is running for {project.root.resolve()}; loading every extension once to check it",
    ]
    assert lines_of(out.out) == [["project:calc", "running", "tools:", "add"]]
    assert not path.exists()

    leave_stale_socket(path)
    assert cli(project, "list", "--json") == 0
    out = capsys.readouterr()
    assert STALE_NOTE in out.err
    assert json.loads(out.out)["extensions"][0]["status"] == "running"
    assert not path.exists()

    assert cli(project, "list") == 0
    assert STALE_NOTE not in capsys.readouterr().err


def test_connect_to_host_removes_a_stale_file_and_the_server_starts_over_one(
    project: Project, runtime: Path
) -> None:
    """A file that is not a socket counts as stale too; a new server replaces a stale socket."""
    path = control_socket_path(project.root)
    runtime.mkdir(mode=0o700)
    path.write_text("not a socket")
    removed: list[Path] = []

    async def scenario() -> None:
        assert await connect_to_host(project.root, on_stale=removed.append) is None
        assert removed == [path] and not path.exists()
        assert await connect_to_host(project.root, on_stale=removed.append) is None
        assert removed == [path]  # nothing there: no socket, nothing stale

        leave_stale_socket(path)
        async with host_for(project) as host, ControlServer(host):
            client = await connect_to_host(project.root)
            assert client is not None
            try:
                assert client.status == {
                    "root": str(project.root.resolve()),
                    "pid": os.getpid(),
                    "sessionId": host.session_id,
                }
            finally:
                await client.close()

    run(scenario())


def test_a_second_server_for_the_same_root_refuses_to_start_and_names_the_pid(
    project: Project, runtime: Path
) -> None:
    """While one host answers, another ControlServer for the root raises; the first keeps answering."""

    async def scenario() -> None:
        async with host_for(project) as host, ControlServer(host) as first:
            second = ControlServer(host_for(project))
            with pytest.raises(ExtensionHostError, match=rf"already running for .* \(pid {os.getpid()}\); stop it first"):
                await second.start()
            assert first.path.exists()
            client = await connect_to_host(project.root)
            assert client is not None
            try:
                assert client.pid == os.getpid()
            finally:
                await client.close()

    run(scenario())


def test_closing_the_server_ends_the_connections_of_its_clients(project: Project, runtime: Path) -> None:
    """close() returns while a client is still connected, and that client's next request fails clearly."""

    async def scenario() -> None:
        async with host_for(project) as host:
            server = ControlServer(host)
            await server.start()
            client = await connect_to_host(project.root)
            assert client is not None
            try:
                async with asyncio.timeout(10):
                    await server.close()
                assert not server.path.exists()
                with pytest.raises(ExtensionHostError, match="closed the control connection during host.status"):
                    await client.request("host.status")
            finally:
                await client.close()
            assert await connect_to_host(project.root) is None

    run(scenario())


def test_a_client_that_breaks_framing_is_dropped_and_the_next_one_is_served(project: Project, runtime: Path) -> None:
    """Bytes that are not a frame end that client's connection only."""

    async def scenario() -> None:
        async with host_for(project) as host, ControlServer(host) as server:
            reader, writer = await asyncio.open_unix_connection(str(server.path))
            writer.write(b"Content-Length: nope\r\n\r\n")
            async with asyncio.timeout(10):
                assert await reader.read() == b""
            writer.close()
            await writer.wait_closed()
            client = await connect_to_host(project.root)
            assert client is not None
            await client.close()

    run(scenario())


def test_unknown_extensions_and_bad_params_get_named_errors(project: Project, runtime: Path) -> None:
    """inspect or reload of an unknown name raises UnknownExtensionError; bad params say what is expected."""
    project.add_extension("calc", CALC)

    async def scenario() -> None:
        async with host_for(project) as host, ControlServer(host):
            client = await connect_to_host(project.root)
            assert client is not None
            try:
                for method in ("host.inspect", "host.reload"):
                    with pytest.raises(UnknownExtensionError, match="no extension named 'nope'; discovered: project:calc"):
                        await client.request(method, {"name": "nope"})
                with pytest.raises(ExtensionHostError, match=r'host.inspect takes \{"name"'):
                    await client.request("host.inspect", {})
                with pytest.raises(ExtensionHostError, match="method not found"):
                    await client.request("host.shutdown")
                assert (await client.request("host.list"))["extensions"][0]["id"] == "project:calc"
            finally:
                await client.close()

    run(scenario())


def test_a_client_that_disconnects_mid_reload_does_not_disturb_the_host(project: Project, runtime: Path) -> None:
    """The reload it asked for finishes, and other clients are served meanwhile and after."""
    gate_path = runtime.parent / "gate.sock"
    project.add_extension("which", which("v1"))

    async def scenario() -> None:
        arrived, released = asyncio.Event(), asyncio.Event()

        async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            arrived.set()
            await released.wait()
            writer.close()

        gate = await asyncio.start_unix_server(hold, path=str(gate_path))
        try:
            async with host_for(project) as host, ControlServer(host) as server:
                old_pid = host.extension("which").pid
                # The new version waits at the gate before it joins, so the reload is surely under way.
                wait_at_gate = f"import socket; s = socket.socket(socket.AF_UNIX); s.connect({str(gate_path)!r}); s.recv(1)"
                project.add_extension("which", which("v2", wait_at_gate))
                reader, writer = await asyncio.open_unix_connection(str(server.path))
                request = {"jsonrpc": "2.0", "id": 1, "method": "host.reload", "params": {"name": "which"}}
                writer.write(encode_message(request))
                await writer.drain()
                async with asyncio.timeout(10):
                    await arrived.wait()
                writer.close()
                await writer.wait_closed()

                client = await connect_to_host(project.root)
                assert client is not None
                try:
                    listing = await client.request("host.list")
                    assert listing["extensions"][0]["pid"] == old_pid  # still v1: the reload waits
                    released.set()
                    await wait_for_event(host, lambda e: _changed(e, "project:which", "reloaded"))
                    assert (await host.call_tool("which")).text_result_for_llm == "v2"
                    listing = await client.request("host.list")
                    assert listing["extensions"][0]["pid"] == host.extension("which").pid != old_pid
                finally:
                    await client.close()
        finally:
            released.set()
            gate.close()
            await gate.wait_closed()

    run(scenario())


def _changed(event: Any, extension: str, action: str) -> bool:
    changes = event["data"].get("changes", []) if event["type"] == "session.extensions_loaded" else []
    return any(c["extension"] == extension and c["action"] == action for c in changes)
