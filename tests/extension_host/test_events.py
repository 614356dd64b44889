"""The event log: envelopes, the parentId chain, listeners."""

from __future__ import annotations

from datetime import datetime

import pytest

from extension_host.events import TRUNCATION_MARKER, EventLog
from extension_protocol.protocol import Event

# These tests are about the log's mechanics, with events of made-up types.
pytestmark = pytest.mark.made_up_events


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


def test_a_large_event_is_heard_whole_and_kept_cut_with_a_marker() -> None:
    """Listeners get the 1 MiB string; the history keeps its first eighth of the per-event limit
    and says how much it left out."""
    log = EventLog(history_event_bytes=8_000)
    heard: list[Event] = []
    log.subscribe(heard.append)
    text = "x" * 1_000_000
    returned = log.emit("tool.execution_complete", {"result": {"content": text, "resultType": "success"}, "n": 3})
    assert returned["data"]["result"]["content"] is text
    assert heard[0]["data"]["result"]["content"] is text
    (kept,) = log.history()
    assert kept["id"] == returned["id"] and kept["type"] == "tool.execution_complete"
    assert kept["data"]["result"] == {
        "content": "x" * 1_000 + TRUNCATION_MARKER.format(999_000),
        "resultType": "success",
    }
    assert kept["data"]["n"] == 3
    assert log.history_bytes < 8_000


def test_small_events_are_kept_as_emitted() -> None:
    """Below the per-event limit the history keeps the very event listeners got."""
    log = EventLog()
    event = log.emit("session.info", {"message": "hi", "nested": [{"a": "b"}]})
    assert log.history()[0] is event


def test_the_history_forgets_the_oldest_events_beyond_its_byte_budget() -> None:
    """Many events of 6 KB each under a 64 KB budget: the newest are kept, within the budget."""
    log = EventLog(history_limit=1_000, history_bytes=64_000, history_event_bytes=16_000)
    for n in range(100):
        log.emit("tool.execution_start", {"n": n, "arguments": {"text": "y" * 6_000}})
    kept = log.history()
    assert 5 <= len(kept) < 11
    assert [event["data"]["n"] for event in kept] == list(range(100 - len(kept), 100))
    assert log.history_bytes <= 64_000


def test_a_persisted_event_counts_at_the_size_its_sink_wrote_and_others_are_estimated() -> None:
    """The session's file says how long each line was: the history needs no estimate of those."""
    log = EventLog(history_event_bytes=8_000)
    sizes = iter([1_000, None, 9_000])
    written: list[str] = []

    def sink(event: Event) -> int | None:
        written.append(event["type"])
        return next(sizes)

    log.begin(sink)
    log.emit("a", {"n": 1})
    assert log.history_bytes == 1_000
    log.emit("b", {"n": 2}, ephemeral=True)  # never written: estimated
    estimated = log.history_bytes - 1_000
    assert 0 < estimated < 1_000
    log.emit("c", {"n": 3})  # the sink wrote nothing: estimated too
    assert log.history_bytes == 1_000 + 2 * estimated
    large = log.emit("d", {"n": 4})  # written longer than one event may be kept: a cut copy
    assert written == ["a", "c", "d"]
    assert log.history()[-1] is not large and log.history()[-1]["data"] == {"n": 4}


def test_the_history_forgets_the_oldest_events_beyond_its_count() -> None:
    """The count limit still holds, and the size account follows what is dropped."""
    log = EventLog(history_limit=3)
    for n in range(10):
        log.emit("a", {"n": n})
    assert [event["data"]["n"] for event in log.history()] == [7, 8, 9]
    assert 0 < log.history_bytes < 1_000


def test_the_newest_event_is_kept_even_when_it_alone_is_over_the_budget() -> None:
    """An event that is still too big after cutting (many medium strings) replaces the rest."""
    log = EventLog(history_bytes=10_000, history_event_bytes=80_000)
    log.emit("a", {})
    log.emit("b", {"items": ["z" * 5_000] * 10})
    assert [event["type"] for event in log.history()] == ["b"]


def test_too_deep_values_are_kept_as_a_marker() -> None:
    """The walk is bounded: what lies deeper than it goes is dropped from the kept copy."""
    deep: object = "x" * 100_000
    for _ in range(150):
        deep = [deep]
    log = EventLog(history_event_bytes=1_000)
    log.emit("a", {"deep": deep})
    kept = log.history()[0]["data"]["deep"]
    for _ in range(99):
        kept = kept[0]
    assert kept == "…[truncated: nested too deep]"


@pytest.mark.parametrize("limits", [(0, 1, 1), (1, 0, 1), (1, 1, 0)])
def test_history_limits_must_be_positive(limits: tuple[int, int, int]) -> None:
    with pytest.raises(ValueError, match="positive"):
        EventLog(*limits)
