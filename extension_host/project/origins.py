"""Where an installed extension came from: one small record per installed thing.

``extensions install`` and ``link`` write a record for each extension they put in a project's or
the user's extension folder (``<folder>/.origins/<name>.json``, beside the extensions, so that a
project's record travels with the project) and for each distribution they put in the package
scope (``<home>/packages/.origins/<distribution>.json``). A record says what kind of source it
was (``git``, ``folder``, ``pip``, ``link``), the URL, path or requirement, the ref asked for
and the commit it resolved to, the distribution's version, and when it was installed.

A record is read as untrusted (a project's may come from anyone who can push to it): bounded in
size, checked with pydantic; a damaged one is an :class:`~extension_host.errors.InstallError`
naming the file, which ``list`` shows as the origin's ``error`` while the extension runs as it
would anyway. A folder without a record was made by hand: its origin is ``None``. This module
reads and writes records; what installs and removes extensions is :mod:`.install`.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import InstallError
from .packages import packages_dir

__all__ = [
    "ORIGINS_DIR",
    "ORIGIN_MAX_BYTES",
    "Origin",
    "OriginKind",
    "now",
    "origin_json",
    "origin_path",
    "read_origin",
    "record_path",
    "remove_origin",
    "write_origin",
]

ORIGINS_DIR: Final = ".origins"
"""The folder of records beside the extensions (or distributions) they describe."""
ORIGIN_MAX_BYTES: Final = 16 * 1024
"""The largest record read; a bigger one is damaged."""

OriginKind = Literal["git", "folder", "pip", "link"]


@dataclass(frozen=True, slots=True)
class Origin:
    """Where one installed extension (or distribution) came from."""

    kind: OriginKind
    source: str
    """The URL or path of a repository, the folder copied or linked, the requirement or wheel."""
    installed_at: str
    """When it was installed or last updated (ISO 8601, UTC)."""
    ref: str | None = None
    """The branch, tag or commit asked for (``None``: the repository's default branch)."""
    commit: str | None = None
    """The commit installed (git)."""
    subdir: str | None = None
    """The folder of the repository it was installed from (``None``: its root)."""
    distribution: str | None = None
    version: str | None = None
    """The distribution's name and version (pip)."""

    def to_json(self) -> dict[str, Any]:
        """The record as ``list --json`` shows it and as it is stored."""
        return asdict(self)


class _Origin(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True, defer_build=True)

    kind: OriginKind
    source: Annotated[str, Field(max_length=4096)]
    installed_at: Annotated[str, Field(max_length=64)]
    ref: Annotated[str, Field(max_length=512)] | None = None
    commit: Annotated[str, Field(max_length=64)] | None = None
    subdir: Annotated[str, Field(max_length=1024)] | None = None
    distribution: Annotated[str, Field(max_length=256)] | None = None
    version: Annotated[str, Field(max_length=128)] | None = None


def now() -> str:
    """The time to record, in UTC, to the second."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def record_path(folder: Path, name: str) -> Path:
    """The record of ``name`` (an extension, or a distribution) in the folder that holds it."""
    return folder / ORIGINS_DIR / f"{name}.json"


def origin_path(source: str, name: str, path: Path, home: Path) -> Path | None:
    """Where the record of a discovered extension would be: beside a project or user extension
    (``path`` is its folder, a link left as it is), in the package scope's records for one of a
    distribution's (its folder under ``<home>/packages``; ``None`` when it is not in one)."""
    if source == "package":
        root = packages_dir(home)
        parts = path.relative_to(root).parts if path.is_relative_to(root) else ()
        return record_path(root, parts[0]) if parts else None
    return record_path(path.parent, name)


def read_origin(path: Path) -> Origin | None:
    """The record at ``path`` (``None``: there is none).

    Raises:
        InstallError: it is too big, not JSON or not a record.
    """
    try:
        with path.open("rb") as file:
            data = file.read(ORIGIN_MAX_BYTES + 1)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise InstallError(str(path), f"{path}: the origin record cannot be read: {exc.strerror or exc}") from None
    if len(data) > ORIGIN_MAX_BYTES:
        raise InstallError(str(path), f"{path}: the origin record is larger than {ORIGIN_MAX_BYTES // 1024} KiB")
    try:
        model = _Origin.model_validate_json(data)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in error["loc"])
        problem = f"{where}: {error['msg']}" if where else str(error["msg"])
        raise InstallError(str(path), f"{path}: the origin record is damaged ({problem})") from None
    return Origin(**model.model_dump())


def origin_json(source: str, name: str, path: Path, home: Path) -> dict[str, Any] | None:
    """A discovered extension's origin as ``list --json`` carries it: the record, ``None`` for
    a folder made by hand, or ``{"error": ...}`` for a damaged record."""
    where = origin_path(source, name, path, home)
    if where is None:
        return None
    try:
        origin = read_origin(where)
    except InstallError as exc:
        return {"error": str(exc)}
    return origin.to_json() if origin is not None else None


def write_origin(path: Path, origin: Origin) -> None:
    """Store ``origin`` at ``path``, replacing what was there in one step."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(origin.to_json(), indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, path)


def remove_origin(path: Path) -> None:
    """Remove the record at ``path`` (nothing if there is none), and its folder once empty."""
    path.unlink(missing_ok=True)
    try:
        path.parent.rmdir()
    except OSError:
        pass  # other records are still there
