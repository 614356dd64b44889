"""extensions sessions list|show|rm: output, --json, exit codes, ids that are not ids."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from pathlib import Path

import pytest

from extension_host.events import make_event
from extension_host.session.store import SessionStore
from helpers import Project, run, running_dev


def persisted(project: Project, prompts: list[str]) -> str:
    """A session of ``project`` with one user message per prompt; returns its id."""
    opened = SessionStore(project.home).create(project.root)
    opened.log.append(make_event("session.start", {"sessionId": opened.id, "context": {"cwd": str(project.root)}}))
    for prompt in prompts:
        opened.log.append(make_event("user.message", {"content": prompt}))
        opened.log.append(make_event("tool.execution_start", {"toolName": "echo", "arguments": {"text": prompt}}))
    opened.log.append(make_event("session.warning", {"warningType": "extension", "message": "a\x1b[31m red"}))
    opened.close()
    return opened.id


def test_list_shows_each_session_with_its_turns_and_project(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    session_id = persisted(project, ["one", "two"])
    assert project.cli("sessions", "list", "--json") == 0
    [listed] = json.loads(capsys.readouterr().out)
    assert listed["id"] == session_id and listed["turns"] == 2 and listed["project"] == str(project.root)
    assert listed["events"] == 6 and listed["inUse"] is False and listed["started"] and listed["lastEvent"]
    assert project.cli("sessions", "list") == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split() == ["SESSION", "STARTED", "LAST", "EVENT", "TURNS", "PROJECT"]
    assert row.startswith(session_id) and row.endswith(f"  2      {project.root}")


def test_list_says_so_when_there_is_no_session(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    assert project.cli("sessions", "list") == 0
    assert capsys.readouterr().out == "no sessions yet; 'extensions dev' starts one\n"


def test_show_prints_one_safe_line_per_persisted_event(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    session_id = persisted(project, ["hello\nthere"])
    assert project.cli("sessions", "show", session_id) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4
    assert lines[0].split()[1:] == ["session.start", "new", "session", session_id, "in", str(project.root)]
    assert lines[1].endswith("user.message  hello\\nthere")
    assert lines[2].endswith('tool.execution_start  echo {"text":"hello\\nthere"}')
    assert lines[3].endswith("session.warning  [extension] a\\x1b[31m red")


def test_show_json_prints_the_events_one_per_line(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    session_id = persisted(project, ["hi"])
    assert project.cli("sessions", "show", session_id, "--json") == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [event["type"] for event in events] == [
        "session.start",
        "user.message",
        "tool.execution_start",
        "session.warning",
    ]
    assert events[3]["data"]["message"] == "a\x1b[31m red"


def test_show_reports_a_torn_last_line_on_stderr_and_prints_the_rest(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    session_id = persisted(project, ["hi"])
    with (project.home / "sessions" / session_id / "events.jsonl").open("ab") as log:
        log.write(b'{"id":"x')
    assert project.cli("sessions", "show", session_id) == 0
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 4
    assert captured.err == (
        f"session {session_id}: events.jsonl: line 5 is cut short (the host stopped while writing it); skipped\n"
    )


DEEP_LINE = (
    b'{"id":"deep","timestamp":"2026-01-01T00:00:00.000+00:00","parentId":null,"type":"user.message","data":'
    + b'{"a":' * 1000
    + b"1"
    + b"}" * 1001
    + b"\n"
)
"""An event line nested 1,000 deep, which json.loads cannot read without running out of recursion."""


def with_deep_lines(project: Project, session_id: str) -> list[int]:
    """Put DEEP_LINE after the first line of the session's log and at its end; their line numbers."""
    path = project.home / "sessions" / session_id / "events.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join([lines[0], DEEP_LINE, *lines[1:], DEEP_LINE]))
    return [2, len(lines) + 2]


@pytest.mark.subprocess
def test_a_log_line_nested_1000_deep_is_skipped_with_a_warning_and_every_session_is_still_listed_and_shown(
    project: Project,
) -> None:
    """One session's log has lines too deep to read (one among its turns, one last): list and
    show work for every session, counting what they can read, and say on stderr which session
    and line they skipped; no traceback."""
    good = persisted(project, ["one"])
    bad = persisted(project, ["two", "three"])
    numbers = with_deep_lines(project, bad)
    warnings = [
        f"session {bad}: events.jsonl: line {number} is nested deeper than 100 levels; skipped" for number in numbers
    ]

    def extensions(*args: str) -> subprocess.CompletedProcess[str]:
        return project.run_command("sessions", *args)

    listed = extensions("list", "--json")
    assert listed.returncode == 0 and listed.stderr.splitlines() == warnings
    turns = {summary["id"]: summary["turns"] for summary in json.loads(listed.stdout)}
    assert turns == {good: 1, bad: 2}
    listed = extensions("list")
    assert listed.returncode == 0 and listed.stderr.splitlines() == warnings
    assert {line.split()[0] for line in listed.stdout.splitlines()[1:]} == {good, bad}
    shown = extensions("show", bad)
    assert shown.returncode == 0 and shown.stderr.splitlines() == warnings
    assert len(shown.stdout.splitlines()) == 6  # every event it could read
    shown = extensions("show", good)
    assert (shown.returncode, shown.stderr, len(shown.stdout.splitlines())) == (0, "", 4)


