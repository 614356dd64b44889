"""Paths: the project root, the user home and the control socket."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import pytest

import extension_host.project.paths
from extension_host.errors import ExtensionHostError, ProjectRootError
from extension_host.project.paths import (
    HOME_ENV,
    RUNTIME_ENV,
    control_socket_path,
    control_socket_paths,
    find_project_root,
    logs_dir,
    project_key,
    project_logs_dir,
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


def test_the_control_sockets_of_every_project_are_found_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a decision for every project is told to: each project's socket, not a serve socket
    or another file beside them; no runtime folder, no sockets."""
    monkeypatch.setenv(RUNTIME_ENV, str(tmp_path / "run"))
    assert control_socket_paths() == []
    (tmp_path / "run").mkdir()
    sockets = sorted(control_socket_path(tmp_path / name) for name in ("a", "b"))
    for path in sockets:
        path.touch()
    (tmp_path / "run" / f"serve-{sockets[0].name}").touch()
    (tmp_path / "run" / "hook-host.pid").touch()
    assert control_socket_paths() == sockets


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_named_root_that_is_not_a_folder_is_an_error_not_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """A typo in --root must not quietly mean the git root of wherever the command ran."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    named = tmp_path / "no-such-folder"
    if kind == "file":
        named.write_text("")
    with pytest.raises(ProjectRootError, match="no-such-folder") as raised:
        find_project_root(named)
    assert isinstance(raised.value, ExtensionHostError) and raised.value.path == named
    assert find_project_root() == tmp_path.resolve()


def test_logs_are_kept_per_project_in_a_folder_named_for_people_and_by_a_hash(tmp_path: Path) -> None:
    """Two projects of the same folder name get different folders; one project spelled two ways
    gets one; odd characters in a name do not reach the file system."""
    (tmp_path / "a" / "shop").mkdir(parents=True)
    (tmp_path / "b" / "shop").mkdir(parents=True)
    (tmp_path / "odd name é").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "a" / "shop")
    first, second = project_key(tmp_path / "a" / "shop"), project_key(tmp_path / "b" / "shop")
    assert first.startswith("shop-") and second.startswith("shop-") and first != second
    assert project_key(tmp_path / "link") == first
    assert project_key(tmp_path / "odd name é").startswith("odd_name__-")
    assert project_logs_dir(tmp_path / "home", tmp_path / "a" / "shop") == tmp_path / "home" / "logs" / first


def documented_names(path: Path) -> dict[str, str]:
    """The docstring beneath each module-level assignment of the Python file at ``path``, by
    the name assigned (as documentation tools attach them)."""
    body = ast.parse(path.read_text(encoding="utf-8")).body
    docs: dict[str, str] = {}
    for statement, after in itertools.pairwise(body):
        target = statement.target if isinstance(statement, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
            docs[target.id] = str(after.value.value)
    return docs


def test_each_folder_variable_is_documented_by_the_docstring_beneath_it() -> None:
    """The variable that moves the control sockets says so, and the one that moves downloads says that."""
    assert extension_host.project.paths.__file__ is not None
    docs = documented_names(Path(extension_host.project.paths.__file__))
    assert "control sockets" in docs["RUNTIME_ENV"]
    assert "downloaded" in docs["CACHE_ENV"]
