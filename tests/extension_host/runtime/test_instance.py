"""Process boundaries: crashes mid-call, broken frames, stopping, and no process left behind."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys

import pytest

from extension_host import Timeouts
from extension_host.launch.process_groups import signal_group
from helpers import (
    CALC,
    Project,
    assert_orphan_exits_when_host_is_killed,
    is_log,
    process_exists,
    run,
    wait_for_event,
    wait_for_exit,
)

pytestmark = pytest.mark.subprocess

SLOW = """
    import os, threading
    from sdk_extension import join_session, tool

    @tool(description="Never answers until killed")
    def hang() -> str:
        session.log(f"hanging in {os.getpid()}")
        threading.Event().wait(600)
        return "unreachable"

    @tool(description="Answers at once")
    def ping() -> str:
        return "pong"

    session = join_session(tools=[hang, ping])
"""


def test_an_extension_killed_mid_call_fails_the_pending_call_at_once(project: Project) -> None:
    """SIGKILL during a call: the call returns a failure saying the extension exited; no hang."""
    project.add_extension("slow", SLOW)

    async def scenario() -> None:
        async with project.host() as host:
            pid = host.extension("slow").pid
            assert pid is not None
            call = asyncio.ensure_future(host.call_tool("hang"))
            await wait_for_event(host, is_log(f"hanging in {pid}"))
            os.kill(pid, signal.SIGKILL)
            async with asyncio.timeout(10):
                result = await call
            assert result.result_type == "failure"
            assert "project:slow" in result.text_result_for_llm
            assert "exited with code -9" in result.text_result_for_llm
            info = host.extension("slow")
            assert info.status == "failed" and info.tools == ()
            later = await host.call_tool("ping")
            assert later.result_type == "failure"
            assert "unavailable" in later.text_result_for_llm and "project:slow failed" in later.text_result_for_llm
            assert any("project:slow failed" in e["data"]["message"] for e in host.events.history("session.warning"))

    run(scenario())


@pytest.mark.parametrize(
    ("frame", "reason"),
    [
        (b"this is not a header\r\n\r\n", "malformed header line"),
        (b"Content-Length: 7\r\n\r\n{oops!}", "not valid JSON"),
        (b"Content-Length: 999999999999\r\n\r\n", "exceeds the limit"),
        (b"Content-Length: 2\r\n\r\n[]", "not an object"),
    ],
    ids=["bad-header", "bad-json", "oversize", "not-an-object"],
)
def test_a_malformed_frame_fails_only_that_extension_with_a_protocol_error(
    project: Project, frame: bytes, reason: str
) -> None:
    """Garbage on the protocol stream fails its extension; the other one keeps serving."""
    project.add_extension(
        "garbler",
        f"""
        import os
        from sdk_extension import join_session, tool
        from sdk_extension._stdio import claim_protocol_stdio

        @tool(description="Break the protocol")
        def garble() -> str:
            os.write(claim_protocol_stdio()[1], {frame!r})
            return "sent"

        join_session(tools=[garble])
        """,
    )
    project.add_extension("calc", CALC)

    async def scenario() -> None:
        async with project.host() as host:
            result = await host.call_tool("garble")
            assert result.result_type == "failure"
            info = host.extension("garbler")
            assert info.status == "failed"
            assert info.error is not None and "protocol error" in info.error and reason in info.error
            assert (await host.call_tool("add", {"a": 2, "b": 2})).text_result_for_llm == "4"

    run(scenario())


def test_stopping_the_host_ends_extensions_by_end_of_stream_with_exit_code_zero(project: Project) -> None:
    """Closing stdin is enough: the SDK exits 0 long before SIGTERM would be sent."""
    project.add_extension("calc", CALC)

    async def scenario() -> None:
        host = project.host(timeouts=Timeouts(stop_grace=30))
        await host.start()
        instance = next(iter(host._supervisor.current()))
        process = instance.process
        assert process is not None
        await host.stop()
        assert process.returncode == 0
        assert not process_exists(process.pid)

    run(scenario())


PARTING_WORDS = """
    import os
    from sdk_extension._stdio import claim_protocol_stdio
    from extension_protocol.framing import FrameDecoder, encode_message

    read_fd, write_fd = claim_protocol_stdio()
    decoder = FrameDecoder()
    session_id = os.environ["SESSION_ID"]
    os.write(write_fd, encode_message({"jsonrpc": "2.0", "id": 1, "method": "session.resume",
                                       "params": {"sessionId": session_id, "tools": []}}))
    while os.read(read_fd, 65536):
        pass
    # Its stdin has closed: one last request, then gone, without waiting for an answer.
    os.write(write_fd, encode_message({"jsonrpc": "2.0", "id": 2, "method": "session.log",
                                       "params": {"sessionId": session_id, "message": "parting words"}}))
"""


def test_a_request_an_extension_sends_as_its_stdin_closes_still_reaches_the_session(project: Project) -> None:
    """What an extension writes between the end of its stdin and its exit is read and handled,
    not dropped with its pipe."""
    project.add_extension("parting", PARTING_WORDS)

    async def scenario() -> None:
        host = project.host()
        await host.start()
        assert host.extension("parting").status == "running"
        await host.stop()
        assert any(event["data"]["message"] == "parting words" for event in host.events.history("session.info"))

    run(scenario())


QUICK_LOGGER = """
    from sdk_extension import join_session

    session = join_session()
    session.log("ready")
