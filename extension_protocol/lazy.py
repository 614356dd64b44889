"""Names a package loads on first use (PEP 562): the module ``__getattr__`` that does it.

A package that re-exports names from its modules would import every one of them with itself;
one that lists where each name lives (``{name: module}``) and assigns
:func:`first_use_loader`'s result to ``__getattr__`` imports a module only when one of its names
is asked for. It knows module names and attributes, nothing of what they hold.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping

__all__ = ["first_use_loader"]


def first_use_loader(
    package: str, exports: Mapping[str, str], namespace: MutableMapping[str, object]
) -> Callable[[str], object]:
    """The ``__getattr__`` of ``package``: name ``n`` comes from module ``exports[n]`` (relative
    to the package, or absolute), imported on first use and kept in ``namespace`` (the package's
    ``globals()``) so the next use is a plain lookup."""

    def load(name: str) -> object:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    return load
