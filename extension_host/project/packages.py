"""The package scope: extensions that pip distributions expose, installed under the user's home.

``extensions install`` puts each distribution in a folder of its own, ``<home>/packages/<name>/``
(``pip install --target``, never the host's own environment). A distribution exposes extensions
through the entry-point group :data:`ENTRY_POINT_GROUP`: the entry point's name is the
extension's name, its value an importable package whose folder holds the entry file
(``hello = hello_ext`` → ``<home>/packages/<name>/hello_ext/extension.py``).

Found by reading each ``*.dist-info/entry_points.txt`` in those folders, not through
:mod:`importlib.metadata` (whose import and scan cost several milliseconds on every cold
``extensions list``): a home without packages costs one failed ``listdir``. Distributions
installed by hand into the host's own environment are not looked at: an extension arrives in
the package scope only by ``extensions install``, never as a dependency of something else. The
entry point's value is read as untrusted: a dotted name of identifiers, nothing else, so its
folder is always inside the distribution's. This module finds folders; it does not start or
install anything.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = [
    "ENTRY_POINTS_MAX_BYTES",
    "ENTRY_POINT_GROUP",
    "PACKAGES_DIR",
    "PackageExtension",
    "distribution_entry_points",
    "entry_point_folder",
    "normalise_distribution",
    "package_extensions",
    "packages_dir",
]

PACKAGES_DIR: Final = "packages"
ENTRY_POINT_GROUP: Final = "extension_host.extensions"
"""The entry-point group through which a distribution exposes extensions."""
ENTRY_POINTS_MAX_BYTES: Final = 64 * 1024
"""The largest ``entry_points.txt`` read (a bigger one exposes nothing)."""
_MODULE: Final = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
_NOT_IN_NAME: Final = re.compile(r"[-_.]+")


@dataclass(frozen=True, slots=True)
class PackageExtension:
    """One extension a distribution in the package scope exposes."""

    name: str
    folder: Path
    distribution: str
    """The folder name of its distribution under ``<home>/packages/`` (its normalised name)."""
    problem: str | None = None
    """Why it cannot be used (its entry point's value is not a package name)."""


def packages_dir(home: Path) -> Path:
    """Where the package scope's distributions live under a home folder."""
    return home / PACKAGES_DIR


def normalise_distribution(name: str) -> str:
    """A distribution's name as pip compares them: lower case, runs of ``-_.`` one ``-``."""
    return _NOT_IN_NAME.sub("-", name).lower()


def distribution_entry_points(target: Path) -> list[tuple[str, str]]:
    """``(name, value)`` of every entry point in :data:`ENTRY_POINT_GROUP` that the
    distributions installed in ``target`` (a ``pip --target`` folder) declare, in file order."""
    try:
        infos = sorted(name for name in os.listdir(target) if name.endswith(".dist-info"))
    except OSError:
        return []
    found: list[tuple[str, str]] = []
    for info in infos:
        try:
            with open(target / info / "entry_points.txt", "rb") as file:
                data = file.read(ENTRY_POINTS_MAX_BYTES + 1)
        except OSError:
            continue
        if len(data) <= ENTRY_POINTS_MAX_BYTES:
            found += _group(data.decode("utf-8", "replace"))
    return found


def _group(text: str) -> list[tuple[str, str]]:
    """The entries of :data:`ENTRY_POINT_GROUP` in an ``entry_points.txt``."""
    entries: list[tuple[str, str]] = []
    inside = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            inside = line == f"[{ENTRY_POINT_GROUP}]"
        elif inside and "=" in line:
            name, _, value = line.partition("=")
            entries.append((name.strip(), value.strip()))
    return entries


def entry_point_folder(target: Path, value: str) -> Path | None:
    """The folder an entry point's ``value`` names in ``target`` (``None``: it is not a dotted
    package name, so it names no folder)."""
    return target.joinpath(*value.split(".")) if _MODULE.fullmatch(value) else None


def package_extensions(home: Path) -> list[PackageExtension]:
    """Every extension the installed distributions expose, by distribution then file order."""
    root = packages_dir(home)
    try:
        distributions = sorted(name for name in os.listdir(root) if not name.startswith("."))
    except OSError:
        return []
    found: list[PackageExtension] = []
    for distribution in distributions:
        target = root / distribution
        for name, value in distribution_entry_points(target):
            folder = entry_point_folder(target, value)
            if folder is not None:
                found.append(PackageExtension(name, folder, distribution))
            else:
                problem = f"its entry point {name} = {value!r} is not a package name (such as 'hello_ext')"
                found.append(PackageExtension(name, target, distribution, problem))
    return found
