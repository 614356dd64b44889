"""Hot reload with real files and real processes: transactional swaps, failures, bursts, removal."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Final

import pytest

from extension_host import Timeouts
from helpers import Project, is_log, run, wait_for_event, wait_for_exit

pytestmark = pytest.mark.subprocess


def versioned(version: str, tool: str = "version", extra: str = "") -> str:
    return f"""
    import os
    from pathlib import Path
    from sdk_extension import join_session, tool

    @tool(description="Which version answers")
    def {tool}() -> str:
        return "{version}"
    {extra}
    session = join_session(tools=[{tool}])
    session.log("{version} ready in " + str(os.getpid()))
    """


def write(folder: Path, code: str) -> None:
    import textwrap

    (folder / "extension.py").write_text(textwrap.dedent(code), encoding="utf-8")


TIMEOUTS: Final = Timeouts(stop_grace=2.0, readiness=10.0)
"""The timeouts of these tests' hosts: a new version that never joins is given up (and the
running one kept) within the tests' waits."""


def change_of(extension: str, action: str) -> Any:
    """A predicate for the session.extensions_loaded event reporting this change."""

    def matches(event: Any) -> bool:
        if event["type"] != "session.extensions_loaded":
            return False
        return any(c["extension"] == extension and c["action"] == action for c in event["data"].get("changes", []))

    return matches


def test_saving_a_new_version_swaps_it_in_and_stops_the_old_process(project: Project) -> None:
    """The watcher reloads on save; the new version answers; the old process exits."""
    folder = project.add_extension("live", versioned("v1"))

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS) as host:
            old_pid = host.extension("live").pid
            assert (await host.call_tool("version")).text_result_for_llm == "v1"
            write(folder, versioned("v2"))
            await wait_for_event(host, change_of("project:live", "reloaded"), timeout=20)
            assert (await host.call_tool("version")).text_result_for_llm == "v2"
            info = host.extension("live")
            assert info.status == "running" and info.pid != old_pid and info.reload_error is None
            assert old_pid is not None and await asyncio.to_thread(wait_for_exit, old_pid, 15)
            # Each version's join announces its tool (as Copilot CLI does); the reload itself
            # changed nothing, so it adds no summary of changes.
            announced = [event["data"] for event in host.events.history("session.tools_updated")]
            assert announced == [{"added": ["version"], "extensionId": "project:live"}] * 2

    run(scenario())


def test_a_syntax_error_keeps_the_old_version_serving_until_it_is_fixed(project: Project) -> None:
    """A broken save is reported (kept, with the error); the fix is then picked up."""
    folder = project.add_extension("live", versioned("v1"))

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS) as host:
            write(folder, "def broken(:\n")
            await wait_for_event(host, change_of("project:live", "kept"), timeout=20)
            info = host.extension("live")
            assert info.status == "running"
            assert info.reload_error is not None and "SyntaxError" in info.reload_error
            assert (await host.call_tool("version")).text_result_for_llm == "v1"
            write(folder, versioned("v3"))
            await wait_for_event(host, change_of("project:live", "reloaded"), timeout=20)
            assert (await host.call_tool("version")).text_result_for_llm == "v3"
            assert host.extension("live").reload_error is None

    run(scenario())


def test_a_new_version_whose_tool_collides_is_rejected_and_the_old_one_serves(project: Project) -> None:
    """Reloading into a name another extension owns is refused; nothing changes."""
    project.add_extension("a_owner", versioned("owner", tool="taken"))
    folder = project.add_extension("b_live", versioned("v1"))

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS, watch=False) as host:
            write(folder, versioned("v2", tool="taken"))
            (outcome,) = await host.reload("b_live")
            assert outcome.action == "kept" and not outcome.ok
            assert outcome.error is not None and "'taken'" in outcome.error and "project:a_owner" in outcome.error
            assert (await host.call_tool("version")).text_result_for_llm == "v1"
            assert (await host.call_tool("taken")).text_result_for_llm == "owner"

    run(scenario())


def test_a_burst_of_saves_gives_one_or_two_reloads_and_no_pile_up(
    project: Project, reap_extension_processes: list[int]
) -> None:
    """Twenty quick saves end in the last version serving, after at most two reloads."""
    folder = project.add_extension("live", versioned("v0"))

    async def scenario() -> int:
        async with project.host(timeouts=TIMEOUTS) as host:
            for index in range(1, 21):
                write(folder, versioned(f"v{index}"))
            await wait_for_event(host, is_log_prefix("v20 ready"), timeout=20)
            assert (await host.call_tool("version")).text_result_for_llm == "v20"
            watcher = host._watcher
            assert watcher is not None
            return watcher.batches

    batches = run(scenario())
    assert 1 <= batches <= 2
    assert len(reap_extension_processes) <= 3  # the first start and at most two reloads


