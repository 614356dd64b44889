"""Fault matrix, the supervisor's rows: a hanging extension, a crashing one, a self-reloading
one, and one stopped right after it joined. Real extension processes throughout; each test
checks the outcome and that no extension process is left running."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path
from typing import Any, Final

import pytest

from extension_host import ExtensionHost, Timeouts
from extension_host.runtime.budget import CrashBudget, ReloadBudget
from helpers import Project, is_log, run, running_dev, wait_for_event, wait_for_exit

pytestmark = pytest.mark.subprocess


def joining(name: str, tool: str | None = None) -> str:
    """An extension that offers ``tool`` (default ``<name>_ping``) and logs '<name> joined'."""
    tool = tool or f"{name}_ping"
    return f"""
        from sdk_extension import join_session, tool

        @tool(name={tool!r}, description="Answer pong")
        def ping() -> str:
            return "pong from {name}"

        session = join_session(tools=[ping])
        session.log("{name} joined")
    """


@pytest.fixture
def spawned(reap_extension_processes: list[int]) -> list[int]:
    """Every extension process (and fork server) started in the test, as they are started."""
    return reap_extension_processes


TIMEOUTS: Final = Timeouts(stop_grace=1.0)
"""The timeouts of these tests' hosts: a stopping extension is given 1 s at each step."""


def assert_all_exited(pids: list[int]) -> None:
    """Every extension process the host started (and its fork server) has exited."""
    assert pids
    for pid in pids:
        assert wait_for_exit(pid, timeout=15), f"extension process {pid} is still running"


def reload_count(host: ExtensionHost, extension_id: str) -> int:
    return sum(
        1
        for event in host.events.history("session.extensions_loaded")
        for change in event["data"]["changes"]
        if change["extension"] == extension_id and change["action"] == "reloaded"
    )


def is_warning(*fragments: str) -> Any:
    """A predicate matching a session.warning whose message contains every fragment."""
    return lambda event: (
        event["type"] == "session.warning" and all(fragment in event["data"]["message"] for fragment in fragments)
    )


# -- the first extension hangs at import --------------------------------------------------


def test_an_extension_that_hangs_at_import_delays_and_fails_only_itself(project: Project, spawned: list[int]) -> None:
    """``a`` (first in load order) never joins; ``b`` and ``c`` are running and serve calls while
    ``a`` is still starting, and ``a`` alone fails with the readiness timeout."""
    project.add_extension("a", "import time\ntime.sleep(3600)\n")
    project.add_extension("b", joining("b"))
    project.add_extension("c", joining("c"))

    async def scenario() -> None:
        host = project.host(timeouts=Timeouts(stop_grace=1.0, readiness=5), watch=False)
        starting = asyncio.ensure_future(host.start())
        try:
            await wait_for_event(host, is_log("b joined"), timeout=30)
            await wait_for_event(host, is_log("c joined"), timeout=30)
            statuses = {info.id: info.status for info in host.extensions}
            assert statuses == {"project:a": "starting", "project:b": "running", "project:c": "running"}
            result = await host.call_tool("b_ping")
            assert result.text_result_for_llm == "pong from b"
            assert not starting.done()
            await starting
            a, b, c = host.extensions
            assert (a.status, b.status, c.status) == ("failed", "running", "running")
            assert a.error is not None and a.error.startswith("did not join within 5 s")
            assert b.error is None and c.error is None
        finally:
            await host.stop()
        assert_all_exited(spawned)

    run(scenario())


LATE_A = """
    import time
    from pathlib import Path
    from sdk_extension import join_session, tool

    # Joins only once b has started serving its copy of the tool (bounded wait).
    marker = Path("b-is-serving")
    deadline = time.monotonic() + 30
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.02)

    @tool(name="t", description="a's t")
    def t() -> str:
        return "from a"

    session = join_session(tools=[t])
    session.log("a joined")
"""

LATE_B = """
    import time
    from pathlib import Path
    from sdk_extension import join_session, tool

    @tool(name="t", description="b's t: lets a join, then takes its time")
    def t() -> str:
        Path("b-is-serving").write_text("yes")
        time.sleep(60)
        return "from b"

    session = join_session(tools=[t])
    session.log("b joined")
"""


