"""The user's enable/disable decisions, and the opt-in to Copilot CLI's user extension folder.

``extensions disable NAME`` keeps an extension from starting without touching its folder: the
decision is the user's, so it lives in the user's home, never in the extension (a repository
cannot switch itself back on). A decision is for every project (``--user``) or for one project
(``--project``, kept under the project's real path); a project decision outranks a user one.
Decisions are kept by extension id (``project:lint``, ``user:notes``, ``copilot:notes``), so
disabling one never touches another of the same name from another source.

The same record holds one switch, ``copilot_folder``: whether Copilot CLI's user extension folder
(``$COPILOT_HOME/extensions``, default ``~/.copilot/extensions``) is discovered as a further
source, ``copilot``, after the host's own user folder (``extensions enable --copilot-folder``).

The record is ``<home>/enablement.json``, a file of its own rather than a part of
``trust.json``: trust is a security decision whose damaged record must count as "not trusted",
while these are preferences; a problem with one must not cost the other. It is read and written
as :mod:`.records` does (pydantic, private, atomic, locked). A record that cannot be read
stops every extension it could concern (:attr:`Choices.problem`): a disabled extension never
runs because its record was damaged. This module owns the record and the rule; it does not
know discovery, processes or the command line.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import EnablementFileError
from .records import PrivateRecord
from .trust import project_key

__all__ = [
    "COPILOT_HOME_ENV",
    "ENABLEMENT_FILE",
    "Choices",
    "Decision",
    "EnablementStore",
    "Scope",
    "copilot_extensions_dir",
]

ENABLEMENT_FILE: Final = "enablement.json"
COPILOT_HOME_ENV: Final = "COPILOT_HOME"
"""Where Copilot CLI keeps its user files (default ``~/.copilot``); its extensions are in ``extensions``."""
_LOCK_FILE: Final = ".enablement.lock"
_VERSION: Final = 1
_REDO: Final = "remove it and decide again (extensions enable, extensions disable)"

Scope = Literal["user", "project"]


class _Document(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    version: int = _VERSION
    copilot_folder: bool = False
    """Whether Copilot CLI's user extension folder is a further source of extensions."""
    user: dict[str, bool] = Field(default_factory=dict)
    """Extension id → enabled, in every project."""
    projects: dict[str, dict[str, bool]] = Field(default_factory=dict)
    """A project's real path → extension id → enabled, in that project (outranks ``user``)."""


@dataclass(frozen=True, slots=True)
class Decision:
    """Whether one extension may start in one project, and which recorded decision says so."""

    enabled: bool
    scope: Scope | None
    """The decision that counts (``None``: none recorded, so it is enabled)."""


@dataclass(frozen=True, slots=True)
class Choices:
    """What discovery needs from the record, for one project."""

    disabled: Mapping[str, Scope] = field(default_factory=dict)
    """Extension id → the scope of the decision that disables it."""
    copilot_root: Path | None = None
    """Copilot CLI's user extension folder, when the user opted in."""
    problem: str | None = None
    """Why the record cannot be read (then no extension may start: see the module's docstring)."""

    def disabled_reason(self, extension_id: str, name: str) -> str | None:
        """The one line shown for an extension that does not start because it is disabled."""
        scope = self.disabled.get(extension_id)
        if scope is None:
            return None
        where = "for this project" if scope == "project" else "for every project"
        user = " --user" if scope == "user" else ""
        who = name if extension_id.startswith("project:") else extension_id
        return f"disabled {where}; 'extensions enable {who}{user}' runs it again"


def copilot_extensions_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Copilot CLI's user extension folder: ``$COPILOT_HOME/extensions``, else ``~/.copilot/extensions``."""
    configured = (os.environ if environ is None else environ).get(COPILOT_HOME_ENV)
    base = Path(configured).expanduser() if configured else Path.home() / ".copilot"
    return base / "extensions"


class EnablementStore:
    """The enable/disable record of one user home."""

    def __init__(self, home: Path) -> None:
        self.home: Final = home
        self.path: Final = home / ENABLEMENT_FILE
        self._record = PrivateRecord(
            self.path, _Document, version=_VERSION, error=EnablementFileError, redo=_REDO, lock=_LOCK_FILE
        )

    def choices(self, root: Path) -> Choices:
        """What the record says for the project at ``root``; never raises (a record that
        cannot be read is :attr:`Choices.problem`)."""
        try:
            document = self._record.read()
        except EnablementFileError as exc:
            return Choices(problem=f"not run: {exc}")
        disabled: dict[str, Scope] = {key: "user" for key, enabled in document.user.items() if not enabled}
        for key, enabled in document.projects.get(project_key(root), {}).items():
            if enabled:
                disabled.pop(key, None)
            else:
                disabled[key] = "project"
        return Choices(disabled, copilot_extensions_dir() if document.copilot_folder else None)

    def decision(self, root: Path, extension_id: str) -> Decision:
        """Whether ``extension_id`` may start in the project at ``root``, and why.

        Raises:
            EnablementFileError: the record is damaged or not ours.
        """
        document = self._record.read()
        project = document.projects.get(project_key(root), {})
        if extension_id in project:
            return Decision(project[extension_id], "project")
        if extension_id in document.user:
            return Decision(document.user[extension_id], "user")
        return Decision(True, None)

    def set_enabled(self, root: Path, extension_id: str, enabled: bool, scope: Scope) -> Decision:
        """Record that ``extension_id`` is enabled or disabled at ``scope`` (``project``: in the
        project at ``root`` only); the decision that counts afterwards (a project decision
        outranks a user one, so enabling at user scope may leave it disabled).

        Enabling records only what it must: at user scope the user decision goes (enabled is
        the default); at project scope the project decision goes, or says "enabled" when the
        user scope disables it.

        Raises:
            EnablementFileError: the record is damaged, not ours, or cannot be written.
        """
        key = project_key(root)
        with self._record.update() as document:
            if scope == "user":
                if enabled:
                    document.user.pop(extension_id, None)
                else:
                    document.user[extension_id] = False
            else:
                project = document.projects.setdefault(key, {})
                if enabled and document.user.get(extension_id, True):
                    project.pop(extension_id, None)
                else:
                    project[extension_id] = enabled
                if not project:
                    del document.projects[key]
        return self.decision(root, extension_id)

    def copilot_folder(self) -> bool:
        """Whether Copilot CLI's user extension folder is a source of extensions.

        Raises:
            EnablementFileError: the record is damaged or not ours.
        """
        return self._record.read().copilot_folder

    def set_copilot_folder(self, on: bool) -> None:
        """Add Copilot CLI's user extension folder as a source of extensions, or take it away.

        Raises:
            EnablementFileError: the record is damaged, not ours, or cannot be written.
        """
        with self._record.update() as document:
            document.copilot_folder = on
