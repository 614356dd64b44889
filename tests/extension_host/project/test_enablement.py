"""The enable/disable record: scopes and their order, what discovery makes of it, a damaged record."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from extension_host.project.discovery import discover
from extension_host.project.enablement import ENABLEMENT_FILE, Choices, EnablementStore, copilot_extensions_dir


def _extension(base: Path, name: str, entry: str = "extension.py") -> Path:
    folder = base / name
    folder.mkdir(parents=True)
    (folder / entry).write_text("", encoding="utf-8")
    return folder


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    root, home = tmp_path / "project", tmp_path / "home"
    _extension(root / ".github" / "extensions", "lint")
    _extension(home / "extensions", "notes")
    _extension(home / "extensions", "lint")
    return root, home


def test_a_project_decision_outranks_a_user_one_both_ways(layout: tuple[Path, Path], tmp_path: Path) -> None:
    root, home = layout
    other = tmp_path / "other"
    other.mkdir()
    store = EnablementStore(home)
    assert store.set_enabled(root, "user:notes", False, "user").enabled is False
    assert store.choices(other).disabled == {"user:notes": "user"}  # every project
    assert store.set_enabled(root, "user:notes", True, "project").scope == "project"
    assert store.choices(root).disabled == {}
    assert store.choices(other).disabled == {"user:notes": "user"}

    store.set_enabled(root, "project:lint", False, "project")
    after = store.set_enabled(root, "project:lint", True, "user")  # a user-wide enable cannot undo it here
    assert (after.enabled, after.scope) == (False, "project")


def test_enabling_removes_what_it_no_longer_needs_and_the_record_is_private(layout: tuple[Path, Path]) -> None:
    root, home = layout
    store = EnablementStore(home)
    store.set_enabled(root, "project:lint", False, "project")
    store.set_enabled(root, "project:lint", True, "project")
    store.set_enabled(root, "user:notes", False, "user")
    store.set_enabled(root, "user:notes", True, "user")
    assert '"projects": {}' in store.path.read_text() and '"user": {}' in store.path.read_text()
    assert stat.S_IMODE((home / ENABLEMENT_FILE).stat().st_mode) == 0o600


def test_a_disabled_extension_is_discovered_not_startable_and_shadows_nothing(layout: tuple[Path, Path]) -> None:
    root, home = layout
    EnablementStore(home).set_enabled(root, "project:lint", False, "project")
    found = {item.spec.id: item for item in discover(root, home)}
    lint = found["project:lint"]
    assert not lint.startable and not lint.meant_to_run
    assert lint.disabled == "disabled for this project; 'extensions enable lint' runs it again"
    assert found["user:lint"].startable  # the user's own lint runs in its place
    assert found["user:notes"].startable


def test_a_damaged_record_starts_nothing_and_says_which_file(layout: tuple[Path, Path]) -> None:
    root, home = layout
    (home / ENABLEMENT_FILE).write_text("{not json", encoding="utf-8")
    (home / ENABLEMENT_FILE).chmod(0o600)
    found = discover(root, home)
    assert found and all(not item.startable for item in found)
    assert all(str(home / ENABLEMENT_FILE) in (item.problem or "") for item in found)


def test_copilot_folder_is_a_source_after_the_user_one_when_opted_in(
    layout: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, home = layout
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "copilot"))
    copilot = copilot_extensions_dir()
    assert copilot == tmp_path / "copilot" / "extensions"
    _extension(copilot, "notes", "extension.mjs")
    _extension(copilot, "weather", "extension.mjs")
    assert [item.spec.source for item in discover(root, home)] == ["project", "user", "user"]  # not opted in

    EnablementStore(home).set_copilot_folder(True)
    found = {item.spec.id: item for item in discover(root, home)}
    assert list(found)[-2:] == ["copilot:notes", "copilot:weather"]
    assert found["copilot:notes"].shadowed_by == "user:notes"  # the host's own wins
    assert found["copilot:weather"].startable and found["copilot:weather"].spec.runtime == "node"


def test_choices_given_are_used_as_they_are(layout: tuple[Path, Path]) -> None:
    root, home = layout
    found = discover(root, home, choices=Choices({"user:notes": "user"}))
    assert [item.spec.id for item in found if item.disabled] == ["user:notes"]
    assert found[2].disabled == "disabled for every project; 'extensions enable user:notes --user' runs it again"
