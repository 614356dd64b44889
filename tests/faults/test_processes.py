"""Fault matrix, the process lifecycle's rows: a host killed with SIGKILL, a fork server killed
under running extensions, and a JavaScript extension that cannot import a package. Real host
and extension processes throughout; each test checks the outcome and that nothing is left
running. The figures the documentation quotes are printed (``pytest -s`` shows them)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from extension_host import Timeouts
from extension_host.launch.process import failure_line, tail_lines
from extension_host.project.paths import CACHE_ENV
from helpers import Project, run, wait_for_event, wait_for_exit

pytestmark = pytest.mark.subprocess

NODE = shutil.which("node") is not None and shutil.which("npm") is not None
needs_node = pytest.mark.skipif(not NODE, reason="node and npm are needed to run JavaScript extensions")
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="child subreapers are Linux's")

PY_SLEEPER = """
    import subprocess
    from sdk_extension import join_session, tool

    @tool(description="Start a process in this extension's group; return its pid")
    def start_sleeper() -> str:
        return str(subprocess.Popen(["sleep", "1000"]).pid)

    join_session(tools=[start_sleeper])
"""

JS_SLEEPER = """
    import { spawn } from "node:child_process";
    import { joinSession } from "@github/copilot-sdk/extension";

    await joinSession({
      tools: [{ name: "start_sleeper", description: "Start a process in this extension's group",
                handler: async () => String(spawn("sleep", ["1000"], { stdio: "ignore" }).pid) }],
    });
"""

ESCAPER = """
    import subprocess
    from sdk_extension import join_session, tool

    @tool(description="Start a process that leaves this extension's group and session")
    def escape() -> str:
        # setsid() in the child, done before Popen returns
        return str(subprocess.Popen(["sleep", "1000"], start_new_session=True).pid)

    join_session(tools=[escape])
"""

PROBE = """
    import os
    from sdk_extension import join_session, tool

    @tool(name="{name}_pid", description="This process's pid")
    def pid() -> str:
        return str(os.getpid())

    @tool(name="{name}_quit", description="Exit with code 7")
    def quit() -> str:
        os._exit(7)

    join_session(tools=[pid, quit])
"""

HOST = """
import asyncio, json, sys
from extension_host import ExtensionHost

async def main():
    async with ExtensionHost(sys.argv[1], sys.argv[2], readiness_timeout=120) as host:
        result = await host.call_tool(sys.argv[3])
        [info] = host.extensions
        server = host._fork_server.pid if host._fork_server is not None else None
        started = int(result.text_result_for_llm)
        print(json.dumps({"extension": info.pid, "started": started, "server": server}), flush=True)
        await asyncio.Event().wait()

