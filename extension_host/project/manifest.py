"""An extension's manifest: what it says about itself before it runs.

A manifest is optional. It is ``extension.toml`` beside the entry file, or the
``[tool.extension]`` table of a ``pyproject.toml`` there; a folder with both is an error (one
place says it). Its fields: ``description``, ``version``, ``requires`` (the Python requirements
the extension imports, as pip reads them) and ``settings`` (named values the user sets with
``extensions config``, each typed, with a default, secret or not, and the environment variable
it reaches the extension as: ``env``, or :data:`SETTING_ENV_PREFIX` and its name upper-cased).
A folder without one has :data:`EMPTY_MANIFEST`.

The manifest comes with the extension, so it is read as untrusted input: bounded in size, read
with :mod:`tomllib`, checked with pydantic (unknown fields are an error, so a misspelt one is
not silently ignored) and handed on as frozen dataclasses. A requirement must be one
requirement, not an installer option (``--index-url …``) or several lines. A setting's ``env``
may not be a variable the host, the interpreter, the loader or the shell reads
(:func:`env_name_problem`). A problem is a :class:`~extension_host.errors.ManifestError` that
names the file and the field. A value the user gives a setting on the command line is read by
:func:`parse_value` and written back by :func:`format_value` (the form the extension sees).
This module reads manifests and setting values; it does not store settings, install
requirements or decide what an extension may see.
"""

from __future__ import annotations

import math
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
    "MAX_SETTING_TEXT",
    "PYPROJECT_FILE",
    "SETTING_ENV_PREFIX",
    "SETTING_NAME_PATTERN",
    "Manifest",
    "Setting",
    "SettingType",
    "SettingValue",
    "env_name_problem",
    "format_value",
    "parse_value",
    "read_manifest",
]

MANIFEST_FILE: Final = "extension.toml"
PYPROJECT_FILE: Final = "pyproject.toml"
MANIFEST_MAX_BYTES: Final = 256 * 1024
"""The largest manifest (or ``pyproject.toml``) read; a bigger one is an error."""
SETTING_NAME_PATTERN: Final = re.compile(r"\A[a-z][a-z0-9_]{0,63}\Z")
"""A setting's name: lower case letters, digits and ``_``, starting with a letter."""
SETTING_ENV_PREFIX: Final = "EXTENSION_SETTING_"
"""A setting without ``env`` reaches the extension as this prefix and its name upper-cased
(``api_url``: ``EXTENSION_SETTING_API_URL``)."""
MAX_SETTING_TEXT: Final = 8192
"""The longest value a setting may hold (characters): it travels in the environment."""
_ENV_NAME: Final = re.compile(r"\A[A-Z_][A-Z0-9_]{0,127}\Z")
_RESERVED_ENV: Final = frozenset(
    {
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "PWD", "OLDPWD", "TMPDIR", "TMP", "TEMP", "IFS", "ENV",
        "BASH_ENV", "CDPATH", "PS4", "SESSION_ID", "EXTENSION_ID", "PERL5LIB", "PERL5OPT", "RUBYLIB", "RUBYOPT",
        "GCONV_PATH", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "VIRTUAL_ENV",
    }
)  # fmt: skip
_RESERVED_ENV_PREFIXES: Final = (
    "EXTENSION_HOST_", "EXTENSION_SETTING_", "COPILOT_", "LD_", "DYLD_", "PYTHON", "NODE_", "NPM_CONFIG_",
    "UV_", "PIP_", "LC_", "GIT_", "BASH_FUNC_",
)  # fmt: skip
"""What ``env`` may not name: the host's own variables and those of the protocol, and what
changes how the interpreter, Node.js, the dynamic loader, an installer, git or a shell behaves
(``PYTHONPATH``, ``LD_PRELOAD``, ``NODE_OPTIONS``, ``BASH_ENV``...): a setting must not be a way
to run other code in the extension's process or the host's tools."""
_TRUE: Final = frozenset({"true", "yes", "1"})
_FALSE: Final = frozenset({"false", "no", "0"})
_INTEGER: Final = re.compile(r"\A[+-]?[0-9]{1,64}\Z")
_REQUIREMENT: Final = re.compile(r"\A[A-Za-z0-9][^\x00-\x1f\x7f]*\Z")
"""One PEP 508 requirement, loosely: it starts with a name and is one line (``requests >= 2``,
``rich ; python_version >= '3.11'``, ``pkg @ https://…``). What matters here is what it may not
be: an option, an empty string or more than one line. The installer checks the rest and says
what it did not like."""

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
    env: str | None = None
    """The environment variable it reaches the extension as (``None``: :attr:`env_name`'s default)."""

    @property
    def env_name(self) -> str:
        """The environment variable the extension reads it from."""
        return self.env or SETTING_ENV_PREFIX + self.name.upper()


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
    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    type: SettingType = "string"
    default: SettingValue | None = None
    secret: bool = False
    description: Annotated[str, Field(max_length=1000)] = ""
    env: str | None = None

    @field_validator("env")
    @classmethod
    def _env_is_allowed(cls, value: str | None) -> str | None:
        problem = None if value is None else env_name_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _default_has_the_type(self) -> _Setting:
        if self.default is not None and not _has_type(self.default, self.type):
            raise ValueError(f"the default {self.default!r} is not of type {self.type}")
        if self.secret and self.default is not None:
            raise ValueError("a secret setting cannot have a default (it would be shown to everyone)")
        return self


