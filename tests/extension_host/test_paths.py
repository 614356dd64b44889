"""Paths: the project root and the user home."""

from __future__ import annotations

from pathlib import Path

import pytest

from extension_host.paths import HOME_ENV, find_project_root, logs_dir, user_home


def test_the_project_root_is_the_git_root_above_the_working_directory(tmp_path: Path) -> None:
    """From a nested folder, the folder holding .git is the root."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    nested = tmp_path / "repo" / "src" / "pkg"
    nested.mkdir(parents=True)
    assert find_project_root(nested) == (tmp_path / "repo").resolve()


def test_a_git_file_marks_a_root_too(tmp_path: Path) -> None:
    """Worktrees and submodules have a .git file instead of a folder."""
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt" / ".git").write_text("gitdir: elsewhere\n")
    assert find_project_root(tmp_path / "wt") == (tmp_path / "wt").resolve()


def test_without_git_the_folder_itself_is_the_root(tmp_path: Path) -> None:
    """Outside any repository the given folder is used as is."""
    plain = tmp_path / "plain"
    plain.mkdir()
    assert find_project_root(plain) == plain.resolve()


def test_the_user_home_comes_from_the_argument_then_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An explicit home wins over EXTENSION_HOST_HOME, which wins over the platform default."""
    monkeypatch.setenv(HOME_ENV, str(tmp_path / "from-env"))
    assert user_home() == (tmp_path / "from-env").resolve()
    assert user_home(tmp_path / "explicit") == (tmp_path / "explicit").resolve()
    monkeypatch.delenv(HOME_ENV)
    assert user_home().name == "extension-host"
    assert logs_dir(tmp_path) == tmp_path / "logs"
