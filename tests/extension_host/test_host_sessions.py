"""The host's persisted session with real extensions and a real host process: kill -9 and resume,
the lock between hosts, new_session (/clear), the workspace, replay on subscribe."""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import select
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from extension_host import AgentReply, ExtensionHost, ScriptedAgent
from extension_host.errors import SessionIdError, SessionLockedError, UnknownSessionError
from extension_protocol.protocol import Event
from helpers import Project, run, wait_for_event

pytestmark = pytest.mark.subprocess

RECORDER = """
    import os
    from pathlib import Path
    from sdk_extension import join_session, tool

    TRAIL = Path(os.environ["SESSION_TRAIL"])
    state = {"calls": 0}

    def remember(line):
        with TRAIL.open("a") as trail:
            trail.write(line + "\\n")

    def on_start(input, invocation):
        remember(f"start {input.source} {invocation.session_id}")

    def on_end(input, invocation):
        remember(f"end {input.reason} {invocation.session_id}")

    @tool(description="What this process knows of its session")
    def whoami() -> str:
        state["calls"] += 1
        return f"{os.getpid()} {os.environ['SESSION_ID']} {session.workspace_path} {state['calls']}"

    @tool(description="Echo")
    def echo(text: str) -> str:
        return text

    session = join_session(tools=[whoami, echo], hooks={"on_session_start": on_start, "on_session_end": on_end})
"""

EMBEDDING_HOST = """
    import asyncio, json, os, sys
    from extension_host import ExtensionHost

    async def main():
        host = ExtensionHost(sys.argv[1], sys.argv[2], watch=False)
        await host.start()
        for number in range(3):
            await host.call_tool("echo", {"text": str(number)})
        host.events.emit("user.message", {"content": "a prompt before the crash"})
        written = [event["id"] for event in host.replay()]  # flushed and read back from disk
        print(json.dumps({"session": host.session_id, "ids": written}), flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())
"""


AGENT_HOST = """
    import asyncio, dataclasses, json, sys
    from extension_host import AgentReply, ExtensionHost, ScriptedAgent, ToolCall

    def context(host):
        return [json.loads(json.dumps(dataclasses.asdict(m), default=str)) for m in host.model_context.messages]

    async def main():
        agent = ScriptedAgent([
            [AgentReply(tool_calls=(ToolCall("echo", {"text": "from the agent"}),)), AgentReply("echoed it")],
            [AgentReply("and that is all")],
        ])
        host = ExtensionHost(sys.argv[1], sys.argv[2], watch=False, agent=agent)
        await host.start()
        await host.send_and_wait("echo something")
        await host.send_and_wait("anything else?")
        list(host.replay())  # written out before the context is reported
        print(json.dumps({"session": host.session_id, "context": context(host)}), flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())
"""


def context_of(host: ExtensionHost) -> list[Any]:
    return [json.loads(json.dumps(dataclasses.asdict(message), default=str)) for message in host.model_context.messages]


def test_a_session_resumed_after_kill_9_gives_the_agent_the_same_model_context(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder(project, tmp_path, monkeypatch)
    script = tmp_path / "agent_host.py"
    script.write_text(textwrap.dedent(AGENT_HOST), encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, str(script), str(project.root), str(project.home)], stdout=subprocess.PIPE, text=True
    )
    try:
        before = json.loads(read_line(process))
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        assert process.stdout is not None
        process.stdout.close()
    roles = [message["role"] for message in before["context"]]
    assert roles.count("user") == 2 and "tool" in roles and roles[-1] == "assistant"

    async def resume() -> list[Any]:
        async with project.host(session=before["session"], watch=False) as host:
            return context_of(host)

    assert run(resume()) == before["context"]


