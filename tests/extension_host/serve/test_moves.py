"""resourceCopy and resourceMove replacing what is at the destination: a file or a link unless
failIfExists, a folder only when empty or with recursive, atomically, and everything put back
when the last step fails (property tests over small trees)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extension_host.serve.contents import ContentStore
from extension_host.serve.errors import ALREADY_EXISTS, ServeError
from extension_host.serve.resources import Resources
from extension_protocol.protocol import INVALID_PARAMS
from helpers import run

Tree = dict[str, tuple[str, bytes | str]]

DESTINATIONS = ["absent", "file", "link", "empty folder", "full folder"]


def snapshot(root: Path) -> Tree:
    """Every entry under ``root`` (links not followed): path → (kind, content or target)."""
    tree: Tree = {}
    for folder, folders, files in os.walk(root):
        for name in folders + files:
            path = Path(folder) / name
            relative = path.relative_to(root).as_posix()
            if path.is_symlink():
                tree[relative] = ("link", os.readlink(path))
            elif path.is_dir():
                tree[relative] = ("folder", "")
            else:
                tree[relative] = ("file", path.read_bytes())
    return tree


def below(tree: Tree, top: str) -> Tree:
    """The entries of ``tree`` under ``top``, relative to it."""
    return {path[len(top) + 1 :]: entry for path, entry in tree.items() if path.startswith(f"{top}/")}


def make(root: Path, name: str, kind: str) -> None:
    path = root / name
    if kind == "file":
        path.write_text(f"old {name}")
    elif kind == "link":
        path.symlink_to(root / "keep")
    elif kind == "empty folder":
        path.mkdir()
    elif kind == "full folder":
        (path / "deep").mkdir(parents=True)
        (path / "deep" / "data.txt").write_text("old data")


def world(root: Path) -> Resources:
    """``root`` with a file, a folder to copy or move, and a folder links lead to."""
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "file.txt").write_text("new file")
    (root / "folder" / "sub").mkdir(parents=True)
    (root / "folder" / "sub" / "a.txt").write_text("new a")
    (root / "keep").mkdir()
    (root / "keep" / "kept.txt").write_text("kept")
    return Resources(root, ContentStore())


def transfer(resources: Resources, method: str, source: Path, destination: Path, **flags: Any) -> None:
    run(getattr(resources, method)({"source": source.as_uri(), "destination": destination.as_uri(), **flags}))


@pytest.mark.parametrize("method", ["copy", "move"])
@pytest.mark.parametrize("source_name", ["file.txt", "folder"])
@pytest.mark.parametrize("existing", DESTINATIONS)
@pytest.mark.parametrize("flags", [{}, {"recursive": True}, {"failIfExists": True}])
def test_what_is_at_the_destination_is_replaced_only_as_the_request_allows(
    tmp_path: Path, method: str, source_name: str, existing: str, flags: dict[str, bool]
) -> None:
    resources = world(tmp_path)
    make(tmp_path, "target", existing)
    before = snapshot(tmp_path)
    try:
        transfer(resources, method, tmp_path / source_name, tmp_path / "target", **flags)
    except ServeError as refused:
        after = snapshot(tmp_path)
        assert after == before
        if flags.get("failIfExists"):
            assert existing != "absent"
            assert refused.code == ALREADY_EXISTS and "failIfExists was set" in refused.message
        else:
            assert (existing, flags) == ("full folder", {})
            assert refused.code == INVALID_PARAMS
            assert refused.message == (
                f"{(tmp_path / 'target').as_uri()}: is a folder that is not empty; pass recursive: true to "
                "replace it and everything in it, or pick another destination"
            )
        return
    assert not flags.get("failIfExists") or existing == "absent"
    assert existing != "full folder" or flags.get("recursive")
    after = snapshot(tmp_path)
    assert after["target"] == before[source_name]
    assert below(after, "target") == below(before, source_name)
    assert (source_name in after) == (method == "copy")
    changed = ["target", *([source_name] if method == "move" else [])]
    assert outside(after, changed) == outside(before, changed)
    assert below(after, "keep") == {"kept.txt": ("file", b"kept")}  # a replaced link's target stays
    assert [name for name in os.listdir(tmp_path) if name.startswith(".")] == [".git"]  # no staging left


def test_when_the_new_entry_cannot_be_put_in_place_the_old_one_and_the_source_are_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    resources = world(tmp_path)
    make(tmp_path, "target", "full folder")
    before = snapshot(tmp_path)
    real_rename = os.rename

    def failing_rename(source: Any, destination: Any) -> None:
        if Path(source).name == "new" and Path(destination) == tmp_path / "target":
            raise OSError(28, "No space left on device", str(destination))
        real_rename(source, destination)

    monkeypatch.setattr(os, "rename", failing_rename)
    with pytest.raises(ServeError) as failed:
        transfer(resources, "move", tmp_path / "folder", tmp_path / "target", recursive=True)
    assert failed.value.code == INVALID_PARAMS and "No space left on device" in failed.value.message
    monkeypatch.undo()
    assert snapshot(tmp_path) == before


def outside(tree: Tree, tops: list[str]) -> Tree:
    """The entries of ``tree`` that are not ``tops`` nor under one of them."""
    return {p: e for p, e in tree.items() if not any(p == top or p.startswith(f"{top}/") for top in tops)}


def entry_of(root: Path, relative: str) -> str:
    """Where the entry ``relative`` names really is (its folder's links resolved), relative to ``root``."""
    path = root / relative
    return (Path(os.path.realpath(path.parent)) / path.name).relative_to(root).as_posix()


NAMES = st.sampled_from(["a", "b", "a/b", "a/c", "b/a", "c"])
KINDS = st.sampled_from(["file", "folder", "link"])


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    entries=st.lists(st.tuples(NAMES, KINDS), max_size=6),
    method=st.sampled_from(["copy", "move"]),
    source=NAMES,
    destination=st.sampled_from(["a", "b", "a/b", "a/c", "b/a", "c", "", "a/b/c"]),
    fail_if_exists=st.booleans(),
    recursive=st.booleans(),
)
def test_a_copy_or_move_changes_its_destination_and_a_moved_source_and_nothing_else(
    entries: list[tuple[str, str]],
    method: str,
    source: str,
    destination: str,
    fail_if_exists: bool,
    recursive: bool,
) -> None:
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary) / "work"
        (root / ".git").mkdir(parents=True)
        (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        for name, kind in entries:
            path = root / name
            if os.path.lexists(path) or not path.parent.is_dir():
                continue
            if kind == "file":
                path.write_text(name)
            elif kind == "folder":
                path.mkdir()
            else:
                path.symlink_to(root / ".git")
        before = snapshot(root)
        target = entry_of(root, destination) if destination else ""
        if method == "move":
            moved = entry_of(root, source)
        else:
            moved = Path(os.path.realpath(root / source)).relative_to(root).as_posix()
        flags = {"failIfExists": fail_if_exists, "recursive": recursive}
        try:
            transfer(Resources(root, ContentStore()), method, root / source, root / destination, **flags)
        except ServeError:
            assert snapshot(root) == before  # a refusal changes nothing
            return
        after = snapshot(root)
        assert destination  # never the working directory itself
        old = before.get(target)
        assert old is None or not fail_if_exists
        assert old != ("folder", "") or recursive or not below(before, target)
        assert after[target] == before[moved] and below(after, target) == below(before, moved)
        changed = [target, *([moved] if method == "move" else [])]
        assert outside(after, changed) == outside(before, changed)
        assert [name for name in os.listdir(root) if name.startswith(".")] == [".git"]  # no staging left