class _Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

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
        taken: dict[str, str] = {}
        for name, setting in value.items():
            variable = setting.env or SETTING_ENV_PREFIX + name.upper()
            if variable in taken:
                raise ValueError(f"{taken[variable]!r} and {name!r} both reach the extension as {variable}")
            taken[variable] = name
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


def env_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a setting's ``env`` (``None``: it can)."""
    if not _ENV_NAME.fullmatch(name):
        return f"{name[:80]!r} is not an environment variable name (upper case letters, digits and '_')"
    if name in _RESERVED_ENV or name.startswith(_RESERVED_ENV_PREFIXES):
        return f"{name} is not for settings: the host, the interpreter or the shell reads it"
    return None


def parse_value(kind: SettingType, text: str) -> SettingValue:
    """The value ``text`` (as typed on a command line) gives a setting of type ``kind``.

    ``integer``: digits with an optional sign; ``number``: a finite decimal or exponent
    number; ``boolean``: true/false, yes/no, 1/0 (any case); ``string``: the text as it is.

    Raises:
        ValueError: ``text`` is not of that type, or too long, or holds a NUL (which no
            environment variable can); the message says what was expected.
    """
    if len(text) > MAX_SETTING_TEXT:
        raise ValueError(f"the value is longer than {MAX_SETTING_TEXT} characters")
    if "\0" in text:
        raise ValueError("the value holds a NUL character, which no environment variable can")
    word = text.strip()
    if kind == "boolean":
        if word.lower() in _TRUE:
            return True
        if word.lower() in _FALSE:
            return False
        raise ValueError(f"{text[:80]!r} is not a boolean (true/false, yes/no, 1/0)")
    if kind == "integer":
        if not _INTEGER.fullmatch(word):
            raise ValueError(f"{text[:80]!r} is not an integer")
        return int(word)
    if kind == "number":
        try:
            number = float(word) if word.isascii() and "_" not in word else math.nan
        except ValueError:
            number = math.nan
        if not math.isfinite(number):
            raise ValueError(f"{text[:80]!r} is not a finite number")
        return int(word) if _INTEGER.fullmatch(word) else number
    return text


def format_value(value: SettingValue) -> str:
    """``value`` as the extension sees it in its environment (and ``config`` shows it):
    ``true``/``false``, a number as Python writes it, a string as it is."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else repr(value)


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
        settings=tuple(
            Setting(name, s.type, s.default, s.secret, s.description, s.env) for name, s in model.settings.items()
        ),
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
