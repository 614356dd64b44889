"""The fault matrix's table (this package's docstring) names real tests, and every fault test is in it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

HERE = Path(__file__).parent


def fault_tests() -> dict[str, set[str]]:
    """The test functions of each fault module, by module name."""
    found: dict[str, set[str]] = {}
    for path in sorted(HERE.glob("test_*.py")):
        if path.name == Path(__file__).name:
            continue
        tree = ast.parse(path.read_text())
        found[path.stem] = {
            node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
        }
    return found


def test_every_test_the_table_names_exists_and_every_fault_test_is_named() -> None:
    table = ast.get_docstring(ast.parse((HERE / "__init__.py").read_text())) or ""
    tests = fault_tests()
    named: set[tuple[str, str]] = set()
    for row in table.splitlines():
        # A row names "module::test", then maybe more tests of that module ("test_..." whole,
        # or "..._end" for the one test of that module ending so).
        module = None
        for reference in re.findall(r"``([^`]+)``", row):
            if "::" in reference:
                module, reference = reference.split("::")
            if module is None or not reference.startswith(("test_", "...")):
                continue
            if reference.startswith("..."):
                matches = {name for name in tests[module] if name.endswith(reference[3:])}
                assert matches, f"no test in {module} ends with {reference[3:]!r}"
                named |= {(module, name) for name in matches}
            else:
                assert reference in tests.get(module, set()), f"{module}::{reference} is in the table but not a test"
                named.add((module, reference))
    every = {(module, name) for module, names in tests.items() for name in names}
    missing = sorted(f"{module}::{name}" for module, name in every - named)
    assert missing == [], "fault tests missing from the table in tests/faults/__init__.py"