def test_an_earlier_extension_that_joins_late_takes_its_tool_from_a_later_one(
    project: Project, spawned: list[int]
) -> None:
    """``a`` is earlier in load order but joins after ``b``, and both declare ``t``: ``b`` fails
    with the collision error naming ``t`` and ``project:a`` (its call in flight ends with a
    failure), ``a`` serves ``t``: the end state loading in order gives."""
    project.add_extension("a", LATE_A)
    project.add_extension("b", LATE_B)

    async def scenario() -> None:
        host = project.host(timeouts=Timeouts(stop_grace=1.0, tool=60), watch=False)
        starting = asyncio.ensure_future(host.start())
        try:
            await wait_for_event(host, is_log("b joined"), timeout=30)
            assert host.tools["t"].owner == "project:b"
            result = await host.call_tool("t")  # lets a join; a evicts b mid-call
            await starting
            assert result.result_type == "failure"
            assert result.error is not None and "project:b failed" in result.error
            a, b = host.extensions
            assert (a.status, b.status) == ("running", "failed")
            assert b.error is not None and "'t'" in b.error and "project:a" in b.error
            assert host.tools["t"].owner == "project:a"
            assert (await host.call_tool("t")).text_result_for_llm == "from a"
            await wait_for_event(host, is_warning("extension project:b failed: tool 't'"))
        finally:
            await host.stop()
        assert_all_exited(spawned)

    run(scenario())


def chained(name: str, tools: list[str], wait_for: str | None) -> str:
    """An extension offering ``tools`` that joins once the file ``wait_for`` exists (bounded)."""
    return f"""
        import time
        from pathlib import Path
        from sdk_extension import join_session, tool

        deadline = time.monotonic() + 30
        while {wait_for!r} and not Path({wait_for!r}).exists() and time.monotonic() < deadline:
            time.sleep(0.02)

        def make(tool_name):
            @tool(name=tool_name, description="answer who")
            def answer() -> str:
                return "from {name}"
            return answer

        session = join_session(tools=[make(t) for t in {tools!r}])
        Path("{name}-joined").write_text("yes")
    """


def test_collisions_in_a_chain_end_as_load_order_says_whatever_order_the_extensions_join_in(
    project: Project, spawned: list[int]
) -> None:
    """``a`` offers t, ``b`` t and u, ``c`` u; they join c, then b, then a. In load order ``a``
    takes t, so ``b`` fails, so ``c`` keeps u: ``b`` may not evict ``c`` before ``a`` has
    decided ``b``'s fate, and it waits for that (it is the only one that waits)."""
    project.add_extension("a", chained("a", ["t"], "go-a"))
    project.add_extension("b", chained("b", ["t", "u"], "c-joined"))
    project.add_extension("c", chained("c", ["u"], None))

    async def scenario() -> None:
        host = project.host(timeouts=TIMEOUTS, watch=False)
        starting = asyncio.ensure_future(host.start())
        try:
            # Once b has joined (and waits for a, or, were it wrong, took u from c), a may join.
            def b_has_joined() -> bool:
                b = next((i for i in host._supervisor.current() if i.id == "project:b"), None)
                return b is not None and (b._arbitrating or b.settled.is_set())

            async with asyncio.timeout(30):
                while not b_has_joined():
                    await asyncio.sleep(0.02)
            (project.root / "go-a").write_text("yes")
            await starting
            a, b, c = host.extensions
            assert (a.status, b.status, c.status) == ("running", "failed", "running")
            assert b.error is not None and "'t'" in b.error and "project:a" in b.error
            assert (host.tools["t"].owner, host.tools["u"].owner) == ("project:a", "project:c")
            assert (await host.call_tool("u")).text_result_for_llm == "from c"
        finally:
            await host.stop()
        assert_all_exited(spawned)

    run(scenario())


# -- an extension crashes after joining -------------------------------------------------

CRASHY = """
    import os
    from pathlib import Path
    from sdk_extension import join_session, tool

    with open("starts.txt", "a") as starts:
        starts.write(f"{os.getpid()}\\n")

    @tool(description="Crash while Path('crash') exists, else answer")
    def boom() -> str:
        if Path("crash").exists():
            os._exit(3)
        return "fine"

    session = join_session(tools=[boom])
"""

FAST = CrashBudget(restarts=3, window=300, backoff=0.05)


