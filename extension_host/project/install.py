"""Putting extensions in place and taking them away: the file side of ``extensions install``.

What is installed is first made in a staging folder next to where it goes
(``<extension folder>/.installing/<random>/``, on the same file system, hidden from discovery),
then checked (:func:`find_extensions`: an extension is there, its name passes
:func:`~.discovery.check_name`, it has one entry file, its manifest reads, no link points out of
it, it is not too big), then moved into place with one ``rename`` each (:func:`place`); the
staging folder is removed whatever happens, so a failure leaves nothing behind. An extension's
origin record (:mod:`.origins`) is written with it, and removed with it.

What came from a repository, a folder or a distribution is hostile until checked here: a path
with ``..``, an absolute link, a link out of the extension, a special file or a tree over
:data:`MAX_FILES` files or :data:`MAX_BYTES` bytes is refused. This module knows folders; how a
source is fetched is :mod:`extension_host.launch.sources`', what a person is told is the front
end's.
"""

from __future__ import annotations

import contextlib
import filecmp
import os
import secrets
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from ..errors import InstallError, ManifestError
from .discovery import ENTRY_FILES, check_name, entry_files
from .manifest import Manifest, read_manifest
from .origins import Origin, record_path, remove_origin, write_origin
from .packages import ENTRY_POINT_GROUP, distribution_entry_points, entry_point_folder
from .paths import PROJECT_EXTENSIONS_DIR, extensions_dir

__all__ = [
    "IGNORED_WHEN_COPYING",
    "INSTALLING_DIR",
    "MAX_BYTES",
    "MAX_FILES",
    "Candidate",
    "Scope",
    "changed_files",
    "check_free",
    "check_tree",
    "checked_manifest",
    "copy_folder",
    "distribution_candidates",
    "find_extensions",
    "place",
    "remove_tree",
    "replace",
    "scope_root",
    "staging",
]

Scope = Literal["project", "user"]
INSTALLING_DIR: Final = ".installing"
"""Where installs are staged, inside the folder they go to (hidden: never an extension)."""
MAX_FILES: Final = 10_000
"""The most files (and links) one install may hold."""
MAX_BYTES: Final = 100 * 1024 * 1024
"""The most bytes one install may hold."""
IGNORED_WHEN_COPYING: Final = frozenset({".git", "__pycache__", ".installing", ".origins"})
"""What copying a local folder leaves out: a repository's history, caches, our own records."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """One extension found in what was fetched, checked, ready to move into place."""

    name: str
    folder: Path
    """Where it is now (in the staging folder)."""
    entry: str
    manifest: Manifest


def scope_root(scope: str, project_root: Path, home: Path) -> Path:
    """The folder a scope's extensions live in."""
    return project_root / PROJECT_EXTENSIONS_DIR if scope == "project" else extensions_dir(home)


@contextlib.contextmanager
def staging(root: Path) -> Iterator[Path]:
    """A new empty folder under ``root/.installing/``, removed (with everything in it) on exit,
    and ``.installing`` with it once nothing else is staged there."""
    base = root / INSTALLING_DIR
    base.mkdir(parents=True, exist_ok=True)
    folder = base / secrets.token_hex(8)
    folder.mkdir(mode=0o700)
    try:
        yield folder
    finally:
        remove_tree(folder)
        with contextlib.suppress(OSError):
            base.rmdir()


def remove_tree(path: Path) -> None:
    """Remove ``path``: a link (only the link), a file, or a folder with all it holds."""
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    elif path.exists():

        def writable(function: object, name: str, _exc: object) -> None:  # read-only folders from a wheel
            with contextlib.suppress(OSError):
                os.chmod(os.path.dirname(name), 0o700)
                os.chmod(name, 0o700)
                (os.rmdir if os.path.isdir(name) else os.unlink)(name)

        shutil.rmtree(path, onerror=writable)


