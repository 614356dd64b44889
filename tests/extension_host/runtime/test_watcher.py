"""The watcher: how file changes map to extensions (on scripted batches), which folders it
watches (links, ignored folders, the per-extension bound), and real watching of those folders
with a recording apply (no extension processes)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable
from pathlib import Path

import pytest
from watchfiles import Change

from extension_host.runtime.reload import MAX_FOLDERS_PER_EXTENSION, ExtensionFilter, ExtensionWatcher, FileChanges
from helpers import run


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


# -- the folders watched --------------------------------------------------------------------


def project_extensions(tmp_path: Path) -> Path:
    """The project's extension root (created)."""
    root = tmp_path / "project" / ".github" / "extensions"
    root.mkdir(parents=True, exist_ok=True)
    return root


def add_folder(folder: Path, *subfolders: str) -> Path:
    """Create ``folder`` with an extension.py and the given sub-folders; return it."""
    for sub in ("", *subfolders):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    (folder / "extension.py").write_text("# an extension\n", encoding="utf-8")
    return folder


def inside(folders: Iterable[Path], tree: Path) -> list[Path]:
    """The folders that are ``tree`` or lie under it."""
    return [folder for folder in folders if folder == tree or tree in folder.parents]


def test_an_extension_folder_that_is_a_link_is_watched_at_its_target_with_its_real_sub_folders(
    tmp_path: Path,
) -> None:
    """The link is followed once: its target and the target's folders are watched, not the link."""
    checkout = add_folder(tmp_path / "checkout", "pkg/inner", "docs")
    root = project_extensions(tmp_path)
    (root / "linked").symlink_to(checkout, target_is_directory=True)
    watched = watcher_for(tmp_path, []).watch_set()
    target = checkout.resolve()
    assert {target, target / "pkg", target / "pkg" / "inner", target / "docs"} <= watched.folders
    assert root.resolve() / "linked" not in watched.folders
    assert watched.owners[target / "pkg" / "inner"] == {"project:linked"}
    assert target in watched.extension_folders


def test_a_link_inside_an_extension_folder_is_not_followed(tmp_path: Path) -> None:
    """Neither a plain extension nor a linked one brings the tree a link inside it names."""
    outside = tmp_path / "outside"
    (outside / "deep" / "deeper").mkdir(parents=True)
    root = project_extensions(tmp_path)
    lint = add_folder(root / "lint", "rules")
    (lint / "link").symlink_to(outside, target_is_directory=True)
    checkout = add_folder(tmp_path / "checkout")
    (checkout / "escape").symlink_to(outside, target_is_directory=True)
    (root / "linked").symlink_to(checkout, target_is_directory=True)
    watched = watcher_for(tmp_path, []).watch_set()
    assert {lint.resolve(), lint.resolve() / "rules", checkout.resolve()} <= watched.folders
    assert inside(watched.folders, outside.resolve()) == []
    assert lint.resolve() / "link" not in watched.folders
    assert checkout.resolve() / "escape" not in watched.folders


def test_folders_the_filter_ignores_are_not_walked(tmp_path: Path) -> None:
    """__pycache__, .git, node_modules, .venv: neither they nor what is under them is watched."""
    root = project_extensions(tmp_path)
    ignored = ("__pycache__", ".git", "node_modules", ".venv")
    lint = add_folder(root / "lint", "src", *(f"{name}/sub" for name in ignored))
    add_folder(root / "node_modules")
    watched = watcher_for(tmp_path, []).watch_set()
    assert {lint.resolve(), lint.resolve() / "src"} <= watched.folders
    for name in ignored:
        assert inside(watched.folders, lint.resolve() / name) == [], name
    assert inside(watched.folders, root.resolve() / "node_modules") == []


