"""Where the values users give extensions' settings are kept: two private files in their home.

``<home>/settings.json`` holds plain values, ``<home>/secrets.json`` secret ones; each has a
table of values per extension name for the user (every project) and one per project (keyed by
its real path, as trust is)::

    {"version": 1, "user": {"lint": {"max_lines": 200}},
     "projects": {"/src/app": {"lint": {"max_lines": 50}}}}

Neither lives in the project folder: a repository cannot ship settings, nor secrets, for the
people who clone it, and a secret never lands in a commit. Both files are the user's alone:
written atomically with mode 0600 under an advisory lock (two commands at once lose nothing),
read through pydantic (a damaged file is one line naming it and what to do), and refused if
another user owns them or could write them; the secrets file also if others could read it
(its secrets may have been read: the message says so). :mod:`.records` does the reading and
writing. Nothing here shows a secret's value:
it is read to be handed to the extension, never to be printed.

This module owns the two files; which value wins and what reaches the extension is
:mod:`.settings`'s, the command line :mod:`extension_host.frontends.config_command`'s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Final, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from ..errors import SettingsError
from .manifest import MAX_SETTING_TEXT, SettingValue
from .records import PrivateRecord
from .trust import project_key

__all__ = ["SECRETS_FILE", "SETTINGS_FILE", "Scope", "SettingsStore", "StoredValues"]

SETTINGS_FILE: Final = "settings.json"
SECRETS_FILE: Final = "secrets.json"
_LOCK_FILE: Final = ".settings.lock"
_VERSION: Final = 1

Scope = Literal["project", "user"]
"""Where a value is kept: for this project only, or for the user (every project)."""

StoredValues = dict[Scope, dict[str, SettingValue]]
"""One extension's values at each scope, by setting name."""


def _fits_the_environment(value: SettingValue) -> SettingValue:
    if isinstance(value, str) and (len(value) > MAX_SETTING_TEXT or "\0" in value):
        raise ValueError(f"a value is longer than {MAX_SETTING_TEXT} characters or holds a NUL")
    return value


_Value = Annotated[SettingValue, AfterValidator(_fits_the_environment)]
_Table = dict[str, dict[str, _Value]]
"""Extension name → setting name → value."""


class _Document(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True, defer_build=True)

    version: int = _VERSION
    user: _Table = Field(default_factory=dict)
    projects: dict[str, _Table] = Field(default_factory=dict)


def _record(path: Path, *, secret: bool) -> PrivateRecord[_Document]:
    return PrivateRecord(
        path,
        _Document,
        version=_VERSION,
        error=lambda where, message: SettingsError(message, where),
        redo="remove it and set the values again with 'extensions config'",
        lock=_LOCK_FILE,
        secret=secret,
    )


class SettingsStore:
    """The settings files of one user home."""

    def __init__(self, home: Path) -> None:
        self.home: Final = home
        self._plain = _record(home / SETTINGS_FILE, secret=False)
        self._secrets = _record(home / SECRETS_FILE, secret=True)

    def path(self, secret: bool) -> Path:
        """The file that keeps plain values, or (``secret``) secret ones."""
        return self._file(secret).path

    def stored(self, root: Path, extension: str, *, secret: bool) -> StoredValues:
        """Extension ``extension``'s values (plain, or ``secret``) at each scope, for the project at ``root``.

        Raises:
            SettingsError: the file is damaged, or not the user's alone.
        """
        document = self._file(secret).read()
        project = document.projects.get(project_key(root), {})
        return {"project": dict(project.get(extension, {})), "user": dict(document.user.get(extension, {}))}

    def set(self, root: Path, extension: str, key: str, value: SettingValue, *, scope: Scope, secret: bool) -> None:
        """Keep ``value`` for setting ``key`` of ``extension`` at ``scope``.

        Raises:
            SettingsError: the file is damaged, not the user's alone, or cannot be written.
        """
        with self._file(secret).update() as document:
            self._table(document, root, scope, create=True).setdefault(extension, {})[key] = value

    def unset(self, root: Path, extension: str, key: str, *, scope: Scope, secret: bool) -> bool:
        """Forget setting ``key`` of ``extension`` at ``scope``; whether it was set there.

        Raises:
            SettingsError: the file is damaged, not the user's alone, or cannot be written.
        """
        with self._file(secret).update() as document:
            table = self._table(document, root, scope, create=False)
            values = table.get(extension, {})
            found = values.pop(key, _MISSING) is not _MISSING
            if not values:
                table.pop(extension, None)
            if scope == "project" and not table:
                document.projects.pop(project_key(root), None)
            return found

    def _file(self, secret: bool) -> PrivateRecord[_Document]:
        return self._secrets if secret else self._plain

    @staticmethod
    def _table(document: _Document, root: Path, scope: Scope, *, create: bool) -> dict[str, dict[str, SettingValue]]:
        if scope == "user":
            return document.user
        if create:
            return document.projects.setdefault(project_key(root), {})
        return document.projects.get(project_key(root), {})


_MISSING: Final = object()
