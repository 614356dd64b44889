"""The control socket: a running host answers list, inspect and reload for the CLI and other clients."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import select
import signal
import socket
import stat
import tempfile
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

import pytest

from extension_host import ExtensionHostError, Timeouts, UnknownExtensionError
from extension_host.control import private_socket
from extension_host.control import service as control
from extension_host.control.methods import CONTROL_METHODS
from extension_host.control.private_socket import peer_uid
from extension_host.control.service import (
    MAX_CLIENTS,
    MAX_CONTROL_MESSAGE_BYTES,
    ControlServer,
    connect_to_host,
    describe_extension,
)
from extension_host.project.paths import RUNTIME_ENV, control_socket_path
from extension_host.runtime.budget import CrashBudget
from extension_protocol.framing import MAX_DEPTH, encode_message, read_message
from extension_protocol.protocol import PARSE_ERROR, TOO_MANY_CONNECTIONS
from helpers import CALC, Project, run, wait_for_event, wait_for_exit

pytestmark = pytest.mark.subprocess


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


TIMEOUTS: Final = Timeouts(stop_grace=2.0, readiness=10.0)
"""The timeouts of these tests' hosts (which watch no folders: reloads come from the control
socket only)."""


def lines_of(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines()]


STATUS_REQUEST = encode_message({"jsonrpc": "2.0", "id": 1, "method": "host.status"})


def parse_error(message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": message}}


async def answers_until_closed(reader: asyncio.StreamReader) -> list[dict[str, Any]]:
    """Every message read until the other side closes the connection (bounded)."""
    answers: list[dict[str, Any]] = []
    async with asyncio.timeout(10):
        try:
            while (answer := await read_message(reader)) is not None:
                answers.append(answer)
        except ConnectionResetError:
            pass  # closed with our bytes unread: what it said before that still counts
    return answers


async def ask_status(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> dict[str, Any] | None:
    """host.status over a raw connection: the answer, or None if the connection closed instead."""
    writer.write(STATUS_REQUEST)
    await writer.drain()
    async with asyncio.timeout(10):
        return await read_message(reader)


@contextlib.contextmanager
def loop_errors() -> Iterator[list[dict[str, Any]]]:
    """What reaches the running loop's exception handler (tracebacks a user would see) meanwhile."""
    loop = asyncio.get_running_loop()
    seen: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: seen.append(context))
    try:
        yield seen
    finally:
        loop.set_exception_handler(None)


def test_the_server_answers_exactly_the_methods_of_the_table(project: Project) -> None:
    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS, watch=False) as host:
            assert list(ControlServer(host)._handlers) == list(CONTROL_METHODS)

    run(scenario())


