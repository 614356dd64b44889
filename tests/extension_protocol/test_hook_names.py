"""The hook points' names: written once, in ``HOOK_NAMES``, every other spelling derived from it,
and no second copy of them anywhere in the packages."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from extension_protocol.hook_names import HOOK_NAMES, HOOK_WIRE_NAMES, camel_case, hook_name
from helpers import REPO_ROOT

TABLE = REPO_ROOT / "extension_protocol" / "hook_names.py"
SCANNED = ("extension_host", "extension_protocol", "sdk_extension", "bench", "sample_extensions", "templates")
DERIVED = frozenset(HOOK_WIRE_NAMES.values()) | {camel_case(name) for name in HOOK_NAMES}
"""The spellings no code writes out: the wire's (``preToolUse``) and the SDK's (``onPreToolUse``)."""
ANY_SPELLING = DERIVED | set(HOOK_NAMES) | {name.removeprefix("on_") for name in HOOK_NAMES}
AGENT_TABLES = {
    ("extension_host/bridges/agent_hooks/claude.py", "CLAUDE"),
    ("extension_host/bridges/agent_hooks/gemini.py", "GEMINI"),
}
"""Documented mappings: another agent's events, each keyed by the hook point it runs."""


@pytest.mark.parametrize("name", HOOK_NAMES)
def test_every_spelling_of_a_hook_point_leads_back_to_its_name(name: str) -> None:
    assert hook_name(name) == hook_name(camel_case(name)) == hook_name(HOOK_WIRE_NAMES[name]) == name


def scanned_files() -> list[Path]:
    return [path for package in SCANNED for path in sorted((REPO_ROOT / package).rglob("*.py")) if path != TABLE]


def docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of ``tree`` (a module's, class's, function's, attribute's)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for statement in body:
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                found.add(id(statement.value))
    return found


def strings(node: ast.AST) -> list[str]:
    """The string elements written directly in a collection literal (a dict's keys)."""
    items = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", [])
    return [item.value for item in items if isinstance(item, ast.Constant) and isinstance(item.value, str)]


def copies(source: str, label: str) -> list[str]:
    """Where ``source`` writes out a derived spelling of a hook point, or lists three or more hook
    points in a literal or a module-level table of its own (a second copy, in part or whole)."""
    tree = ast.parse(source)
    skip = docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in DERIVED and id(node) not in skip:
            found.append(f"{label}:{node.lineno}: {node.value!r}")
        if isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
            named = {name for name in strings(node) if name in ANY_SPELLING}
            if len(named) >= 3:
                found.append(f"{label}:{node.lineno}: a list of hook points {sorted(named)}")
    for statement in tree.body:
        if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
            target = ast.unparse(statement.targets[0] if isinstance(statement, ast.Assign) else statement.target)
            named = {
                node.value
                for node in ast.walk(statement.value)
                if isinstance(node, ast.Constant) and node.value in ANY_SPELLING
            }
            if len(named) >= 3 and (label, target) not in AGENT_TABLES:
                found.append(f"{label}:{statement.lineno}: {target} names hook points {sorted(named)}")
    return found


@pytest.mark.slow
def test_no_module_writes_out_a_second_copy_of_the_hook_names() -> None:
    """Code names a hook point by its Python name, one at a time; the wire's and the SDK's
    spellings come from ``HOOK_WIRE_NAMES`` and ``hook_name``, lists of them from the tables
    (documentation may spell them out)."""
    found = [
        copy
        for path in scanned_files()
        for copy in copies(path.read_text(encoding="utf-8"), str(path.relative_to(REPO_ROOT)))
    ]
    assert found == []


def test_the_scan_finds_a_copy_written_in_code() -> None:
    """A literal wire name and a hand-written list of hook points are caught; a docstring is not."""
    source = (
        '"""Runs preToolUse."""\n'
        'WIRE = "preToolUse"\n'
        'POINTS = ("on_pre_tool_use", "on_post_tool_use", "on_agent_stop")\n'
        'ONE = "on_pre_tool_use"\n'
        'ROWS = {row.name: row for row in (Row("on_pre_tool_use"), Row("on_agent_stop"), Row("on_session_end"))}\n'
    )
    assert copies(source, "copied.py") == [
        "copied.py:2: 'preToolUse'",
        "copied.py:3: a list of hook points ['on_agent_stop', 'on_post_tool_use', 'on_pre_tool_use']",
        "copied.py:3: POINTS names hook points ['on_agent_stop', 'on_post_tool_use', 'on_pre_tool_use']",
        "copied.py:5: ROWS names hook points ['on_agent_stop', 'on_pre_tool_use', 'on_session_end']",
    ]
