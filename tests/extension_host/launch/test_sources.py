"""Fetching sources: what a SOURCE names, and a repository's files written without a checkout,
so no filter the user's configuration defines runs for a repository's .gitattributes."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from extension_host.errors import InstallError
from extension_host.launch.sources import check_subdir, classify, export_commit, fetch_git
from helpers import git, recording_program, run


def committed(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True)
    git("init", "-q", "-b", "main", str(folder))
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    git("-C", str(folder), "add", "-A")
    git("-C", str(folder), "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "one")
    return folder


def test_a_source_is_a_repository_a_folder_a_wheel_or_a_distribution_by_what_it_names(tmp_path: Path) -> None:
    repository = tmp_path / "repo"
    (repository / ".git").mkdir(parents=True)
    folder = tmp_path / "plain"
    folder.mkdir()
    project = tmp_path / "lib"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'lib'\n", encoding="utf-8")
    wheel = tmp_path / "x-1.0-py3-none-any.whl"
    wheel.write_bytes(b"")
    assert classify(str(repository)).kind == "git" and classify(str(repository)).local
    assert classify("https://example.com/o/greet.git").default_name == "greet"
    assert classify("git@example.com:o/greet.git").kind == "git"
    assert classify(str(folder)).kind == "folder"
    assert classify(str(project)).kind == "pip"
    assert classify(str(wheel)).kind == "pip"
    assert classify("hello-ext>=1.0").kind == "pip"
    assert classify("pip:./odd").location == "./odd"
    for refused in ("http://example.com/x.git", "git://example.com/x", "-oProxyCommand=x", "./missing", "a b"):
        with pytest.raises(InstallError):
            classify(refused)


def test_a_subfolder_may_not_climb_out_or_be_absolute() -> None:
    assert check_subdir("tools/lint/", "s") == "tools/lint"
    for bad in ("../x", "/etc", "a/../../b", ".git/hooks"):
        with pytest.raises(InstallError, match="must be a folder inside"):
            check_subdir(bad, "s")


@pytest.mark.subprocess
def test_a_smudge_filter_of_the_users_configuration_never_runs_for_a_repositorys_gitattributes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "ran"
    program = recording_program(tmp_path / "filter", marker, "cat")
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        f'[filter "evil"]\n\tsmudge = {program} smudge\n\tclean = {program} clean\n\tprocess = {program} process\n'
        f"[core]\n\thooksPath = {tmp_path / 'hooks'}\n",
        encoding="utf-8",
    )
    hooks = tmp_path / "hooks"
    recording_program(hooks / "post-checkout", marker)
    repository = committed(
        tmp_path / "repo", {".gitattributes": "* filter=evil\n", "extension.py": "print('as stored')\n"}
    )
    monkeypatch.setenv("HOME", str(home))
    # The control: a plain clone runs the filter and the hook.
    subprocess.run(["git", "clone", "-q", str(repository), str(tmp_path / "plain")], check=True, timeout=30)
    assert marker.exists()
    marker.unlink()

    stage = tmp_path / "stage"
    stage.mkdir()
    clone, commit = run(fetch_git(str(repository), stage, local=True, ref=None))
    skipped = run(export_commit(clone, commit, None, stage / "tree", str(repository)))
    assert skipped == []
    assert (stage / "tree" / "extension.py").read_text() == "print('as stored')\n"
    assert not marker.exists()


@pytest.mark.subprocess
def test_a_link_out_of_the_repository_is_refused(tmp_path: Path) -> None:
    repository = committed(tmp_path / "repo", {"extension.py": "print()\n"})
    (repository / "inside").symlink_to("extension.py")
    (repository / "escape").symlink_to("../../etc/passwd")
    git("-C", str(repository), "add", "-A")
    git("-C", str(repository), "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "links")
    stage = tmp_path / "stage"
    stage.mkdir()
    clone, commit = run(fetch_git(str(repository), stage, local=True, ref=None))
    with pytest.raises(InstallError, match=re.escape("escape is a link to '../../etc/passwd', outside the extension")):
        run(export_commit(clone, commit, None, stage / "tree", str(repository)))


@pytest.mark.subprocess
def test_a_folder_missing_from_the_commit_is_one_line(tmp_path: Path) -> None:
    repository = committed(tmp_path / "repo", {"extension.py": "print()\n"})
    stage = tmp_path / "stage"
    stage.mkdir()
    clone, commit = run(fetch_git(str(repository), stage, local=True, ref="main"))
    with pytest.raises(InstallError, match=f"no folder tools in {repository} at {commit[:12]}"):
        run(export_commit(clone, commit, "tools", stage / "tree", str(repository)))