def test_the_socket_is_private_to_its_user_and_removed_when_the_server_closes(
    project: Project, runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runtime folder (and its missing parents) are created 0700, the socket is 0600, and
    close() removes the socket."""
    nested = runtime / "nested"
    monkeypatch.setenv(RUNTIME_ENV, str(nested))

    async def scenario() -> Path:
        async with project.host(timeouts=TIMEOUTS, watch=False) as host, ControlServer(host) as server:
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
        async with project.host(timeouts=TIMEOUTS, watch=False) as host, ControlServer(host):
            (info,) = host.extensions
            assert info.pid is not None
            note = f"(from the running host, pid {os.getpid()})"

            assert await project.cli_in_thread("list", "--json") == 0
            out = capsys.readouterr()
            listing = json.loads(out.out)
            assert listing["root"] == str(project.root.resolve())
            assert [(e["id"], e["status"], e["pid"]) for e in listing["extensions"]] == [
                ("project:calc", "running", info.pid)
            ]
            assert note in out.err

            assert await project.cli_in_thread("list") == 0
            out = capsys.readouterr()
            assert ["project:calc", "running", str(info.pid), "add", "-"] in lines_of(out.out)
            assert note in out.err

            assert await project.cli_in_thread("inspect", "calc", "--json") == 0
            detail = json.loads(capsys.readouterr().out)
            assert detail == json.loads(json.dumps(describe_extension(host, "calc")))
            assert detail["pid"] == info.pid
            assert detail["tools"][0]["parameters"]["required"] == ["a", "b"]

            assert await project.cli_in_thread("inspect", "calc") == 0
            text = capsys.readouterr().out
            assert f"pid:     {info.pid}" in text
            assert "add: Add two integers" in text

            assert await project.cli_in_thread("inspect", "nope") == 1
            assert "no extension named 'nope'; discovered: project:calc" in capsys.readouterr().err

    run(scenario())


def test_reload_name_makes_the_new_code_answer(
    project: Project, runtime: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """After the file is rewritten, reload NAME swaps in the new version and prints reloaded."""
    project.add_extension("which", which("v1"))

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS, watch=False) as host, ControlServer(host):
            old_pid = host.extension("which").pid
            project.add_extension("which", which("v2"))
            assert await project.cli_in_thread("reload", "which") == 0
            out = capsys.readouterr()
            assert lines_of(out.out) == [["project:which", "reloaded", "tools:", "which"]]
            assert f"(from the running host, pid {os.getpid()})" in out.err
            assert (await host.call_tool("which")).text_result_for_llm == "v2"
            assert host.extension("which").pid != old_pid

            assert await project.cli_in_thread("reload", "--json") == 0
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
        async with project.host(timeouts=TIMEOUTS, watch=False) as host, ControlServer(host):
            project.add_extension("which", BROKEN)
            assert await project.cli_in_thread("reload", "which") == 1
            line, *excerpt = capsys.readouterr().out.splitlines()
            assert line.split()[:5] == ["project:which", "kept", "new", "version", "failed,"]
            assert "SyntaxError" in line and "at extension.py:1:" in line
            assert excerpt[0].split() == ["def", "which(:"] and excerpt[1].strip().startswith("^")
            assert all(part.startswith("   ") for part in excerpt)  # in the NOTE column, under the row
            assert (await host.call_tool("which")).text_result_for_llm == "v1"

            assert await project.cli_in_thread("reload", "which", "--json") == 1
            (outcome,) = json.loads(capsys.readouterr().out)["outcomes"]
            assert (outcome["action"], outcome["status"]) == ("kept", "running")

            assert await project.cli_in_thread("reload", "nope") == 1
            assert "no extension named 'nope'" in capsys.readouterr().err

    run(scenario())


def test_reload_without_a_host_loads_every_extension_once_and_says_so(
    project: Project, runtime: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With no host running, reload checks each extension: exit 0 when all run, 1 when one fails."""
    project.add_extension("calc", CALC)
    root = project.root.resolve()

    assert project.cli("reload") == 0
    out = capsys.readouterr()
    assert f"no host is running for {root}; loading every extension once to check it" in out.err
    assert lines_of(out.out) == [["project:calc", "running", "tools:", "add"]]

    project.add_extension("broken", "raise ImportError('no module named yaml')\n")
    assert project.cli("reload", "--json") == 1
    answer = json.loads(capsys.readouterr().out)
    assert (answer["root"], answer["host_running"]) == (str(root), False)
    assert [(o["extension"], o["action"]) for o in answer["outcomes"]] == [
        ("project:broken", "failed"),
        ("project:calc", "started"),
    ]

    assert project.cli("reload", "calc") == 0
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
    assert project.cli("reload") == 0
    out = capsys.readouterr()
    assert out.err.splitlines()[:2] == [
        STALE_NOTE,
        f"no host is running for {project.root.resolve()}; loading every extension once to check it",
    ]
    assert lines_of(out.out) == [["project:calc", "running", "tools:", "add"]]
    assert not path.exists()

    leave_stale_socket(path)
    assert project.cli("list", "--json") == 0
    out = capsys.readouterr()
    assert STALE_NOTE in out.err
    assert json.loads(out.out)["extensions"][0]["status"] == "running"
    assert not path.exists()

    assert project.cli("list") == 0
    assert STALE_NOTE not in capsys.readouterr().err


def test_connect_to_host_removes_a_stale_file_and_the_server_starts_over_one(project: Project, runtime: Path) -> None:
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
        async with project.host(timeouts=TIMEOUTS, watch=False) as host, ControlServer(host):
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


def test_a_second_server_for_the_same_root_refuses_to_start_and_names_the_pid(project: Project, runtime: Path) -> None:
    """While one host answers, another ControlServer for the root raises; the first keeps answering."""

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS, watch=False) as host, ControlServer(host) as first:
            second = ControlServer(project.host(timeouts=TIMEOUTS, watch=False))
            with pytest.raises(
                ExtensionHostError, match=rf"already running for .* \(pid {os.getpid()}\); stop it first"
            ):
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
        async with project.host(timeouts=TIMEOUTS, watch=False) as host:
            server = ControlServer(host)
            await server.start()
            client = await connect_to_host(project.root)
            assert client is not None
            try:
                async with asyncio.timeout(10):
                    await server.close()
                assert not server.path.exists()
                with pytest.raises(ExtensionHostError, match=r"closed the control connection during host\.status"):
                    await client.request("host.status")
            finally:
                await client.close()
            assert await connect_to_host(project.root) is None

    run(scenario())


