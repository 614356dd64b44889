"""A commit checked out and installed for the bench (bench.checkout): written out as stored,
with nothing the repository configures run, and a failed build that leaves nothing behind.
(A build that succeeds is tested by tests/bench/test_baseline.py, through a whole run.)"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench import checkout
from bench.checkout import BaselineError, build, resolve, write_tree
from helpers import git, recording_program

pytestmark = pytest.mark.subprocess


def _commit(repo: Path, files: dict[str, str]) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    git("-C", str(repo), "add", "-A")
    git("-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "x")
    return resolve("HEAD", repo)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    git("init", "-q", str(root))
    return root


def test_a_build_that_fails_says_which_step_in_one_line_and_leaves_no_entry(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pyproject = (
        '[build-system]\nrequires = []\nbuild-backend = "no_such_backend"\n[project]\nname = "x"\nversion = "1"\n'
    )
    commit = _commit(repo, {"pyproject.toml": pyproject})
    monkeypatch.setenv("EXTENSION_HOST_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(BaselineError) as failed:
        build(commit, repo=repo)
    assert str(failed.value).startswith("pip install failed (exit ")
    assert "no_such_backend" in str(failed.value) and "\n" not in str(failed.value)
    assert not (tmp_path / "cache" / "bench-baselines" / commit).exists()


@pytest.mark.parametrize("host_pip", [True, False], ids=["this-pip", "the-venvs-own-pip"])
def test_a_build_runs_the_interpreters_own_venv_and_pip_never_those_the_commit_holds(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host_pip: bool
) -> None:
    monkeypatch.setattr(checkout, "HOST_PIP", host_pip)  # without a pip here, the venv gets its own
    marker = tmp_path / "imported"
    planted = f"import pathlib\npathlib.Path({str(marker)!r}).write_text(__name__)\nraise SystemExit(3)\n"
    pyproject = (
        '[build-system]\nrequires = []\nbuild-backend = "no_such_backend"\n[project]\nname = "x"\nversion = "1"\n'
    )
    commit = _commit(repo, {"pyproject.toml": pyproject, "venv.py": planted, "pip/__init__.py": planted})
    monkeypatch.setenv("EXTENSION_HOST_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(BaselineError) as failed:
        build(commit, repo=repo)
    assert str(failed.value).startswith("pip install failed (exit ")  # the real pip, reaching the backend
    assert "no_such_backend" in str(failed.value)
    assert not marker.exists()


def test_a_commit_is_written_out_as_stored_without_running_what_the_repository_names(
    repo: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    evil = recording_program(tmp_path / "evil", marker, "cat")
    hooks = tmp_path / "hooks"
    for hook in ("post-checkout", "post-index-change", "reference-transaction"):
        recording_program(hooks / hook, marker)
    commit = _commit(
        repo, {".gitattributes": "*.txt filter=evil ident\n", "a.txt": "$Id$ as stored\n", "tool/run.sh": "#!/bin/sh\n"}
    )
    (repo / "tool" / "run.sh").chmod(0o755)
    (repo / "link").symlink_to("a.txt")
    commit = _commit(repo, {})
    for name, value in [
        ("filter.evil.smudge", evil),
        ("filter.evil.process", evil),
        ("core.fsmonitor", evil),
        ("core.hooksPath", hooks),
    ]:
        git("-C", str(repo), "config", name, str(value))
    dest = tmp_path / "out"
    write_tree(commit, dest, repo)
    assert (dest / "a.txt").read_text(encoding="utf-8") == "$Id$ as stored\n"  # no ident, no smudge
    assert os.access(dest / "tool" / "run.sh", os.X_OK) and not os.access(dest / "a.txt", os.X_OK)
    assert os.readlink(dest / "link") == "a.txt"
    assert not (dest / ".git").exists()
    assert not marker.exists()
