"""Discovery: which extension folders exist, in which order, and which ones cannot start.

Project extensions (``<root>/.github/extensions/<name>/``) come first, then user ones
(``<home>/extensions/<name>/``), each source sorted by name. A folder is an extension when it
holds an entry file: ``extension.py`` (Python), or ``extension.mjs``, ``.cjs`` or ``.js`` (a
Copilot SDK extension, run with Node.js). A project extension shadows a user one of the same
name; a folder whose name breaks the naming rule, or that holds more than one entry file, is
reported, not started. Project extensions of a project the user does not trust are reported as
untrusted (and shadow nothing: they will not run). Nothing here starts processes or reads
extension code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from .paths import PROJECT_EXTENSIONS_DIR, extensions_dir

__all__ = [
    "ENTRY_FILE",
    "ENTRY_FILES",
    "NAME_PATTERN",
    "NAME_RULE",
    "Discovered",
    "ExtensionSpec",
    "Runtime",
    "Source",
    "check_name",
    "discover",
]

Source = Literal["project", "user"]
Runtime = Literal["python", "node"]
ENTRY_FILE: Final = "extension.py"
"""The entry file of a Python extension (what ``extensions scaffold`` writes)."""
ENTRY_FILES: Final[dict[str, Runtime]] = {
    "extension.py": "python",
    "extension.mjs": "node",
    "extension.cjs": "node",
    "extension.js": "node",
}
"""Every entry file name, and what runs it (Copilot CLI accepts the three JavaScript forms)."""
# \A and \Z rather than ^ and $: "$" also matches before a final newline, which let "abc\n"
# through. check_name uses fullmatch as well.
NAME_PATTERN: Final = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")
NAME_RULE: Final = "an extension name starts with a letter or digit and has at most 64 letters, digits, '.', '_' or '-'"


@dataclass(frozen=True, slots=True)
class ExtensionSpec:
    """One extension folder found on disk."""

    name: str
    source: Source
    folder: Path
    entry_name: str = ENTRY_FILE
    link_target: Path | None = None
    """Where the folder really is, when it is a symbolic link (``None`` otherwise)."""

    @property
    def id(self) -> str:
        """``<source>:<name>``, e.g. ``project:lint``."""
        return f"{self.source}:{self.name}"

    @property
    def entry(self) -> Path:
        """The file the host runs."""
        return self.folder / self.entry_name

    @property
    def runtime(self) -> Runtime:
        """``python`` or ``node``."""
        return ENTRY_FILES.get(self.entry_name, "python")


@dataclass(frozen=True, slots=True)
class Discovered:
    """A spec in load order, with why it will not start (if it will not)."""

    spec: ExtensionSpec
    problem: str | None = None
    shadowed_by: str | None = None
    untrusted: str | None = None
    """Why it may not run: its project is not trusted (the one-line reason)."""

    @property
    def startable(self) -> bool:
        """Whether the host should start it."""
        return self.problem is None and self.shadowed_by is None and self.untrusted is None


def check_name(name: str) -> str | None:
    """``None`` if ``name`` is a valid extension name, else the reason it is not."""
    if NAME_PATTERN.fullmatch(name):
        return None
    return f"invalid extension name {name!r}: {NAME_RULE}"


def _scan(folder: Path, source: Source) -> list[tuple[ExtensionSpec, str | None]]:
    try:
        children = sorted(folder.iterdir(), key=lambda child: child.name)
    except (FileNotFoundError, NotADirectoryError):
        return []
    found: list[tuple[ExtensionSpec, str | None]] = []
    for child in children:
        if not child.is_dir():
            continue
        entries = [name for name in ENTRY_FILES if (child / name).is_file()]
        if not entries:
            continue
        problem = None
        if len(entries) > 1:
            problem = (
                f"{child.name} has more than one entry file ({', '.join(entries)}); "
                "keep one, so that it is clear what runs"
            )
        target = child.resolve() if child.is_symlink() else None
        found.append((ExtensionSpec(child.name, source, child, entries[0], target), problem))
    return found


def discover(project_root: Path, home: Path, *, untrusted: str | None = None) -> list[Discovered]:
    """Every extension folder under the project and the user home, in load order.

    ``untrusted`` is why the project's own extensions may not run (``None``: it is trusted).
    """
    project = _scan(project_root / PROJECT_EXTENSIONS_DIR, "project")
    user = _scan(extensions_dir(home), "user")
    project_names = set() if untrusted else {spec.name for spec, _ in project if check_name(spec.name) is None}
    found: list[Discovered] = []
    for spec, ambiguity in (*project, *user):
        problem = check_name(spec.name) or ambiguity
        if untrusted is not None and spec.source == "project":
            found.append(Discovered(spec, problem=problem, untrusted=untrusted))
        elif problem is None and spec.source == "user" and spec.name in project_names:
            found.append(Discovered(spec, shadowed_by=f"project:{spec.name}"))
        else:
            found.append(Discovered(spec, problem=problem))
    return found
