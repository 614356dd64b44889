"""The event log: envelopes, the parentId chain, listeners."""

from __future__ import annotations

from datetime import datetime

import pytest

from extension_host.events import EventLog
from sdk_extension.protocol import Event


def test_every_event_has_the_session_event_envelope() -> None:
    """id, ISO timestamp, parentId, type and data; ephemeral only when set."""
    log = EventLog()
    event = log.emit("session.info", {"message": "hi"})
    assert set(event) == {"id", "timestamp", "parentId", "type", "data"}
    assert datetime.fromisoformat(event["timestamp"]).tzinfo is not None
    assert event["parentId"] is None
    assert log.emit("session.idle", {}, ephemeral=True)["ephemeral"] is True


def test_parent_ids_chain_persistent_events_and_skip_ephemeral_ones() -> None:
    """Each event points at the previous persistent event."""
    log = EventLog()
    first = log.emit("a", {})
    ephemeral = log.emit("b", {}, ephemeral=True)
    third = log.emit("c", {})
    assert ephemeral["parentId"] == first["id"]
    assert third["parentId"] == first["id"]
    assert log.emit("d", {})["parentId"] == third["id"]


def test_a_failing_listener_does_not_stop_the_others(capsys: pytest.CaptureFixture[str]) -> None:
    """The exception is reported on stderr and the next listener still hears the event."""
    log = EventLog()
    heard: list[str] = []

    def broken(event: Event) -> None:
        raise RuntimeError("listener bug")

    log.subscribe(broken)
    log.subscribe(lambda event: heard.append(event["type"]))
    log.emit("tool.execution_start", {})
    assert heard == ["tool.execution_start"]
    assert "listener bug" in capsys.readouterr().err


def test_unsubscribed_listeners_hear_nothing_more_and_history_filters_by_type() -> None:
    """The function returned by subscribe stops delivery; history keeps every event."""
    log = EventLog(history_limit=3)
    heard: list[str] = []
    stop = log.subscribe(lambda event: heard.append(event["type"]))
    log.emit("x", {})
    stop()
    for kind in ("y", "x", "z"):
        log.emit(kind, {})
    assert heard == ["x"]
    assert [e["type"] for e in log.history()] == ["y", "x", "z"]
    assert len(log.history("x")) == 1
