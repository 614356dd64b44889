"""A Python extension that cannot start says where and why: a syntax error's file, line, column
and source line with its caret, a missing module with the command that installs it; and a call
of a tool nobody offers names the extensions that failed. Real extensions, real processes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from extension_host.launch.startup_errors import describe_startup_error
from extension_protocol.startup_errors import StartupError
from helpers import CALC, Project

pytestmark = pytest.mark.subprocess

BROKEN = """
    import os

    def handler(x):
        if x
            return 1
"""
"""An extension whose fifth line lacks its colon, indented as real code is."""


def test_list_shows_the_file_line_column_and_the_line_of_a_syntax_error(project: Project) -> None:
    """The NOTE column names extension.py:5:9 and shows the line, the caret under the column."""
    project.add_extension("broken", BROKEN)
    listed = project.run_command("list").stdout.splitlines()
    note = listed[0].index("NOTE")
    (row,) = [index for index, line in enumerate(listed) if line.startswith("project:broken")]
    assert listed[row][note:] == "exited with code 1 before joining: SyntaxError: expected ':' at extension.py:5:9"
    assert [line[note:] for line in listed[row + 1 : row + 3]] == ["    if x", "        ^"]


def test_inspect_shows_the_syntax_error_under_its_field(project: Project) -> None:
    """``inspect`` gives the same error, its source line indented under it."""
    project.add_extension("broken", BROKEN)
    shown = project.run_command("inspect", "broken").stdout.splitlines()
    at = shown.index("  error:   exited with code 1 before joining: SyntaxError: expected ':' at extension.py:5:9")
    assert shown[at + 1 : at + 3] == [" " * 11 + "    if x", " " * 11 + "        ^"]


def test_a_syntax_error_in_a_module_of_the_extension_names_that_module(project: Project) -> None:
    """The file is the one Python could not read, not the extension's entry."""
    folder = project.add_extension("helped", "import helper\n")
    (folder / "helper.py").write_text("def f(:\n    pass\n")
    listed = project.run_command("list", "--json").stdout
    assert "SyntaxError: invalid syntax at helper.py:1:7" in listed


def test_a_missing_module_is_named_with_the_command_that_installs_it(project: Project) -> None:
    """Without a requirements file the hint installs the module's top-level package into the
    host's Python; with one, it installs the extension's requirements."""
    project.add_extension("needs", "import no_such_package_here.sub\n")
    bare = project.run_command("list").stdout
    assert "ModuleNotFoundError: No module named 'no_such_package_here'" in bare
    assert f"install it into the host's Python: {sys.executable} -m pip install no_such_package_here" in bare
    folder = project.add_extension("listed", "import no_such_package_here\n")
    (folder / "requirements.txt").write_text("no-such-package-here\n")
    listed = project.run_command("inspect", "listed").stdout
    assert (
        f"install the extension's requirements into the host's Python: {sys.executable} -m pip install "
        f"-r .github/extensions/listed/requirements.txt" in listed
    )


def test_calling_a_tool_while_an_extension_failed_names_that_extension_and_its_error(project: Project) -> None:
    """Not ``available: none``: the failed extension, its error and its source line."""
    project.add_extension("broken", BROKEN)
    called = project.run_command("call", "handler", "{}")
    assert called.returncode == 1
    assert called.stderr.splitlines() == [
        "error: no tool named 'handler'; extension project:broken failed: exited with code 1 before joining: "
        "SyntaxError: expected ':' at extension.py:5:9",
        "      if x",
        "          ^",
    ]


def test_calling_a_missing_tool_beside_a_running_one_still_lists_what_is_available(project: Project) -> None:
    """The tools that are offered come first, then the failed extension."""
    project.add_extension("calc", CALC)
    project.add_extension("needs", "import no_such_package_here\n")
    called = project.run_command("call", "mul", "{}")
    first = called.stderr.splitlines()[0]
    assert first == (
        "error: no tool named 'mul'; available: add; extension project:needs failed: exited with code 1 "
        "before joining: ModuleNotFoundError: No module named 'no_such_package_here'"
    )


def test_the_caret_spans_what_python_marks_and_a_file_outside_the_project_stays_absolute(tmp_path: Path) -> None:
    """Several carets for a span; a file in neither the extension's folder nor the project is
    shown in full; a syntax error without a source line is its first line alone."""
    entry = tmp_path / "project" / "ext" / "extension.py"
    error = StartupError("SyntaxError", "bad", file="/elsewhere/x.py", line=3, column=5, end_column=8, text="  f(abc)")
    assert describe_startup_error(error, tmp_path / "project", entry).split("\n") == [
        "SyntaxError: bad at /elsewhere/x.py:3:5",
        "    f(abc)",
        "      ^^^",
    ]
    bare = StartupError("SyntaxError", "bad", file=str(entry), line=1)
    assert describe_startup_error(bare, tmp_path / "project", entry) == "SyntaxError: bad at extension.py:1"


def test_a_module_missing_from_an_extensions_own_environment_points_at_its_requires(tmp_path: Path) -> None:
    """Installing into the host's Python would not help an extension that runs in an environment
    of its own; without one, requires is offered beside the host's pip."""
    missing = StartupError("ModuleNotFoundError", "No module named 'yaml'", module="yaml.constructor")
    entry = tmp_path / "extension.py"
    own = describe_startup_error(missing, tmp_path, entry, own_environment=True)
    assert own.splitlines() == [
        "ModuleNotFoundError: No module named 'yaml'",
        "add the package that provides 'yaml' to the requires of the extension's manifest: "
        "its environment holds only what requires lists",
    ]
    shared = describe_startup_error(missing, tmp_path, entry)
    assert shared.splitlines()[1] == (
        f"install it into the host's Python: {sys.executable} -m pip install yaml "
        "(or list it under requires in the extension's extension.toml: it gets an environment of its own)"
    )
