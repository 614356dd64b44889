"""How many sessions a server hosts: the limit derived from a (fake) /proc/meminfo and the
open-file limit, the check of a given limit, and the collector calls around a session's start
and stop."""

from __future__ import annotations

import gc
import os
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from extension_host.serve import capacity
from extension_host.serve.capacity import (
    FILE_RESERVE,
    MAX_DERIVED_SESSIONS,
    MIN_DERIVED_SESSIONS,
    SESSION_FILE_BUDGET,
    SESSION_MEMORY_BUDGET,
    Collector,
    available_memory,
    checked_max_sessions,
    derived_max_sessions,
    open_file_limit,
    sessions_for,
)

MIB = 1024 * 1024


def meminfo(path: Path, available_kib: int | None) -> Path:
    """A /proc/meminfo as Linux writes it, with ``MemAvailable`` only if given."""
    lines = ["MemTotal:       24684544 kB", "MemFree:        17362524 kB"]
    if available_kib is not None:
        lines.append(f"MemAvailable:   {available_kib:>8} kB")
    lines += ["Buffers:          123456 kB", "Cached:          6543210 kB"]
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path


def test_available_memory_is_memavailable_in_bytes(tmp_path: Path) -> None:
    assert available_memory(meminfo(tmp_path / "meminfo", 1_048_576)) == 1024 * MIB


@pytest.mark.parametrize("written", [False, True])
def test_without_memavailable_the_free_physical_pages_are_read_instead(tmp_path: Path, written: bool) -> None:
    path = meminfo(tmp_path / "meminfo", None) if written else tmp_path / "missing"
    pages = os.sysconf("SC_AVPHYS_PAGES")
    found = available_memory(path)
    assert found is not None
    # Free pages change from one moment to the next; the two readings bracket nothing else.
    assert abs(found - pages * os.sysconf("SC_PAGE_SIZE")) < 256 * MIB


@pytest.mark.parametrize(
    ("available", "open_files", "expected"),
    [
        (100 * SESSION_MEMORY_BUDGET + SESSION_MEMORY_BUDGET // 2, None, 100),
        (100 * SESSION_MEMORY_BUDGET, FILE_RESERVE + 60 * SESSION_FILE_BUDGET, 60),
        (3 * SESSION_MEMORY_BUDGET, None, MIN_DERIVED_SESSIONS),
        (10_000 * SESSION_MEMORY_BUDGET, 1_000_000, MAX_DERIVED_SESSIONS),
        (100 * SESSION_MEMORY_BUDGET, 16, MIN_DERIVED_SESSIONS),
        (None, FILE_RESERVE + 50 * SESSION_FILE_BUDGET, 50),
        (None, None, MIN_DERIVED_SESSIONS),
    ],
)
def test_the_derived_limit_is_memory_over_its_budget_bounded_by_open_files_and_clamped(
    available: int | None, open_files: int | None, expected: int
) -> None:
    assert sessions_for(available, open_files) == expected


def test_the_derived_limit_reads_the_machines_meminfo_and_the_processs_open_file_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(capacity, "MEMINFO", meminfo(tmp_path / "meminfo", 40 * SESSION_MEMORY_BUDGET // 1024))
    assert derived_max_sessions() == sessions_for(40 * SESSION_MEMORY_BUDGET, open_file_limit())
    monkeypatch.setattr(capacity, "MEMINFO", meminfo(tmp_path / "meminfo", 2_000 * SESSION_MEMORY_BUDGET // 1024))
    assert derived_max_sessions() == sessions_for(2_000 * SESSION_MEMORY_BUDGET, open_file_limit())


@pytest.mark.parametrize(("value", "expected"), [(1, 1), (500, 500), ("7", 7), ("0200", 200)])
def test_a_given_limit_is_a_whole_number_of_at_least_one(value: object, expected: int) -> None:
    assert checked_max_sessions(value, "--max-sessions") == expected


@pytest.mark.parametrize("value", [0, -1, True, 2.0, None, "0", "-3", "1.5", " 4", "x", "", "²", "9" * 40])
def test_anything_else_is_refused_naming_the_option_and_the_value(value: object) -> None:
    with pytest.raises(ValueError) as refused:
        checked_max_sessions(value, "--max-sessions")
    assert str(refused.value) == f"--max-sessions must be a whole number of at least 1, not {value!r}"


class _Cycle:
    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def thawed() -> Iterator[None]:
    """Whatever the test froze is thawed again after it."""
    try:
        yield
    finally:
        gc.unfreeze()


@pytest.mark.usefixtures("thawed")
def test_a_collector_that_freezes_keeps_a_cycle_past_collections_until_a_session_stops() -> None:
    collector = Collector(freeze=True)
    cycle = _Cycle()
    alive = weakref.ref(cycle)
    collector.started()
    del cycle
    gc.collect()
    assert alive() is not None  # frozen: the full collection did not walk it
    collector.stopped()
    assert alive() is None
    assert gc.get_freeze_count() > 0  # what is left is frozen again


@pytest.mark.usefixtures("thawed")
def test_a_failed_starts_cycles_are_collected_when_the_next_session_starts() -> None:
    collector = Collector(freeze=True)
    collector.started()
    cycle = _Cycle()
    alive = weakref.ref(cycle)
    collector.failed()
    del cycle
    collector.started()
    assert alive() is None
    assert gc.get_freeze_count() > 0


def test_a_collector_that_does_not_freeze_leaves_the_collector_alone() -> None:
    collector = Collector(freeze=False)
    collector.started()
    collector.failed()
    collector.stopped()
    assert gc.get_freeze_count() == 0
