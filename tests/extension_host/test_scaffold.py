"""Scaffolding new extensions from templates."""

from __future__ import annotations

import py_compile
from pathlib import Path

import pytest

from extension_host.errors import ScaffoldError
from extension_host.scaffold import available_templates, scaffold, tool_prefix


def test_the_basic_template_renders_a_compilable_extension_with_prefixed_names(tmp_path: Path) -> None:
    """Tokens are replaced: the tool is named after the extension and the file compiles."""
    folder = scaffold("my-ext", tmp_path)
    entry = folder / "extension.py"
    text = entry.read_text()
    assert "__EXTENSION_NAME__" not in text and "__TOOL_PREFIX__" not in text
    assert "def my_ext_count_lines(" in text
    assert '"on_pre_tool_use": protect_secrets' in text
    py_compile.compile(str(entry), doraise=True, cfile=str(tmp_path / "compiled.pyc"))


def test_every_shipped_template_renders_to_valid_python(tmp_path: Path) -> None:
    """basic and tool-only exist and each renders to a file that compiles."""
    assert {"basic", "tool-only"} <= set(available_templates())
    for template in available_templates():
        entry = scaffold(f"t-{template}", tmp_path, template) / "extension.py"
        py_compile.compile(str(entry), doraise=True, cfile=str(tmp_path / f"{template}.pyc"))


@pytest.mark.parametrize("name", ["../x", "a/b", "", ".hidden", "has space"])
def test_bad_names_are_refused_and_nothing_is_written(tmp_path: Path, name: str) -> None:
    """The error states the naming rule; the extensions folder stays empty."""
    with pytest.raises(ScaffoldError, match="starts with a letter or digit"):
        scaffold(name, tmp_path / "extensions")
    assert not (tmp_path / "extensions").exists()


def test_an_existing_folder_is_never_overwritten(tmp_path: Path) -> None:
    """Scaffolding onto an existing folder fails and leaves its files alone."""
    existing = tmp_path / "mine"
    existing.mkdir()
    (existing / "extension.py").write_text("# my work\n")
    with pytest.raises(ScaffoldError, match="already exists"):
        scaffold("mine", tmp_path)
    assert (existing / "extension.py").read_text() == "# my work\n"


def test_an_unknown_template_is_refused_listing_the_known_ones(tmp_path: Path) -> None:
    """The message names the available templates; no folder is created."""
    with pytest.raises(ScaffoldError, match="available: .*basic"):
        scaffold("x", tmp_path, "fancy")
    assert not (tmp_path / "x").exists()


def test_tool_prefixes_are_python_identifiers() -> None:
    """Dashes and dots become underscores; a leading digit gets a prefix."""
    assert tool_prefix("my-ext.v2") == "my_ext_v2"
    assert tool_prefix("9lives") == "x_9lives"
    assert tool_prefix("9lives").isidentifier()
