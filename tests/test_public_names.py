"""Each package's public names are written once, in its ``_EXPORTS``: ``__all__`` is made from
it, and the type checker's imports (the ``TYPE_CHECKING`` block) must name the same names from
the same modules, which this test holds them to. Every name loads, from where it says."""

from __future__ import annotations

import ast
import importlib
from types import ModuleType

import pytest

import extension_host
import sdk_extension
from helpers import REPO_ROOT


def type_checking_imports(package: ModuleType) -> dict[str, str]:
    """Name → the module the package's ``TYPE_CHECKING`` block imports it from (absolute)."""
    assert package.__file__ is not None
    tree = ast.parse((REPO_ROOT / package.__name__ / "__init__.py").read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for imported in node.body:
                assert isinstance(imported, ast.ImportFrom)
                module = importlib.util.resolve_name("." * imported.level + (imported.module or ""), package.__name__)
                for alias in imported.names:
                    assert alias.asname == alias.name, f"{alias.name}: write it as '{alias.name} as {alias.name}'"
                    assert alias.name not in found, f"{alias.name} is imported twice"
                    found[alias.name] = module
    return found


@pytest.mark.parametrize("package", [extension_host, sdk_extension], ids=lambda p: p.__name__)
def test_the_public_names_are_one_list_that_the_type_checker_sees_too(package: ModuleType) -> None:
    exports: dict[str, str] = package._EXPORTS
    resolved = {name: importlib.util.resolve_name(module, package.__name__) for name, module in exports.items()}
    assert type_checking_imports(package) == resolved
    assert package.__all__ == sorted(exports)


@pytest.mark.parametrize("package", [extension_host, sdk_extension], ids=lambda p: p.__name__)
def test_every_public_name_loads_from_the_module_it_names(package: ModuleType) -> None:
    for name, module in package._EXPORTS.items():
        assert getattr(package, name) is getattr(importlib.import_module(module, package.__name__), name), name
