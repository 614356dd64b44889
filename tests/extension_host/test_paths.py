"""Paths: the project root, the user home and the control socket."""

from __future__ import annotations

from pathlib import Path

import pytest

from extension_host.paths import (
    HOME_ENV,
    RUNTIME_ENV,
    control_socket_path,
    find_project_root,
    logs_dir,
    runtime_dir,
    user_home,
)


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


def test_the_runtime_dir_comes_from_the_environment_else_the_platform_without_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EXTENSION_HOST_RUNTIME_DIR wins; without it the platform folder is used, unset or unusable
    XDG_RUNTIME_DIR included, and platformdirs' warning about that does not escape (warnings are errors)."""
    monkeypatch.setenv(RUNTIME_ENV, str(tmp_path / "run"))
    assert runtime_dir() == (tmp_path / "run").resolve()
    monkeypatch.delenv(RUNTIME_ENV)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    assert runtime_dir().name == "extension-host"
    # A folder new to this run with a mode XDG forbids: platformdirs warns once per reason,
    # so this reason is sure to be a first.
    shared = tmp_path / "shared-runtime"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(shared))
    assert runtime_dir().name == "extension-host"


def test_the_control_socket_is_named_by_a_short_hash_of_the_resolved_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One name per project however its root is spelled, another for another project, all short."""
    monkeypatch.setenv(RUNTIME_ENV, str(tmp_path / "run"))
    (tmp_path / "a" / "sub").mkdir(parents=True)
    (tmp_path / "b").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "a")
    path = control_socket_path(tmp_path / "a")
    assert path.parent == (tmp_path / "run").resolve()
    assert len(path.stem) == 16 and set(path.stem) <= set("0123456789abcdef") and path.suffix == ".sock"
    assert control_socket_path(tmp_path / "a" / "sub" / "..") == path
    assert control_socket_path(tmp_path / "link") == path
    assert control_socket_path(tmp_path / "b") != path
