"""Scaffolding new extensions from templates, and the tool names a scaffolded extension gets."""

from __future__ import annotations

import ast
import hashlib
import py_compile
import string
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extension_host.errors import ScaffoldError
from extension_host.project.discovery import NAME_PATTERN, check_name
from extension_host.project.scaffold import (
    DEFAULT_DESCRIPTION,
    TOOL_PREFIX_MAX,
    TOOL_SUFFIX_MAX,
    available_templates,
    scaffold,
    template_entry,
    tool_names,
    tool_prefix,
)
from extension_protocol.tools import TOOL_NAME_PATTERN
from helpers import Project, run

FIRST_CHARACTERS = string.ascii_letters + string.digits
NAME_CHARACTERS = FIRST_CHARACTERS + "._-"
LONG_NAME = "a-very.long_extension-name." + "x" * 37
assert len(LONG_NAME) == 64

# Valid extension names straight from the rule: a letter or digit, then up to 63 of the alphabet.
names = st.builds(
    lambda first, rest: first + rest,
    st.sampled_from(FIRST_CHARACTERS),
    st.text(alphabet=NAME_CHARACTERS, max_size=63),
)
# Names that a careless rule would confuse: ones ending like an encoded prefix, and encoded
# prefixes themselves (always valid extension names, so someone may well pick one).
tricky_names = st.one_of(
    st.builds(
        lambda head, digits: f"{head[:51]}_{digits}",
        names,
        st.text(alphabet="0123456789abcdef", min_size=12, max_size=12),
    ),
    names.map(tool_prefix),
)
any_names = st.one_of(names, tricky_names)
# Pairs of names, including each name with its own prefix (the pair most likely to collide).
name_pairs = st.one_of(
    st.tuples(any_names, any_names),
    any_names.map(lambda name: (name, tool_prefix(name))),
)
# Example counts stay modest so that the module runs in seconds; no example database on disk.
QUICK = settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


def declared_tool_names(text: str) -> list[str]:
    """The names given to ``@tool(name=...)`` in a rendered extension file."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "tool":
            found += [
                k.value.value
                for k in node.keywords
                if k.arg == "name" and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)
            ]
    return sorted(found)


def test_the_basic_template_renders_a_compilable_extension_with_a_named_tool(tmp_path: Path) -> None:
    """Tokens are replaced: the tool is named after the extension on a fixed function, and the file compiles."""
    folder = scaffold("my-ext", tmp_path)
    entry = folder / "extension.py"
    text = entry.read_text()
    assert "__EXTENSION_NAME__" not in text and "__TOOL_PREFIX__" not in text
    assert '@tool(name="my-ext_count_lines"' in text
    assert "def count_lines(" in text
    assert '@hook("pre_tool_use")\ndef protect_secrets(' in text and "hooks=[protect_secrets]" in text
    assert declared_tool_names(text) == ["my-ext_count_lines"] == tool_names("my-ext")
    py_compile.compile(str(entry), doraise=True, cfile=str(tmp_path / "compiled.pyc"))


def test_every_shipped_template_renders_to_valid_python(tmp_path: Path) -> None:
    """basic and tool-only exist and each renders to a file that compiles."""
    assert {"basic", "tool-only"} <= set(available_templates())
    for template in available_templates():
        entry = scaffold(f"t-{template}", tmp_path, template) / "extension.py"
        py_compile.compile(str(entry), doraise=True, cfile=str(tmp_path / f"{template}.pyc"))


def test_every_shipped_template_suffix_fits_after_the_longest_prefix() -> None:
    """Each template names at least one tool, and its suffix leaves a 48-character prefix room."""
    assert TOOL_PREFIX_MAX + TOOL_SUFFIX_MAX == 64
    for template in available_templates():
        names = tool_names("x", template)
        assert names, template
        assert all(len(name) - 1 <= TOOL_SUFFIX_MAX for name in names), names
    assert tool_names("x", "tool-only") == ["x_hello"]


def test_the_mjs_template_writes_copilot_clis_extension_skeleton_with_the_tool_prefix(tmp_path: Path) -> None:
    """extension.mjs, not listed among the Python templates; its tool is <prefix>_example."""
    assert "mjs" not in available_templates() and template_entry("mjs") == "extension.mjs"
    entry = scaffold("my.ext", tmp_path, "mjs", "Greets people") / "extension.mjs"
    text = entry.read_text()
    assert text.startswith("// Extension: my.ext\n// Greets people\n")
    assert f'name: "{tool_prefix("my.ext")}_example"' in text
    assert tool_names("my.ext", "mjs") == [f"{tool_prefix('my.ext')}_example"]
    assert sorted(path.name for path in entry.parent.iterdir()) == ["extension.mjs"]


@pytest.mark.parametrize("template", ["basic", "tool-only"])
def test_a_description_is_one_line_of_the_docstring_whatever_it_holds(tmp_path: Path, template: str) -> None:
    """Quotes, backslashes and line breaks cannot end the docstring early or break the file."""
    said = 'say "hi"\\N{x} \\\n"""; import os  #'
    entry = scaffold("x", tmp_path, template, said) / "extension.py"
    docstring = ast.get_docstring(ast.parse(entry.read_text()))
    assert docstring is not None and docstring.startswith("x: " + " ".join(said.split()))
    plain = scaffold("y", tmp_path, template) / "extension.py"
    assert plain.read_text().startswith(f'"""y: {DEFAULT_DESCRIPTION}')


