"""The git helper: a repository's configuration cannot make git start a program, inherited GIT_*
variables cannot point it elsewhere, and a git that hangs is killed with whatever it started."""

from __future__ import annotations

from pathlib import Path

import pytest

from extension_host.launch.git import NEUTRALISED_SETTINGS, run_git
from helpers import git, recording_program, run, wait_for_exit


def hostile_repository(folder: Path, program: Path) -> Path:
    """A repository whose own configuration, and a file it includes, set every neutralised
    setting to ``program``."""
    git("init", "-q", str(folder))
    included = folder / "included.config"
    included.write_text(f"[core]\n\tfsmonitor = {program}\n\tpager = {program}\n", encoding="utf-8")
    git("-C", str(folder), "config", "include.path", str(included))
    for setting in NEUTRALISED_SETTINGS:
        git("-C", str(folder), "config", "--add", setting.name, str(program))
    return folder


def test_every_neutralised_setting_wins_over_the_repositorys_own_and_what_it_includes(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    repository = hostile_repository(tmp_path / "repo", recording_program(tmp_path / "evil", marker))
    for setting in NEUTRALISED_SETTINGS:
        output = run(run_git(repository, "config", "--get", setting.name))
        assert output is not None and not output.failed, setting.name
        assert output.records == (f"{setting.value}\n",), setting.name
    listed = run(run_git(repository, "ls-files", "--cached", "--others", "--exclude-standard", "-z"))
    assert listed is not None and "included.config" in listed.records
    assert not marker.exists()


def test_inherited_git_variables_do_not_send_git_to_another_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git("init", "-q", str(tmp_path / "mine"))
    git("init", "-q", str(tmp_path / "other"))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "other" / ".git"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.fsmonitor'='/bin/false'")
    output = run(run_git(tmp_path / "mine", "rev-parse", "--absolute-git-dir"))
    assert output is not None and output.records == (f"{tmp_path / 'mine' / '.git'}\n",)


def test_a_folder_in_no_repository_is_a_failure_and_no_git_at_all_is_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "plain").mkdir()
    outside = run(run_git(tmp_path / "plain", "--git-dir", str(tmp_path / "plain" / "none"), "ls-files"))
    assert outside is not None and outside.failed
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert run(run_git(tmp_path / "plain", "ls-files")) is None


@pytest.mark.subprocess
def test_a_git_that_does_not_end_is_killed_with_what_it_started_once_its_time_is_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pids = tmp_path / "pids"
    body = f'echo $$ >> "{pids}"\nprintf "first\\0sec"\nsleep 600 &\necho $! >> "{pids}"\nwait'
    recording_program(tmp_path / "bin" / "git", tmp_path / "ran", body)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    output = run(run_git(tmp_path, "ls-files", timeout=1.0))
    assert output is not None and output.records == ("first",) and not output.failed
    started = [int(pid) for pid in pids.read_text().split()]
    assert len(started) == 2
    for pid in started:
        assert wait_for_exit(pid)


def test_reading_stops_at_the_record_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    recording_program(tmp_path / "bin" / "git", tmp_path / "ran", "yes 'a' | tr '\\n' '\\0'")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    output = run(run_git(tmp_path, "ls-files", limit=3))
    assert output is not None and output.records == ("a", "a", "a") and not output.failed