def test_a_client_that_breaks_framing_is_told_so_and_dropped_and_the_next_one_is_served(
    project: Project, runtime: Path
) -> None:
    """Bytes that are not a frame get one parse error, then end that client's connection only."""

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS, watch=False) as host, ControlServer(host) as server:
            reader, writer = await asyncio.open_unix_connection(str(server.path))
            writer.write(b"Content-Length: nope\r\n\r\n")
            assert await answers_until_closed(reader) == [parse_error("Content-Length is not a number: 'nope'")]
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
        async with project.host(timeouts=TIMEOUTS, watch=False) as host, ControlServer(host):
            client = await connect_to_host(project.root)
            assert client is not None
            try:
                for method in ("host.inspect", "host.reload"):
                    with pytest.raises(
                        UnknownExtensionError, match="no extension named 'nope'; discovered: project:calc"
                    ):
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
            async with project.host(timeouts=TIMEOUTS, watch=False) as host, ControlServer(host) as server:
                old_pid = host.extension("which").pid
                # The new version waits at the gate before it joins, so the reload is surely under way.
                wait_at_gate = (
                    f"import socket; s = socket.socket(socket.AF_UNIX); s.connect({str(gate_path)!r}); s.recv(1)"
                )
                project.add_extension("which", which("v2", wait_at_gate))
                _reader, writer = await asyncio.open_unix_connection(str(server.path))
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


# -- who may use the socket ----------------------------------------------------------------

OTHER_UID = 4242
"""A uid nobody on the test machine has: the owner of folders that are not the user's."""

STRANGER_UID = 65534
"""``nobody``: the user a real process of someone else runs as (when the tests run as root)."""

IS_ROOT = os.geteuid() == 0


def belong_to_someone_else(path: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """Make ``path`` another user's; return that user's uid.

    As root (CI) the folder is really given away. Otherwise the code under test is made to
    believe it runs as another user, which is all it can tell apart."""
    if IS_ROOT:
        os.chown(path, OTHER_UID, OTHER_UID)
        return OTHER_UID
    owner = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: owner + 1)
    return owner


async def refused_by_server_and_client(project: Project, match: str) -> None:
    """ControlServer.start and connect_to_host both raise ExtensionHostError matching ``match``."""
    async with project.host(timeouts=TIMEOUTS, watch=False) as host:
        with pytest.raises(ExtensionHostError, match=match):
            await ControlServer(host).start()
    with pytest.raises(ExtensionHostError, match=match):
        await connect_to_host(project.root)


