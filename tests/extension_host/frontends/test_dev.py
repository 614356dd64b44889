"""``extensions dev`` as a user runs it: a real process, commands on stdin, signals to stop."""

from __future__ import annotations

import asyncio
import json
import signal
import textwrap

import pytest

from helpers import VERSIONED, Project, run, running_dev, wait_for_exit

pytestmark = pytest.mark.subprocess


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_dev_serves_reloads_on_save_and_leaves_no_process_when_signalled(
    project: Project, stop_signal: signal.Signals
) -> None:
    """call, a save that reloads, list, then a signal: dev exits 0 and every extension is gone."""
    folder = project.add_extension("live", VERSIONED.format(version="v1"))

    async def scenario() -> None:
        async with running_dev(project) as dev:
            await dev.send("call version")
            await dev.expect(r"^v1$")
            (folder / "extension.py").write_text(textwrap.dedent(VERSIONED.format(version="v2")))
            await dev.expect(r"project:live: reloaded \(tools: version\)")
            await dev.send("call version")
            await dev.expect(r"^v2$")
            await dev.send("list")
            found = await dev.expect(r"^project:live\s+running\s+(\d+)")
            pid = int(found.group(1))
            dev.process.send_signal(stop_signal)
            async with asyncio.timeout(30):
                assert await dev.process.wait() == 0
            assert await asyncio.to_thread(wait_for_exit, pid, 15)
            assert any("v2 ready" in line for line in dev.seen)

    run(scenario())


def test_dev_reports_a_broken_save_and_keeps_taking_commands(project: Project) -> None:
    """A syntax error is reported with the running version kept; quit stops dev."""
    folder = project.add_extension("live", VERSIONED.format(version="v1"))

    async def scenario() -> None:
        async with running_dev(project) as dev:
            (folder / "extension.py").write_text("def broken(:\n")
            await dev.expect(r"project:live: kept \(new version failed, the running one keeps serving: .*SyntaxError")
            await dev.send("call version")
            await dev.expect(r"^v1$")
            await dev.send("call nope")
            await dev.expect(r"error: no tool named 'nope'")
            await dev.send("quit")
            await dev.expect(r"^stopped$")
            async with asyncio.timeout(30):
                assert await dev.process.wait() == 0

    run(scenario())


def test_a_running_dev_answers_list_from_another_shell_and_refuses_a_second_dev(project: Project) -> None:
    """extensions list talks to the running host (same pid); a second dev exits 1 naming it."""
    project.add_extension("live", VERSIONED.format(version="v1"))

    async def scenario() -> None:
        async with running_dev(project) as dev:
            await dev.send("list")
            pid = int((await dev.expect(r"^project:live\s+running\s+(\d+)")).group(1))
            listing = await asyncio.create_subprocess_exec(
                *project.command("list", "--json"),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            async with asyncio.timeout(30):
                out, err = await listing.communicate()
            assert listing.returncode == 0
            assert json.loads(out)["extensions"][0]["pid"] == pid
            assert b"from the running host" in err
            second = await asyncio.create_subprocess_exec(
                *project.command("dev"),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
            )
            async with asyncio.timeout(30):
                out, _ = await second.communicate()
            assert second.returncode == 1
            assert b"already running" in out
            await dev.send("quit")
            async with asyncio.timeout(30):
                assert await dev.process.wait() == 0

    run(scenario())


CHATTY = r"""
    from sdk_extension import join_session, tool

    @tool(description="Logs lines that pose as others'")
    def chatter() -> str:
        session.log("line 1\n[project:other] not mine\x1b[2J\n[host] stopped")
        session.log("careful\nstill me", level="warning")
        return "logged"

    session = join_session(tools=[chatter])
"""


def test_dev_prints_the_extension_prefix_on_every_line_of_a_session_log(project: Project) -> None:
    """A multi-line session.log cannot print a line that looks like another extension's or the
    host's: each line carries its extension's prefix, and its controls are shown as escapes."""
    project.add_extension("chatty", CHATTY)
    expected = {
        "[project:chatty] line 1",
        "[project:chatty] [project:other] not mine\\x1b[2J",
        "[project:chatty] [host] stopped",
        "[project:chatty] warning: careful",
        "[project:chatty] warning: still me",
    }

    async def scenario() -> None:
        async with running_dev(project) as dev:
            await dev.send("call chatter")
            await dev.expect(r"^logged$")
            async with asyncio.timeout(20):
                while not expected <= set(dev.seen):
                    await dev.expect("")
            said = ("line 1", "not mine", "[host] stopped", "careful", "still me")
            printed = [line for line in dev.seen if any(words in line for words in said)]
            assert set(printed) == expected
            assert not any("\x1b" in line for line in dev.seen)
            await dev.send("quit")
            async with asyncio.timeout(30):
                assert await dev.process.wait() == 0

    run(scenario())


def test_dev_reads_commands_from_a_file_and_keeps_running_at_its_end(project: Project, tmp_path: object) -> None:
    """``extensions dev < commands.txt``: each line runs, then dev serves until SIGTERM, with no
    traceback on stderr."""
    from pathlib import Path

    project.add_extension("live", VERSIONED.format(version="v1"))
    commands = Path(str(tmp_path)) / "commands.txt"
    commands.write_text("call version\nlist\n")

    async def scenario() -> tuple[int, bytes]:
        with open(commands, "rb") as stdin:
            process = await asyncio.create_subprocess_exec(
                *project.command(),
                "dev",
                stdin=stdin,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        try:
            assert process.stdout is not None and process.stderr is not None
            seen: list[str] = []
            async with asyncio.timeout(30):
                # The call's answer, then the list's row: both commands ran.
                while "v1" not in seen or not any(line.startswith("project:live") for line in seen[seen.index("v1") :]):
                    line = (await process.stdout.readline()).decode()
                    assert line, f"dev ended early: {seen}"
                    seen.append(line.rstrip("\n"))
            assert process.returncode is None  # the end of its stdin did not end it
            process.send_signal(signal.SIGTERM)
            async with asyncio.timeout(30):
                code = await process.wait()
            return code, await process.stderr.read()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()

    code, stderr = run(scenario())
    assert code == 0
    assert b"Traceback" not in stderr, stderr.decode()
