"""The documentation says what the code does: each fixed limit the table of limits names exists,
with the default the table gives, every setting git is given over a repository's own is named,
the CLI page has a row and a generated reference for every command and sub-command the parser
has, and the table of hooks is the hook-point table's; so are the tables of session-scoped
methods and error codes, and the layout table."""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib
import re

from extension_host import Limits, Timeouts
from extension_host.control.methods import CONTROL_METHODS
from extension_host.frontends.cli import _parser
from extension_host.frontends.cli_reference import commands, reference
from extension_host.launch.git import NEUTRALISED_SETTINGS
from extension_host.runtime.session_rpc import METHOD_ALIASES, SESSION_RPC_METHODS, UNSUPPORTED_SESSION_METHODS
from extension_host.serve.errors import SERVE_ERRORS
from extension_protocol import protocol
from extension_protocol.error_codes import WIRE_ERRORS
from extension_protocol.hook_points import HOOK_POINTS
from helpers import DOCS, REPO_ROOT, doc_section

_UNITS = {"": 1, "s": 1, "ms": 0.001, "levels": 1, "KB": 1024, "KiB": 1024, "MiB": 1024 * 1024}


def limits_table() -> list[list[str]]:
    section = (DOCS / "limits.md").read_text(encoding="utf-8")
    return [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in section.splitlines()
        if line.startswith("| ") and not line.startswith("| limit ")
    ]


def test_every_fixed_limit_in_the_limits_page_is_the_constant_it_names() -> None:
    checked = 0
    for _what, default, where in limits_table():
        constants = re.findall(r"`((?:extension_host|extension_protocol|sdk_extension)(?:\.\w+)+)\.([A-Z_]+)`", where)
        if not constants:
            continue
        module, name = constants[0]
        value = getattr(importlib.import_module(module), name)
        number = re.match(r"([\d.,]+) ?(\w*)", default)
        assert number is not None, default
        expected = float(number.group(1).replace(",", "")) * _UNITS[number.group(2)]
        assert value == expected, f"docs/limits.md says {default} for {module}.{name}, the code has {value}"
        checked += 1
    assert checked >= 10


def test_every_settable_limit_in_the_limits_page_is_the_default_of_the_option_it_names() -> None:
    defaults = {"Timeouts": Timeouts(), "Limits": Limits()}
    checked = 0
    for _what, default, where in limits_table():
        named = re.search(r"\b(Timeouts|Limits)\((\w+)=\.\.\.\)", where)
        if named is None:
            continue
        number = re.search(r"([\d.,]+) ?(\w*)", default)
        assert number is not None, default
        expected = float(number.group(1).replace(",", "")) * _UNITS[number.group(2)]
        value = getattr(defaults[named.group(1)], named.group(2))
        assert value == expected, f"docs/limits.md says {default} for {named.group(0)}, the code has {value}"
        checked += 1
    assert checked >= 7


def test_the_embedding_page_s_example_of_the_options_gives_each_field_its_default() -> None:
    """The per-hook-point timeouts, which have none, show an example."""
    example = doc_section("embedding.md", "from extension_host import ExtensionHost, Limits, Timeouts", "```")
    made = [
        eval(ast.unparse(node), {"Timeouts": Timeouts, "Limits": Limits})
        for node in ast.walk(ast.parse(example))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {"Timeouts", "Limits"}
    ]
    assert [type(options) for options in made] == [Timeouts, Limits]
    assert made[0].hooks, "the example shows a per-hook-point timeout"
    assert (dataclasses.replace(made[0], hooks={}), made[1]) == (Timeouts(), Limits())


def test_the_security_page_names_every_setting_git_is_given_over_a_repositorys_own() -> None:
    section = doc_section("security.md", "## Other doors", "## What this does not protect against")
    for setting in NEUTRALISED_SETTINGS:
        assert f"`{setting.name}={setting.value}`" in section, setting.name


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    found = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    return dict(found[0].choices) if found else {}