asyncio.run(main())
"""


def _add(project: Project, name: str, entry: str, code: str) -> None:
    folder = project.root / ".github" / "extensions" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / entry).write_text(textwrap.dedent(code).lstrip(), encoding="utf-8")


def _kill_host_and_time_its_group(project: Project, tool: str, env: dict[str, str]) -> tuple[dict[str, Any], float]:
    """Start a host process, have it call ``tool``, SIGKILL it; return what it reported and the
    seconds from the kill until the extension, what it started and the fork server are gone."""
    host = subprocess.Popen(
        [sys.executable, "-c", HOST, str(project.root), str(project.home), tool],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert host.stdout is not None
        seen: dict[str, Any] = json.loads(host.stdout.readline())
        pids = [pid for pid in (seen["extension"], seen["started"], seen["server"]) if pid]
        killed = time.monotonic()
        host.kill()
        host.wait(timeout=10)
        for pid in pids:
            assert wait_for_exit(pid, timeout=15), f"process {pid} outlived its SIGKILLed host ({seen})"
        return seen, time.monotonic() - killed
    finally:
        host.kill()
        host.wait(timeout=10)
        if host.stdout:
            host.stdout.close()


@pytest.mark.parametrize("fork_server", ["1", "0"], ids=["forked", "spawned"])
def test_a_host_killed_with_sigkill_takes_each_python_extensions_process_group_with_it(
    project: Project, fork_server: str
) -> None:
    _add(project, "sleeper", "extension.py", PY_SLEEPER)
    env = {**os.environ, "EXTENSION_HOST_FORK_SERVER": fork_server}
    seen, elapsed = _kill_host_and_time_its_group(project, "start_sleeper", env)
    assert (seen["server"] is not None) == (fork_server == "1")
    print(f"host SIGKILLed ({'forked' if seen['server'] else 'spawned'}): group gone after {elapsed * 1000:.0f} ms")


@needs_node
def test_a_host_killed_with_sigkill_takes_a_javascript_extensions_process_group_with_it(
    project: Project, sdk_cache: Path
) -> None:
    _add(project, "sleeper", "extension.mjs", JS_SLEEPER)
    _seen, elapsed = _kill_host_and_time_its_group(project, "start_sleeper", {**os.environ, CACHE_ENV: str(sdk_cache)})
    print(f"host SIGKILLed (node): group gone after {elapsed * 1000:.0f} ms")


@linux_only
def test_a_process_that_left_its_extensions_group_is_ended_when_the_host_stops(project: Project) -> None:
    """setsid escapes the group kill; the fork server, a child subreaper, adopts and ends it."""
    _add(project, "escaper", "extension.py", ESCAPER)

    async def scenario() -> int:
        async with project.host(timeouts=Timeouts(stop_grace=1)) as host:
            result = await host.call_tool("escape")
            escaped = int(result.text_result_for_llm)
            assert os.getsid(escaped) == escaped, "the process did not leave the extension's session"
            extension = host.extension("escaper").pid
        assert extension is not None and wait_for_exit(extension, timeout=5)
        return escaped

    escaped = run(scenario())
    assert wait_for_exit(escaped, timeout=15), "a process that left its extension's group outlived the host"


@linux_only
def test_a_process_that_left_its_extensions_group_is_ended_when_the_host_is_killed(project: Project) -> None:
    _add(project, "escaper", "extension.py", ESCAPER)
    seen, elapsed = _kill_host_and_time_its_group(project, "escape", dict(os.environ))
    assert seen["server"] is not None
    print(f"host SIGKILLed: a process that left the group gone after {elapsed * 1000:.0f} ms")


def _parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[1])


def test_extensions_outlive_their_fork_server_and_the_next_start_gets_a_new_one(project: Project) -> None:
    _add(project, "alpha", "extension.py", PROBE.format(name="alpha"))
    _add(project, "beta", "extension.py", PROBE.format(name="beta"))
    pids: list[int] = []

    async def scenario() -> None:
        async with project.host(watch=False) as host:
            alpha, beta = host.extension("alpha").pid, host.extension("beta").pid
            assert alpha is not None and beta is not None
            server = _parent_of(alpha)
            pids.extend((alpha, beta, server))
            os.kill(server, signal.SIGKILL)
            assert wait_for_exit(server, timeout=10)

            # Still running, still answering.
            for name, pid in (("alpha", alpha), ("beta", beta)):
                assert host.extension(name).status == "running"
                result = await host.call_tool(f"{name}_pid")
                assert result.result_type == "success" and result.text_result_for_llm == str(pid)

            # An exit after the server's death is still seen, with an honest exit code.
            quit_at = time.monotonic()
            result = await host.call_tool("beta_quit")
            assert result.result_type == "failure"
            await wait_for_event(host, lambda e: e["type"] == "session.warning" and "beta" in e["data"]["message"])
            print(f"exit of a forked extension seen {(time.monotonic() - quit_at) * 1000:.0f} ms after it quit")
            error = host.extension("beta").error or ""
            assert host.extension("beta").status == "failed"
            assert "exited with an unknown exit code (the fork server that started it had died)" in error, error
            assert wait_for_exit(beta, timeout=10)
            with pytest.raises(ChildProcessError):
                os.waitpid(beta, os.WNOHANG)  # not a zombie of ours: init adopted and reaps it

            # The next start forks from a new server.
            await host.reload("alpha")
            info = host.extension("alpha")
            assert info.status == "running" and info.pid not in (None, alpha)
            assert info.pid is not None
            new_server = _parent_of(info.pid)
            assert new_server != server and new_server != os.getpid()
            assert "sdk_extension._forkserver" in Path(f"/proc/{new_server}/cmdline").read_text()
            pids.extend((info.pid, new_server))
            assert (await host.call_tool("alpha_pid")).text_result_for_llm == str(info.pid)

    run(scenario())
    for pid in pids:
        assert wait_for_exit(pid, timeout=10), f"process {pid} outlived the host's stop"


NODE_STDERR = Path(__file__).parent / "node_stderr"


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        (
            "esm_import_of_a_missing_package",
            "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'nonexistent-pkg' imported from /tmp/nodefx/missing.mjs",
        ),
        (
            "dynamic_import_of_a_missing_package",
            "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'nonexistent-pkg' imported from /tmp/nodefx/[eval]",
        ),
        ("require_of_a_missing_module", "Error: Cannot find module 'nonexistent-pkg'"),
        ("thrown_error", "Error: broken on purpose"),
        ("syntax_error", "SyntaxError: Unexpected token ','"),
        ("custom_error_class", "MyErr: custom"),
        ("thrown_string", "boom"),
        ("error_with_a_cause", "Error: outer"),
    ],
)
def test_the_failure_line_of_a_node_report_is_the_line_that_names_the_error(
    tmp_path: Path, fixture: str, expected: str
) -> None:
    """Real stderr of node 20 (see node_stderr/), after the host's start marker, as in a log."""
    log = tmp_path / "extension.log"
    log.write_bytes(b"=== 2026-01-01T00:00:00+00:00 starting project:x: node extension.mjs\n")
    with open(log, "ab") as out:
        out.write((NODE_STDERR / f"{fixture}.txt").read_bytes())
    assert failure_line(tail_lines(log, 200)) == expected


def test_the_failure_line_of_a_python_traceback_is_still_its_exception_line() -> None:
    lines = [
        "Traceback (most recent call last):",
        '  File "/x/extension.py", line 3, in <module>',
        "    import missing_module",
        "ModuleNotFoundError: No module named 'missing_module'",
    ]
    assert failure_line(lines) == "ModuleNotFoundError: No module named 'missing_module'"
    assert failure_line(["starting", "}"]) == "starting"
    assert failure_line(["    at x (file.js:1:1)", "}"]) is None


@needs_node
def test_a_javascript_extension_that_cannot_find_a_package_fails_with_that_line(
    project: Project, sdk_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(sdk_cache))
    _add(project, "broken", "extension.mjs", 'import missing from "no-such-package-anywhere";\nmissing();\n')

    async def scenario() -> int | None:
        async with project.host(timeouts=Timeouts(readiness=120)) as host:
            info = host.extension("broken")
            assert info.status == "failed"
            assert "exited with code 1 before joining: Error [ERR_MODULE_NOT_FOUND]: Cannot find package " in (
                info.error or ""
            ), info.error
            assert "'no-such-package-anywhere'" in (info.error or "")
            return info.pid

    pid = run(scenario(), timeout=180)
    assert pid is None or wait_for_exit(pid, timeout=5)