def is_log_prefix(prefix: str) -> Any:
    return lambda event: event["type"] == "session.info" and event["data"]["message"].startswith(prefix)


def hold_tool(release: Path, reply: str) -> str:
    """Source of a tool ``hold`` that logs "holding", then answers ``reply`` once ``release`` exists
    (bounded at 30 s); it needs ``threading``, ``Path``, ``tool`` and ``session`` in scope."""
    return f"""
    @tool(description="Hold until released")
    def hold() -> str:
        session.log("holding")
        for _ in range(3000):
            if Path({str(release)!r}).exists():
                break
            threading.Event().wait(0.01)
        return {reply!r}
    """


def test_calls_in_flight_finish_on_the_version_that_started_them(project: Project) -> None:
    """A call running during a reload answers from the old version, which then exits."""
    release = project.root / "release"
    folder = project.add_extension(
        "live",
        versioned(
            "v1",
            tool="version",
            extra=hold_tool(release, "held by v1") + "\n    import threading\n",
        ).replace("tools=[version]", "tools=[version, hold]"),
    )

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS, watch=False) as host:
            old_pid = host.extension("live").pid
            held = asyncio.ensure_future(host.call_tool("hold"))
            await wait_for_event(host, is_log("holding"))
            write(folder, versioned("v2"))
            (outcome,) = await host.reload("live")
            assert outcome.action == "reloaded"
            assert (await host.call_tool("version")).text_result_for_llm == "v2"
            assert old_pid is not None and not held.done()
            release.write_text("go")
            async with asyncio.timeout(20):
                assert (await held).text_result_for_llm == "held by v1"
            assert await asyncio.to_thread(wait_for_exit, old_pid, 15)

    run(scenario())


def test_new_and_removed_folders_start_and_stop_extensions_and_shadowing_follows(project: Project) -> None:
    """A new project folder shadows the user one; deleting it brings the user one back."""
    project.add_extension("tool", versioned("user version"), source="user")
    (project.root / ".github" / "extensions").mkdir(parents=True)

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS) as host:
            assert (await host.call_tool("version")).text_result_for_llm == "user version"
            user_pid = host.extension("user:tool").pid
            folder = project.add_extension("tool", versioned("project version"))
            await wait_for_event(host, change_of("project:tool", "started"), timeout=20)
            assert host.extension("user:tool").status == "shadowed"
            assert (await host.call_tool("version")).text_result_for_llm == "project version"
            assert user_pid is not None and await asyncio.to_thread(wait_for_exit, user_pid, 15)
            project_pid = host.extension("project:tool").pid
            (folder / "extension.py").unlink()
            await wait_for_event(host, change_of("project:tool", "stopped"), timeout=20)
            await wait_for_event(host, change_of("user:tool", "started"), timeout=20)
            assert (await host.call_tool("version")).text_result_for_llm == "user version"
            assert project_pid is not None and await asyncio.to_thread(wait_for_exit, project_pid, 15)

    run(scenario())


def test_deleting_a_folder_during_a_call_lets_the_call_finish_then_stops_the_process(project: Project) -> None:
    """The removed extension's tools go at once, but a running call completes cleanly."""
    release = project.root / "release"
    folder = project.add_extension(
        "doomed",
        """
    import threading
    from pathlib import Path
    from sdk_extension import join_session, tool
    """
        + hold_tool(release, "finished")
        + """
    session = join_session(tools=[hold])
    """,
    )

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS) as host:
            pid = host.extension("doomed").pid
            held = asyncio.ensure_future(host.call_tool("hold"))
            await wait_for_event(host, is_log("holding"))
            (folder / "extension.py").unlink()
            await wait_for_event(host, change_of("project:doomed", "stopped"), timeout=20)
            assert "hold" not in host.tools
            release.write_text("go")
            async with asyncio.timeout(20):
                result = await held
            assert result.result_type in ("success", "failure")
            assert pid is not None and await asyncio.to_thread(wait_for_exit, pid, 15)
            removed = host.events.history("session.tools_updated")
            assert removed and removed[-1]["data"]["removed"] == ["hold"]

    run(scenario())