def test_the_cli_page_has_a_row_for_every_command_and_sub_command() -> None:
    table = doc_section("cli.md", "## Commands", "## Options, exit codes and output")
    usages = re.findall(r"^\| \[`(extensions [^`]*)`\]", table, re.MULTILINE)
    for name, command in _commands(_parser()).items():
        rows = [usage for usage in usages if usage.split()[1] == name]
        assert rows, f"the CLI page's table of commands has no row for extensions {name}"
        for sub in _commands(command):
            assert any(re.search(rf"\b{sub}\b", row) for row in rows), f"extensions {name} {sub}"


def test_the_generated_cli_reference_has_a_section_for_every_command_sub_command_and_option() -> None:
    assert "<!-- cli-reference -->" in doc_section("cli.md", "## Reference")
    parser = _parser()
    sections = dict(
        re.findall(r"^#+ `extensions ([^`]+)`\n(.*?)(?=^#|\Z)", reference(parser), re.MULTILINE | re.DOTALL)
    )
    found = {words: sub for words, _help, sub in commands(parser)}
    assert {words.split()[0] for words in found} == set(_commands(parser))
    assert set(sections) == set(found)
    for words, sub in found.items():
        for action in sub._actions:
            if (
                isinstance(action, argparse._HelpAction | argparse._SubParsersAction)
                or action.help == argparse.SUPPRESS
            ):
                continue
            names = action.option_strings or [str(name) for name in action.choices or [action.metavar or action.dest]]
            assert all(name in sections[words] for name in names), f"extensions {words}: {names}"


def test_the_hooks_page_s_table_is_the_hook_point_table() -> None:
    """One row per hook point, in order: its Python and Copilot names, its input attributes
    (beyond the ones every input has) and its output keys."""
    section = doc_section("writing-extensions/hooks.md", "# Hooks", "**Matchers.**")
    rows = [
        [re.findall(r"`(\w+)`", re.sub(r"\([^)]*\)", "", cell)) for cell in line.strip("|").split("|")]
        for line in section.splitlines()
        if line.startswith("| `")
    ]
    common = {"timestamp", "cwd", "session_id", "agent_id", "agent_type", "parent_agent_id"}
    expected = [
        [
            [point.name],
            [name for name in (f.name for f in dataclasses.fields(point.input_type)) if name not in common],
            [f.name for f in dataclasses.fields(point.output_type)],
        ]
        for point in HOOK_POINTS.values()
    ]
    assert rows == expected
    for point in HOOK_POINTS.values():
        assert f"| `{point.name}` (`{point.copilot_name}`) |" in section


_LAYOUT_ORDER = (
    "extension_protocol",
    "sdk_extension",
    "extension_host",
    "extension_host/project",
    "extension_host/launch",
    "extension_host/hooks",
    "extension_host/calls",
    "extension_host/runtime",
    "extension_host/session",
    "extension_host/agents",
    "extension_host/control",
    "extension_host/serve",
    "extension_host/serve/ahp1",
    "extension_host/acp",
    "extension_host/bridges",
    "extension_host/bridges/mcp",
    "extension_host/bridges/agent_hooks",
    "extension_host/frontends",
    "extension_host/schemas",
    "bench",
)
"""The packages in the order the layout table reads them: the flow, bottom up."""

_ROLES = re.compile(r":(?:mod|class|func|data|meth|attr):`~?([^`]+)`")


def first_sentence(package: str) -> str:
    """The first sentence of a package's docstring, as a table cell."""
    docstring = ast.get_docstring(ast.parse((REPO_ROOT / package / "__init__.py").read_text(encoding="utf-8")))
    assert docstring, f"{package}/__init__.py has no docstring"
    paragraph = " ".join(docstring.split("\n\n")[0].split())
    sentence = re.split(r"(?<=[.!?])\s+(?=[A-Z`(])", paragraph)[0]
    sentence = _ROLES.sub(lambda m: f"`{m.group(1).lstrip('.').rpartition('.')[2] or m.group(1)}`", sentence)
    return sentence.replace("``", "`").replace("|", "\\|")


