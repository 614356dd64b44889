"""Discovery: which folders are extensions, their order, shadowing and bad names."""

from __future__ import annotations

from pathlib import Path

from extension_host.bridges.copilot import launcher_text
from extension_host.project.discovery import COPILOT_LAUNCHER_MARKER, check_name, discover, is_copilot_launcher
from helpers import Project


def test_project_extensions_come_before_user_ones_each_sorted_by_name(project: Project) -> None:
    """Load order is project then user, alphabetical within each source."""
    for name in ("zeta", "alpha"):
        project.add_extension(name, "")
    for name in ("mid", "beta"):
        project.add_extension(name, "", source="user")
    ids = [found.spec.id for found in discover(project.root, project.home)]
    assert ids == ["project:alpha", "project:zeta", "user:beta", "user:mid"]


def test_a_project_extension_shadows_the_user_one_of_the_same_name(project: Project) -> None:
    """The user extension is still listed, marked as shadowed by the project one."""
    project.add_extension("lint", "")
    project.add_extension("lint", "", source="user")
    project_lint, user_lint = discover(project.root, project.home)
    assert project_lint.shadowed_by is None and project_lint.problem is None
    assert user_lint.spec.id == "user:lint"
    assert user_lint.shadowed_by == "project:lint"


def test_folders_without_extension_py_and_plain_files_are_ignored(project: Project) -> None:
    """Only immediate subdirectories holding extension.py count."""
    base = project.root / ".github" / "extensions"
    (base / "notes").mkdir(parents=True)
    (base / "notes" / "README.md").write_text("not an extension")
    (base / "extension.py").write_text("")
    (base / "deep" / "nested").mkdir(parents=True)
    (base / "deep" / "nested" / "extension.py").write_text("")
    project.add_extension("real", "")
    assert [found.spec.name for found in discover(project.root, project.home)] == ["real"]


def test_missing_extension_folders_mean_no_extensions(tmp_path: Path) -> None:
    """A project and home without extension folders discover nothing, without error."""
    assert discover(tmp_path / "nowhere", tmp_path / "nohome") == []


def test_a_folder_with_an_invalid_name_is_reported_with_the_rule(project: Project) -> None:
    """A name like '-bad name' is found, carries the rule as its problem, and shadows nothing."""
    project.add_extension("-bad name", "")
    project.add_extension("-bad name", "", source="user")
    found = discover(project.root, project.home)
    assert [f.problem is not None for f in found] == [True, True]
    assert found[0].problem is not None and "starts with a letter or digit" in found[0].problem
    assert found[1].shadowed_by is None


def test_the_name_rule_accepts_dots_dashes_and_underscores_but_not_paths() -> None:
    """Valid: my-ext, a.b_c, 9lives; invalid: empty, ../x, a/b, .hidden, 65 characters."""
    for good in ("my-ext", "a.b_c", "9lives", "x" * 64):
        assert check_name(good) is None
    for bad in ("", "../x", "a/b", ".hidden", "x" * 65, "has space"):
        assert check_name(bad) is not None


def test_the_entry_file_and_id_of_a_spec(project: Project) -> None:
    """A spec's entry is <folder>/extension.py and its id is <source>:<name>."""
    folder = project.add_extension("calc", "")
    (found,) = discover(project.root, project.home)
    assert found.spec.entry == folder / "extension.py"
    assert found.spec.id == "project:calc"


def test_javascript_entry_files_are_extensions_run_by_node(project: Project) -> None:
    """extension.mjs, .cjs and .js are found as Copilot SDK extensions with the node runtime."""
    for name, entry in (("a", "extension.mjs"), ("b", "extension.cjs"), ("c", "extension.js")):
        folder = project.root / ".github" / "extensions" / name
        folder.mkdir(parents=True)
        (folder / entry).write_text("")
    found = discover(project.root, project.home)
    assert [(f.spec.name, f.spec.entry.name, f.spec.runtime, f.problem) for f in found] == [
        ("a", "extension.mjs", "node", None),
        ("b", "extension.cjs", "node", None),
        ("c", "extension.js", "node", None),
    ]


def test_a_folder_with_two_entry_files_is_reported_not_guessed(project: Project) -> None:
    """extension.py beside extension.mjs: the extension is not started and the problem names both."""
    folder = project.add_extension("both", "")
    (folder / "extension.mjs").write_text("")
    (found,) = discover(project.root, project.home)
    assert found.problem is not None
    assert "extension.py, extension.mjs" in found.problem and "keep one" in found.problem


def test_a_generated_copilot_launcher_beside_extension_py_is_one_python_extension(project: Project) -> None:
    """``extensions export copilot`` writes an extension.mjs that only starts the extension.py."""
    folder = project.add_extension("tools", "")
    (folder / "extension.mjs").write_text(launcher_text("/usr/bin/python3"), encoding="utf-8")
    (found,) = discover(project.root, project.home)
    assert (found.spec.entry_name, found.spec.runtime, found.problem) == ("extension.py", "python", None)


def test_a_hand_written_extension_mjs_beside_extension_py_is_still_reported(project: Project) -> None:
    """Only the marker line makes the pair one extension; a look-alike further down does not."""
    folder = project.add_extension("tools", "")
    (folder / "extension.mjs").write_text(f"// mine\n{COPILOT_LAUNCHER_MARKER}\n", encoding="utf-8")
    (found,) = discover(project.root, project.home)
    assert found.problem is not None and "more than one entry file (extension.py, extension.mjs)" in found.problem


def test_a_generated_launcher_without_its_extension_py_is_a_javascript_extension(project: Project) -> None:
    """It is then run as it is, and says itself that the Python file is missing."""
    folder = project.root / ".github" / "extensions" / "orphan"
    folder.mkdir(parents=True)
    (folder / "extension.mjs").write_text(launcher_text("/usr/bin/python3"), encoding="utf-8")
    (found,) = discover(project.root, project.home)
    assert (found.spec.runtime, found.problem) == ("node", None)
    assert is_copilot_launcher(folder / "extension.mjs")
    assert not is_copilot_launcher(folder / "missing.mjs")