def test_reload_all_restarts_every_extension(project: Project) -> None:
    """reload() stops everything, discovers again and starts everything."""
    project.add_extension("a", versioned("a1", tool="ta"))
    project.add_extension("b", versioned("b1", tool="tb"))

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS, watch=False) as host:
            before = {info.id: info.pid for info in host.extensions}
            outcomes = await host.reload()
            assert sorted((o.extension, o.action) for o in outcomes) == [
                ("project:a", "started"),
                ("project:b", "started"),
            ]
            after = {info.id: info.pid for info in host.extensions}
            assert all(after[key] != before[key] for key in before)
            assert (await host.call_tool("tb")).text_result_for_llm == "b1"

    run(scenario())


def test_renaming_a_folder_stops_the_old_name_and_starts_the_new_one(project: Project) -> None:
    """A rename is a stop plus a start; the tool keeps answering under the new extension."""
    folder = project.add_extension("before", versioned("v1"))

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS) as host:
            old_pid = host.extension("before").pid
            folder.rename(folder.parent / "after")
            await wait_for_event(host, change_of("project:after", "started"), timeout=20)
            await wait_for_event(host, change_of("project:before", "stopped"), timeout=20)
            assert [info.id for info in host.extensions] == ["project:after"]
            assert host.tools["version"].owner == "project:after"
            assert old_pid is not None and await asyncio.to_thread(wait_for_exit, old_pid, 15)

    run(scenario())


def test_a_kept_version_shows_the_reload_failure_in_the_listing(project: Project) -> None:
    """list's note column says the last reload failed and why."""
    from extension_host.frontends.render import extensions_table

    folder = project.add_extension("live", versioned("v1"))

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS, watch=False) as host:
            write(folder, "raise ImportError('missing dependency yaml')\n")
            (outcome,) = await host.reload("live")
            assert outcome.action == "kept"
            table = extensions_table(host.extensions)
            assert "last reload failed, this version kept serving" in table
            assert "ImportError: missing dependency yaml" in table

    run(scenario())


def test_a_save_inside_a_linked_extension_folder_reloads_that_extension(project: Project) -> None:
    """An extension folder that is a link to a checkout outside the project reloads on save."""
    checkout = project.root.parent / "checkout"
    checkout.mkdir()
    write(checkout, versioned("v1"))
    (project.root / ".github" / "extensions").mkdir(parents=True)
    (project.root / ".github" / "extensions" / "linked").symlink_to(checkout, target_is_directory=True)

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS) as host:
            assert (await host.call_tool("version")).text_result_for_llm == "v1"
            write(checkout, versioned("v2"))
            await wait_for_event(host, change_of("project:linked", "reloaded"), timeout=20)
            assert (await host.call_tool("version")).text_result_for_llm == "v2"

    run(scenario())


def test_a_file_saved_in_a_new_sub_folder_reloads_the_extension(project: Project) -> None:
    """The new folder is watched from the reload its creation caused on: a file saved in it then
    reloads the extension again, which reads it."""
    folder = project.add_extension(
        "live",
        """
    import os
    from pathlib import Path
    from sdk_extension import join_session

    session = join_session()
    data = Path(__file__).parent / "data" / "nested"
    session.log("sees " + (",".join(sorted(os.listdir(data))) if data.is_dir() else "no folder"))
    """,
    )

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS) as host:
            await wait_for_event(host, is_log("sees no folder"))
            (folder / "data" / "nested").mkdir(parents=True)
            await wait_for_event(host, is_log("sees "), timeout=20)
            (folder / "data" / "nested" / "notes.txt").write_text("notes", encoding="utf-8")
            await wait_for_event(host, is_log("sees notes.txt"), timeout=20)

    run(scenario())


def test_a_new_folder_earlier_in_load_order_never_takes_a_tool_from_a_running_extension(project: Project) -> None:
    """Only extensions started together settle collisions by load order: ``a`` appearing while
    ``b`` serves ``version`` fails with the collision error, and ``b`` keeps serving."""
    project.add_extension("b", versioned("b"))

    async def scenario() -> None:
        async with project.host(timeouts=TIMEOUTS) as host:
            project.add_extension("a", versioned("a"))
            await wait_for_event(host, change_of("project:a", "failed"), timeout=20)
            a, b = host.extensions
            assert (a.status, b.status) == ("failed", "running")
            assert a.error is not None and "'version' is already provided by extension project:b" in a.error
            assert (await host.call_tool("version")).text_result_for_llm == "b"

    run(scenario())