def layout_rows() -> list[str]:
    """What the layout table (docs/design.md) says of each package, generated from the packages."""
    return [f"| `{package}/` | {first_sentence(package)} |" for package in _LAYOUT_ORDER]


def test_the_layout_table_is_each_packages_own_first_sentence_and_misses_none() -> None:
    packages = {
        path.parent.relative_to(REPO_ROOT).as_posix()
        for root in ("extension_host", "extension_protocol", "sdk_extension", "bench")
        for path in (REPO_ROOT / root).rglob("__init__.py")
    }
    assert packages == set(_LAYOUT_ORDER), "add the new package to _LAYOUT_ORDER, where the flow reads it"
    section = doc_section("design.md", "## Project layout", "\n## ")
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    generated = layout_rows()
    assert rows[: len(generated)] == generated, "the layout table should read:\n" + "\n".join(generated)
    for row in rows[len(generated) :]:
        path = row.split("`")[1]
        assert (REPO_ROOT / path).exists(), f"the layout table names {path}, which is not there"


def test_the_cli_page_lists_the_control_methods_of_the_table_and_no_other() -> None:
    bullet = doc_section("cli.md", "- **Methods** (JSON-RPC 2.0", "## Reference")
    assert set(re.findall(r"`(host\.\w+)", bullet)) == set(CONTROL_METHODS)


def test_the_protocol_page_lists_the_session_rpc_methods_of_the_table_and_no_other() -> None:
    """Every method of the session-rpc table, each of its other names and each method it refuses
    has a row; a row names no method the host does not know (``a.b.c``/``d`` is ``a.b.d``)."""
    section = doc_section("protocol.md", "Slash commands and the session-scoped methods", "## Error codes")
    named: set[str] = set()
    for line in section.splitlines():
        if not line.startswith("| ext → host |"):
            continue
        last = ""
        for slash, span in re.findall(r"(/?)`([^`]+)`", line.split("|")[2]):
            word = span.split()[0]
            if slash and re.fullmatch(r"\w+", word) and last:
                named.add(f"{last.rpartition('.')[0]}.{word}")
            elif re.fullmatch(r"[\w$]+(\.[\w$]+)+", word):
                named.add(last := word)
    table = set(SESSION_RPC_METHODS) | set(METHOD_ALIASES) | set(UNSUPPORTED_SESSION_METHODS)
    assert table - named == set(), "the protocol page's table of session-scoped methods misses these"
    protocol_methods = {getattr(protocol, name) for name in protocol.__all__ if name.startswith("METHOD_")}
    assert named - table - protocol_methods == set(), "the protocol page names methods the host does not answer"


def wire_error_rows() -> list[str]:
    """The protocol page's table of the extension protocol's error codes, generated from the table."""
    return [f"| `{error.code}` | {error.name} | {error.origin} | {error.meaning} |" for error in WIRE_ERRORS]


def serve_error_rows() -> list[str]:
    """The sessions page's table of the client protocol's own error codes, generated from the table."""
    return [
        f"| `{error.code}` | `{error.name}` | {error.meaning} |" for error in SERVE_ERRORS if error.origin != "JSON-RPC"
    ]


def test_the_tables_of_error_codes_are_the_protocols_tables() -> None:
    for (page, start, end), generated in (
        (("protocol.md", "## Error codes", "## Schemas"), wire_error_rows()),
        (("sessions.md", "## Serving clients", "## Content for clients"), serve_error_rows()),
    ):
        section = doc_section(page, start, end)
        rows = [line for line in section.splitlines() if line.startswith("| `-")]
        assert rows == generated, f"the table of error codes under {start!r} of docs/{page} should read:\n" + "\n".join(
            generated
        )
