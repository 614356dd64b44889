"""Fault matrix, the wire: what a peer's bytes can do to the host, and what the SDK always answers.

One test per row of the fault table this area covers, each with real processes: extensions
that misbehave on purpose are raw protocol clients written here (the SDK would refuse to),
and each test checks the outcome and that no process is left running.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from extension_host import Timeouts
from extension_host.project.paths import control_socket_path
from extension_protocol.framing import MAX_DEPTH, MAX_HEADER_BYTES, MAX_MESSAGE_BYTES, encode_message, read_message
from extension_protocol.protocol import PARSE_ERROR
from helpers import Project, run, running_dev, wait_for_exit

pytestmark = pytest.mark.subprocess

MIB = 1024 * 1024

RAW_CLIENT = """
import json, os, sys, time
from sdk_extension._stdio import claim_protocol_stdio

IN, OUT = claim_protocol_stdio()
SESSION = os.environ["SESSION_ID"]
_buffer = b""
_last_id = 0


def send_body(body):
    view = memoryview(b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body)
    while view:
        view = view[os.write(OUT, view):]


def send(message):
    # json.dumps escapes: a lone surrogate goes out as the six characters \\ud800, valid JSON.
    send_body(json.dumps(message).encode())


def _read():
    global _buffer
    chunk = os.read(IN, 1 << 16)
    if not chunk:
        sys.exit(0)  # the host closed our input: the contract is to exit
    _buffer += chunk


def receive():
    global _buffer
    while b"\\r\\n\\r\\n" not in _buffer:
        _read()
    header, _, _buffer = _buffer.partition(b"\\r\\n\\r\\n")
    length = int(header.split(b":")[1])
    while len(_buffer) < length:
        _read()
    body, _buffer = _buffer[:length], _buffer[length:]
    return json.loads(body)


def request(method, params):
    global _last_id
    _last_id += 1
    send({"jsonrpc": "2.0", "id": _last_id, "method": method, "params": params})
    while True:
        message = receive()
        if message.get("id") == _last_id and "method" not in message:
            return message


def join(*tools, all_events=False):
    request("connect", {})
    resume = {"sessionId": SESSION, "tools": [{"name": t, "description": t} for t in tools],
              "hooks": False, "hookTypes": [], "disableResume": True}
    if not all_events:
        resume["eventTypes"] = []
    return request("session.resume", resume)


def next_call():
    while True:
        message = receive()
        event = (message.get("params") or {}).get("event") or {}
        if event.get("type") == "external_tool.requested":
            return event["data"]


def answer(call, result):
    send({"jsonrpc": "2.0", "id": "answer-" + call["requestId"],
          "method": "session.tools.handlePendingToolCall",
          "params": {"sessionId": SESSION, "requestId": call["requestId"], "result": result}})
"""


def raw_extension(project: Project, name: str, body: str) -> None:
    """An extension that speaks the protocol by hand: the raw client above, then ``body``."""
    project.add_extension(name, RAW_CLIENT + textwrap.dedent(body))


def assert_all_exited(pids: list[int]) -> None:
    for pid in pids:
        assert wait_for_exit(pid, timeout=15), f"process {pid} was left running"


def processes_working_in(folder: Path) -> list[int]:
    """Pids of this user's processes whose working directory is ``folder`` (extensions run in
    the project root), whoever started them."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if Path(os.readlink(entry / "cwd")) == folder:
                    found.append(int(entry.name))
            except OSError:
                continue  # gone meanwhile, or not ours
    return found


def one_line(text: str | None) -> str:
    assert text is not None and "\n" not in text and "Traceback" not in text
    return text


ECHO = """
join("echo")
while True:
    answer(next_call(), "echoed")
"""
"""The body of a raw extension whose tool ``echo`` answers ``echoed``."""


def breaking_mid_call_beside_an_echo(project: Project, name: str, tool: str, breaking: str) -> None:
    """A raw extension ``name`` whose tool ``tool``, once called, runs ``breaking`` (one line
    that sends what the host cannot read) and keeps its pipe open; and an extension ``echo``
    whose tool ``echo`` answers ``echoed``."""
    raw_extension(project, name, f"join({tool!r})\nnext_call()\n{breaking}\ntime.sleep(600)\n")
    raw_extension(project, "echo", ECHO)


# -- deeply nested JSON ------------------------------------------------------------------------

NESTED = b"[" * 100_000 + b"]" * 100_000