@pytest.mark.subprocess
def test_dev_resumes_a_session_whose_lines_are_nested_1000_deep_and_records_which_it_skipped(
    project: Project,
) -> None:
    """The last line cannot be read either: dev resumes from the last event it can read, and the
    session says which lines it skipped in session.warning events naming the session."""
    session_id = persisted(project, ["one"])
    numbers = with_deep_lines(project, session_id)
    readable = [json.loads(line) for line in persisted_log(project, session_id) if not line.startswith(b'{"id":"deep"')]

    async def resume() -> None:
        async with running_dev(project, options=("--resume", session_id)) as dev:
            await dev.send("quit")
            async with asyncio.timeout(30):
                assert await dev.process.wait() == 0

    run(resume())
    events = [json.loads(line) for line in persisted_log(project, session_id) if not line.startswith(b'{"id":"deep"')]
    resumed = events[len(readable)]
    assert resumed["type"] == "session.resume" and resumed["parentId"] == readable[-1]["id"]
    warnings = events[len(readable) + 1 : len(readable) + 3]
    assert [event["data"]["message"] for event in warnings] == [
        f"session {session_id}: events.jsonl: line {number} is nested deeper than 100 levels; skipped, "
        "the rest was resumed"
        for number in numbers
    ]
    assert events[-1]["type"] == "session.shutdown"


def persisted_log(project: Project, session_id: str) -> list[bytes]:
    return (project.home / "sessions" / session_id / "events.jsonl").read_bytes().splitlines()


def test_rm_deletes_a_session_and_is_refused_while_a_host_holds_it(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    session_id = persisted(project, [])
    held = SessionStore(project.home).open(session_id, project.root)
    try:
        assert project.cli("sessions", "rm", session_id) == 1
        assert "is in use by process" in capsys.readouterr().err
    finally:
        held.close()
    assert project.cli("sessions", "rm", session_id, "--json") == 0
    assert json.loads(capsys.readouterr().out) == {"removed": session_id}
    assert not (project.home / "sessions" / session_id).exists()


@pytest.mark.parametrize("action", ["show", "rm"])
@pytest.mark.parametrize("bad", ["../x", "..", "a/b"])
def test_an_id_that_is_not_a_session_id_is_a_usage_error_that_touches_nothing(
    project: Project, capsys: pytest.CaptureFixture[str], action: str, bad: str, tmp_path: Path
) -> None:
    victim = project.home / "x"
    victim.mkdir()
    assert project.cli("sessions", action, bad) == 2
    assert capsys.readouterr().err == (
        f"error: {bad!r} is not a session id (letters, digits, '-' and '_' only); "
        "see 'extensions sessions list' for the ids\n"
    )
    assert victim.is_dir()


@pytest.mark.parametrize("action", ["show", "rm"])
def test_an_unknown_session_fails_naming_it(project: Project, capsys: pytest.CaptureFixture[str], action: str) -> None:
    assert project.cli("sessions", action, "missing") == 1
    assert capsys.readouterr().err == (
        "error: session missing: no such session; see 'extensions sessions list' for the ids\n"
    )


@pytest.mark.subprocess
def test_dev_says_its_session_and_resume_continues_it(project: Project) -> None:
    async def session_of(options: tuple[str, ...]) -> str:
        async with running_dev(project, options=options) as dev:
            [line] = [line for line in dev.seen if line.startswith("session ")]
            await dev.send("quit")
            async with asyncio.timeout(30):
                assert await dev.process.wait() == 0
            found = re.fullmatch(r"session (\S+) \(resume it with: extensions dev --resume (\S+)\)", line)
            assert found is not None and found.group(1) == found.group(2)
            return found.group(1)

    session_id = run(session_of(()))
    assert run(session_of(("--resume", session_id))) == session_id
    log = (project.home / "sessions" / session_id / "events.jsonl").read_bytes()
    events = [json.loads(line) for line in log.splitlines()]
    assert [event["type"] for event in events] == [
        "session.start",
        "session.shutdown",
        "session.resume",
        "session.shutdown",
    ]


@pytest.mark.subprocess
def test_dev_refuses_a_resume_id_that_is_not_one_before_starting_anything(project: Project) -> None:
    completed = project.run_command("dev", "--resume", "../x")
    assert completed.returncode == 2
    assert completed.stderr.startswith("error: '../x' is not a session id")
    assert not (project.home / "sessions").exists()


def test_show_names_a_subagents_events_by_its_id_and_list_counts_only_the_sessions_own_turns(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    opened = SessionStore(project.home).create(project.root)
    opened.log.append(make_event("user.message", {"content": "delegate"}))
    started = {"toolCallId": "call-1", "agentName": "reviewer", "agentDisplayName": "reviewer"}
    opened.log.append(
        make_event("subagent.started", {**started, "agentDescription": "", "remoteSessionId": "c1"}, agent_id="c1")
    )
    opened.log.append(make_event("user.message", {"content": "review it"}, agent_id="c1"))
    opened.log.append(make_event("subagent.completed", {**started, "totalToolCalls": 2}, agent_id="c1"))
    opened.close()
    assert project.cli("sessions", "list", "--json") == 0
    assert json.loads(capsys.readouterr().out)[0]["turns"] == 1
    assert project.cli("sessions", "show", opened.id) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[1:] == ["subagent.started", "[c1]", "reviewer", "for", "call", "call-1"]
    assert lines[2].split()[1:] == ["user.message", "[c1]", "review", "it"]
    assert lines[3].split()[1:] == ["subagent.completed", "[c1]", "reviewer", "done", "(2", "tool", "calls)"]