def test_a_runtime_folder_of_another_user_is_refused_by_the_server_and_the_client(
    project: Project, runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whoever owns the folder could answer in place of the host: neither side uses it, and it is left as it is."""
    runtime.mkdir(mode=0o700)
    owner = belong_to_someone_else(runtime, monkeypatch)
    before = runtime.lstat()

    refused = rf"{runtime} belongs to uid {owner}, not you .*; remove it, or set {RUNTIME_ENV}"
    run(refused_by_server_and_client(project, refused))
    after = runtime.lstat()
    assert (after.st_uid, after.st_mode) == (before.st_uid, before.st_mode)
    assert list(runtime.iterdir()) == []


@pytest.mark.parametrize("mode", [0o777, 0o755])
def test_a_runtime_folder_others_can_reach_is_refused_and_its_mode_left_as_it_was(
    project: Project, runtime: Path, mode: int
) -> None:
    """The message says the mode and how to fix it; nothing is chmod-ed, nothing created in it."""
    runtime.mkdir()
    runtime.chmod(mode)

    run(refused_by_server_and_client(project, rf"{runtime} has mode {mode:04o}, not 0700.*run `chmod 700 {runtime}`"))
    assert stat.S_IMODE(runtime.stat().st_mode) == mode
    assert list(runtime.iterdir()) == []


def test_a_symbolic_link_in_place_of_the_runtime_folder_is_refused(project: Project, runtime: Path) -> None:
    """Even to a private folder of the user's: the link could be changed to point elsewhere."""
    target = runtime.parent / "elsewhere"
    target.mkdir(mode=0o700)
    runtime.symlink_to(target)

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS, watch=False) as host:
            with pytest.raises(ExtensionHostError, match=rf"{runtime} is a symbolic link, not a folder"):
                await ControlServer(host, runtime / "host.sock").start()

    run(scenario())
    assert list(target.iterdir()) == []


def test_a_runtime_folder_in_a_parent_others_may_write_is_refused_unless_it_is_sticky(
    project: Project, runtime: Path
) -> None:
    """Without the sticky bit others could rename the folder away and put theirs in its place;
    with it (like /tmp) the folder is safe and the server starts."""
    runtime.mkdir(mode=0o700)
    parent = runtime.parent
    parent.chmod(0o777)

    refused = rf"{runtime} is in {parent}, which others may write to \(mode 0777, no sticky bit\)"
    run(refused_by_server_and_client(project, refused))
    assert stat.S_IMODE(parent.stat().st_mode) == 0o777

    parent.chmod(0o1777)

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS, watch=False) as host, ControlServer(host):
            client = await connect_to_host(project.root)
            assert client is not None
            await client.close()

    run(scenario())


@pytest.mark.skipif(not IS_ROOT, reason="giving a folder to another user takes root")
def test_a_runtime_folder_in_a_parent_of_another_user_is_refused(project: Project, runtime: Path) -> None:
    """The parent's owner could swap the folder for one of theirs, whatever its mode."""
    runtime.mkdir(mode=0o700)
    os.chown(runtime.parent, OTHER_UID, OTHER_UID)

    refused = rf"is in {runtime.parent}, which belongs to uid {OTHER_UID} \(neither you nor root\)"
    run(refused_by_server_and_client(project, refused))


def test_with_no_runtime_folder_the_client_finds_no_host_and_creates_nothing(project: Project, runtime: Path) -> None:
    """A missing folder just means that no host runs."""
    assert run(connect_to_host(project.root)) is None
    assert not runtime.exists()


def test_peer_uid_names_the_user_at_the_other_end_of_a_unix_socket() -> None:
    """Both ends of a pair made by this process are this process's user."""
    left, right = socket.socketpair(socket.AF_UNIX)
    with left, right:
        assert peer_uid(left) == peer_uid(right) == os.geteuid()


