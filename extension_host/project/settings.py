"""An extension's settings as they stand: which value wins, and what reaches the extension.

A setting's value is the one kept for this project, else the one kept for the user (every
project), else the manifest's default, else none (:func:`resolve`). When the extension starts,
every plain setting with a value is in its environment (:attr:`Setting.env_name
<extension_host.project.manifest.Setting.env_name>`), in the form :func:`format_value
<extension_host.project.manifest.format_value>` writes (:func:`deliver`). A setting without one
is left out, and the extension starts all the same: ``list`` and ``inspect`` name it as unset,
with the command that sets it.

A secret one follows the rules of every other secret: it is never in the environment a process
starts with (which other processes of the user can read, and which a fork server would carry),
but given in the answer to the join when the extension asks for its variable
(``requested_environment_variables``), as a grant: the user gave that value to that extension
by name. It is then listed as granted, and unsetting it while the extension runs takes it back
as a revoked grant is taken back (the extension stops). Values never appear in argv, logs,
events, ``list`` or ``inspect``: a :class:`Delivery` keeps them out of its ``repr``.

This module knows manifests and stored values; the files are :mod:`.settings_store`'s, the
processes :mod:`extension_host.runtime`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from .discovery import ExtensionSpec
from .manifest import Manifest, Setting, SettingValue, format_value, read_manifest
from .settings_store import SettingsStore, StoredValues

__all__ = ["NO_SETTINGS", "Delivery", "Resolved", "Where", "config_command", "deliver", "resolve", "settings_of"]

Where = Literal["project", "user", "default"]
"""Where a value comes from: kept for this project, for the user, or the manifest's default."""


@dataclass(frozen=True, slots=True)
class Resolved:
    """One setting and the value it has now."""

    setting: Setting
    value: SettingValue | None = field(repr=False)
    """``None``: it has none. A secret's value: never to be shown."""
    where: Where | None

    @property
    def is_set(self) -> bool:
        """Whether it has a value."""
        return self.value is not None


@dataclass(frozen=True, slots=True)
class Delivery:
    """What one start of an extension gets of its settings."""

    environment: Mapping[str, str] = field(default_factory=dict, repr=False)
    """Variable → value, for every plain setting with a value: what its process starts with."""
    secrets: Mapping[str, str] = field(default_factory=dict)
    """Variable → setting name, for every secret setting with a value: granted to it."""
    names: tuple[str, ...] = ()
    """Every setting its manifest declares."""
    unset: tuple[str, ...] = ()
    """Those without a value (not kept, no default): left out of its environment."""
    secret_values: Mapping[str, str] = field(default_factory=dict, repr=False)
    """Variable → value of those: given in the answer to its join, when it asks for them."""

    def without(self, variables: tuple[str, ...]) -> Delivery:
        """This delivery once the secrets in ``variables`` are taken back."""
        gone = set(variables)
        return Delivery(
            self.environment,
            {name: key for name, key in self.secrets.items() if name not in gone},
            self.names,
            (*self.unset, *(key for name, key in self.secrets.items() if name in gone)),
            {name: value for name, value in self.secret_values.items() if name not in gone},
        )


NO_SETTINGS: Final = Delivery()


def resolve(manifest: Manifest, plain: StoredValues, secrets: StoredValues) -> tuple[Resolved, ...]:
    """Each setting of ``manifest`` with the value that wins: the project's, the user's, the
    default (a secret has none). A kept value that is no longer of the setting's type (the
    manifest changed) does not count: the setting falls back, as if it were not kept."""
    resolved: list[Resolved] = []
    for setting in manifest.settings:
        kept = secrets if setting.secret else plain
        value: SettingValue | None = None
        where: Where | None = None
        for scope in ("project", "user"):
            candidate = kept.get(scope, {}).get(setting.name)
            if candidate is not None and _fits(setting, candidate):
                value, where = candidate, scope
                break
        if value is None and setting.default is not None:
            value, where = setting.default, "default"
        resolved.append(Resolved(setting, value, where))
    return tuple(resolved)


def _fits(setting: Setting, value: SettingValue) -> bool:
    if isinstance(value, bool):
        return setting.type == "boolean"
    if setting.type == "integer":
        return isinstance(value, int)
    if setting.type == "number":
        return isinstance(value, int | float)
    return setting.type == "string" and isinstance(value, str)


def settings_of(store: SettingsStore, root: Path, spec: ExtensionSpec) -> tuple[Manifest, tuple[Resolved, ...]]:
    """The manifest of the extension of ``spec`` and its settings as they stand in the project at ``root``.

    Raises:
        ManifestError: the manifest cannot be used.
        SettingsError: a settings file is damaged or not the user's alone.
    """
    manifest = read_manifest(spec.folder)
    return manifest, _resolved(store, root, spec.name, manifest)


def _resolved(store: SettingsStore, root: Path, name: str, manifest: Manifest) -> tuple[Resolved, ...]:
    if not manifest.settings:
        return ()
    plain = store.stored(root, name, secret=False)
    secret = store.stored(root, name, secret=True) if any(s.secret for s in manifest.settings) else {}
    return resolve(manifest, plain, secret)


def deliver(store: SettingsStore, root: Path, spec: ExtensionSpec, manifest: Manifest) -> Delivery:
    """What the extension of ``spec``, whose manifest is ``manifest``, gets of its settings when
    it starts in the project at ``root``.

    Raises:
        SettingsError: a settings file is damaged or not the user's alone.
    """
    resolved = _resolved(store, root, spec.name, manifest)
    if not resolved:
        return NO_SETTINGS
    environment: dict[str, str] = {}
    secrets: dict[str, str] = {}
    secret_values: dict[str, str] = {}
    for item in resolved:
        if item.value is None:
            continue
        variable = item.setting.env_name
        if item.setting.secret:
            secrets[variable] = item.setting.name
            secret_values[variable] = format_value(item.value)
        else:
            environment[variable] = format_value(item.value)
    return Delivery(
        environment,
        secrets,
        tuple(item.setting.name for item in resolved),
        tuple(item.setting.name for item in resolved if not item.is_set),
        secret_values,
    )


def config_command(spec: ExtensionSpec, key: str, *, secret: bool) -> str:
    """The command line that sets ``key`` of the extension of ``spec`` (a secret from stdin)."""
    who = spec.name if spec.source == "project" else spec.id
    return f"extensions config {who} {key} {'-' if secret else 'VALUE'}"