def test_deeply_nested_json_from_an_extension_fails_it_at_once_and_its_pending_call_with_it(
    project: Project, reap_extension_processes: list[int]
) -> None:
    """100,000 nested arrays while a call is pending: the extension fails with a one-line
    protocol error and the call fails at once, not at the tool timeout; the others serve on."""
    breaking_mid_call_beside_an_echo(
        project, "nester", "nest", f"""send_body(b'{{"jsonrpc":"2.0","method":"x","params":' + {NESTED!r} + b'}}')"""
    )

    async def scenario() -> float:
        async with project.host(timeouts=Timeouts(tool=120, stop_grace=2)) as host:
            started = time.monotonic()
            result = await host.call_tool("nest")
            took = time.monotonic() - started
            assert result.result_type == "failure"
            reason = f"protocol error: body is nested deeper than {MAX_DEPTH} levels"
            assert result.text_result_for_llm == (
                f"tool 'nest' could not finish: extension project:nester failed: {reason}"
            )
            info = host.extension("nester")
            assert info.status == "failed" and one_line(info.error) == reason
            assert (await host.call_tool("echo")).text_result_for_llm == "echoed"
        return took

    took = run(scenario())
    assert took < 15, f"the call waited {took:.1f} s: it should fail at once, the tool timeout is 120 s"
    assert_all_exited(reap_extension_processes)
    print(f"nested JSON: the pending call failed after {took:.3f} s (tool timeout 120 s)")


def test_deeply_nested_json_on_the_control_socket_gets_a_parse_error_and_the_host_serves_on(
    project: Project,
) -> None:
    """A client of a running ``extensions dev`` sends 100,000 nested arrays: it is told why and
    dropped; the next client is answered and ``extensions list`` still reaches the host."""
    raw_extension(project, "echo", ECHO)

    async def scenario() -> None:
        async with running_dev(project) as dev:
            path = control_socket_path(project.root)
            reader, writer = await asyncio.open_unix_connection(str(path))
            started = time.monotonic()
            writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(NESTED), NESTED))
            async with asyncio.timeout(10):
                said = await read_message(reader)
                assert await read_message(reader) is None  # then it hangs up
            print(f"nested JSON on the control socket: parse error after {time.monotonic() - started:.3f} s")
            assert said == {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": PARSE_ERROR, "message": f"body is nested deeper than {MAX_DEPTH} levels"},
            }
            writer.close()
            reader, writer = await asyncio.open_unix_connection(str(path))
            writer.write(encode_message({"jsonrpc": "2.0", "id": 1, "method": "host.status"}))
            async with asyncio.timeout(10):
                status = await read_message(reader)
            writer.close()
            assert status is not None and status["result"]["pid"] == dev.process.pid
            listing = await asyncio.to_thread(
                subprocess.run,
                [
                    *project.command(),
                    "list",
                    "--json",
                ],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert listing.returncode == 0, listing.stderr
            [echo] = json.loads(listing.stdout)["extensions"]
            assert echo["status"] == "running" and echo["pid"] is not None
            await dev.send("quit")
            async with asyncio.timeout(20):
                assert await dev.process.wait() == 0
            assert wait_for_exit(echo["pid"], timeout=15)

    run(scenario())


# -- header blocks no frame can follow ------------------------------------------------------------

CONTENT_LENGTH_TWICE = b"Content-Length: 2\r\nContent-Length: 100000\r\n\r\n{}"
TWICE_REASON = "Content-Length appears twice in one header block ('2' and '100000'); a frame has exactly one"


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        (CONTENT_LENGTH_TWICE, TWICE_REASON),
        (b"Content-Length: 2\n\n", "header block has a line break other than \\r\\n: 'Content-Length: 2\\n\\n'"),
    ],
    ids=["content-length-twice", "lf-without-cr"],
)
def test_a_header_no_frame_can_follow_fails_the_extension_at_once_and_its_pending_call_with_it(
    project: Project, reap_extension_processes: list[int], header: bytes, reason: str
) -> None:
    """An extension sends a header that no body can complete (two lengths, or lines that never
    end in \\r\\n) and keeps its pipe open: the host does not wait for the rest; the extension
    fails with a one-line protocol error naming the fault, its pending call fails at once, the
    other extension serves on."""
    breaking_mid_call_beside_an_echo(project, "liar", "lie", f"os.write(OUT, {header!r})")

    async def scenario() -> None:
        async with project.host(timeouts=Timeouts(tool=120, stop_grace=2)) as host:
            result = await host.call_tool("lie")
            info = host.extension("liar")
            assert info.status == "failed" and one_line(info.error).startswith(f"protocol error: {reason}")
            assert result.result_type == "failure"
            assert result.text_result_for_llm == (
                f"tool 'lie' could not finish: extension project:liar failed: {info.error}"
            )
            assert (await host.call_tool("echo")).text_result_for_llm == "echoed"

    run(scenario(), timeout=90)
    assert_all_exited(reap_extension_processes)


