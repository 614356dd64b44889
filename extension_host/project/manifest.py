"""An extension's manifest: what it says about itself before it runs.

A manifest is optional. It is ``extension.toml`` beside the entry file, or the
``[tool.extension]`` table of a ``pyproject.toml`` there; a folder with both is an error (one
place says it). Its fields: ``description``, ``version``, ``requires`` (the Python requirements
the extension imports, as pip reads them) and ``settings`` (named values the user sets with
``extensions config``, each typed, with a default, secret or not). A folder without one has
:data:`EMPTY_MANIFEST`.

The manifest comes with the extension, so it is read as untrusted input: bounded in size, read
with :mod:`tomllib`, checked with pydantic (unknown fields are an error, so a misspelt one is
not silently ignored) and handed on as frozen dataclasses. A requirement must be one
requirement, not an installer option (``--index-url …``) or several lines. A problem is a
:class:`~extension_host.errors.ManifestError` that names the file and the field. This module
reads manifests; it does not store settings, install requirements or decide what an extension
may see.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import ManifestError

__all__ = [
    "EMPTY_MANIFEST",
    "MANIFEST_FILE",
    "MANIFEST_MAX_BYTES",
    "PYPROJECT_FILE",
    "SETTING_NAME_PATTERN",
    "Manifest",
    "Setting",
    "SettingType",
    "SettingValue",
    "read_manifest",
]

MANIFEST_FILE: Final = "extension.toml"
PYPROJECT_FILE: Final = "pyproject.toml"
MANIFEST_MAX_BYTES: Final = 256 * 1024
"""The largest manifest (or ``pyproject.toml``) read; a bigger one is an error."""
SETTING_NAME_PATTERN: Final = re.compile(r"\A[a-z][a-z0-9_]{0,63}\Z")
"""A setting's name: lower case letters, digits and ``_``, starting with a letter."""
_REQUIREMENT: Final = re.compile(r"\A[A-Za-z0-9][^\s;@]*(\s*@\s*\S+)?(\s*;\s*[^\n\r]+)?\Z")
"""One PEP 508 requirement, loosely: a name (with extras and versions), an optional direct
reference and an optional marker. What matters here is what it may not be: an option, an empty
string or more than one line. The installer checks the rest and says what it did not like."""

SettingType = Literal["string", "integer", "number", "boolean"]
SettingValue = str | int | float | bool


@dataclass(frozen=True, slots=True)
class Setting:
    """One named value an extension can be given."""

    name: str
    type: SettingType = "string"
    default: SettingValue | None = None
    """``None``: unset until the user sets it."""
    secret: bool = False
    """A secret is stored outside the project and never shown."""
    description: str = ""


@dataclass(frozen=True, slots=True)
class Manifest:
    """What an extension folder says about itself."""

    description: str = ""
    version: str | None = None
    requires: tuple[str, ...] = ()
    settings: tuple[Setting, ...] = field(default_factory=tuple)
    path: Path | None = None
    """The file it was read from (``None``: the folder has none)."""

    def setting(self, name: str) -> Setting | None:
        """The setting called ``name``, if the manifest declares it."""
        return next((setting for setting in self.settings if setting.name == name), None)


EMPTY_MANIFEST: Final = Manifest()


class _Setting(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    type: SettingType = "string"
    default: SettingValue | None = None
    secret: bool = False
    description: Annotated[str, Field(max_length=1000)] = ""

    @model_validator(mode="after")
    def _default_has_the_type(self) -> _Setting:
        if self.default is not None and not _has_type(self.default, self.type):
            raise ValueError(f"the default {self.default!r} is not of type {self.type}")
        if self.secret and self.default is not None:
            raise ValueError("a secret setting cannot have a default (it would be shown to everyone)")
        return self


class _Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    description: Annotated[str, Field(max_length=1000)] = ""
    version: Annotated[str, Field(min_length=1, max_length=64)] | None = None
    requires: Annotated[list[Annotated[str, Field(max_length=500)]], Field(max_length=200)] = []
    settings: Annotated[dict[str, _Setting], Field(max_length=100)] = {}

    @field_validator("requires")
    @classmethod
    def _one_requirement_each(cls, value: list[str]) -> list[str]:
        for requirement in value:
            if not _REQUIREMENT.fullmatch(requirement.strip()):
                raise ValueError(f"{requirement!r} is not one requirement (such as 'requests>=2.31')")
        return value

    @field_validator("settings")
    @classmethod
    def _setting_names(cls, value: dict[str, _Setting]) -> dict[str, _Setting]:
        for name in value:
            if not SETTING_NAME_PATTERN.fullmatch(name):
                raise ValueError(f"{name!r} is not a setting name (lower case letters, digits and '_')")
        return value


def _has_type(value: SettingValue, kind: SettingType) -> bool:
    """Whether ``value`` is of the setting type ``kind`` (a bool is not a number here)."""
    if isinstance(value, bool):
        return kind == "boolean"
    if kind == "integer":
        return isinstance(value, int)
    if kind == "number":
        return isinstance(value, int | float)
    return kind == "string" and isinstance(value, str)


def read_manifest(folder: Path) -> Manifest:
    """The manifest of the extension in ``folder`` (:data:`EMPTY_MANIFEST` if it has none).

    Raises:
        ManifestError: it is too big, not TOML, has a field of the wrong type or an unknown
            one, or the folder has both an ``extension.toml`` and a ``[tool.extension]`` table.
    """
    own = folder / MANIFEST_FILE
    pyproject = folder / PYPROJECT_FILE
    table = _table(pyproject, ("tool", "extension")) if pyproject.is_file() else None
    if own.is_file():
        if table is not None:
            problem = f"both {MANIFEST_FILE} and [tool.extension] in {PYPROJECT_FILE} describe it; keep one"
            raise ManifestError(own, problem)
        table, path = _table(own, ()), own
    elif table is not None:
        path = pyproject
    else:
        return EMPTY_MANIFEST
    assert table is not None
    try:
        model = _Manifest.model_validate(table)
    except ValidationError as exc:
        raise ManifestError(path, _first_problem(exc)) from None
    return Manifest(
        description=model.description,
        version=model.version,
        requires=tuple(requirement.strip() for requirement in model.requires),
        settings=tuple(Setting(name, s.type, s.default, s.secret, s.description) for name, s in model.settings.items()),
        path=path,
    )


def _table(path: Path, keys: tuple[str, ...]) -> dict[str, Any] | None:
    """The table at ``keys`` in the TOML file ``path`` (``None`` if it has none)."""
    try:
        with path.open("rb") as file:
            data = file.read(MANIFEST_MAX_BYTES + 1)
    except OSError as exc:
        raise ManifestError(path, f"cannot be read: {exc.strerror or exc}") from None
    if len(data) > MANIFEST_MAX_BYTES:
        raise ManifestError(path, f"is larger than {MANIFEST_MAX_BYTES // 1024} KiB")
    try:
        document: Any = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ManifestError(path, f"is not valid TOML: {exc}") from None
    for key in keys:
        document = document.get(key) if isinstance(document, dict) else None
    if document is None:
        return None
    if not isinstance(document, dict):
        raise ManifestError(path, f"[{'.'.join(keys)}] must be a table")
    return document


def _first_problem(exc: ValidationError) -> str:
    """One line for the first thing pydantic found wrong: the field's dotted path and why."""
    error = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in error["loc"])
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message