class Stranger:
    """A process of another user (uid 65534), forked before the test's event loop exists.

    It runs ``work(go, report)``: ``go`` reads end of file once the test calls :meth:`release`,
    and what ``work`` writes to ``report`` the test reads with :meth:`read_report`. Leaving the
    ``with`` block releases the process and reaps it (bounded)."""

    def __init__(self, work: Callable[[int, int], None]) -> None:
        go_read, self._go = os.pipe()
        self._report, report_write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            code = 1
            try:
                os.close(self._go)
                os.close(self._report)
                os.setgroups([])
                os.setgid(STRANGER_UID)
                os.setuid(STRANGER_UID)
                work(go_read, report_write)
                code = 0
            except BaseException:
                os.write(report_write, traceback.format_exc().encode())
            finally:
                os._exit(code)
        os.close(go_read)
        os.close(report_write)

    def __enter__(self) -> Stranger:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.release()
        if not wait_for_exit(self.pid, timeout=15):
            os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        os.close(self._report)

    def release(self) -> None:
        if self._go >= 0:
            os.close(self._go)
            self._go = -1

    def read_report(self, until: bytes = b"", timeout: float = 15) -> bytes:
        """What the process reported, up to and including ``until`` (else to the end); bounded."""
        report = b""
        while not (until and until in report):
            readable, _, _ = select.select([self._report], [], [], timeout)
            chunk = os.read(self._report, 65536) if readable else b""
            if not chunk:
                break
            report += chunk
        return report


def knock(path: Path) -> Callable[[int, int], None]:
    """Work for a Stranger: when released, ask host.status on ``path`` and report every byte
    answered before the connection closed."""

    def work(go: int, report: int) -> None:
        select.select([go], [], [], 15)
        received = b""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(10)
            sock.connect(str(path))
            # Closed with our request unread: at once (the write breaks the pipe) or after it.
            with contextlib.suppress(ConnectionResetError, BrokenPipeError):
                sock.sendall(STATUS_REQUEST)
                while chunk := sock.recv(65536):
                    received += chunk
        os.write(report, b"answered: " + received)

    return work