def test_an_extension_adds_at_most_the_bound_of_folders_and_says_so_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ten folders over the bound: the set stops at the bound, the same each time, one message."""
    root = project_extensions(tmp_path)
    big = add_folder(root / "big", *(f"f{index:04}" for index in range(MAX_FOLDERS_PER_EXTENSION + 10)))
    small = add_folder(root / "small", "one")
    watcher = watcher_for(tmp_path, [])
    watched = watcher.watch_set()
    owned = [folder for folder, ids in watched.owners.items() if "project:big" in ids]
    assert len(owned) == MAX_FOLDERS_PER_EXTENSION
    assert big.resolve() in owned
    assert {small.resolve(), small.resolve() / "one"} <= watched.folders  # the others are not cut
    assert watcher.watch_set().folders == watched.folders
    messages = capsys.readouterr().err
    assert messages.count("project:big has more than") == 1
    assert "project:small" not in messages


def test_a_change_under_a_linked_folders_target_maps_to_the_extension_of_the_link(tmp_path: Path) -> None:
    """The target's path names the link's extension; a path outside every extension names none."""
    checkout = add_folder(tmp_path / "checkout", "pkg")
    root = project_extensions(tmp_path)
    (root / "linked").symlink_to(checkout, target_is_directory=True)
    add_folder(root / "lint")
    watcher = watcher_for(tmp_path, [])
    watcher.watch_set()
    target = checkout.resolve()
    assert watcher.extension_ids({(Change.modified, str(target / "extension.py"))}) == {"project:linked"}
    assert watcher.extension_ids({(Change.added, str(target / "pkg" / "util.py"))}) == {"project:linked"}
    assert watcher.extension_ids({(Change.deleted, str(target / "pkg"))}) == {"project:linked"}
    assert watcher.extension_ids({(Change.modified, str(tmp_path / "elsewhere" / "x.py"))}) == set()
    accept = ExtensionFilter({root: "project"}, [target])
    assert accept(Change.modified, str(target / "pkg" / "util.py"))
    assert not accept(Change.modified, str(tmp_path / "elsewhere" / "x.py"))


def test_walk_decides_per_source_and_is_asked_each_time(tmp_path: Path) -> None:
    """A source walk says no to is watched at its root only, until walk says yes."""
    root = project_extensions(tmp_path)
    lint = add_folder(root / "lint", "rules")
    notes = add_folder(tmp_path / "home" / "extensions" / "notes", "data")
    walked: dict[str, bool] = {"project": False, "user": True}

    async def apply(ids: set[str]) -> None:
        pass

    watcher = ExtensionWatcher(tmp_path / "project", tmp_path / "home", apply, walk=lambda source: walked[source])
    user = notes.resolve()
    assert watcher.watch_set().folders == {root.resolve(), user.parent, user, user / "data"}
    walked["project"] = True
    assert {lint.resolve(), lint.resolve() / "rules"} <= watcher.watch_set().folders


# -- real watching --------------------------------------------------------------------------


class RecordingWatcher(ExtensionWatcher):
    """A watcher over tmp_path's project and home that queues the ids it applies and keeps every
    path it was asked to map."""

    def __init__(self, tmp_path: Path) -> None:
        self.applied: asyncio.Queue[set[str]] = asyncio.Queue()
        self.paths: list[str] = []
        super().__init__(tmp_path / "project", tmp_path / "home", self._record)

    async def _record(self, ids: set[str]) -> None:
        self.applied.put_nowait(ids)

    def extension_ids(self, changes: Iterable[tuple[Change, str]]) -> set[str]:
        changes = list(changes)
        self.paths.extend(path for _, path in changes)
        return super().extension_ids(changes)

    async def next_applied(self, timeout: float = 10) -> set[str]:
        """The ids of the next batch applied (bounded)."""
        async with asyncio.timeout(timeout):
            return await self.applied.get()


@contextlib.asynccontextmanager
async def watching(watcher: ExtensionWatcher) -> AsyncIterator[None]:
    """Run ``watcher.watch`` for the duration; it has its OS watches once it had one step."""
    stop = asyncio.Event()
    task = asyncio.ensure_future(watcher.watch(stop))
    await asyncio.sleep(0)  # one turn of the loop: watch() opens its watches before it suspends
    try:
        yield
    finally:
        stop.set()
        async with asyncio.timeout(5):
            await task


def test_a_write_through_a_link_inside_an_extension_folder_is_not_seen_while_a_save_is(tmp_path: Path) -> None:
    """The write through the link comes first, so had it been seen it would be in an earlier or
    the same batch as the save, which is applied."""
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    lint = add_folder(project_extensions(tmp_path) / "lint")
    (lint / "link").symlink_to(outside, target_is_directory=True)

    async def scenario() -> RecordingWatcher:
        watcher = RecordingWatcher(tmp_path)
        async with watching(watcher):
            (lint / "link" / "deep" / "f.txt").write_text("outside", encoding="utf-8")
            (lint / "extension.py").write_text("# saved\n", encoding="utf-8")
            assert await watcher.next_applied() == {"project:lint"}
        return watcher

    watcher = run(scenario())
    assert str(lint.resolve() / "extension.py") in watcher.paths
    through_link = [Path(path) for path in watcher.paths]
    assert inside(through_link, lint.resolve() / "link") + inside(through_link, outside.resolve()) == []


def test_a_save_inside_a_linked_extension_folder_applies_that_extension(tmp_path: Path) -> None:
    """A save in the target of an extension folder that is a link names the link's extension."""
    checkout = add_folder(tmp_path / "checkout", "pkg")
    (project_extensions(tmp_path) / "linked").symlink_to(checkout, target_is_directory=True)

    async def scenario() -> None:
        watcher = RecordingWatcher(tmp_path)
        async with watching(watcher):
            (checkout / "extension.py").write_text("# saved\n", encoding="utf-8")
            assert await watcher.next_applied() == {"project:linked"}
            (checkout / "pkg" / "util.py").write_text("# new\n", encoding="utf-8")
            assert await watcher.next_applied() == {"project:linked"}

    run(scenario())


def test_new_folders_are_watched_before_the_batch_that_announced_them_is_applied(tmp_path: Path) -> None:
    """A new nested sub-folder, and a new extension folder: files saved in them afterwards are
    seen, although only the outermost new folder was reported."""
    root = project_extensions(tmp_path)
    lint = add_folder(root / "lint")

    async def scenario() -> RecordingWatcher:
        watcher = RecordingWatcher(tmp_path)
        async with watching(watcher):
            (lint / "sub" / "deeper").mkdir(parents=True)
            assert await watcher.next_applied() == {"project:lint"}
            (lint / "sub" / "deeper" / "helper.py").write_text("# helper\n", encoding="utf-8")
            assert await watcher.next_applied() == {"project:lint"}
            (root / "fresh").mkdir()
            assert await watcher.next_applied() == {"project:fresh"}
            (root / "fresh" / "extension.py").write_text("# fresh\n", encoding="utf-8")
            assert await watcher.next_applied() == {"project:fresh"}
        return watcher

    watcher = run(scenario())
    assert str(lint.resolve() / "sub" / "deeper" / "helper.py") in watcher.paths
    assert str(root.resolve() / "fresh" / "extension.py") in watcher.paths
