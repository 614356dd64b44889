"""The git_stats sample: its report on real temporary repositories, its parsers, its failures."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from extension_host.launch import git as host_git
from helpers import SAMPLES, load_module, recording_program, sample_extension_module
from sdk_extension import ToolResult

EXTENSION_DIR = SAMPLES / "git_stats"


git_stats = load_module("sample_git_stats_logic", SAMPLES / "git_stats" / "git_stats.py")


@pytest.fixture(autouse=True)
def isolated_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the user's git config out (the sample drops GIT_* variables, so through HOME too),
    and never find a repository above tmp_path."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    for key, value in {
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.com",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.com",
    }.items():
        monkeypatch.setenv(key, value)


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` and return its stdout; fail the test if git fails."""
    completed = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=30, check=False)
    assert completed.returncode == 0, f"git {' '.join(args)}: {completed.stderr}"
    return completed.stdout


def write(path: Path, text: str) -> None:
    """Write ``text`` to ``path``, creating folders as needed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository on main with one commit of two files."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root / "a.txt", "one\ntwo\nthree\n")
    write(root / "b.txt", "alpha\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "initial")
    return root


def file_entry(report: dict[str, Any], path: str) -> dict[str, Any]:
    """The entry for ``path`` in a report's file list."""
    matches = [entry for entry in report["files"] if entry["path"] == path]
    assert len(matches) == 1, report["files"]
    found: dict[str, Any] = matches[0]
    return found


# -- reports on real repositories ------------------------------------------------------------


def test_a_clean_repository_reports_its_branch_and_no_changes(repo: Path) -> None:
    """A fresh commit on main: branch, short head, zero counts, empty totals and list."""
    report = git_stats.collect_git_stats(repo)
    assert report["branch"] == "main"
    assert report["detached"] is False
    assert report["head"] == git(repo, "rev-parse", "--short", "HEAD").strip()
    assert report["upstream"] is None
    assert "ahead" not in report and "behind" not in report
    assert report["counts"] == {"staged": 0, "unstaged": 0, "untracked": 0, "conflicted": 0}
    assert report["totals"]["staged"] == {"files": 0, "added": 0, "removed": 0, "binary_files": 0}
    assert report["files"] == [] and report["files_omitted"] == 0
    assert Path(report["repo_root"]) == repo.resolve()


def test_staged_unstaged_and_untracked_files_are_counted_with_their_line_stats(repo: Path) -> None:
    """Staged and unstaged edits are counted apart, with git's numstat line counts."""
    write(repo / "a.txt", "one\nTWO\nthree\nfour\n")  # -1 +2, staged
    git(repo, "add", "a.txt")
    write(repo / "b.txt", "")  # -1, unstaged
    write(repo / "new.txt", "x\n")  # untracked
    write(repo / "staged_new.txt", "1\n2\n3\n")
    git(repo, "add", "staged_new.txt")

    report = git_stats.collect_git_stats(repo)

    assert report["counts"] == {"staged": 2, "unstaged": 1, "untracked": 1, "conflicted": 0}
    assert file_entry(report, "a.txt")["staged"] == {"status": "modified", "added": 2, "removed": 1}
    assert file_entry(report, "a.txt")["unstaged"] is None
    assert file_entry(report, "b.txt")["unstaged"] == {"status": "modified", "added": 0, "removed": 1}
    assert file_entry(report, "staged_new.txt")["staged"] == {"status": "added", "added": 3, "removed": 0}
    assert file_entry(report, "new.txt") == {"path": "new.txt", "kind": "untracked"}
    assert report["totals"]["staged"] == {"files": 2, "added": 5, "removed": 1, "binary_files": 0}
    assert report["totals"]["unstaged"] == {"files": 1, "added": 0, "removed": 1, "binary_files": 0}


def test_a_file_changed_in_both_index_and_work_tree_has_both_stats(repo: Path) -> None:
    """git diff --cached and git diff are reported side by side for the same path."""
    write(repo / "a.txt", "one\ntwo\nthree\nstaged\n")
    git(repo, "add", "a.txt")
    write(repo / "a.txt", "one\nthree\nstaged\nworktree\nmore\n")

    entry = file_entry(git_stats.collect_git_stats(repo), "a.txt")

    assert entry["staged"] == {"status": "modified", "added": 1, "removed": 0}
    assert entry["unstaged"] == {"status": "modified", "added": 2, "removed": 1}


