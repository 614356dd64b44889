"""Fault matrix, the front ends' rows: large tool results and the event history, logs of two
projects, ``dev`` with stdin at its end and a closed stdout, a root that is not a folder, a
one-shot command with an extension that ignores end of stream, and text with lone surrogates
printed by ``extensions call``. Real host, CLI and extension processes; each test checks the
outcome and that nothing is left running. Figures are printed (``pytest -s`` shows them)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from extension_host import ExtensionHost, ProjectRootError
from extension_host.events import HISTORY_BYTES, TRUNCATION_MARKER
from extension_host.frontends.dev import EXIT_STDOUT_CLOSED
from extension_host.launch.logs import LOG_MAX_BYTES
from extension_host.launch.process import STOP_GRACE_SECONDS
from extension_host.project.paths import project_logs_dir
from helpers import Project, run, wait_for_exit

pytestmark = pytest.mark.subprocess

MIB = 1024 * 1024

PID_FILE_EXTENSION = """
    import os, pathlib
    from sdk_extension import join_session, tool

    pathlib.Path({pid_file!r}).write_text(str(os.getpid()))

    @tool(description="Say hello")
    def hello() -> str:
        return "hello"

    session = join_session(tools=[hello])
    session.log("ready")
"""


def pid_from(path: Path) -> int:
    return int(path.read_text())


# -- 8 tool results of 20 MiB ----------------------------------------------------------------

_RSS_HOST = textwrap.dedent(
    """
    import asyncio, gc, json, sys
    from extension_host import ExtensionHost

    def status(key):
        with open("/proc/self/status") as lines:
            return next(int(line.split()[1]) * 1024 for line in lines if line.startswith(key))

    async def main():
        async with ExtensionHost(sys.argv[1], sys.argv[2], session_hooks=False, watch=False) as host:
            gc.collect()
            before = status("VmRSS")
            heard = []
            host.on_event(lambda e: heard.append(len(e["data"].get("result", {}).get("content") or "")))
            for n in range(8):
                result = await host.call_tool("big", {"n": n})
                assert result.success and len(result.text_result_for_llm) == 20 * 1024 * 1024, result.error
                del result
            kept = [e["data"]["result"]["content"] for e in host.events.history("tool.execution_complete")]
            print(json.dumps({
                "before": before, "peak": status("VmHWM"), "history_bytes": host.events.history_bytes,
                "kept_lengths": [len(text) for text in kept], "kept_tail": kept[-1][-60:],
                "heard": max(heard), "pid": host.extension("big").pid,
            }), flush=True)

    asyncio.run(main())
    """
)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
def test_eight_tool_results_of_20_mib_are_kept_cut_and_the_host_does_not_hold_them(project: Project) -> None:
    """Listeners hear each result whole; the history keeps it cut with a marker; the host's peak
    memory grows by far less than the 160 MiB of results (before: +200 MiB, the history held
    them all)."""
    project.add_extension(
        "big",
        """
        from sdk_extension import join_session, tool

        @tool(description="20 MiB of text")
        def big(n: int) -> str:
            return str(n) * (20 * 1024 * 1024)

        join_session(tools=[big])
        """,
    )
    host = subprocess.run(
        [sys.executable, "-c", _RSS_HOST, str(project.root), str(project.home)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert host.returncode == 0, host.stderr
    figures = json.loads(host.stdout)
    growth = (figures["peak"] - figures["before"]) / MIB
    print(f"\nhost RSS {figures['before'] / MIB:.0f} MiB -> peak {figures['peak'] / MIB:.0f} MiB (+{growth:.0f} MiB)")
    assert figures["heard"] == 20 * MIB
    assert all(length < 64 * 1024 for length in figures["kept_lengths"]) and len(figures["kept_lengths"]) == 8
    assert figures["kept_tail"].endswith(TRUNCATION_MARKER.format(20 * MIB - 8 * 1024))
    assert figures["history_bytes"] <= HISTORY_BYTES
    assert growth < 140, f"the host grew by {growth:.0f} MiB for 8 results of 20 MiB"
    assert wait_for_exit(figures["pid"], timeout=15), "the extension outlived its host"


# -- two projects, one extension name --------------------------------------------------------

LOGGING_EXTENSION = """
    import os, pathlib, sys
    from sdk_extension import join_session, tool

    pathlib.Path({pid_file!r}).write_text(str(os.getpid()))
    print({message}, file=sys.stderr, flush=True)

    @tool(description="Say hello", name={tool!r})
    def hello() -> str:
        return "hello"

    join_session(tools=[hello])