"""


def test_a_short_stop_quiet_still_handles_a_log_sent_right_after_joining(project: Project) -> None:
    """With the one-shot commands' short quiet, a ``session.log`` sent the moment the join
    returns reaches the session before the extension is gone, and it exits cleanly."""
    project.add_extension("quick", QUICK_LOGGER)

    async def scenario() -> None:
        host = project.host(timeouts=Timeouts(stop_grace=2.0, stop_quiet=0.025))
        await host.start()
        instance = next(iter(host._supervisor.current()))
        process = instance.process
        assert process is not None
        await host.stop()
        assert any(event["data"]["message"] == "ready" for event in host.events.history("session.info"))
        assert process.returncode == 0

    run(scenario())


def test_stopping_the_host_also_ends_what_an_extension_started(project: Project) -> None:
    """A grandchild that ignores SIGTERM is killed with its extension's process group."""
    project.add_extension(
        "parent",
        """
        import subprocess, sys
        from sdk_extension import join_session
        child = subprocess.Popen([sys.executable, "-c",
            "import signal, threading; signal.signal(signal.SIGTERM, signal.SIG_IGN); threading.Event().wait(600)"])
        session = join_session()
        session.log(f"grandchild {child.pid}")
        """,
    )

    async def scenario() -> int:
        async with project.host(timeouts=Timeouts(stop_grace=1)) as host:
            event = await wait_for_event(host, lambda e: e["data"].get("message", "").startswith("grandchild "))
            grandchild = int(event["data"]["message"].split()[1])
            assert process_exists(grandchild)
        return grandchild

    grandchild = run(scenario())
    assert wait_for_exit(grandchild, timeout=15)


HOST_SCRIPT = """
import asyncio, json, sys
from extension_host import ExtensionHost

async def main():
    async with ExtensionHost(sys.argv[1], sys.argv[2]) as host:
        print(json.dumps([e.pid for e in host.extensions]), flush=True)
        await asyncio.Event().wait()

asyncio.run(main())
"""


def test_no_extension_survives_a_host_killed_with_sigkill(project: Project) -> None:
    """After SIGKILL of the host process, every extension exits by itself (joined or not)."""
    project.add_extension("calc", CALC)
    project.add_extension(
        "joiner",
        """
        from sdk_extension import join_session
        join_session()
        """,
    )
    host = subprocess.Popen(
        [sys.executable, "-c", HOST_SCRIPT, str(project.root), str(project.home)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert host.stdout is not None
        pids = json.loads(host.stdout.readline())
        assert len(pids) == 2 and all(process_exists(pid) for pid in pids)
        host.kill()
        host.wait(timeout=10)
        for pid in pids:
            assert wait_for_exit(pid, timeout=15), f"extension {pid} outlived its host"
    finally:
        host.kill()
        host.wait(timeout=10)
        if host.stdout:
            host.stdout.close()


def test_an_extension_that_never_joins_exits_when_its_host_dies(project: Project) -> None:
    """The launcher's lifeline ends an orphan even if it never calls join_session."""
    project.add_extension("sleeper", "import threading\nthreading.Event().wait(600)\n")
    assert_orphan_exits_when_host_is_killed(project, "project:sleeper")


LAUNCHING_PARENT = """
import os, subprocess, sys, threading
env = {k: v for k, v in os.environ.items() if k != "EXTENSION_HOST_LIFELINE_FD"}
env["EXTENSION_HOST_PARENT_PID"] = str(os.getpid())
child = subprocess.Popen([sys.executable, "-m", "sdk_extension", sys.argv[1]], env=env, start_new_session=True,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
print(child.pid, flush=True)
threading.Event().wait(600)
"""


def test_without_a_lifeline_the_launcher_still_takes_its_group_down_when_its_parent_dies(project: Project) -> None:
    """The fallback: a launcher run with only EXTENSION_HOST_PARENT_PID polls its parent pid."""
    folder = project.add_extension(
        "alone",
        """
        import subprocess, sys, threading
        sleeper = subprocess.Popen(["sleep", "1000"])
        print(f"sleeper {sleeper.pid}", file=sys.stderr, flush=True)
        threading.Event().wait(600)
        """,
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", LAUNCHING_PARENT, str(folder / "extension.py")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    extension = 0
    try:
        assert parent.stdout is not None and parent.stderr is not None
        extension = int(parent.stdout.readline())
        sleeper = int(parent.stderr.readline().split()[1])
        assert os.getpgid(sleeper) == extension
        parent.kill()
        parent.wait(timeout=10)
        assert wait_for_exit(extension, timeout=15), "the launcher outlived its parent"
        assert wait_for_exit(sleeper, timeout=15), "what the launcher started outlived its parent"
    finally:
        parent.kill()
        parent.wait(timeout=10)
        if extension:
            signal_group(extension, signal.SIGKILL)  # whatever a failed check left behind
        for stream in (parent.stdout, parent.stderr):
            if stream:
                stream.close()