def test_deleted_files_count_their_removed_lines(repo: Path) -> None:
    """A staged deletion reports every line of the file as removed."""
    git(repo, "rm", "-q", "a.txt")
    entry = file_entry(git_stats.collect_git_stats(repo), "a.txt")
    assert entry["staged"] == {"status": "deleted", "added": 0, "removed": 3}


def test_binary_files_are_marked_instead_of_counted(repo: Path) -> None:
    """numstat's '-' for binary files becomes binary: true and a binary_files total."""
    (repo / "image.bin").write_bytes(bytes(range(256)))
    git(repo, "add", "image.bin")

    report = git_stats.collect_git_stats(repo)

    assert file_entry(report, "image.bin")["staged"] == {"status": "added", "binary": True}
    assert report["totals"]["staged"] == {"files": 1, "added": 0, "removed": 0, "binary_files": 1}


def test_a_rename_reports_the_old_path_and_paths_keep_their_spaces(repo: Path) -> None:
    """Renamed files (git mv) carry old_path; -z parsing keeps spaces and non-ASCII intact."""
    git(repo, "mv", "b.txt", "notes — b v2.txt")

    report = git_stats.collect_git_stats(repo)

    entry = file_entry(report, "notes — b v2.txt")
    assert entry["old_path"] == "b.txt"
    assert entry["staged"] == {"status": "renamed", "added": 0, "removed": 0}
    assert report["counts"]["staged"] == 1


def test_a_detached_head_reports_the_short_sha_and_no_branch(repo: Path) -> None:
    """Checking out a commit gives branch None, detached True and the short sha."""
    git(repo, "checkout", "-q", "--detach", "HEAD")
    report = git_stats.collect_git_stats(repo)
    assert report["branch"] is None
    assert report["detached"] is True
    assert report["head"] == git(repo, "rev-parse", "--short", "HEAD").strip()


def test_an_upstream_reports_ahead_and_behind_counts(repo: Path) -> None:
    """A branch tracking main, one commit ahead and two behind, says so."""
    git(repo, "checkout", "-q", "-b", "feature", "--track", "main")
    write(repo / "feature.txt", "f\n")
    git(repo, "add", "feature.txt")
    git(repo, "commit", "-q", "-m", "feature work")
    git(repo, "checkout", "-q", "main")
    for number in (1, 2):
        write(repo / f"main{number}.txt", "m\n")
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", f"main work {number}")
    git(repo, "checkout", "-q", "feature")

    report = git_stats.collect_git_stats(repo)

    assert report["branch"] == "feature"
    assert report["upstream"] == "main"
    assert (report["ahead"], report["behind"]) == (1, 2)


def test_a_repository_without_commits_has_no_head_but_counts_staged_files(tmp_path: Path) -> None:
    """Before the first commit there is a branch name, no head, and staged files still count."""
    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root / "first.txt", "a\nb\n")
    git(root, "add", "first.txt")

    report = git_stats.collect_git_stats(root)

    assert report["branch"] == "main" and report["head"] is None
    assert file_entry(report, "first.txt")["staged"] == {"status": "added", "added": 2, "removed": 0}


def test_a_merge_conflict_is_counted_as_conflicted_without_line_stats(repo: Path) -> None:
    """Unmerged paths count as conflicted and are left out of the line totals."""
    git(repo, "checkout", "-q", "-b", "other")
    write(repo / "a.txt", "one\nOTHER\nthree\n")
    git(repo, "commit", "-q", "-am", "other")
    git(repo, "checkout", "-q", "main")
    write(repo / "a.txt", "one\nMAIN\nthree\n")
    git(repo, "commit", "-q", "-am", "main")
    merge = subprocess.run(["git", "merge", "other"], cwd=repo, capture_output=True, timeout=30, check=False)
    assert merge.returncode != 0

    report = git_stats.collect_git_stats(repo)

    assert report["counts"]["conflicted"] == 1
    assert file_entry(report, "a.txt") == {"path": "a.txt", "kind": "conflicted", "staged": None, "unstaged": None}
    assert report["totals"]["unstaged"]["files"] == 0


def test_max_files_limits_the_list_but_not_the_counts_or_totals(repo: Path) -> None:
    """Only max_files entries are listed, sorted by path; files_omitted says how many more."""
    for index in range(5):
        write(repo / f"f{index}.txt", "x\n" * (index + 1))
    git(repo, "add", ".")

    report = git_stats.collect_git_stats(repo, max_files=2)

    assert [entry["path"] for entry in report["files"]] == ["f0.txt", "f1.txt"]
    assert report["files_omitted"] == 3
    assert report["counts"]["staged"] == 5
    assert report["totals"]["staged"]["added"] == 15