def test_a_header_no_frame_can_follow_on_the_control_socket_gets_a_parse_error_and_the_host_serves_on(
    project: Project,
) -> None:
    """Clients of a running ``extensions dev`` send Content-Length twice, then a 200 KB header
    line, each keeping its connection open: each is told why at once (PARSE_ERROR, id null) and
    dropped; the next client is answered."""

    async def tell(path: Path, data: bytes, answers: int) -> list[dict[str, Any] | None]:
        """Send ``data`` on a new connection, keep it open, read ``answers`` messages (bounded)."""
        reader, writer = await asyncio.open_unix_connection(str(path))
        try:
            writer.write(data)
            async with asyncio.timeout(10):
                return [await read_message(reader) for _ in range(answers)]
        finally:
            writer.close()

    async def scenario() -> None:
        async with running_dev(project) as dev:
            path = control_socket_path(project.root)
            padded = b"Content-Length: 2\r\nX-Padding: " + b"a" * 200_000 + b"\r\n\r\n{}"
            for data, reason in (
                (CONTENT_LENGTH_TWICE, TWICE_REASON),
                (padded, f"header block is too long: {len(padded) - 6} bytes, over the limit of {MAX_HEADER_BYTES}"),
            ):
                said, then = await tell(path, data, 2)
                assert said == {"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": reason}}
                assert then is None  # it hung up
            [status] = await tell(path, encode_message({"jsonrpc": "2.0", "id": 1, "method": "host.status"}), 1)
            assert status is not None and status["result"]["pid"] == dev.process.pid
            await dev.send("quit")
            async with asyncio.timeout(20):
                assert await dev.process.wait() == 0

    run(scenario())


# -- lone surrogates ---------------------------------------------------------------------------


