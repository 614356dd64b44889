"""The session's events.jsonl: whole lines in batches, and reading them back whatever a crash left."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import extension_host.session.log as log_module
from extension_host.events import make_event
from extension_host.session.log import (
    FLUSH_EVENTS,
    LogReader,
    SessionLog,
    encode_event,
    line_problem,
    read_line,
    scan_log,
)
from extension_protocol.nesting import MAX_DEPTH
from extension_protocol.protocol import Event


def encoded(event: Event) -> bytes:
    return encode_event(event).encode("ascii")


def event(number: int, text: str = "hello") -> Event:
    return make_event("user.message", {"content": text, "n": number})


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def test_each_event_is_one_ascii_line_ending_in_a_newline_even_with_newlines_and_non_ascii_inside(
    tmp_path: Path,
) -> None:
    path = tmp_path / "events.jsonl"
    writer = SessionLog(path)
    writer.append(event(1, "two\nlines, ünïcode and \u2028 a separator"))
    writer.close()
    [line] = lines(path)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert line.isascii()
    assert json.loads(line)["data"]["content"] == "two\nlines, ünïcode and \u2028 a separator"


def test_appends_within_one_loop_turn_reach_the_file_together_when_the_turn_ends(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"

    async def scenario() -> tuple[int, int]:
        writer = SessionLog(path)
        for number in range(5):
            writer.append(event(number))
        before = len(lines(path))
        await asyncio.sleep(0)  # one turn of the loop: the flush scheduled by the first append runs
        after = len(lines(path))
        writer.close()
        return before, after

    assert asyncio.run(scenario()) == (0, 5)


def test_a_full_batch_is_written_at_once_without_waiting_for_the_loop(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"

    async def scenario() -> int:
        writer = SessionLog(path)
        for number in range(FLUSH_EVENTS):
            writer.append(event(number))
        written = len(lines(path))
        writer.close()
        return written

    assert asyncio.run(scenario()) == FLUSH_EVENTS


def test_without_an_event_loop_every_append_is_written_at_once(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    writer = SessionLog(path)
    writer.append(event(1))
    assert len(lines(path)) == 1
    writer.close()


def test_an_event_too_large_for_a_line_is_written_with_its_long_strings_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_module, "MAX_LINE_BYTES", 16 * 1024)
    line = encoded(event(1, "x" * 100_000))
    assert len(line) <= 16 * 1024
    content = json.loads(line)["data"]["content"]
    assert content.startswith("x" * 1024) and content.endswith("[truncated: 98976 characters]")


def test_reading_streams_every_event_in_order(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    written = [event(number) for number in range(50)]
    path.write_bytes(b"".join(encoded(item) for item in written))
    reader = LogReader(path)
    assert [item["id"] for item in reader] == [item["id"] for item in written]
    assert reader.problems == []


def test_a_torn_last_line_is_skipped_with_a_problem_and_never_fails_the_read(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    whole = [event(1), event(2)]
    path.write_bytes(b"".join(encoded(item) for item in whole) + encoded(event(3))[:40])
    reader = LogReader(path)
    assert [item["id"] for item in reader] == [item["id"] for item in whole]
    assert reader.problems == ["line 3 is cut short (the host stopped while writing it); skipped"]


def test_a_damaged_line_in_the_middle_is_skipped_and_the_rest_is_read(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    first, last = event(1), event(2)
    path.write_bytes(encoded(first) + b'{"not": "an event"}\n' + b"\xff\xfe garbage\n" + encoded(last))
    reader = LogReader(path)
    assert [item["id"] for item in reader] == [first["id"], last["id"]]
    assert reader.problems == ["line 2 is not an event; skipped", "line 3 is not an event; skipped"]


def test_an_overlong_line_is_skipped_without_being_held_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_module, "MAX_LINE_BYTES", 1024)
    path = tmp_path / "events.jsonl"
    first, last = event(1), event(2)
    path.write_bytes(encoded(first) + b'{"x":"' + b"y" * 10_000 + b'"}\n' + encoded(last))
    reader = LogReader(path)
    assert [item["id"] for item in reader] == [first["id"], last["id"]]
    assert reader.problems == ["line 2 is longer than 1024 bytes; skipped"]


DEEP = b'{"id":"deep","timestamp":"t","type":"user.message","data":' + b"[" * 1000 + b"]" * 1000 + b"}\n"
"""A line nested 1,000 deep: json.loads runs out of recursion on it."""


def test_a_line_nested_1000_deep_is_skipped_with_a_problem_and_the_rest_is_read(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    first, last = event(1), event(2)
    path.write_bytes(encoded(first) + DEEP + encoded(last) + DEEP)
    reader = LogReader(path)
    assert [item["id"] for item in reader] == [first["id"], last["id"]]
    assert reader.problems == [
        "line 2 is nested deeper than 100 levels; skipped",
        "line 4 is nested deeper than 100 levels; skipped",
    ]
    scan = scan_log(path)
    assert (scan.lines, scan.last_event, scan.torn) == (4, None, False)
    assert scan.last_problem == "line 4 is nested deeper than 100 levels; skipped"


def test_an_event_nested_deeper_than_a_reader_reads_is_written_with_only_the_deep_part_marked(tmp_path: Path) -> None:
    """Data nested 150 deep (a tool's arguments, say) would make a line every reader skips: the
    line holds the event, its data kept down to the 100th level of the line and marked below."""
    path = tmp_path / "events.jsonl"
    deep: Any = "bottom"
    for _ in range(150):
        deep = [deep]
    writer = SessionLog(path)
    written = make_event("tool.execution_start", {"toolName": "echo", "arguments": {"value": deep}})
    writer.append(written)
    writer.append(event(2))
    writer.close()
    reader = LogReader(path)
    first, second = list(reader)
    assert reader.problems == []
    assert (first["id"], first["type"], second["data"]["n"]) == (written["id"], "tool.execution_start", 2)
    kept: Any = first["data"]["arguments"]["value"]
    levels = 4  # the line, data, arguments, value
    while isinstance(kept, list):
        kept, levels = kept[0], levels + 1
    assert (kept, levels - 1) == ("…[truncated: nested too deep]", MAX_DEPTH)


_LINES = st.one_of(
    st.binary(max_size=60).map(lambda data: data.replace(b"\n", b"") + b"\n"),
    st.builds(lambda n: encoded(event(n)), st.integers(0, 1000)),
    st.builds(
        lambda depth, opener: b'{"id":"x","timestamp":"t","type":"t","data":{"a":' + opener * depth + b"}}\n",
        st.integers(0, 3000),
        st.sampled_from([b"[", b'{"a":']),
    ),
    st.builds(
        lambda depth: b'{"id":"x","timestamp":"t","type":"t","data":{"a":' + b"[" * depth + b"]" * depth + b"}}\n",
        st.integers(95, 1200),
    ),
)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, database=None)
@given(content=st.lists(_LINES, max_size=8), torn=st.binary(max_size=20))
def test_whatever_the_lines_hold_reading_yields_events_and_one_problem_per_other_line_and_never_raises(
    tmp_path_factory: pytest.TempPathFactory, content: list[bytes], torn: bytes
) -> None:
    path = tmp_path_factory.mktemp("log") / "events.jsonl"
    path.write_bytes(b"".join(content) + torn.replace(b"\n", b""))
    events = [read_line(line) for line in content]
    reader = LogReader(path)
    assert list(reader) == [item for item in events if not isinstance(item, str)]
    problems = [line_problem(n, item) for n, item in enumerate(events, 1) if isinstance(item, str)]
    assert reader.problems[: len(problems)] == problems
    assert len(reader.problems) == len(problems) + (1 if torn.replace(b"\n", b"") else 0)
    for item in events:
        assert not isinstance(item, str) or item in ("is not an event", "is nested deeper than 100 levels")
    scan = scan_log(path)
    assert scan.lines == len(content)
    if content:
        last = events[-1]
        assert scan.last_event == (None if isinstance(last, str) else last)


def test_a_reader_with_an_end_stops_there(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    head = encoded(event(1)) + encoded(event(2))
    path.write_bytes(head + encoded(event(3)))
    assert len(list(LogReader(path, end=len(head)))) == 2


def test_a_missing_log_reads_as_empty(tmp_path: Path) -> None:
    assert list(LogReader(tmp_path / "none.jsonl")) == []
    assert scan_log(tmp_path / "none.jsonl").lines == 0


def test_scanning_counts_lines_finds_the_last_event_and_the_end_of_the_last_whole_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_module, "_CHUNK", 64)  # lines straddle chunks
    path = tmp_path / "events.jsonl"
    written = [event(number) for number in range(20)]
    whole = b"".join(encoded(item) for item in written)
    path.write_bytes(whole + b'{"id": "torn')
    scan = scan_log(path)
    assert scan.lines == 20
    assert scan.last_event is not None and scan.last_event["id"] == written[-1]["id"]
    assert scan.torn and scan.end == len(whole) and scan.size == len(whole) + 12


def test_a_failed_write_is_reported_once_and_never_raises(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "events.jsonl"
    writer = SessionLog(path)
    writer.close()
    broken = SessionLog(path)
    assert broken._fd is not None
    os.close(broken._fd)
    broken._fd = os.open(os.devnull, os.O_RDONLY)  # every write now fails
    broken.append(event(1))
    broken.append(event(2))
    assert broken.failure is not None and "cannot write" in broken.failure
    assert capsys.readouterr().err.count("cannot write") == 1
    broken.close()


def test_while_events_keep_coming_writes_wait_for_the_flush_interval_and_close_writes_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_module, "FLUSH_INTERVAL", 3600.0)  # the next write waits for the interval
    path = tmp_path / "events.jsonl"

    async def scenario() -> tuple[int, int, int]:
        writer = SessionLog(path)
        writer.append(event(1))
        await asyncio.sleep(0)  # the first write is not held back
        first = len(lines(path))
        writer.append(event(2))
        await asyncio.sleep(0)
        second = len(lines(path))
        writer.close()
        return first, second, len(lines(path))

    assert asyncio.run(scenario()) == (1, 1, 2)


def test_data_no_json_can_hold_keeps_its_envelope_in_the_log(tmp_path: Path) -> None:
    looped: dict[str, object] = {}
    looped["self"] = looped
    cyclic = make_event("user.message", {"content": looped})
    line = json.loads(encode_event(cyclic))
    assert line["id"] == cyclic["id"] and line["type"] == "user.message"
    assert line["data"] == {"unencodable": "Circular reference detected"}


def test_after_a_write_that_failed_half_way_the_next_batch_starts_on_a_line_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "events.jsonl"
    writer = SessionLog(path)
    real_write = os.write
    calls = {"count": 0}

    def full_disk_once(fd: int, data: bytes | memoryview) -> int:
        calls["count"] += 1
        if calls["count"] == 1:
            return real_write(fd, bytes(data[:25]))  # part of the line, then the disk is full
        if calls["count"] == 2:
            raise OSError(28, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full_disk_once)
    lost, kept = event(1), event(2)
    writer.append(lost)
    writer.append(kept)
    writer.close()
    reader = LogReader(path)
    assert [item["id"] for item in reader] == [kept["id"]]
    assert reader.problems == ["line 1 is not an event; skipped"]
    assert writer.failure == (
        f"cannot write {path}: No space left on device; the session's events are not being saved until "
        "it can be (free some space, or fix the folder's permissions)"
    )


def test_a_large_event_is_written_at_once_with_those_queued_before_it_and_each_append_says_its_line_length(
    tmp_path: Path,
) -> None:
    path = tmp_path / "events.jsonl"

    async def scenario() -> tuple[int, int, list[int | None]]:
        writer = SessionLog(path)
        sizes = [writer.append(event(1))]
        small = len(lines(path))  # a small event waits for the end of the turn
        sizes.append(writer.append(event(2, "x" * (2 * 1024 * 1024))))
        large = len(lines(path))  # a large one fills the batch: both are written at once
        writer.close()
        sizes.append(writer.append(event(3)))  # closed: nothing is written
        return small, large, sizes

    small, large, sizes = asyncio.run(scenario())
    assert (small, large) == (0, 2)
    assert sizes == [len(line) + 1 for line in path.read_text().splitlines()] + [None]
