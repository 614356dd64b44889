"""The package scope: extensions found through the entry points of the distributions under
<home>/packages, after project and user ones, each shadowed by a project or user one of its name."""

from __future__ import annotations

from pathlib import Path

from extension_host.project.discovery import discover
from extension_host.project.packages import ENTRY_POINT_GROUP, package_extensions, packages_dir


def distribution(home: Path, name: str, entries: dict[str, str], *, entry_file: str = "extension.py") -> Path:
    """A distribution folder as ``pip install --target`` leaves it, exposing ``entries``."""
    target = packages_dir(home) / name
    info = target / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    lines = "".join(f"{entry} = {value}\n" for entry, value in entries.items())
    (info / "entry_points.txt").write_text(f"[console_scripts]\nx = y:z\n[{ENTRY_POINT_GROUP}]\n{lines}")
    for value in entries.values():
        folder = target.joinpath(*value.split("."))
        folder.mkdir(parents=True, exist_ok=True)
        (folder / entry_file).write_text("print()\n", encoding="utf-8")
    return target


def test_a_distributions_entry_points_name_its_extensions_and_their_folders(tmp_path: Path) -> None:
    distribution(tmp_path, "tools", {"lint": "tools_ext.lint", "fmt": "fmt_ext"})
    found = {extension.name: extension for extension in package_extensions(tmp_path)}
    assert found["lint"].folder == packages_dir(tmp_path) / "tools" / "tools_ext" / "lint"
    assert found["fmt"].distribution == "tools"
    assert all(extension.problem is None for extension in found.values())


def test_an_entry_point_that_is_not_a_package_name_cannot_reach_out_of_its_distribution(tmp_path: Path) -> None:
    target = distribution(tmp_path, "bad", {})
    info = next(target.glob("*.dist-info"))
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nup = ../../extensions/x\nattr = mod:obj\n")
    problems = [extension.problem for extension in package_extensions(tmp_path)]
    assert len(problems) == 2 and all(problem and "is not a package name" in problem for problem in problems)
    assert all(found.problem for found in discover(tmp_path / "project", tmp_path))


def test_package_extensions_come_last_and_a_user_or_project_one_of_their_name_shadows_them(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".github" / "extensions" / "lint").mkdir(parents=True)
    (project / ".github" / "extensions" / "lint" / "extension.py").write_text("print()\n")
    (tmp_path / "extensions" / "fmt").mkdir(parents=True)
    (tmp_path / "extensions" / "fmt" / "extension.py").write_text("print()\n")
    distribution(tmp_path, "tools", {"lint": "lint_ext", "fmt": "fmt_ext", "solo": "solo_ext"})
    found = discover(project, tmp_path)
    assert [f.spec.id for f in found] == ["project:lint", "user:fmt", "package:lint", "package:fmt", "package:solo"]
    shadows = {f.spec.id: f.shadowed_by for f in found}
    assert shadows["package:lint"] == "project:lint"
    assert shadows["package:fmt"] == "user:fmt"
    assert shadows["package:solo"] is None
    untrusted = {f.spec.id: f for f in discover(project, tmp_path, untrusted="not trusted")}
    assert untrusted["package:lint"].startable  # an untrusted project's extension shadows nothing


def test_two_distributions_exposing_one_name_leave_the_second_unstarted_with_the_reason(tmp_path: Path) -> None:
    distribution(tmp_path, "a-tools", {"lint": "lint_a"})
    distribution(tmp_path, "b-tools", {"lint": "lint_b"})
    second = discover(tmp_path / "project", tmp_path)[1]
    assert second.problem == "distribution a-tools exposes an extension of the same name, and comes first"


def test_a_package_extension_is_a_plugin_source_where_copilot_cli_lists_extensions() -> None:
    from extension_host.info import sdk_entry

    entry = sdk_entry("package:hello", "hello", "package", "running")
    assert entry == {"id": "package:hello", "name": "hello", "source": "plugin", "status": "running"}