"""


def test_two_projects_with_an_extension_of_the_same_name_keep_separate_logs(project: Project, tmp_path: Path) -> None:
    """``inspect same`` in one project never shows the other's lines, for project and user
    extensions alike; a log grown past its limit is rotated when the extension starts."""
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    project_b = Project(other, project.home)
    pids = tmp_path / "pids"
    pids.mkdir()
    project.add_extension(
        "same", LOGGING_EXTENSION.format(pid_file=str(pids / "a"), message="'ERROR only project A has'", tool="a_hello")
    )
    project_b.add_extension(
        "same", LOGGING_EXTENSION.format(pid_file=str(pids / "b"), message="'project B is fine'", tool="b_hello")
    )
    # A user extension runs in each project (its working directory is the project's root).
    project.add_extension(
        "mine",
        LOGGING_EXTENSION.format(
            pid_file=str(pids / "u"), message="'user extension in ' + os.getcwd()", tool="u_hello"
        ),
        source="user",
    )

    a = project.run_command("inspect", "same", "--json", timeout=120)
    assert a.returncode == 0, a.stderr
    assert wait_for_exit(pid_from(pids / "a"), timeout=15)
    b = project_b.run_command("inspect", "same", "--json", timeout=120)
    assert b.returncode == 0, b.stderr
    assert wait_for_exit(pid_from(pids / "b"), timeout=15)
    detail_a, detail_b = json.loads(a.stdout), json.loads(b.stdout)
    assert "ERROR only project A has" in detail_a["log_tail"]
    assert "project B is fine" in detail_b["log_tail"]
    assert not [line for line in detail_b["log_tail"] if "project A" in line]
    assert Path(detail_a["log_path"]).parent == project_logs_dir(project.home, project.root)
    assert Path(detail_b["log_path"]).parent == project_logs_dir(project.home, other)

    user_b = json.loads(project_b.run_command("inspect", "mine", "--json", timeout=120).stdout)
    assert wait_for_exit(pid_from(pids / "u"), timeout=15)
    assert [line for line in user_b["log_tail"] if "user extension in" in line] == [
        f"user extension in {other.resolve()}"
    ]

    # A log past its limit (sparse: the size is what counts) is rotated at the next start.
    log_b = Path(detail_b["log_path"])
    with open(log_b, "ab") as grown:
        grown.truncate(LOG_MAX_BYTES + 1)
    again = json.loads(project_b.run_command("inspect", "same", "--json", timeout=120).stdout)
    assert wait_for_exit(pid_from(pids / "b"), timeout=15)
    assert log_b.with_name(log_b.name + ".1").stat().st_size >= LOG_MAX_BYTES
    assert log_b.stat().st_size < 64 * 1024
    assert "project B is fine" in again["log_tail"]


# -- dev with stdin at its end; a closed stdout ---------------------------------------------


def test_dev_with_stdin_at_its_end_keeps_watching_until_a_signal(project: Project, tmp_path: Path) -> None:
    """``extensions dev </dev/null``: no traceback; a save still reloads; SIGINT exits 0 and
    the extension is gone."""
    pid_file = tmp_path / "pid"
    folder = project.add_extension("live", PID_FILE_EXTENSION.format(pid_file=str(pid_file)))

    async def scenario() -> tuple[int, bytes]:
        dev = await asyncio.create_subprocess_exec(
            *project.command(),
            "dev",
            stdin=subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        assert dev.stdout is not None and dev.stderr is not None
        seen: list[str] = []

        async def expect(pattern: str) -> None:
            assert dev.stdout is not None
            async with asyncio.timeout(30):
                while pattern not in (line := (await dev.stdout.readline()).decode()):
                    assert line, f"dev ended before printing {pattern!r}: {seen}"
                    seen.append(line)

        try:
            await expect("watching ")
            first = pid_from(pid_file)
            (folder / "extension.py").write_text(
                textwrap.dedent(PID_FILE_EXTENSION.format(pid_file=str(pid_file))) + "\n# saved again\n"
            )
            await expect("project:live: reloaded")
            assert wait_for_exit(first, timeout=15)
            dev.send_signal(signal.SIGINT)
            await expect("stopped")
            async with asyncio.timeout(30):
                code = await dev.wait()
            return code, await dev.stderr.read()
        finally:
            if dev.returncode is None:
                dev.kill()
                await dev.wait()

    code, stderr = run(scenario())
    assert code == 0
    assert b"Traceback" not in stderr and b"Exception" not in stderr, stderr.decode()
    assert wait_for_exit(pid_from(pid_file), timeout=15)


def test_a_closed_stdout_ends_list_quietly(project: Project, tmp_path: Path) -> None:
    """``extensions list --json | head -0``: exit 141, nothing on stderr (no traceback, no
    "Exception ignored"), the extension stopped."""
    pid_file = tmp_path / "pid"
    project.add_extension("live", PID_FILE_EXTENSION.format(pid_file=str(pid_file)))
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will read: the first write fails with EPIPE
    try:
        listing = subprocess.run(
            [
                *project.command(),
                "list",
                "--json",
            ],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert listing.returncode == EXIT_STDOUT_CLOSED
    assert listing.stderr == ""
    assert wait_for_exit(pid_from(pid_file), timeout=15)


def test_dev_ends_when_the_reader_of_its_output_goes_away(project: Project, tmp_path: Path) -> None:
    """``extensions dev | head -2``: once ``head`` is gone dev stops every extension and exits
    141 without a word on stderr, without waiting for something more to print."""
    pid_file = tmp_path / "pid"
    project.add_extension("live", PID_FILE_EXTENSION.format(pid_file=str(pid_file)))
    dev = subprocess.Popen(
        [*project.command(), "dev"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert dev.stdout is not None and dev.stderr is not None
        while b"watching " not in (line := dev.stdout.readline()):
            assert line, "dev ended before it was ready"
        dev.stdout.close()
        assert dev.wait(timeout=30) == EXIT_STDOUT_CLOSED
        assert dev.stderr.read() == b""
    finally:
        if dev.returncode is None:
            dev.kill()
            dev.wait()
        if dev.stdin:
            dev.stdin.close()
        if dev.stderr:
            dev.stderr.close()
    assert wait_for_exit(pid_from(pid_file), timeout=15)


# -- a root that does not exist --------------------------------------------------------------


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_root_that_is_not_a_folder_is_a_usage_error_and_an_exception(
    project: Project, tmp_path: Path, kind: str, reap_extension_processes: list[int]
) -> None:
    """Exit 2 naming the root (no fall-back to the working directory's project); in the API a
    ProjectRootError; no extension was started either way."""
    root = tmp_path / "no-such-project"
    if kind == "file":
        root.write_text("a file, not a folder")
    project.add_extension("live", PID_FILE_EXTENSION.format(pid_file=str(tmp_path / "pid")))
    done = subprocess.run(
        [sys.executable, "-m", "extension_host", "--root", str(root), "--home", str(project.home), "list"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=project.root,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and str(root) in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    with pytest.raises(ProjectRootError) as raised:
        ExtensionHost(root, project.home)
    assert raised.value.path == root
    assert not (tmp_path / "pid").exists() and reap_extension_processes == []


# -- a one-shot command and an extension that ignores end of stream -------------------------

RAW_CLIENT = """
    # A raw protocol client, for what the SDK would not do.
    import json, os, sys, time
    from sdk_extension._stdio import claim_protocol_stdio

    read_fd, write_fd = claim_protocol_stdio()
    inbox, outbox = os.fdopen(read_fd, "rb"), os.fdopen(write_fd, "wb")

    def send(message):
        body = json.dumps(message).encode()  # ensure_ascii: a lone surrogate goes as an escape
        outbox.write(b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body)
        outbox.flush()

    def receive():
        length = None
        while True:
            line = inbox.readline()
            if not line:
                on_end_of_stream()
            if not line.strip():
                break
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        return json.loads(inbox.read(length))

    def request(number, method, params):
        send({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
        while "method" in (answer := receive()) or answer.get("id") != number:
            pass
        return answer

    def join(tools):
        request(1, "connect", {})
        request(2, "session.resume", {
            "sessionId": os.environ.get("SESSION_ID", ""), "disableResume": True, "hooks": False,
            "tools": [{"name": name, "description": name} for name in tools],
        })

    def serve(result_text):
        number = 10
        while True:
            message = receive()
            event = (message.get("params") or {}).get("event") or {}
            if message.get("method") == "session.event" and event.get("type") == "external_tool.requested":
                number += 1
                send({"jsonrpc": "2.0", "id": number, "method": "session.tools.handlePendingToolCall", "params": {
                    "sessionId": os.environ.get("SESSION_ID", ""), "requestId": event["data"]["requestId"],
                    "result": {"textResultForLlm": result_text, "resultType": "success"},
                }})
            elif "method" in message and "id" in message:
                send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
"""

STICKY = (
    RAW_CLIENT
    + """
    def on_end_of_stream():
        time.sleep(3600)  # ignores end of stream; SIGTERM still ends it

    join(["sticky_ping"])
    open(PID_FILE, "w").write(f"{os.getpid()} {time.time()}")
    serve("pong")
"""
)


def test_a_one_shot_command_does_not_wait_the_stop_grace_for_an_extension_that_ignores_end_of_stream(
    project: Project, tmp_path: Path
) -> None:
    """``extensions list`` stops it with the one-shot ladder: the extension is gone when the
    command returns, well before the 5 s a long-running host grants each step."""
    pid_file = tmp_path / "pid"
    project.add_extension("sticky", f"\n    PID_FILE = {str(pid_file)!r}" + STICKY)
    started = time.monotonic()
    listing = project.run_command("--readiness-timeout", "10", "list", timeout=120)
    ended_wall, elapsed = time.time(), time.monotonic() - started
    assert listing.returncode == 0, listing.stderr
    pid, joined_at = pid_file.read_text().split()
    after_join = ended_wall - float(joined_at)
    print(f"\nlist took {elapsed:.2f} s, {after_join:.2f} s after the extension joined")
    assert wait_for_exit(int(pid), timeout=1), "the extension outlived the command"
    assert elapsed < 10 + STOP_GRACE_SECONDS
    # The contract's ladder would wait 5 s after end of stream before SIGTERM.
    assert after_join < STOP_GRACE_SECONDS


# -- lone surrogates through `extensions call` -----------------------------------------------

SURROGATES = (
    RAW_CLIENT
    + """
    def on_end_of_stream():
        raise SystemExit(0)

    open(PID_FILE, "w").write(str(os.getpid()))
    join(["odd_listing"])
    serve("caf\\udce9.txt \\ud800")  # what os.listdir gives for a name that is not UTF-8
"""
)


@pytest.mark.parametrize("json_output", [False, True], ids=["text", "json"])
def test_extensions_call_prints_text_with_lone_surrogates_without_crashing(
    project: Project, tmp_path: Path, json_output: bool
) -> None:
    """A result with lone surrogates (a raw client sends them) is printed escaped, exit 0."""
    pid_file = tmp_path / "pid"
    project.add_extension("odd", f"\n    PID_FILE = {str(pid_file)!r}" + SURROGATES)
    done = project.run_command("call", "odd_listing", *(["--json"] if json_output else []), timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    if json_output:
        assert json.loads(done.stdout)["text_result_for_llm"] == "caf\udce9.txt \ud800"
    else:
        assert "caf" in done.stdout and ".txt" in done.stdout
        done.stdout.encode("utf-8")  # printable: no lone surrogate reached the terminal
    assert wait_for_exit(pid_from(pid_file), timeout=15)