def test_an_extension_that_crashes_after_joining_is_restarted_then_quarantined(
    project: Project, spawned: list[int]
) -> None:
    """A long-running host restarts a crashed extension with a backoff, three times; the fourth
    crash quarantines it (no more restarts), and a reload by name brings it back."""
    project.add_extension("crashy", CRASHY)
    (project.root / "crash").write_text("yes")
    starts = project.root / "starts.txt"

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS, crash_budget=FAST) as host:
            for attempt in (1, 2, 3):
                result = await host.call_tool("boom")
                assert result.result_type == "failure"
                delay = 0.05 * 2 ** (attempt - 1)
                await wait_for_event(
                    host,
                    is_warning(
                        "extension project:crashy crashed (exited with code 3 while running",
                        f"restarting it in {delay:g} s (restart {attempt} of 3 within 5 min)",
                    ),
                )
                restarted = f"extension project:crashy restarted after a crash (restart {attempt} of 3"
                await wait_for_event(host, is_log_prefix(restarted))
                assert host.extension("crashy").status == "running"
            assert (await host.call_tool("boom")).result_type == "failure"
            await wait_for_event(
                host,
                is_warning(
                    "extension project:crashy crashed again after 3 restarts within 5 min; quarantined: "
                    "it is not restarted until its files change or 'extensions reload crashy'"
                ),
            )
            info = host.extension("crashy")
            assert info.status == "quarantined"
            assert info.error is not None and "exited with code 3 while running" in info.error
            assert info.to_json()["status"] == "quarantined"
            assert "boom" not in host.tools
            call = await host.call_tool("boom")
            assert call.result_type == "failure"
            assert call.error is not None and "extension project:crashy quarantined: exited with code 3" in call.error
            assert len(starts.read_text().split()) == 4  # the first start and three restarts

            (project.root / "crash").unlink()
            (outcome,) = await host.reload("crashy")
            assert (outcome.action, outcome.status) == ("reloaded", "running")
            assert (await host.call_tool("boom")).text_result_for_llm == "fine"
        assert_all_exited(spawned)

    run(scenario())


def test_stopping_the_host_while_a_restart_waits_for_its_backoff_stops_at_once(
    project: Project, spawned: list[int]
) -> None:
    """A restart due in 60 s does not hold up the host's stop, and never happens."""
    project.add_extension("crashy", CRASHY)
    (project.root / "crash").write_text("yes")

    async def scenario() -> None:
        host = project.host(timeouts=TIMEOUTS, crash_budget=CrashBudget(restarts=3, window=300, backoff=60))
        async with host:
            assert (await host.call_tool("boom")).result_type == "failure"
            await wait_for_event(host, is_warning("restarting it in 60 s (restart 1 of 3"))
            loop = asyncio.get_running_loop()
            began = loop.time()
        assert loop.time() - began < 15  # not the 60 s backoff
        assert len((project.root / "starts.txt").read_text().split()) == 1
        assert_all_exited(spawned)

    run(scenario())


def is_log_prefix(prefix: str) -> Any:
    return lambda event: event["type"] == "session.info" and event["data"].get("message", "").startswith(prefix)


def test_a_one_shot_host_does_not_restart_a_crashed_extension(project: Project, spawned: list[int]) -> None:
    """Without watching (one-shot commands) a crash leaves the extension failed, not restarted."""
    project.add_extension("crashy", CRASHY)
    (project.root / "crash").write_text("yes")

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS, watch=False, crash_budget=FAST) as host:
            assert (await host.call_tool("boom")).result_type == "failure"
            await wait_for_event(host, is_warning("extension project:crashy failed: exited with code 3"))
            assert host.extension("crashy").status == "failed"
            warnings = [event["data"]["message"] for event in host.events.history("session.warning")]
            assert not any("restarting" in warning for warning in warnings)
            assert len((project.root / "starts.txt").read_text().split()) == 1
        assert_all_exited(spawned)

    run(scenario())


# -- an extension writes into its own folder ----------------------------------------------

SELF_WRITER = """
    import os
    from pathlib import Path
    from sdk_extension import join_session

    session = join_session()
    with open(Path(__file__).parent / "notes.txt", "a") as notes:
        notes.write(f"joined {os.getpid()}\\n")
"""


def save(folder: Path) -> None:
    """Save the extension's file again (a change, as an editor makes it)."""
    (folder / "extension.py").write_text((folder / "extension.py").read_text() + "# saved\n")


