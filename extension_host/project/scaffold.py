"""Scaffolding: a new extension folder rendered from a template, and the tool names it gets.

Templates are folders under ``templates/`` (shipped inside the package as ``_templates`` when
installed), each with one entry file (``extension.py``; ``mjs`` has a Copilot SDK
``extension.mjs``). Every file is copied with ``__EXTENSION_NAME__`` replaced by the extension's
name, ``__TOOL_PREFIX__`` by :func:`tool_prefix` of it and ``__EXTENSION_DESCRIPTION__`` by a
description (one line; escaped for a Python string in ``.py`` files). A template names each tool explicitly as
the prefix token followed by a fixed suffix (``@tool(name="__TOOL_PREFIX___count_lines")``), so
the tool name need not be a Python identifier. This module writes files; it does not start
anything.

The tool-name prefix of an extension name (:func:`tool_prefix`):

* A name made only of letters, digits, ``_`` and ``-``, at most :data:`TOOL_PREFIX_MAX` (48)
  characters long, and not ending like an encoded form, is its own prefix:
  ``notes`` → ``notes``, ``my-ext`` → ``my-ext``, ``9lives`` → ``9lives``.
* Every other name is encoded: its first 35 characters with each ``.`` made ``_``, then ``_``
  and the first 12 hex digits of the SHA-256 of the whole name (UTF-8):
  ``my.ext`` → ``my_ext_`` + 12 hex digits, and a 64-character name → its first 35
  characters + ``_`` + 12 hex digits (48 in all).
* "Ending like an encoded form" means ending in ``_`` and 12 lowercase hex digits; such a name
  is encoded even if it is short and has no ``.``, so a name used as it is never equals the
  encoded form of another name.

So a prefix is at most 48 characters of ``[A-Za-z0-9_-]`` and leaves :data:`TOOL_SUFFIX_MAX`
(16) characters for a template's suffix (the longest shipped one, ``_count_lines``, has 12):
every rendered tool name is a valid tool name of at most 64 characters. Two names used as they
are differ; an encoded prefix never equals a name used as it is; two encoded prefixes differ
unless 48 bits of SHA-256 collide. Scaffolding refuses a template whose suffix is too long or
is not made of tool-name characters, before writing anything.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from functools import partial
from pathlib import Path
from typing import Final

from extension_protocol.tools import TOOL_NAME_PATTERN

from ..errors import ScaffoldError
from .discovery import ENTRY_FILE, ENTRY_FILES, check_name

__all__ = [
    "DEFAULT_DESCRIPTION",
    "DEFAULT_TEMPLATE",
    "TOOL_NAME_MAX",
    "TOOL_PREFIX_MAX",
    "TOOL_SUFFIX_MAX",
    "available_templates",
    "scaffold",
    "template_entry",
    "templates_dir",
    "tool_names",
    "tool_prefix",
]

DEFAULT_TEMPLATE: Final = "basic"
DEFAULT_DESCRIPTION: Final = "an extension for the agent."
"""What ``__EXTENSION_DESCRIPTION__`` becomes when no description is given."""
TOOL_NAME_MAX: Final = 64
"""The longest tool name the host accepts (:data:`extension_protocol.tools.TOOL_NAME_PATTERN`)."""
TOOL_SUFFIX_MAX: Final = 16
"""The longest suffix a template may put after the prefix token."""
TOOL_PREFIX_MAX: Final = TOOL_NAME_MAX - TOOL_SUFFIX_MAX
"""The longest prefix :func:`tool_prefix` returns (48)."""
_HASH_DIGITS: Final = 12
_HEAD_MAX: Final = TOOL_PREFIX_MAX - 1 - _HASH_DIGITS
_NAME_TOKEN: Final = "__EXTENSION_NAME__"
_PREFIX_TOKEN: Final = "__TOOL_PREFIX__"
_DESCRIPTION_TOKEN: Final = "__EXTENSION_DESCRIPTION__"
_TOKEN: Final = re.compile("|".join(re.escape(token) for token in (_DESCRIPTION_TOKEN, _NAME_TOKEN, _PREFIX_TOKEN)))
_USABLE_AS_IS: Final = re.compile(rf"\A[A-Za-z0-9_-]{{1,{TOOL_PREFIX_MAX}}}\Z")
_ENCODED_ENDING: Final = re.compile(rf"_[0-9a-f]{{{_HASH_DIGITS}}}\Z")
_NOT_TOOL_CHARACTER: Final = re.compile(r"[^A-Za-z0-9_-]")
# What follows the prefix token up to the first character a tool name cannot hold: a
# template's tool suffix (the whole tool name is the prefix plus it).
_PREFIXED: Final = re.compile(re.escape(_PREFIX_TOKEN) + r"([A-Za-z0-9_-]*)")


def templates_dir() -> Path:
    """The folder holding the templates: inside the installed package, else the source tree."""
    package = Path(__file__).resolve().parent.parent  # extension_host/
    installed = package / "_templates"
    if installed.is_dir():
        return installed
    return package.parent / "templates"


def available_templates() -> list[str]:
    """Names of the Python templates (those whose entry file is ``extension.py``)."""
    root = templates_dir()
    if not root.is_dir():
        return []
    return sorted(child.name for child in root.iterdir() if (child / ENTRY_FILE).is_file())


def tool_prefix(name: str) -> str:
    """The tool-name prefix of extension ``name``: the name itself when it can be, else an
    encoded form (see the module docstring): ``my-ext`` → ``my-ext``, ``my.ext`` →
    ``my_ext_<12 hex digits>``. Always 1-48 of ``[A-Za-z0-9_-]``."""
    if _USABLE_AS_IS.fullmatch(name) and not _ENCODED_ENDING.search(name):
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:_HASH_DIGITS]
    head = _NOT_TOOL_CHARACTER.sub("_", name)[:_HEAD_MAX]
    return f"{head}_{digest}"


def tool_names(name: str, template: str = DEFAULT_TEMPLATE) -> list[str]:
    """The tool names ``template`` gives an extension called ``name``, sorted.

    Raises:
        ScaffoldError: the template is unknown.
    """
    source = _template_folder(templates_dir() / template, template)
    prefix = tool_prefix(name)
    return sorted({prefix + suffix for _, text in _template_files(source) for suffix in _PREFIXED.findall(text)})


def template_entry(template: str) -> str:
    """The entry file name of ``template`` (``extension.py`` for the Python ones).

    Raises:
        ScaffoldError: the template is unknown.
    """
    return _entry_name(_template_folder(templates_dir() / template, template))


def scaffold(
    name: str, extensions_root: Path, template: str = DEFAULT_TEMPLATE, description: str | None = None
) -> Path:
    """Create ``extensions_root/name/`` from ``template`` and return the new folder;
    ``description`` (default :data:`DEFAULT_DESCRIPTION`) goes where the template says.

    Raises:
        ScaffoldError: the name breaks the naming rule, the folder exists, the template is
            unknown or names a tool badly. Nothing is left behind on failure.
    """
    problem = check_name(name)
    if problem is not None:
        raise ScaffoldError(extensions_root, problem)
    target = extensions_root / name
    if target.exists():
        raise ScaffoldError(target, f"{target} already exists; pick another name or remove it first")
    source = _template_folder(target, template)
    prefix = tool_prefix(name)
    line = " ".join((description or "").split()) or DEFAULT_DESCRIPTION
    # Render everything before writing anything, so that a bad template leaves no folder.
    rendered: list[tuple[Path, str]] = []
    for relative, text in _template_files(source):
        for suffix in _PREFIXED.findall(text):
            if len(suffix) > TOOL_SUFFIX_MAX or not TOOL_NAME_PATTERN.fullmatch(prefix + suffix):
                raise ScaffoldError(
                    target,
                    f"template {template!r} names a tool {_PREFIX_TOKEN}{suffix}: the suffix must be at most "
                    f"{TOOL_SUFFIX_MAX} letters, digits, '_' or '-'",
                )
        values = {_NAME_TOKEN: name, _PREFIX_TOKEN: prefix, _DESCRIPTION_TOKEN: _escaped(line, relative)}
        # One pass, so that a name which happens to contain a token is not replaced again.
        rendered.append((relative, _TOKEN.sub(partial(_value, values), text)))
    try:
        for relative, text in rendered:
            destination = target / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_text(text, encoding="utf-8")
    except OSError as exc:
        shutil.rmtree(target, ignore_errors=True)
        raise ScaffoldError(target, f"could not write {target}: {exc}") from None
    return target


def _template_folder(target: Path, template: str) -> Path:
    source = templates_dir() / template
    if "/" in template or template.startswith(".") or not any((source / entry).is_file() for entry in ENTRY_FILES):
        known = ", ".join(available_templates()) or "none"
        raise ScaffoldError(target, f"unknown template {template!r}; available: {known}")
    return source


def _value(values: dict[str, str], match: re.Match[str]) -> str:
    return values[match.group()]


def _entry_name(source: Path) -> str:
    return next(entry for entry in ENTRY_FILES if (source / entry).is_file())


def _escaped(description: str, relative: Path) -> str:
    """``description`` as it can stand inside a Python string literal in a ``.py`` file."""
    if relative.suffix != ".py":
        return description
    return description.replace("\\", "\\\\").replace('"', '\\"')


def _template_files(source: Path) -> list[tuple[Path, str]]:
    """Each file of a template (relative path, text), in a stable order."""
    files: list[tuple[Path, str]] = []
    for path in sorted(source.rglob("*")):
        if "__pycache__" in path.parts or path.is_dir():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ScaffoldError(path, f"could not read template file {path}: {exc}") from None
        files.append((path.relative_to(source), text))
    return files
