"""The persisted session: start, resume, shutdown, renew, replay; ephemeral events stay off disk."""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from extension_host.errors import SessionIdError, SessionLockedError, UnknownSessionError
from extension_host.event_types import EPHEMERAL_EVENT_TYPES
from extension_host.events import EventLog
from extension_host.session.persisted import PersistedSession
from extension_host.session.store import SessionStore
from extension_protocol.protocol import Event
from helpers import REPO_ROOT


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "home")


def on_disk(store: SessionStore, session_id: str) -> list[dict[str, Any]]:
    path = store.root / session_id / "events.jsonl"
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def begin(store: SessionStore | None, root: Path, resume: str | None = None) -> tuple[EventLog, PersistedSession]:
    events = EventLog()
    session = PersistedSession(events, store, root, resume, "1.2.3")
    session.begin()
    return events, session


def test_a_new_session_starts_with_session_start_as_the_sdk_types_it(store: SessionStore, tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    _, session = begin(store, tmp_path)
    session.end()
    start, shutdown = on_disk(store, session.id)
    assert start["type"] == "session.start" and start["parentId"] is None
    data = start["data"]
    assert data["sessionId"] == session.id and data["version"] == 1 and data["producer"] == "extension-host"
    assert data["copilotVersion"] == "1.2.3" and data["startTime"]
    assert data["context"] == {"cwd": str(tmp_path), "gitRoot": str(tmp_path)}
    assert shutdown["type"] == "session.shutdown" and shutdown["parentId"] == start["id"]
    assert shutdown["data"]["shutdownType"] == "routine"
    assert shutdown["data"]["codeChanges"] == {"filesModified": [], "linesAdded": 0, "linesRemoved": 0}


@pytest.mark.made_up_events  # every ephemeral type, with empty data
def test_ephemeral_events_are_delivered_live_and_never_written(store: SessionStore, tmp_path: Path) -> None:
    events, session = begin(store, tmp_path)
    heard: list[str] = []
    events.subscribe(lambda event: heard.append(event["type"]))
    for event_type in sorted(EPHEMERAL_EVENT_TYPES):
        emitted = events.emit(event_type, {})
        assert emitted.get("ephemeral") is True
    events.emit("session.info", {"infoType": "notification", "message": "passing"}, ephemeral=True)
    events.emit("user.message", {"content": "kept"})
    session.end()
    assert heard[: len(EPHEMERAL_EVENT_TYPES) + 1] == [*sorted(EPHEMERAL_EVENT_TYPES), "session.info"]
    assert [event["type"] for event in on_disk(store, session.id)] == [
        "session.start",
        "user.message",
        "session.shutdown",
    ]


def test_an_agents_events_keep_their_agent_id_on_disk(store: SessionStore, tmp_path: Path) -> None:
    events, session = begin(store, tmp_path)
    events.emit("assistant.message", {"messageId": "m1", "content": "from a sub-agent"}, agent_id="reviewer")
    session.end()
    assert on_disk(store, session.id)[1]["agentId"] == "reviewer"


def test_a_resumed_session_chains_on_its_last_event_and_says_how_many_there_were(
    store: SessionStore, tmp_path: Path
) -> None:
    events, first = begin(store, tmp_path)
    events.emit("user.message", {"content": "before"})
    first.end()
    before = on_disk(store, first.id)
    events, again = begin(store, tmp_path, resume=first.id)
    assert again.id == first.id and again.resumed
    events.emit("user.message", {"content": "after"})
    again.end()
    written = on_disk(store, first.id)
    assert written[: len(before)] == before
    resume = written[len(before)]
    assert resume["type"] == "session.resume" and resume["parentId"] == before[-1]["id"]
    assert resume["data"]["eventCount"] == 3 and resume["data"]["resumeTime"]
    # The shutdown after the resume still dates the session from its creation.
    assert written[-1]["data"]["sessionStartTime"] == before[-1]["data"]["sessionStartTime"]
    assert all(later["parentId"] == earlier["id"] for earlier, later in itertools.pairwise(written))


def test_a_torn_last_line_is_reported_as_a_session_warning_on_resume(store: SessionStore, tmp_path: Path) -> None:
    events, first = begin(store, tmp_path)
    events.emit("user.message", {"content": "whole"})
    first.end()
    path = store.root / first.id / "events.jsonl"
    torn = b'{"id":"abc","timestamp":"2026-'
    with path.open("ab") as handle:
        handle.write(torn)
    events, again = begin(store, tmp_path, resume=first.id)
    [warning] = events.history("session.warning")
    assert warning["data"]["warningType"] == "session_log"
    assert warning["data"]["message"] == (
        f"session {first.id}: events.jsonl: its last line was cut short ({len(torn)} bytes, a crash while writing); "
        "skipped, the rest was resumed"
    )
    again.end()
    assert all(line.endswith(b"}") for line in path.read_bytes().splitlines())


def test_resume_checks_the_id_up_front(store: SessionStore, tmp_path: Path) -> None:
    with pytest.raises(SessionIdError):
        PersistedSession(EventLog(), store, tmp_path, "../escape", "1")
    with pytest.raises(UnknownSessionError):
        PersistedSession(EventLog(), store, tmp_path, "missing", "1")
    with pytest.raises(ValueError, match="needs persistence"):
        PersistedSession(EventLog(), None, tmp_path, "any", "1")


def test_a_session_in_use_cannot_be_resumed_by_a_second_lifecycle(store: SessionStore, tmp_path: Path) -> None:
    _, holder = begin(store, tmp_path)
    with pytest.raises(SessionLockedError):
        begin(store, tmp_path, resume=holder.id)
    holder.end()


def test_renewing_ends_the_session_and_starts_another_with_a_new_id(store: SessionStore, tmp_path: Path) -> None:
    events, session = begin(store, tmp_path)
    old = session.id
    new = session.renew()
    events.emit("user.message", {"content": "in the new one"})
    session.end()
    assert new != old and session.id == new
    assert [event["type"] for event in on_disk(store, old)] == ["session.start", "session.shutdown"]
    fresh = on_disk(store, new)
    assert [event["type"] for event in fresh] == ["session.start", "user.message", "session.shutdown"]
    assert fresh[0]["parentId"] is None and fresh[0]["data"]["sessionId"] == new


def test_subscribing_with_replay_gives_the_history_then_live_events_with_no_gap_and_no_duplicate(
    store: SessionStore, tmp_path: Path
) -> None:
    async def scenario() -> tuple[list[Event], list[dict[str, Any]]]:
        events, session = begin(store, tmp_path)
        for number in range(3):
            events.emit("user.message", {"content": f"old {number}"})
        seen: list[Event] = []

        def listener(event: Event) -> None:
            seen.append(event)
            if event["data"].get("content") == "old 1":
                events.emit("user.message", {"content": "emitted while replaying"})

        session.subscribe(listener)
        events.emit("tool.execution_progress", {"toolCallId": "call-1", "progressMessage": "live and ephemeral"})
        events.emit("user.message", {"content": "live"})
        await asyncio.sleep(0)
        session.end()
        return seen, on_disk(store, session.id)

    seen, written = asyncio.run(scenario())
    assert [event["id"] for event in seen if not event.get("ephemeral")] == [event["id"] for event in written]
    assert [event["type"] for event in seen if event.get("ephemeral")] == ["tool.execution_progress"]


def test_without_a_store_nothing_is_written_and_replay_comes_from_memory(tmp_path: Path) -> None:
    events, session = begin(None, tmp_path)
    events.emit("user.message", {"content": "kept in memory"})
    events.emit("session.idle", {})
    assert session.workspace is None and session.events_path is None
    assert [event["type"] for event in session.replay()] == ["session.start", "user.message"]
    session.end()
    assert not (tmp_path / "home").exists()


def test_the_shipped_events_schema_requires_ephemeral_of_exactly_the_types_never_persisted() -> None:
    """What the schema file tells clients is ephemeral is what the event log never writes."""
    schema = json.loads((REPO_ROOT / "extension_host/schemas/session-events.schema.json").read_text(encoding="utf-8"))
    required = {
        definition["properties"]["type"]["const"]
        for definition in schema["$defs"].values()
        if "ephemeral" in definition.get("required", ())
    }
    assert required == EPHEMERAL_EVENT_TYPES
