"""Scaffolding: a new extension folder rendered from a template.

Templates are folders under ``templates/`` (shipped inside the package as ``_templates`` when
installed). Every file is copied with ``__EXTENSION_NAME__`` and ``__TOOL_PREFIX__`` replaced.
This module writes files; it does not start anything.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Final

from .discovery import ENTRY_FILE, check_name
from .errors import ScaffoldError

__all__ = ["DEFAULT_TEMPLATE", "available_templates", "scaffold", "templates_dir", "tool_prefix"]

DEFAULT_TEMPLATE: Final = "basic"
_NAME_TOKEN: Final = "__EXTENSION_NAME__"
_PREFIX_TOKEN: Final = "__TOOL_PREFIX__"


def templates_dir() -> Path:
    """The folder holding the templates: inside the installed package, else the source tree."""
    installed = Path(__file__).resolve().parent / "_templates"
    if installed.is_dir():
        return installed
    return Path(__file__).resolve().parent.parent / "templates"


def available_templates() -> list[str]:
    """Names of the templates that have an entry file."""
    root = templates_dir()
    if not root.is_dir():
        return []
    return sorted(child.name for child in root.iterdir() if (child / ENTRY_FILE).is_file())


def tool_prefix(name: str) -> str:
    """A prefix for tool and function names derived from an extension name (``my-ext`` → ``my_ext``)."""
    prefix = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return f"x_{prefix}" if prefix[:1].isdigit() else prefix


def scaffold(name: str, extensions_root: Path, template: str = DEFAULT_TEMPLATE) -> Path:
    """Create ``extensions_root/name/`` from ``template`` and return the new folder.

    Raises:
        ScaffoldError: the name breaks the naming rule, the folder exists, or the template is
            unknown. Nothing is left behind on failure.
    """
    problem = check_name(name)
    if problem is not None:
        raise ScaffoldError(extensions_root, problem)
    target = extensions_root / name
    if target.exists():
        raise ScaffoldError(target, f"{target} already exists; pick another name or remove it first")
    source = templates_dir() / template
    if not (source / ENTRY_FILE).is_file():
        known = ", ".join(available_templates()) or "none"
        raise ScaffoldError(target, f"unknown template {template!r}; available: {known}")
    replacements = {_NAME_TOKEN: name, _PREFIX_TOKEN: tool_prefix(name)}
    try:
        for path in sorted(source.rglob("*")):
            if "__pycache__" in path.parts or path.is_dir():
                continue
            destination = target / path.relative_to(source)
            destination.parent.mkdir(parents=True, exist_ok=True)
            text = path.read_text(encoding="utf-8")
            for token, value in replacements.items():
                text = text.replace(token, value)
            destination.write_text(text, encoding="utf-8")
    except OSError as exc:
        shutil.rmtree(target, ignore_errors=True)
        raise ScaffoldError(target, f"could not write {target}: {exc}") from None
    return target