def check_tree(folder: Path, source: str, *, max_files: int = MAX_FILES, max_bytes: int = MAX_BYTES) -> None:
    """Refuse a tree that is too big, holds a special file, or a link that leaves it.

    Raises:
        InstallError: naming the file at fault, relative to ``folder``.
    """
    top = os.path.realpath(folder)
    files = 0
    size = 0
    for current, folders, names in os.walk(folder, followlinks=False):
        folders[:] = [name for name in folders if name not in (".git",)]
        for name in (*names, *folders):
            path = os.path.join(current, name)
            relative = os.path.relpath(path, folder)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                target = os.readlink(path)
                real = os.path.realpath(os.path.join(current, target))
                if os.path.isabs(target) or os.path.commonpath([top, real]) != top:
                    raise InstallError(source, f"{relative} is a link to {target!r}, outside the extension; refused")
            elif stat.S_ISREG(info.st_mode):
                size += info.st_size
            elif not stat.S_ISDIR(info.st_mode):
                raise InstallError(source, f"{relative} is not a file or a folder; refused")
            files += 1
            if files > max_files:
                raise InstallError(source, f"{source} holds more than {max_files} files; refused")
            if size > max_bytes:
                raise InstallError(source, f"{source} holds more than {max_bytes // (1024 * 1024)} MiB; refused")


def copy_folder(source: Path, destination: Path) -> None:
    """Copy the local folder ``source`` to ``destination`` (new), links kept as links, without
    :data:`IGNORED_WHEN_COPYING`; the source is checked (:func:`check_tree`) first.

    Raises:
        InstallError: the source is not a folder, too big, or holds a link out of it.
    """
    if not source.is_dir():
        raise InstallError(str(source), f"{source} is not a folder")
    check_tree(source, str(source))
    shutil.copytree(source, destination, symlinks=True, ignore=lambda _folder, names: IGNORED_WHEN_COPYING & set(names))


def find_extensions(tree: Path, source: str, default_name: str, rename: str | None = None) -> list[Candidate]:
    """The extensions in ``tree`` (fetched into a staging folder), checked.

    ``tree`` itself is one extension when it holds an entry file (named ``rename``, else
    ``default_name``); else each folder of ``tree/.github/extensions/`` that holds one, else
    each top-level folder that holds one, is an extension of its folder's name.

    Raises:
        InstallError: there is none, ``rename`` is given for several, a name breaks the naming
            rule, one has more than one entry file, a manifest does not read, or the tree
            is too big or holds a link out of it.
    """
    check_tree(tree, source)
    if entry_files(tree):
        folders = [(rename or default_name, tree)]
    else:
        nested = tree / PROJECT_EXTENSIONS_DIR
        base = nested if nested.is_dir() and _extension_folders(nested) else tree
        folders = [(folder.name, folder) for folder in _extension_folders(base)]
        if not folders:
            raise InstallError(
                source,
                f"no extension in {source}: no entry file ({', '.join(ENTRY_FILES)}) at its top, "
                f"in {PROJECT_EXTENSIONS_DIR}/NAME/ or in a top-level folder",
            )
        if rename is not None and len(folders) > 1:
            names = ", ".join(name for name, _ in folders)
            raise InstallError(
                source,
                f"--name renames one extension, and {source} holds {len(folders)} ({names}); pick one with --subdir",
            )
        if rename is not None:
            folders = [(rename, folders[0][1])]
    found: list[Candidate] = []
    for name, folder in folders:
        problem = check_name(name)
        if problem is not None:
            raise InstallError(source, f"{problem}; choose another with --name")
        entries = entry_files(folder)
        if len(entries) > 1:
            raise InstallError(source, f"{name} has more than one entry file ({', '.join(entries)}); refused")
        found.append(Candidate(name, folder, entries[0], checked_manifest(folder, source, name)))
    return found


def checked_manifest(folder: Path, source: str, label: str) -> Manifest:
    """The manifest of the extension ``label`` in ``folder``.

    Raises:
        InstallError: it does not read (the file's name and the field at fault, after ``label``).
    """
    try:
        return read_manifest(folder)
    except ManifestError as exc:
        raise InstallError(source, f"{label}: {exc.path.name}: {exc.problem}") from None


def _extension_folders(base: Path) -> list[Path]:
    try:
        children = sorted(base.iterdir(), key=lambda child: child.name)
    except OSError:
        return []
    return [
        child
        for child in children
        if not child.name.startswith(".") and child.is_dir() and not child.is_symlink() and entry_files(child)
    ]