def recorder(project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    trail = tmp_path / "trail.txt"
    monkeypatch.setenv("SESSION_TRAIL", str(trail))
    project.add_extension("recorder", RECORDER)
    return trail


def read_line(process: subprocess.Popen[str], timeout: float = 60) -> str:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    assert ready, "the host process printed nothing in time"
    return process.stdout.readline()


def test_a_killed_host_leaves_every_written_event_and_a_resume_chains_on_them(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder(project, tmp_path, monkeypatch)
    script = tmp_path / "embed.py"
    script.write_text(textwrap.dedent(EMBEDDING_HOST), encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, str(script), str(project.root), str(project.home)], stdout=subprocess.PIPE, text=True
    )
    try:
        before = json.loads(read_line(process))
        session_id = before["session"]

        # While it runs, no other host may have the session.
        with pytest.raises(SessionLockedError) as refused:
            run(project.host(session=session_id, watch=False).start())
        assert refused.value.pid == process.pid
        assert f"session {session_id} is in use by process {process.pid}" in str(refused.value)
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        assert process.stdout is not None
        process.stdout.close()
    events_path = project.home / "sessions" / session_id / "events.jsonl"
    with events_path.open("ab") as log:
        log.write(b'{"id":"half-written","type":"user.mess')  # what a crash mid-write leaves

    async def resume() -> tuple[list[Event], list[Event], str]:
        async with project.host(session=session_id, watch=False) as host:
            replayed: list[Event] = []
            host.on_event(replayed.append, replay=True)
            result = await host.call_tool("echo", {"text": "after the crash"})
            return replayed, list(host.replay()), result.text_result_for_llm

    replayed, everything, text = run(resume())
    assert text == "after the crash"
    ids = before["ids"]
    assert [event["id"] for event in replayed[: len(ids)]] == ids
    types = [event["type"] for event in replayed]
    assert types[0] == "session.start" and types.count("tool.execution_complete") >= 3
    assert "user.message" in types and "session.shutdown" not in types[: len(ids)]
    resume_event = replayed[len(ids)]
    assert resume_event["type"] == "session.resume" and resume_event["parentId"] == ids[-1]
    assert resume_event["data"]["eventCount"] == len(ids)
    warning = replayed[len(ids) + 1]
    assert warning["type"] == "session.warning" and "its last line was cut short" in warning["data"]["message"]
    assert all(later["parentId"] == earlier["id"] for earlier, later in itertools.pairwise(everything))
    assert everything[-1]["type"] == "tool.execution_complete"
    lines = events_path.read_bytes().splitlines(keepends=True)
    assert all(line.endswith(b"}\n") for line in lines)
    assert json.loads(lines[-1])["type"] == "session.shutdown"


def test_new_session_ends_the_old_one_reloads_every_extension_and_starts_a_new_id(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trail = recorder(project, tmp_path, monkeypatch)

    async def scenario() -> tuple[str, str, str, str, list[str]]:
        async with project.host(watch=False) as host:
            old = host.session_id
            before = (await host.call_tool("whoami")).text_result_for_llm
            await host.call_tool("whoami")
            new = await host.new_session()
            assert host.session_id == new
            after = (await host.call_tool("whoami")).text_result_for_llm
            lines = trail.read_text().splitlines()
            return old, new, before, after, lines

    old, new, before, after, lines = run(scenario())
    assert new != old
    old_pid, old_env, old_workspace, _ = before.split()
    new_pid, new_env, new_workspace, calls = after.split()
    assert (old_env, new_env) == (old, new)
    assert new_pid != old_pid and calls == "1"  # a new process: its memory is gone
    assert old_workspace == str(project.home / "sessions" / old / "files")
    assert new_workspace == str(project.home / "sessions" / new / "files") and Path(new_workspace).is_dir()
    assert lines == [f"start new {old}", f"end complete {old}", f"start new {new}"]
    store = project.home / "sessions"
    old_types = [json.loads(line)["type"] for line in (store / old / "events.jsonl").read_bytes().splitlines()]
    assert old_types[0] == "session.start" and old_types[-1] == "session.shutdown"
    first_new = json.loads((store / new / "events.jsonl").read_bytes().splitlines()[0])
    assert first_new["type"] == "session.start" and first_new["parentId"] is None


def test_resuming_runs_the_start_hooks_with_source_resume(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trail = recorder(project, tmp_path, monkeypatch)

    async def scenario() -> str:
        async with project.host(watch=False) as host:
            session_id = host.session_id
        async with project.host(session=session_id, watch=False) as host:
            assert host.session_id == session_id
            assert host.workspace_path == project.home / "sessions" / session_id / "files"
        return session_id

    session_id = run(scenario())
    assert trail.read_text().splitlines() == [
        f"start new {session_id}",
        f"end complete {session_id}",
        f"start resume {session_id}",
        f"end complete {session_id}",
    ]


@pytest.mark.parametrize(
    ("session", "error", "message"),
    [
        ("../elsewhere", SessionIdError, "'../elsewhere' is not a session id"),
        ("no-such-session", UnknownSessionError, "session no-such-session: no such session"),
    ],
)
def test_a_bad_or_unknown_session_id_is_refused_before_anything_starts(
    project: Project, session: str, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        project.host(session=session)


def test_another_projects_session_is_refused_naming_that_project(project: Project, tmp_path: Path) -> None:
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)

    async def make() -> str:
        async with ExtensionHost(other, project.home, watch=False) as host:
            return host.session_id

    session_id = run(make())
    with pytest.raises(UnknownSessionError, match=f"it belongs to project {other}, not {project.root}"):
        project.host(session=session_id)


def test_without_persistence_nothing_is_written_and_there_is_no_workspace(project: Project) -> None:
    async def scenario() -> Any:
        async with project.host(watch=False, persist=False) as host:
            host.events.emit("user.message", {"content": "not kept"})
            return host.workspace_path, [event["type"] for event in host.replay()]

    workspace, types = run(scenario())
    assert workspace is None and types == ["session.start", "user.message"]
    assert not (project.home / "sessions").exists()


TIMELINE = """
    from sdk_extension import join_session

    session = join_session()
    session.log("plain")
    session.log("quota nearly used", "warning", category="quota", url="https://example.com/quota")
    session.log("broken", "error")
    session.log("done")
"""


def test_extension_logs_reach_the_timeline_with_their_category_and_url(project: Project) -> None:
    project.add_extension("timeline", TIMELINE)

    async def scenario() -> list[Event]:
        async with project.host(watch=False) as host:
            await wait_for_event(host, lambda event: event["data"].get("message") == "done", timeout=30)
            return [event for event in host.replay() if event["data"].get("extensionId") == "project:timeline"]

    logged = run(scenario())
    assert [(event["type"], event["data"]) for event in logged] == [
        ("session.info", {"infoType": "notification", "message": "plain", "extensionId": "project:timeline"}),
        (
            "session.warning",
            {
                "warningType": "quota",
                "message": "quota nearly used",
                "url": "https://example.com/quota",
                "extensionId": "project:timeline",
            },
        ),
        ("session.error", {"errorType": "notification", "message": "broken", "extensionId": "project:timeline"}),
        ("session.info", {"infoType": "notification", "message": "done", "extensionId": "project:timeline"}),
    ]


def test_new_session_starts_the_agent_on_an_empty_model_context(project: Project) -> None:
    async def scenario() -> tuple[int, int]:
        agent = ScriptedAgent([[AgentReply("first")], [AgentReply("second")]])
        async with project.host(watch=False, agent=agent) as host:
            await host.send_and_wait("hello")
            before = len(host.model_context.messages)
            await host.new_session()
            await host.send_and_wait("hello again")
            return before, len(host.model_context.messages)

    assert run(scenario()) == (2, 2)  # a prompt and its reply, each time