def test_an_extension_that_writes_into_its_own_folder_has_its_watching_paused(
    project: Project, spawned: list[int]
) -> None:
    """Each join writes into the extension's folder, which reloads it: after five reloads its
    watching pauses with a warning saying how to resume; a later save of another extension
    reloads that one and not the writer."""
    writer = project.add_extension("writer", SELF_WRITER)
    other = project.add_extension("other", joining("other"))

    paused = is_warning(
        "extension project:writer reloaded 5 times within 10 s (does it write into its own folder?); "
        "its file changes are ignored until 'extensions reload writer'"
    )

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS, reload_budget=ReloadBudget(reloads=5, window=10)) as host:
            save(writer)  # its first write came before watching began: a save starts the storm
            first = await wait_for_event(host, paused, timeout=60)
            reloads = reload_count(host, "project:writer")
            writes = (writer / "notes.txt").read_text().count("joined")
            assert reloads <= 5 and writes <= 6
            assert host.extension("writer").status == "running"

            code = (other / "extension.py").read_text()
            (other / "extension.py").write_text(code.replace("other joined", "other v2"))
            await wait_for_event(host, is_log("other v2"), timeout=30)
            assert reload_count(host, "project:writer") == reloads
            assert (writer / "notes.txt").read_text().count("joined") == writes
            assert host.extension("writer").status == "running"

            # Reloading it by name resumes its watching (and, as it still writes, pauses it again).
            (outcome,) = await host.reload("writer")
            assert outcome.action == "reloaded"
            await wait_for_event(host, lambda event: paused(event) and event["id"] != first["id"], timeout=60)
        assert_all_exited(spawned)

    run(scenario(), timeout=120)


# -- a one-shot command stops an extension right after it joins ------------------------

RAW_LOGGER = """
    import os
    from pathlib import Path
    from sdk_extension._stdio import claim_protocol_stdio
    from extension_protocol.framing import FrameDecoder, encode_message

    Path("pid.txt").write_text(str(os.getpid()))
    read_fd, write_fd = claim_protocol_stdio()
    decoder = FrameDecoder()
    received = []

    def answer_to(request_id):
        while True:
            for message in received:
                if message.get("id") == request_id:
                    return message
            data = os.read(read_fd, 65536)
            if not data:
                return None
            received.extend(decoder.feed(data))

    session_id = os.environ["SESSION_ID"]
    os.write(write_fd, encode_message({"jsonrpc": "2.0", "id": 1, "method": "session.resume",
                                       "params": {"sessionId": session_id, "tools": []}}))
    joined = answer_to(1)
    # Sent the moment the join is answered, as Copilot extensions log "ready".
    os.write(write_fd, encode_message({"jsonrpc": "2.0", "id": 2, "method": "session.log",
                                       "params": {"sessionId": session_id, "message": "ready"}}))
    logged = answer_to(2)
    if logged is None:
        print("ConnectionError: the host closed the connection before answering session.log", flush=True)
    Path("answer.txt").write_text("answered" if logged and "result" in logged else "no answer")
    while os.read(read_fd, 65536):
        pass
"""


def test_list_answers_a_request_sent_right_after_joining_before_stopping_the_extension(project: Project) -> None:
    """``extensions list`` stops every extension right after start: a ``session.log`` sent the
    moment the join was answered is answered first, and the extension's log has no error."""
    project.add_extension("logger", RAW_LOGGER)
    completed = subprocess.run(
        [*project.command(), "list"],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )
    assert completed.returncode == 0, completed.stderr
    assert "project:logger  running" in completed.stdout
    assert (project.root / "answer.txt").read_text() == "answered"
    log = next((project.home / "logs").rglob("*logger*.log")).read_text()
    assert "ConnectionError" not in log
    assert wait_for_exit(int((project.root / "pid.txt").read_text()), timeout=15)


def test_extensions_reload_resumes_the_paused_watching_of_a_running_dev(project: Project) -> None:
    """In ``dev``, the pause warning names ``extensions reload writer``; run from another shell,
    that reloads it and resumes its watching (so this writer's storm, and its pause, come back)."""
    writer = project.add_extension("writer", SELF_WRITER)
    pause = (
        r"\[project:writer\] warning: extension project:writer reloaded 5 times within 10 s "
        r".*'extensions reload writer'"
    )

    async def scenario() -> None:
        async with running_dev(project) as dev:
            save(writer)
            await dev.expect(pause, timeout=60)
            reload = await asyncio.create_subprocess_exec(
                *project.command(),
                "reload",
                "writer",
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            async with asyncio.timeout(60):
                out, _ = await reload.communicate()
            assert reload.returncode == 0 and "project:writer  reloaded" in out.decode()
            await dev.expect(pause, timeout=60)
            await dev.send("quit")
            async with asyncio.timeout(30):
                assert await dev.process.wait() == 0
        pids = [int(line.split()[1]) for line in (writer / "notes.txt").read_text().splitlines()]
        assert_all_exited(pids)

    run(scenario(), timeout=150)