def test_the_server_drops_a_client_of_another_user_without_a_word(
    project: Project, runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Should another user reach the socket, its connection is closed unanswered, and the
    user's own clients are still served.

    As root, the client is a real process of uid 65534, let in by opening the folders and the
    socket to everyone once the server runs. Otherwise peer_uid is made to name another user."""
    path = control_socket_path(project.root)

    async def knock_in_process() -> bytes:
        with monkeypatch.context() as patch:
            patch.setattr(private_socket, "peer_uid", lambda _sock: os.geteuid() + 1)
            reader, writer = await asyncio.open_unix_connection(str(path))
            writer.write(STATUS_REQUEST)
            answers = await answers_until_closed(reader)
            writer.close()
        return b"answered: " + b"".join(json.dumps(answer).encode() for answer in answers)

    async def scenario(stranger: Stranger | None) -> bytes:
        async with project.host(timeouts=TIMEOUTS, watch=False) as host, ControlServer(host):
            with loop_errors() as errors:
                if stranger is None:
                    report = await knock_in_process()
                else:
                    for folder in (runtime.parent, runtime):
                        folder.chmod(0o711)
                    path.chmod(0o666)
                    stranger.release()
                    report = await asyncio.to_thread(stranger.read_report)
                    for folder in (runtime.parent, runtime):
                        folder.chmod(0o700)
                client = await connect_to_host(project.root)
                assert client is not None
                await client.close()
            assert errors == []
            return report

    if IS_ROOT:
        with Stranger(knock(path)) as stranger:
            assert run(scenario(stranger)) == b"answered: "
    else:
        assert run(scenario(None)) == b"answered: "


def test_the_client_refuses_a_listener_of_another_user_before_saying_anything(
    project: Project, runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A socket in place whose listening process is another user's is not the user's host,
    however well it would answer: connect_to_host raises, naming the socket and the uid, sends
    it nothing, and leaves the socket where it is.

    As root, the listener is a real process of uid 65534 (the socket is bound in the private
    folder first, then listened on by the stranger). Otherwise peer_uid is made to name another user."""
    path = control_socket_path(project.root)
    runtime.mkdir(mode=0o700)
    impostor_answer = encode_message({"jsonrpc": "2.0", "id": 1, "result": {"root": "/", "pid": 1, "sessionId": "x"}})

    if IS_ROOT:

        def listen_like_a_host(sock: socket.socket) -> Callable[[int, int], None]:
            def work(go: int, report: int) -> None:
                sock.listen()  # the kernel records the listener's user now
                os.write(report, b"listening\n")
                sock.settimeout(10)
                connection, _ = sock.accept()
                with connection:
                    connection.settimeout(10)
                    asked = connection.recv(65536)
                    if asked:
                        connection.sendall(impostor_answer)
                os.write(report, b"asked: " + asked)
                select.select([go], [], [], 15)

            return work

        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.bind(str(path))
            with Stranger(listen_like_a_host(sock)) as stranger:
                sock.close()
                assert stranger.read_report(until=b"listening\n") == b"listening\n"
                with pytest.raises(
                    ExtensionHostError,
                    match=rf"the control socket {path} is served by a process of uid {STRANGER_UID}, not by you",
                ):
                    run(connect_to_host(project.root))
                assert stranger.read_report(until=b"asked: ") == b"asked: "
        assert path.exists()
        return

    async def scenario() -> list[bytes]:
        asked: asyncio.Queue[bytes] = asyncio.Queue()

        async def impostor(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            data = await reader.read(65536)
            if data:
                writer.write(impostor_answer)
            writer.close()
            asked.put_nowait(data)

        async with await asyncio.start_unix_server(impostor, path=str(path)):
            monkeypatch.setattr(private_socket, "peer_uid", lambda _sock: os.geteuid() + 1)
            with pytest.raises(
                ExtensionHostError,
                match=rf"the control socket {path} is served by a process of uid {os.geteuid() + 1}, not by you",
            ):
                await connect_to_host(project.root)
            async with asyncio.timeout(10):
                return [await asked.get()]

    assert run(scenario()) == [b""]


# -- bounded -------------------------------------------------------------------------------


def test_a_client_beyond_max_clients_is_told_so_and_closed_while_the_others_are_served(
    project: Project, runtime: Path
) -> None:
    """The 65th connection gets TOO_MANY_CONNECTIONS and is closed; the 64 others are unaffected,
    and once one of them closes a new client is accepted."""
    refusal = {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": TOO_MANY_CONNECTIONS,
            "message": f"the host serves at most {MAX_CLIENTS} control connections at once; "
            "try again when one of them has closed",
            "data": {"limit": MAX_CLIENTS},
        },
    }

    async def connect(path: Path) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        async with asyncio.timeout(10):
            return await asyncio.open_unix_connection(str(path))

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS, watch=False) as host, ControlServer(host) as server:
            with loop_errors() as errors:
                clients = [await connect(server.path) for _ in range(MAX_CLIENTS)]
                for reader, writer in clients:  # each one is served, so each one counts
                    assert (await ask_status(reader, writer) or {})["result"]["pid"] == os.getpid()

                reader, writer = await connect(server.path)
                assert await answers_until_closed(reader) == [refusal]
                writer.close()
                busy = (
                    rf"the host listening on {server.path} refused the connection: "
                    rf"the host serves at most {MAX_CLIENTS}"
                )
                with pytest.raises(ExtensionHostError, match=busy):
                    await connect_to_host(project.root)
                assert await ask_status(*clients[-1]) is not None

                _, first = clients.pop(0)
                first.close()
                await first.wait_closed()
                # The server sees that close in its own time: a newcomer until then is refused,
                # so try until one is served (each try is answered at once either way).
                async with asyncio.timeout(10):
                    while True:
                        newcomer = await connect(server.path)
                        answer = await ask_status(*newcomer)
                        if answer is not None and "result" in answer:
                            break
                        assert answer in (None, refusal)
                        newcomer[1].close()
                assert answer["result"]["pid"] == os.getpid()
                for _, writer in [*clients, newcomer]:
                    writer.close()
            assert errors == []

    run(scenario())


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            b"Content-Length: %d\r\n\r\n" % (MAX_CONTROL_MESSAGE_BYTES + 1),
            f"message of {MAX_CONTROL_MESSAGE_BYTES + 1} bytes exceeds the limit of {MAX_CONTROL_MESSAGE_BYTES} bytes",
        ),
        (
            b"Content-Length: 200000\r\n\r\n" + b"[" * 100_000 + b"]" * 100_000,
            f"body is nested deeper than {MAX_DEPTH} levels",
        ),
        (b"Content-Length: 8\r\n\r\nnot json", "body is not valid JSON: Expecting value: line 1 column 1 (char 0)"),
    ],
    ids=["over-16-MiB", "nested-100000-deep", "not-json"],
)
def test_a_message_too_big_too_deep_or_not_json_gets_a_parse_error_and_only_its_connection_closes(
    project: Project, runtime: Path, data: bytes, message: str
) -> None:
    """One PARSE_ERROR answer with id null, then the connection closes; a client already
    connected and the next one are served, and no traceback reaches the loop."""

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS, watch=False) as host, ControlServer(host) as server:
            with loop_errors() as errors:
                bystander = await connect_to_host(project.root)
                assert bystander is not None
                try:
                    reader, writer = await asyncio.open_unix_connection(str(server.path))
                    writer.write(data)
                    assert await answers_until_closed(reader) == [parse_error(message)]
                    writer.close()
                    assert (await bystander.request("host.status"))["pid"] == os.getpid()
                finally:
                    await bystander.close()
                client = await connect_to_host(project.root)
                assert client is not None
                await client.close()
            assert errors == []

    run(scenario())


