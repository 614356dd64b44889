"""Extension logs: rotation by size when an extension starts, and the current run's tail."""

from __future__ import annotations

from pathlib import Path

from extension_host.launch.logs import current_run_tail, rotate_log


def test_a_log_below_its_limit_is_left_alone(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text("small\n")
    assert rotate_log(log, max_bytes=100) is False
    assert log.read_text() == "small\n" and not (tmp_path / "x.log.1").exists()


def test_a_missing_log_is_not_an_error(tmp_path: Path) -> None:
    assert rotate_log(tmp_path / "never-written.log") is False


def test_rotation_shifts_the_backups_and_drops_the_oldest(tmp_path: Path) -> None:
    """x.log -> x.log.1 -> x.log.2; with two backups the third run's oldest is deleted."""
    log = tmp_path / "x.log"
    for run in range(4):
        log.write_text(f"run {run}\n" * 10)
        assert rotate_log(log, max_bytes=10, backups=2)
    assert not log.exists()
    assert (tmp_path / "x.log.1").read_text().startswith("run 3")
    assert (tmp_path / "x.log.2").read_text().startswith("run 2")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["x.log.1", "x.log.2"]


def test_without_backups_a_full_log_is_deleted(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text("y" * 20)
    assert rotate_log(log, max_bytes=10, backups=0)
    assert list(tmp_path.iterdir()) == []


def test_the_tail_starts_at_the_last_run(tmp_path: Path) -> None:
    """Lines of an earlier run (another error) are not part of the current run's tail."""
    log = tmp_path / "x.log"
    log.write_text(
        "=== 2026-11-26T01:00:00+00:00 starting project:x: python x.py\n"
        "ValueError: from the earlier run\n"
        "\n"
        "=== 2026-11-26T02:00:00+00:00 starting project:x: python x.py\n"
        "ready\n"
        "done\n"
    )
    assert current_run_tail(log) == ["=== 2026-11-26T02:00:00+00:00 starting project:x: python x.py", "ready", "done"]
    assert current_run_tail(log, max_lines=1) == ["done"]


def test_a_log_without_a_start_line_is_tailed_whole(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text("a\nb\n")
    assert current_run_tail(log) == ["a", "b"]
    assert current_run_tail(tmp_path / "missing.log") == []
