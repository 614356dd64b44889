"""The watcher's mapping of file changes to extensions, on scripted batches (no real watching)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from watchfiles import Change

from extension_host.reload import ExtensionFilter, ExtensionWatcher, FileChanges


def watcher_for(tmp_path: Path, applied: list[set[str]]) -> ExtensionWatcher:
    async def apply(ids: set[str]) -> None:
        applied.append(ids)

    return ExtensionWatcher(tmp_path / "project", tmp_path / "home", apply)


def test_changes_map_to_the_extension_whose_folder_they_touch(tmp_path: Path) -> None:
    """A file deep in a project or user extension folder names that extension's id."""
    watcher = watcher_for(tmp_path, [])
    project = tmp_path / "project" / ".github" / "extensions"
    user = tmp_path / "home" / "extensions"
    changes = {
        (Change.modified, str(project / "lint" / "extension.py")),
        (Change.added, str(project / "lint" / "rules" / "data.json")),
        (Change.deleted, str(user / "notes")),
        (Change.modified, str(tmp_path / "project" / "README.md")),
    }
    assert watcher.extension_ids(changes) == {"project:lint", "user:notes"}


def test_the_filter_ignores_caches_swap_files_and_files_outside_extension_folders(tmp_path: Path) -> None:
    """__pycache__, .swp and ~ backups, and unrelated project files are dropped."""
    project = tmp_path / ".github" / "extensions"
    accept = ExtensionFilter({project: "project"})
    assert accept(Change.modified, str(project / "lint" / "extension.py"))
    assert accept(Change.added, str(project / "lint" / "config.yaml"))
    assert accept(Change.added, str(project))  # the folder itself appearing
    for ignored in (
        project / "lint" / "__pycache__" / "extension.cpython-311.pyc",
        project / "lint" / ".extension.py.swp",
        project / "lint" / "extension.py~",
        tmp_path / "src" / "main.py",
    ):
        assert not accept(Change.modified, str(ignored)), ignored


def test_only_batches_touching_extensions_are_applied_one_at_a_time(tmp_path: Path) -> None:
    """Each relevant batch is applied once, in order; unrelated batches are skipped."""
    applied: list[set[str]] = []
    watcher = watcher_for(tmp_path, applied)
    project = tmp_path / "project" / ".github" / "extensions"

    async def batches() -> AsyncIterator[FileChanges]:
        yield {(Change.modified, str(project / "a" / "extension.py"))}
        yield {(Change.modified, str(tmp_path / "project" / "notes.txt"))}
        yield {(Change.added, str(project / "b" / "extension.py")), (Change.modified, str(project / "a" / "x.py"))}

    asyncio.run(watcher.run(batches()))
    assert applied == [{"project:a"}, {"project:a", "project:b"}]
    assert watcher.batches == 2


def test_a_failing_apply_is_reported_and_watching_goes_on(tmp_path: Path, capsys: object) -> None:
    """An exception from one batch does not stop the next one from being applied."""
    calls: list[set[str]] = []

    async def apply(ids: set[str]) -> None:
        calls.append(ids)
        if len(calls) == 1:
            raise RuntimeError("reload bug")

    watcher = ExtensionWatcher(tmp_path / "project", tmp_path / "home", apply)
    project = tmp_path / "project" / ".github" / "extensions"

    async def batches() -> AsyncIterator[FileChanges]:
        yield {(Change.modified, str(project / "a" / "extension.py"))}
        yield {(Change.modified, str(project / "b" / "extension.py"))}

    asyncio.run(watcher.run(batches()))
    assert calls == [{"project:a"}, {"project:b"}]


def test_what_is_watched_depends_on_which_folders_exist(tmp_path: Path) -> None:
    """The user folder is created; a project is watched at .github/extensions, else .github, else not."""
    watcher = watcher_for(tmp_path, [])
    user = (tmp_path / "home" / "extensions").resolve()
    assert watcher.watch_paths() == [user] and user.is_dir()
    (tmp_path / "project" / ".github").mkdir(parents=True)
    assert (tmp_path / "project" / ".github").resolve() in watcher.watch_paths()
    (tmp_path / "project" / ".github" / "extensions").mkdir()
    assert (tmp_path / "project" / ".github" / "extensions").resolve() in watcher.watch_paths()