def test_include_files_false_leaves_out_the_file_list(repo: Path) -> None:
    """Without files the report still has counts and totals."""
    write(repo / "a.txt", "changed\n")
    report = git_stats.collect_git_stats(repo, include_files=False)
    assert "files" not in report and "files_omitted" not in report
    assert report["counts"]["unstaged"] == 1


def test_a_subfolder_reports_on_the_whole_repository(repo: Path) -> None:
    """Asked from a subfolder, paths are still relative to the repository root."""
    write(repo / "sub" / "deep.txt", "d\n")
    git(repo, "add", ".")
    report = git_stats.collect_git_stats(repo / "sub")
    assert [entry["path"] for entry in report["files"]] == ["sub/deep.txt"]


# -- a repository's configuration runs nothing -----------------------------------------------


def test_the_samples_git_switches_off_everything_the_hosts_own_git_calls_do() -> None:
    """The sample cannot import the host, so it keeps its own list: it may hold more, never less."""
    settings = dict(git_stats.NEUTRALISED_SETTINGS)
    for setting in host_git.NEUTRALISED_SETTINGS:
        assert settings.get(setting.name) == setting.value, setting.name
    assert host_git.GIT_ENVIRONMENT.items() <= git_stats.GIT_ENVIRONMENT.items()
    argv = git_stats.git_argv("status")
    assert set(host_git.GIT_OPTIONS) <= set(argv[: argv.index("status")])


