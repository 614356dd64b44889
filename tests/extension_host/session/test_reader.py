"""Reading the session's events by cursor: forward and backward pages, filters, budgets, long-polls."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

from extension_host.events import EventLog
from extension_host.runtime.session_rpc_shapes import EventLogReadRequest, EventsReadResult
from extension_host.session.persisted import PersistedSession
from extension_host.session.reader import MAX_WAITING_READS, PAGE_BYTES, SessionEventReader
from extension_host.session.store import SessionStore
from extension_protocol import protocol as p
from extension_protocol.connection import RpcError
from helpers import run


def begin(tmp_path: Path, persist: bool = True, **log: Any) -> tuple[EventLog, PersistedSession, SessionEventReader]:
    events = EventLog(**log)
    session = PersistedSession(events, SessionStore(tmp_path / "home") if persist else None, tmp_path, None, "1.0")
    session.begin()
    return events, session, SessionEventReader(session, events)


def info(events: EventLog, n: int, text: str = "") -> None:
    events.emit("session.info", {"infoType": "test", "message": f"note {n}{text}"})


def messages(page: EventsReadResult) -> list[str]:
    return [event["data"]["message"] for event in page["events"] if event["type"] == "session.info"]


def read(reader: SessionEventReader, **request: Any) -> EventsReadResult:
    return run(reader.read(cast(EventLogReadRequest, {"sessionId": "s", **request})))


def all_pages(reader: SessionEventReader, **request: Any) -> list[EventsReadResult]:
    pages = [read(reader, **request)]
    while pages[-1]["hasMore"]:
        pages.append(read(reader, **{**request, "cursor": pages[-1]["cursor"]}))
        assert len(pages) < 100
    return pages


@pytest.mark.parametrize("persist", [True, False], ids=["file", "memory"])
def test_forward_pages_read_every_persistent_event_once_in_order(tmp_path: Path, persist: bool) -> None:
    events, session, reader = begin(tmp_path, persist)
    for n in range(450):
        info(events, n)
    events.emit("session.idle", {})  # ephemeral: not part of the history a read pages through
    pages = all_pages(reader, max=200)
    assert [len(page["events"]) for page in pages] == [200, 200, 51]
    assert all(page["cursorStatus"] == "ok" for page in pages)
    read_ids = [event["id"] for page in pages for event in page["events"]]
    assert read_ids == [event["id"] for event in session.replay()]
    assert pages[0]["events"][0]["type"] == "session.start"
    again = read(reader, cursor=pages[-1]["cursor"])
    assert again["events"] == [] and again["hasMore"] is False


def test_a_read_sees_every_event_emitted_before_it_pending_writes_included(tmp_path: Path) -> None:
    events, _, reader = begin(tmp_path)
    tail = reader.tail()

    async def scenario() -> EventsReadResult:
        info(events, 1)  # queued for the next write, which has not happened yet
        return await reader.read({"sessionId": "s", "cursor": tail})

    assert messages(run(scenario())) == ["note 1"]


def test_a_cursor_from_tail_reads_only_later_events(tmp_path: Path) -> None:
    events, _, reader = begin(tmp_path)
    info(events, 1)
    tail = reader.tail()
    info(events, 2)
    assert messages(read(reader, cursor=tail)) == ["note 2"]


@pytest.mark.parametrize("persist", [True, False], ids=["file", "memory"])
def test_types_and_agent_filters_choose_the_events(tmp_path: Path, persist: bool) -> None:
    events, _, reader = begin(tmp_path, persist)
    info(events, 1)
    events.emit("session.warning", {"warningType": "test", "message": "careful"})
    events.emit("session.info", {"infoType": "test", "message": "from a helper"}, agent_id="helper")
    assert [e["type"] for e in read(reader, types=["session.warning"])["events"]] == ["session.warning"]
    assert messages(read(reader, types=["session.info"], agentScope="primary")) == ["note 1"]
    assert messages(read(reader, agentIds=["helper"])) == ["from a helper"]
    assert messages(read(reader, types="*")) == ["note 1", "from a helper"]


@pytest.mark.parametrize("persist", [True, False], ids=["file", "memory"])
def test_backward_reads_page_tail_first_each_page_oldest_to_newest(tmp_path: Path, persist: bool) -> None:
    events, session, reader = begin(tmp_path, persist)
    for n in range(25):
        info(events, n)
    pages = all_pages(reader, direction="backward", max=10)
    assert [messages(page) for page in pages[:2]] == [
        [f"note {n}" for n in range(15, 25)],
        [f"note {n}" for n in range(5, 15)],
    ]
    assert [len(page["events"]) for page in pages] == [10, 10, 6]  # the last holds session.start too
    chronological = [event["id"] for page in reversed(pages) for event in page["events"]]
    assert chronological == [event["id"] for event in session.replay()]


def test_backward_paging_continues_from_its_self_describing_cursor(tmp_path: Path) -> None:
    events, _, reader = begin(tmp_path)
    for n in range(5):
        info(events, n)
    first = read(reader, direction="backward", max=2)
    assert messages(read(reader, cursor=first["cursor"], max=2)) == ["note 1", "note 2"]


def test_a_page_stops_at_its_byte_budget_and_a_larger_event_comes_alone(tmp_path: Path) -> None:
    events, _, reader = begin(tmp_path)
    tail = reader.tail()
    for n in range(5):
        info(events, n, "x" * (PAGE_BYTES // 3))
    info(events, 5, "y" * (PAGE_BYTES + 10))
    info(events, 6)
    pages = all_pages(reader, cursor=tail)
    assert [len(page["events"]) for page in pages] == [2, 2, 1, 1, 1]
    assert [m[:6] for m in messages(pages[3])] == ["note 5"]
    backward = all_pages(reader, direction="backward", types=["session.info"])
    assert [len(page["events"]) for page in backward] == [1, 1, 2, 2, 1]


@pytest.mark.parametrize(
    "damaged",
    [
        b'{"not an event\n',
        b'{"id":"d","timestamp":"t","type":"session.info","data":' + b"[" * 1000 + b"]" * 1000 + b"}\n",
    ],
    ids=["not-json", "nested-1000-deep"],
)
def test_damaged_lines_are_skipped_in_either_direction(tmp_path: Path, damaged: bytes) -> None:
    events, session, reader = begin(tmp_path)
    info(events, 1)
    session.flush()
    path = session.events_path
    assert path is not None
    with path.open("ab") as handle:
        handle.write(damaged)
    info(events, 2)
    assert messages(read(reader)) == ["note 1", "note 2"]
    assert messages(read(reader, direction="backward")) == ["note 1", "note 2"]


def listening(events: EventLog, count: int = 1) -> asyncio.Event:
    """Set once ``count`` listeners subscribed to ``events`` (a waiting read does, before it reads)."""
    subscribed = asyncio.Event()
    real = events.subscribe
    seen: list[object] = []

    def subscribe(listener: Callable[[Any], None]) -> Callable[[], None]:
        seen.append(listener)
        if len(seen) >= count:
            subscribed.set()
        return real(listener)

    events.subscribe = subscribe  # type: ignore[method-assign]
    return subscribed


@pytest.mark.parametrize("persist", [True, False], ids=["file", "memory"])
@pytest.mark.parametrize("include_ephemeral", [True, False])
def test_a_waiting_read_is_woken_by_new_events_ephemeral_ones_included_unless_refused(
    tmp_path: Path, persist: bool, include_ephemeral: bool
) -> None:
    events, _, reader = begin(tmp_path, persist)
    tail = reader.tail()

    async def scenario() -> EventsReadResult:
        subscribed = listening(events)
        waiting = asyncio.create_task(
            reader.read({"sessionId": "s", "cursor": tail, "waitMs": 30_000, "includeEphemeral": include_ephemeral})
        )
        await asyncio.wait_for(subscribed.wait(), 10)
        events.emit("tool.execution_progress", {"toolCallId": "c1", "progressMessage": "half way"})
        info(events, 1)
        return await asyncio.wait_for(waiting, 20)

    page = run(scenario())
    expected = ["tool.execution_progress", "session.info"] if include_ephemeral else ["session.info"]
    assert [event["type"] for event in page["events"]] == expected
    info(events, 2)
    assert messages(read(reader, cursor=page["cursor"])) == ["note 2"]  # after what the wait returned


def test_a_wait_that_times_out_returns_an_empty_page_and_the_same_position(tmp_path: Path) -> None:
    events, _, reader = begin(tmp_path)
    page = read(reader, cursor=reader.tail(), waitMs=1)
    assert (page["events"], page["hasMore"], page["cursorStatus"]) == ([], False, "ok")
    info(events, 1)
    assert messages(read(reader, cursor=page["cursor"])) == ["note 1"]


def test_reads_waiting_at_once_are_bounded(tmp_path: Path) -> None:
    events, _, reader = begin(tmp_path, persist=False)

    async def scenario() -> None:
        tail = reader.tail()
        subscribed = listening(events, MAX_WAITING_READS)
        waiting = [
            asyncio.create_task(reader.read({"sessionId": "s", "cursor": tail, "waitMs": 30_000}))
            for _ in range(MAX_WAITING_READS)
        ]
        await asyncio.wait_for(subscribed.wait(), 10)  # in memory a read subscribes as it starts waiting
        with pytest.raises(RpcError, match="reads are already waiting") as caught:
            await reader.read({"sessionId": "s", "cursor": tail, "waitMs": 30_000})
        assert caught.value.data == {"field": "waitMs"}
        info(events, 1)
        for page in await asyncio.wait_for(asyncio.gather(*waiting), 20):
            assert messages(page) == ["note 1"]

    run(scenario())


def test_a_forged_or_foreign_cursor_is_refused_naming_the_parameter(tmp_path: Path) -> None:
    events, session, reader = begin(tmp_path)
    other = SessionEventReader(session, events)  # another host's key
    for cursor in ("nonsense", reader.tail() + "0", other.tail()):
        with pytest.raises(RpcError) as caught:
            read(reader, cursor=cursor)
        assert caught.value.code == p.INVALID_PARAMS
        assert caught.value.message.startswith("session.eventLog.read: cursor: not a cursor this host gave")
        assert caught.value.data == {"field": "cursor"}


@pytest.mark.parametrize("persist", [True, False], ids=["file", "memory"])
def test_a_cursor_of_an_earlier_session_is_expired_and_the_read_starts_over(tmp_path: Path, persist: bool) -> None:
    events, session, reader = begin(tmp_path, persist)
    info(events, 1)
    old = reader.tail()
    session.renew()
    info(events, 2)
    page = read(reader, cursor=old)
    assert page["cursorStatus"] == "expired"
    assert [event["type"] for event in page["events"]] == ["session.start", "session.info"]
    assert read(reader, cursor=page["cursor"])["cursorStatus"] == "ok"


def test_without_persistence_a_cursor_the_history_forgot_is_expired(tmp_path: Path) -> None:
    events, _, reader = begin(tmp_path, persist=False, history_limit=5)
    cursor = read(reader)["cursor"]
    for n in range(10):
        info(events, n)
    page = read(reader, cursor=cursor)
    assert page["cursorStatus"] == "expired"
    assert messages(page) == [f"note {n}" for n in range(5, 10)]


def test_a_forward_read_looks_at_a_bounded_stretch_of_a_huge_log(tmp_path: Path, monkeypatch: Any) -> None:
    """A filter that matches nothing in a long log answers an empty page with hasMore, not a
    read of the whole file."""
    events, _, reader = begin(tmp_path)
    monkeypatch.setattr("extension_host.session.reader.SCAN_BYTES", 4096)
    for n in range(200):
        info(events, n)
    first = read(reader, types=["session.warning"])
    assert (first["events"], first["hasMore"]) == ([], True)
    pages = all_pages(reader, types=["session.warning"])
    assert len(pages) > 2 and all(page["events"] == [] for page in pages)


def test_closing_the_reader_ends_waiting_reads_at_once_and_later_ones_do_not_wait(tmp_path: Path) -> None:
    """The host closes it as it stops, so an extension's long-poll does not hold its stop back."""
    events, _, reader = begin(tmp_path, persist=False)  # in memory a read waits as it subscribes

    async def scenario() -> tuple[EventsReadResult, EventsReadResult]:
        subscribed = listening(events)
        request: EventLogReadRequest = {"sessionId": "s", "cursor": reader.tail(), "waitMs": 30_000}
        waiting = asyncio.create_task(reader.read(request))
        await asyncio.wait_for(subscribed.wait(), 10)
        reader.close()
        return await asyncio.wait_for(waiting, 10), await asyncio.wait_for(reader.read(request), 10)

    ended, later = run(scenario())
    assert ended["events"] == [] == later["events"]