def test_a_client_that_never_reads_its_answers_is_disconnected_and_the_host_serves_on(
    project: Project, runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Answers queue up for a client that only writes; past the queue limit that client is
    disconnected (its writes then fail), and the next client is served."""
    monkeypatch.setattr(control, "MAX_CONTROL_QUEUED_BYTES", 64 * 1024)

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS, watch=False) as host, ControlServer(host) as server:
            with loop_errors() as errors:
                _reader, writer = await asyncio.open_unix_connection(str(server.path))
                with pytest.raises((ConnectionResetError, BrokenPipeError)):
                    async with asyncio.timeout(30):
                        while True:  # the kernel's buffers take the first answers; then the host's queue
                            writer.write(STATUS_REQUEST * 1000)
                            await writer.drain()
                writer.close()
                client = await connect_to_host(project.root)
                assert client is not None
                try:
                    assert (await client.request("host.status"))["pid"] == os.getpid()
                finally:
                    await client.close()
            assert errors == []

    run(scenario())


def test_list_and_inspect_exit_1_while_an_extension_is_quarantined(
    project: Project, runtime: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A quarantined extension is broken like a failed one: the commands that report it say so
    with their exit code."""
    project.add_extension(
        "crashy",
        """
        import os
        from sdk_extension import join_session, tool

        @tool(description="Crash")
        def boom() -> str:
            os._exit(3)

        join_session(tools=[boom])
        """,
    )
    budget = CrashBudget(restarts=0, window=300, backoff=0.01)

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS, crash_budget=budget) as host, ControlServer(host):
            await host.call_tool("boom")
            await wait_for_event(host, lambda event: "quarantined" in str(event["data"].get("message", "")))
            assert host.extension("crashy").status == "quarantined"
            assert await project.cli_in_thread("list", "--json") == 1
            assert json.loads(capsys.readouterr().out)["extensions"][0]["status"] == "quarantined"
            assert await project.cli_in_thread("inspect", "crashy") == 1
            assert "quarantined" in capsys.readouterr().out

    run(scenario())