def test_a_repositorys_own_configuration_and_inherited_git_variables_run_no_program(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repository whose configuration (and a file it includes) points every setting that names
    a program at one that leaves a marker, with a filter and a diff driver .gitattributes assigns
    to every file, and GIT_* variables that name programs and another repository: the report is
    the repository's own, and the program never runs, though status and diff compare a changed
    file's content."""
    marker = tmp_path / "ran"
    program = recording_program(tmp_path / "evil", marker, "cat")
    included = repo / ".git" / "included.config"
    included.write_text(f"[core]\n\tfsmonitor = {program}\n\tpager = {program}\n", encoding="utf-8")
    git(repo, "config", "include.path", str(included))
    for setting in host_git.NEUTRALISED_SETTINGS:
        git(repo, "config", "--add", setting.name, str(program))
    for name in ("filter.evil.clean", "filter.evil.smudge", "filter.evil.process", "diff.evil.textconv"):
        git(repo, "config", name, str(program))
    git(repo, "config", "diff.evil.command", str(program))
    git(repo, "config", "filter.evil.required", "true")
    write(repo / ".gitattributes", "* filter=evil diff=evil\n")
    write(repo / "a.txt", "one\nTWO\nthree\n")
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.fsmonitor'='{program}'")
    for variable in ("GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR", "GIT_ASKPASS"):
        monkeypatch.setenv(variable, str(program))

    report = git_stats.collect_git_stats(repo)

    assert not marker.exists(), marker.read_text()
    assert report["repo_root"] == str(repo)
    assert report["counts"] == {"staged": 0, "unstaged": 1, "untracked": 1, "conflicted": 0}
    assert file_entry(report, "a.txt")["unstaged"] == {"status": "modified", "added": 1, "removed": 1}


def test_a_filter_whose_programs_cannot_be_switched_off_stops_the_report(repo: Path) -> None:
    """A filter name with ``=`` in it cannot be given with -c: git is not run with it in place."""
    git(repo, "config", "filter.a=b.clean", "cat")
    with pytest.raises(git_stats.GitStatsError, match="a filter named 'a=b'"):
        git_stats.collect_git_stats(repo)


# -- failures --------------------------------------------------------------------------------


def test_a_folder_outside_any_repository_is_a_clear_error(tmp_path: Path) -> None:
    """A plain folder gives GitStatsError saying it is not in a git repository."""
    with pytest.raises(git_stats.GitStatsError, match="is not inside a git repository"):
        git_stats.collect_git_stats(tmp_path)


def test_a_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    """A path that does not exist is reported as such, not as a missing git."""
    with pytest.raises(git_stats.GitStatsError, match="is not a directory"):
        git_stats.collect_git_stats(tmp_path / "nowhere")


def test_a_missing_git_is_a_clear_error(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no git on PATH the error says git is not installed."""
    empty = tmp_path / "no-tools"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(git_stats.GitStatsError, match="git is not installed or not on PATH"):
        git_stats.collect_git_stats(repo)


def test_an_exhausted_time_budget_is_a_timeout_error(repo: Path) -> None:
    """When the deadline has passed before git can run, the error says it took too long."""
    with pytest.raises(git_stats.GitStatsError, match="took longer than"):
        git_stats.collect_git_stats(repo, timeout=0)


# -- parsers ---------------------------------------------------------------------------------


def test_status_parsing_reads_headers_renames_conflicts_and_untracked_paths() -> None:
    """Porcelain v2 records, NUL-separated, become a StatusReport."""
    output = "\0".join(
        [
            "# branch.oid 0123456789abcdef0123456789abcdef01234567",
            "# branch.head topic",
            "# branch.upstream origin/topic",
            "# branch.ab +3 -1",
            "1 .M N... 100644 100644 100644 aaaa aaaa with space.txt",
            "2 R. N... 100644 100644 100644 aaaa aaaa R100 new name.txt",
            "old name.txt",
            "u UU N... 100644 100644 100644 100644 aaaa bbbb cccc clash.txt",
            "? fresh.txt",
            "",
        ]
    )
    report = git_stats.parse_status(output)
    assert (report.branch, report.upstream, report.ahead, report.behind) == ("topic", "origin/topic", 3, 1)
    assert [(c.path, c.kind, c.staged, c.unstaged, c.old_path) for c in report.files] == [
        ("with space.txt", "tracked", None, "modified", None),
        ("new name.txt", "tracked", "renamed", None, "old name.txt"),
        ("clash.txt", "conflicted", "unmerged", "unmerged", None),
        ("fresh.txt", "untracked", None, None, None),
    ]


def test_status_parsing_knows_an_unborn_branch_and_a_detached_head() -> None:
    """'(initial)' means no head commit and '(detached)' means no branch."""
    unborn = git_stats.parse_status("# branch.oid (initial)\0# branch.head main\0")
    detached = git_stats.parse_status("# branch.oid abc\0# branch.head (detached)\0")
    assert (unborn.head_oid, unborn.branch) == (None, "main")
    assert (detached.head_oid, detached.branch) == ("abc", None)


def test_numstat_parsing_handles_binary_files_and_renames() -> None:
    """'-' counts are binary; an empty path is followed by the old and new paths."""
    output = "3\t1\tplain.txt\0-\t-\tlogo.png\0" + "0\t2\t\0old.txt\0new.txt\0"
    stats = git_stats.parse_numstat(output)
    assert stats["plain.txt"] == git_stats.NumStat(3, 1)
    assert stats["logo.png"].binary is True
    assert stats["new.txt"] == git_stats.NumStat(0, 2, "old.txt")


def test_a_malformed_numstat_line_is_an_error_not_a_crash() -> None:
    """Output that is not numstat raises GitStatsError naming the line."""
    with pytest.raises(git_stats.GitStatsError, match="unexpected line"):
        git_stats.parse_numstat("garbage\0")


# -- the tool wrapper ------------------------------------------------------------------------


@pytest.fixture
def extension() -> Iterator[ModuleType]:
    """extension.py loaded as the host would find it, not joined."""
    with sample_extension_module("git_stats", "git_stats") as module:
        yield module


def test_the_tool_declares_its_optional_arguments(extension: ModuleType) -> None:
    """The git_stats tool takes include_files and max_files, both optional."""
    schema = extension.git_stats.parameters
    assert extension.git_stats.name == "git_stats"
    assert set(schema["properties"]) == {"include_files", "max_files"}
    assert "required" not in schema


def test_the_tool_reports_on_the_working_directory(
    extension: ModuleType, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Called in a repository, the tool returns the report dict."""
    monkeypatch.chdir(repo)
    result = extension.git_stats(max_files=1)
    assert result["branch"] == "main"


def test_the_tool_turns_errors_into_a_failure_result(
    extension: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outside a repository the tool returns a failure ToolResult with a clear message."""
    monkeypatch.chdir(tmp_path)
    result = extension.git_stats()
    assert isinstance(result, ToolResult)
    assert result.result_type == "failure"
    assert "not inside a git repository" in result.text_result_for_llm