def check_free(root: Path, name: str, scope: str, source: str) -> None:
    """Refuse a name taken at this scope.

    Raises:
        InstallError: ``root/name`` exists (a folder, a link, or a file).
    """
    destination = root / name
    if destination.exists() or destination.is_symlink():
        raise InstallError(
            source,
            f"an extension named {name} is already in the {scope} folder ({destination}); "
            f"install under another name with --name, or run 'extensions uninstall {name}' first",
        )


def place(candidates: list[Candidate], root: Path, scope: str, source: str, origin: Origin) -> list[Path]:
    """Move each candidate to ``root/<name>`` with its origin record; all or none.

    Raises:
        InstallError: a name is taken at this scope (nothing was moved).
    """
    for candidate in candidates:
        check_free(root, candidate.name, scope, source)
    placed: list[tuple[Path, Path]] = []
    try:
        for candidate in candidates:
            destination = root / candidate.name
            record = record_path(root, candidate.name)
            write_origin(record, origin)
            placed.append((destination, record))
            os.rename(candidate.folder, destination)  # fails, rather than replace, if one appeared meanwhile
    except OSError as exc:
        for destination, record in placed[:-1]:
            remove_tree(destination)
            remove_origin(record)
        if placed:
            remove_origin(placed[-1][1])
        raise InstallError(source, f"cannot move the extension into {root}: {exc.strerror or exc}") from None
    return [destination for destination, _ in placed]


def replace(new: Path, destination: Path, record: Path, source: str, origin: Origin) -> None:
    """Put the folder ``new`` (staged beside it) where the installed ``destination`` is, and its
    origin in ``record`` (an update): the old folder is moved aside, the new one in, then the old
    one removed; on failure the old one is put back.

    Raises:
        InstallError: the new folder cannot be moved in.
    """
    aside = new.parent / f".old-{secrets.token_hex(4)}"
    os.rename(destination, aside)
    try:
        os.rename(new, destination)
    except OSError as exc:
        os.rename(aside, destination)
        raise InstallError(source, f"cannot move the new version into {destination}: {exc.strerror or exc}") from None
    write_origin(record, origin)
    remove_tree(aside)


def distribution_candidates(target: Path, source: str, distribution: str) -> list[Candidate]:
    """The extensions the distribution pip installed in ``target`` exposes, checked as
    :func:`find_extensions` checks a repository's.

    Raises:
        InstallError: it exposes none, or one of them cannot be used.
    """
    points = distribution_entry_points(target)
    if not points:
        raise InstallError(
            source, f"{distribution} exposes no extensions (no entry point in the group {ENTRY_POINT_GROUP})"
        )
    check_tree(target, source)
    found: list[Candidate] = []
    for name, value in points:
        problem = check_name(name)
        if problem is not None:
            raise InstallError(source, f"{distribution}: {problem}")
        folder = entry_point_folder(target, value)
        entries = entry_files(folder) if folder is not None else []
        if folder is None or len(entries) != 1:
            why = f"{value!r} is not a package" if folder is None else f"{value} holds {len(entries)} entry files"
            raise InstallError(source, f"{distribution}: its extension {name}: {why}, not one with an extension.py")
        found.append(Candidate(name, folder, entries[0], checked_manifest(folder, source, f"{distribution}: {name}")))
    return found


def changed_files(old: Path, new: Path) -> int:
    """How many files (and links) differ between two trees: added, removed or changed."""
    before, after = _files(old), _files(new)
    changed = 0
    for relative in before.keys() | after.keys():
        first, second = before.get(relative), after.get(relative)
        if first is None or second is None or first.is_symlink() != second.is_symlink():
            changed += 1
        elif first.is_symlink():
            changed += os.readlink(first) != os.readlink(second)
        else:
            changed += not filecmp.cmp(first, second, shallow=False)
    return changed


def _files(root: Path) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for current, folders, names in os.walk(root, followlinks=False):
        folders[:] = [name for name in folders if name != "__pycache__"]
        links = [name for name in folders if os.path.islink(os.path.join(current, name))]
        for name in (*names, *links):
            path = Path(current, name)
            found[str(path.relative_to(root))] = path
    return found