def test_a_tool_returning_a_file_name_that_is_not_utf8_is_answered_with_a_replacement_character(
    project: Project, reap_extension_processes: list[int]
) -> None:
    """os.listdir on a name that is not UTF-8 gives a lone surrogate: the call is answered at
    once, the byte shown as U+FFFD, not left to hang until the tool timeout."""
    files = project.root / "files"
    files.mkdir()
    os.close(os.open(bytes(files) + b"/caf\xff.txt", os.O_CREAT | os.O_WRONLY, 0o600))
    project.add_extension(
        "lister",
        f"""
        import os
        from sdk_extension import join_session, tool

        @tool(description="List the files")
        def list_files() -> str:
            return "\\n".join(os.listdir({str(files)!r}))

        join_session(tools=[list_files])
        """,
    )

    async def scenario() -> float:
        async with project.host(timeouts=Timeouts(tool=120, stop_grace=2)) as host:
            started = time.monotonic()
            result = await host.call_tool("list_files")
            took = time.monotonic() - started
            assert result.result_type == "success"
            assert result.text_result_for_llm == "caf\ufffd.txt"
            assert host.extension("lister").status == "running"
        return took

    took = run(scenario())
    assert took < 15, f"the call took {took:.1f} s: it should be answered at once"
    assert_all_exited(reap_extension_processes)
    print(f"lone surrogate: answered in {took:.3f} s (tool timeout 120 s)")


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_extensions_call_prints_a_lone_surrogate_from_a_raw_client_without_crashing(
    project: Project, as_json: bool
) -> None:
    """A raw client answers with the JSON escape \\ud800 (a lone surrogate once decoded):
    ``extensions call`` shows it as a visible escape and exits 0, with and without --json."""
    raw_extension(
        project,
        "weird",
        """
        join("weird")
        while True:
            answer(next_call(), "bad \\ud800 name")
        """,
    )
    command = [
        *project.command(),
        "call",
        "weird",
        *(["--json"] if as_json else []),
    ]
    done = subprocess.run(
        command, capture_output=True, timeout=90, cwd=project.home, env={**os.environ, "PYTHONIOENCODING": "utf-8"}
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert_all_exited(processes_working_in(project.root))
    assert b"Traceback" not in done.stderr
    if as_json:
        printed = json.loads(done.stdout)
        assert printed["result_type"] == "success"
        assert printed["text_result_for_llm"] == "bad \ud800 name"
    else:
        assert done.stdout.decode() == "bad \\ud800 name\n"


# -- oversize arguments and results --------------------------------------------------------


def test_arguments_over_the_message_limit_fail_that_call_and_leave_the_extension_running(
    project: Project, reap_extension_processes: list[int]
) -> None:
    """An argument of 64 MiB + 1 byte is refused before it is sent, naming the tool and the
    limit; a 16 MiB one still goes; the extension answers the next call."""
    project.add_extension(
        "sizer",
        """
        from sdk_extension import join_session, tool

        @tool(description="Measure the text")
        def size(text: str) -> str:
            return str(len(text))

        join_session(tools=[size])
        """,
    )

    async def scenario() -> None:
        async with project.host(timeouts=Timeouts(tool=120, stop_grace=2)) as host:
            started = time.monotonic()
            result = await host.call_tool("size", {"text": "x" * (MAX_MESSAGE_BYTES + 1)})
            print(f"oversize arguments: the call failed after {time.monotonic() - started:.3f} s")
            assert result.result_type == "failure"
            text = one_line(result.text_result_for_llm)
            assert text.startswith("tool 'size' of project:sizer was not called: its arguments are too large (")
            assert "over the limit of 64.0 MiB (67108864 bytes) per message" in text
            assert host.extension("sizer").status == "running"
            assert (await host.call_tool("size", {"text": "x" * (16 * MIB)})).text_result_for_llm == str(16 * MIB)
            assert (await host.call_tool("size", {"text": "abc"})).text_result_for_llm == "3"

    run(scenario(), timeout=120)
    assert_all_exited(reap_extension_processes)


def test_arguments_or_a_result_nested_deeper_than_the_other_side_reads_fail_that_call_and_no_extension_stops(
    project: Project, reap_extension_processes: list[int]
) -> None:
    """Arguments nested 97 deep (a client's or a model's) would make the extension drop its
    connection, and telemetry nested 150 deep would make the host drop it: each is refused by
    its sender before it is sent, that call fails saying so, and the extension answers the next
    call from the same process."""
    project.add_extension(
        "nester",
        """
        from sdk_extension import ToolResult, join_session, tool

        @tool(description="Say how deep the value is, with telemetry as deep as asked")
        def depth(value: object, telemetry: int = 0) -> ToolResult:
            levels = 0
            while isinstance(value, list) and value:
                value, levels = value[0], levels + 1
            deep: object = []
            for _ in range(telemetry):
                deep = [deep]
            return ToolResult(str(levels), tool_telemetry={"deep": deep} if telemetry else None)

        join_session(tools=[depth])
        """,
    )

    def nested_list(depth: int) -> Any:
        value: Any = [1]
        for _ in range(depth - 1):
            value = [value]
        return value

    async def scenario() -> None:
        async with project.host(timeouts=Timeouts(tool=120, stop_grace=2)) as host:
            pid = host.extension("nester").pid
            refused = await host.call_tool("depth", {"value": nested_list(97)})
            assert refused.result_type == "failure"
            assert one_line(refused.text_result_for_llm) == (
                "tool 'depth' of project:nester was not called: its arguments nest too deeply (the message nests "
                f"arrays and objects deeper than the {MAX_DEPTH} levels the peer accepts); pass them with less nesting"
            )
            failed = await host.call_tool("depth", {"value": [1], "telemetry": 150})
            assert failed.result_type == "failure"
            assert one_line(failed.text_result_for_llm) == (
                "the result of tool 'depth' could not be sent: the message nests arrays and objects deeper than "
                f"the {MAX_DEPTH} levels the peer accepts"
            )
            assert (await host.call_tool("depth", {"value": nested_list(90)})).text_result_for_llm == "90"
            info = host.extension("nester")
            assert (info.status, info.pid) == ("running", pid)

    run(scenario(), timeout=120)
    assert_all_exited(reap_extension_processes)


def test_a_result_over_the_message_limit_is_answered_with_a_failure_saying_so(
    project: Project, reap_extension_processes: list[int]
) -> None:
    """The SDK does not send what the host would refuse: the call fails at once with the size
    and the limit, and the extension keeps serving."""
    project.add_extension(
        "flood",
        """
        from sdk_extension import join_session, tool

        @tool(description="Return too much")
        def huge() -> str:
            return "x" * (65 * 1024 * 1024)

        @tool(description="Answer")
        def ping() -> str:
            return "pong"

        join_session(tools=[huge, ping])
        """,
    )

    async def scenario() -> float:
        async with project.host(timeouts=Timeouts(tool=120, stop_grace=2)) as host:
            started = time.monotonic()
            result = await host.call_tool("huge")
            took = time.monotonic() - started
            assert result.result_type == "failure"
            assert re.match(
                r"the result of tool 'huge' is 65\.0 MiB \(\d+ bytes\), over the limit of 64\.0 MiB "
                r"\(67108864 bytes\) a message to the host may be",
                one_line(result.text_result_for_llm),
            )
            assert host.extension("flood").status == "running"
            assert (await host.call_tool("ping")).text_result_for_llm == "pong"
        return took

    took = run(scenario(), timeout=120)
    assert took < 60, f"the call took {took:.1f} s: the tool timeout is 120 s"
    assert_all_exited(reap_extension_processes)
    print(f"oversize result: the call failed after {took:.3f} s (tool timeout 120 s)")


# -- an extension that never reads its input -------------------------------------------------

DEAF_HOST = """
import asyncio, json, sys, time
from extension_host import ExtensionHost

def peak_mib():
    # VmHWM, not ru_maxrss: the latter carries the peak of the process that started this one.
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024

async def main():
    async with ExtensionHost(sys.argv[1], sys.argv[2], tool_timeout=120, stop_grace=1) as host:
        before = peak_mib()
        blob = {"blob": "x" * (8 * 1024 * 1024)}
        started = time.monotonic()
        results = await asyncio.gather(*(host.call_tool("sink", blob) for _ in range(int(sys.argv[3]))))
        took = time.monotonic() - started
        info = host.extension("deaf")
        print(json.dumps({
            "before": before, "peak": peak_mib(), "took": took, "status": info.status, "error": info.error,
            "pid": info.pid, "results": [[r.result_type, r.text_result_for_llm] for r in results],
        }), flush=True)

asyncio.run(main())
"""


def test_an_extension_that_never_reads_is_failed_once_its_queue_is_full_and_host_memory_stays_bounded(
    project: Project,
) -> None:
    """80 calls of 8 MiB (640 MiB offered) to an extension that stopped reading: it fails with
    "stopped reading its input", every call fails at once, and the host's memory peak grows by
    about the queue limit (64 MiB), not by what was offered."""
    raw_extension(
        project,
        "deaf",
        """
        join("sink", all_events=True)
        time.sleep(600)
        """,
    )
    done = subprocess.run(
        [sys.executable, "-c", DEAF_HOST, str(project.root), str(project.home), "80"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["status"] == "failed"
    reason = one_line(report["error"])
    assert reason.startswith("stopped reading its input: ") and reason.endswith("MiB queued (limit 64 MiB)")
    types = {result_type for result_type, _ in report["results"]}
    assert types == {"failure"}
    texts = [text for _, text in report["results"]]
    assert any(f"extension project:deaf failed: {reason}" in text for text in texts)
    assert report["took"] < 60, f"the calls took {report['took']:.1f} s: the tool timeout is 120 s"
    growth = report["peak"] - report["before"]
    assert growth < 250, f"the host grew by {growth:.0f} MiB for a queue limit of 64 MiB"
    assert wait_for_exit(report["pid"], timeout=15)
    print(f"peak RSS {report['before']:.0f} -> {report['peak']:.0f} MiB, all calls settled in {report['took']:.2f} s")


# -- a plain def hook that hangs -------------------------------------------------------------


def test_a_hung_plain_def_hook_called_40_times_does_not_starve_its_extensions_tools(
    project: Project, reap_extension_processes: list[int]
) -> None:
    """A prompt hook that blocks forever in a plain ``def``, 40 prompts at once and 40 more one
    by one, with a short hook timeout: a sync tool of the same extension still answers."""
    project.add_extension(
        "stuck",
        """
        import threading
        from sdk_extension import join_session, tool

        def on_user_prompt_submitted(prompt, invocation):
            threading.Event().wait()

        @tool(description="Answer")
        def ping() -> str:
            return "pong"

        join_session(tools=[ping], hooks={"on_user_prompt_submitted": on_user_prompt_submitted})
        """,
    )

    async def scenario() -> None:
        async with project.host(timeouts=Timeouts(hook=0.5, tool=60, stop_grace=2)) as host:
            prompts = await asyncio.gather(*(host.submit_prompt("hi") for _ in range(40)))
            for _ in range(40):
                prompts.append(await host.submit_prompt("hi"))
            assert all(prompt.rejected for prompt in prompts)  # a guard that fails, fails closed
            started = time.monotonic()
            result = await host.call_tool("ping")
            print(f"hung hook x80: a tool of the same extension answered in {time.monotonic() - started:.3f} s")
            assert result.text_result_for_llm == "pong", result.text_result_for_llm
            assert host.extension("stuck").status == "running"

    run(scenario(), timeout=120)
    assert_all_exited(reap_extension_processes)