def test_the_command_scaffolds_an_mjs_extension_and_names_its_file(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    """extensions scaffold NAME --template mjs says which file it created."""
    assert project.cli("scaffold", "js", "--template", "mjs") == 0
    entry = project.root / ".github" / "extensions" / "js" / "extension.mjs"
    assert f"created {entry}" in capsys.readouterr().out.splitlines()
    assert entry.is_file()


@pytest.mark.parametrize("name", ["../x", "a/b", "", ".hidden", "has space", "abc\n", "abc\r", "\nabc", "a" * 65])
def test_bad_names_are_refused_and_nothing_is_written(tmp_path: Path, name: str) -> None:
    """The error states the naming rule; the extensions folder stays empty."""
    with pytest.raises(ScaffoldError, match="starts with a letter or digit"):
        scaffold(name, tmp_path / "extensions")
    assert not (tmp_path / "extensions").exists()


def test_a_trailing_newline_breaks_the_name_rule_however_the_pattern_is_applied() -> None:
    """The rule is anchored at the very end: "abc\\n" fails check_name, match() and search()."""
    assert check_name("abc") is None
    assert check_name("abc\n") is not None
    assert not NAME_PATTERN.match("abc\n") and not NAME_PATTERN.search("abc\n")


def test_the_command_refuses_a_name_ending_in_a_newline_with_exit_code_2(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    """extensions scaffold $'abc\\n' is bad usage: exit 2, the rule on stderr, no folder."""
    assert project.cli("scaffold", "abc\n") == 2
    assert "starts with a letter or digit" in capsys.readouterr().err
    assert not (project.root / ".github").exists()


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
    with pytest.raises(ScaffoldError, match=r"available: .*basic"):
        scaffold("x", tmp_path, "fancy")
    assert not (tmp_path / "x").exists()


def test_a_template_whose_tool_suffix_is_too_long_is_refused_before_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A suffix over 16 characters could push a tool name past 64: refused for every name, nothing written."""
    templates = tmp_path / "templates"
    (templates / "wordy").mkdir(parents=True)
    (templates / "wordy" / "extension.py").write_text('TOOL = "__TOOL_PREFIX___' + "s" * TOOL_SUFFIX_MAX + '"\n')
    monkeypatch.setattr("extension_host.project.scaffold.templates_dir", lambda: templates)
    with pytest.raises(ScaffoldError, match="suffix must be at most 16"):
        scaffold("x", tmp_path / "extensions", "wordy")
    assert not (tmp_path / "extensions").exists()


def test_a_name_holding_a_token_is_written_as_it_is(tmp_path: Path) -> None:
    """Tokens are replaced in one pass: a name containing __TOOL_PREFIX__ is not replaced again."""
    text = (scaffold("x__TOOL_PREFIX__", tmp_path, "tool-only") / "extension.py").read_text()
    assert text.startswith('"""x__TOOL_PREFIX__: ')


@pytest.mark.parametrize("name", ["notes", "my-ext", "my_ext", "9lives", "A-b_C", "x" * TOOL_PREFIX_MAX])
def test_a_short_name_of_tool_name_characters_is_its_own_prefix(name: str) -> None:
    """Readable: letters, digits, '_' and '-' up to 48 characters are used as they are."""
    assert tool_prefix(name) == name


@pytest.mark.parametrize(
    "name",
    [
        "my.ext",  # '.' cannot appear in a tool name
        "x" * (TOOL_PREFIX_MAX + 1),  # too long to leave room for a suffix
        LONG_NAME,
        "x_0123456789ab",  # already ends like an encoded form
    ],
)
def test_other_names_get_a_sanitised_head_and_12_hex_digits_of_their_sha256(name: str) -> None:
    """The encoded form: the name with '.' made '_', cut to 35 characters, '_', 12 hex digits."""
    digest = hashlib.sha256(name.encode()).hexdigest()[:12]
    assert tool_prefix(name) == name.replace(".", "_")[:35] + "_" + digest
    assert len(tool_prefix(name)) <= TOOL_PREFIX_MAX


def test_names_that_differ_only_by_dot_dash_or_underscore_get_different_tools() -> None:
    """my.ext, my-ext and my_ext used to share my_ext_count_lines; now each has its own."""
    assert tool_names("my-ext") == ["my-ext_count_lines"]
    assert tool_names("my_ext") == ["my_ext_count_lines"]
    (dotted,) = tool_names("my.ext")
    assert dotted.startswith("my_ext_") and dotted.endswith("_count_lines") and dotted != "my_ext_count_lines"


@pytest.mark.slow
@QUICK
@given(any_names)
def test_every_valid_name_renders_valid_tool_names_and_compilable_files(name: str) -> None:
    """For any valid name, each template's tools are valid tool names of at most 64 characters,
    they are the names tool_names() reports, and the rendered file compiles."""
    assert check_name(name) is None
    with tempfile.TemporaryDirectory(prefix="scaffold-") as temp:
        for template in available_templates():
            entry = scaffold(name, Path(temp) / template, template) / "extension.py"
            declared = declared_tool_names(entry.read_text())
            assert declared == tool_names(name, template)
            assert all(TOOL_NAME_PATTERN.fullmatch(tool) and len(tool) <= 64 for tool in declared), declared
            py_compile.compile(str(entry), doraise=True, cfile=str(Path(temp) / f"{template}.pyc"))


@pytest.mark.slow
@settings(QUICK, max_examples=300)
@given(name_pairs)
def test_two_different_valid_names_never_share_a_prefix_or_a_tool_name(pair: tuple[str, str]) -> None:
    """Distinct names give distinct prefixes, hence distinct tool names in every template."""
    first, second = pair
    if first == second:
        assert tool_prefix(first) == tool_prefix(second)
        return
    assert tool_prefix(first) != tool_prefix(second)
    for template in available_templates():
        assert not set(tool_names(first, template)) & set(tool_names(second, template))


@pytest.mark.subprocess
def test_extensions_whose_names_used_to_collide_all_run_side_by_side(project: Project) -> None:
    """my.ext, my-ext, my_ext and a 64-character name in one project: all running, each tool answers."""
    (project.root / "README.md").write_text("one\ntwo\n")
    extensions = project.root / ".github" / "extensions"
    chosen = {"my.ext": "basic", "my-ext": "basic", "my_ext": "tool-only", LONG_NAME: "basic"}
    for name, template in chosen.items():
        scaffold(name, extensions, template)
    expected = {f"project:{name}": tool_names(name, template) for name, template in chosen.items()}
    assert len({tool for tools in expected.values() for tool in tools}) == len(chosen)

    async def scenario() -> None:
        async with project.host() as host:
            assert {info.id: (info.status, list(info.tools)) for info in host.extensions} == {
                id_: ("running", tools) for id_, tools in expected.items()
            }
            for name, template in chosen.items():
                (tool,) = tool_names(name, template)
                assert host.tools[tool].owner == f"project:{name}"
                arguments = {"path": "README.md"} if template == "basic" else {"name": name}
                result = await host.call_tool(tool, arguments)
                answer = "README.md: 2 lines" if template == "basic" else f"Hello, {name}!"
                assert (result.result_type, result.text_result_for_llm) == ("success", answer)

    run(scenario())
