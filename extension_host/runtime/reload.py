"""Hot reload: watch the extension folders and turn batches of file changes into reloads.

What is watched is computed here, not left to a recursive watch (which would follow every
symbolic link inside an extension folder into whatever tree it names): the project's
``.github/extensions`` (or ``.github`` while that does not exist), the user's
``<home>/extensions`` and, while the user has it discovered, Copilot CLI's user extension folder
(or its parent while it does not exist), each on its own, so folders appearing and disappearing
are seen; and every extension folder in them with each real sub-folder, found without following
links. The one link followed is an extension folder that is itself a link: its target is watched
and walked, links inside it are not. ``__pycache__``, ``.git``, ``node_modules`` and the other
folders watchfiles ignores are not walked, and an extension contributes at most
:data:`MAX_FOLDERS_PER_EXTENSION` folders; a disabled extension's folders are not walked. Every
folder is watched non-recursively; after each batch the set is computed again and, if it
changed, watching moves to the new set before the batch is applied.

Only files inside an extension's folder count; ``__pycache__``, ``.git``, compiled files and
editor swap or backup files do not. watchfiles groups a burst of saves into one batch; while a
batch is being applied, later changes wait and arrive as the next batch, so reloads never pile
up.

This module maps paths to extension ids and feeds them to an ``apply`` callable; what a reload
does is :mod:`extension_host.runtime.supervisor`'s business, and which extensions exist is
:mod:`extension_host.project.discovery`'s.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import watchfiles

# The notifier awatch wraps, used directly (watchfiles documents it as its Rust backend): its
# constructor has the OS watches in place when it returns, and it can be asked, with a
# timeout, for what it has gathered. Through awatch, a new set of folders is watched only once
# its generator is iterated, and the old one drops what it gathered when stopped: moving to a
# new set would lose the changes made in between.
from watchfiles._rust_notify import RustNotify

from ..project.discovery import Source
from ..project.paths import PROJECT_EXTENSIONS_DIR, extensions_dir

__all__ = [
    "DEBOUNCE_MS",
    "MAX_FOLDERS_PER_EXTENSION",
    "STEP_MS",
    "ExtensionFilter",
    "ExtensionWatcher",
    "FileChanges",
    "WatchSet",
]

STEP_MS: Final = 30
"""A batch is yielded once no new change came for this long (ms): one save, one reload."""
DEBOUNCE_MS: Final = 500
"""The longest a stream of changes is grouped before a batch is yielded anyway (ms)."""
MAX_FOLDERS_PER_EXTENSION: Final = 500
"""The most folders one extension adds to the watch (its own folder included). Each is an OS
watch, and the system has a limited number per user: one repository must not use them up."""
MOVES_PER_BATCH: Final = 3
"""How often watching may move to a new set of folders before one batch is applied (a tree that
keeps changing is followed by the batches after it)."""
REFRESH_POLL_MS: Final = 250
"""While nothing changes, how often the watcher looks whether :meth:`ExtensionWatcher.refresh`
asked for the watch set to be computed again (ms). Only a wait that timed out can be ended
without dropping what the notifier has gathered."""
IGNORED_DIRS: Final = frozenset(watchfiles.DefaultFilter.ignore_dirs)
"""Folders never walked: the filter drops every change inside them anyway."""

FileChanges = set[tuple[watchfiles.Change, str]]
Apply = Callable[[set[str]], Awaitable[object]]
WalkSource = Callable[[Source], bool]
SkipExtension = Callable[[str], bool]
ExtraRoot = Callable[[], Path | None]


class ExtensionFilter(watchfiles.DefaultFilter):
    """Accepts changes inside extension folders (and the creation of those folders).

    ``roots`` are the extension roots (with their source); ``folders`` are further extension
    folders whose changes count, the targets of extension folders that are links.
    """

    def __init__(self, roots: Mapping[Path, str], folders: Iterable[Path] = ()) -> None:
        super().__init__()
        self._roots = {root.resolve(): source for root, source in roots.items()}
        self._folders = frozenset(folders)

    def __call__(self, change: watchfiles.Change, path: str) -> bool:
        if not super().__call__(change, path):
            return False
        candidate = Path(path)
        return any(_is_within(candidate, root) or _is_within(root, candidate) for root in self._roots) or any(
            _is_within(candidate, folder) for folder in self._folders
        )


@dataclass(frozen=True)
class WatchSet:
    """The folders a watcher covers, each watched non-recursively, and whose they are."""

    folders: frozenset[Path]
    """The extension roots, each extension folder (resolved) and its real sub-folders."""
    owners: Mapping[Path, frozenset[str]]
    """For each folder of an extension (its own, resolved, and every sub-folder walked), the ids
    of the extensions it belongs to; two when one extension folder is a link to another."""
    extension_folders: frozenset[Path]
    """The extension folders themselves, resolved: where a changed path counts."""


class ExtensionWatcher:
    """Watches the extension folders and applies each batch of changes.

    Args:
        project_root: the project; its extensions live in ``.github/extensions``.
        user_home: the user's folder; its extensions live in ``extensions``.
        apply: called with the ids of the extensions a batch touched (awaited, one batch at a
            time).
        walk: whether the extension folders of a source (``"project"`` or ``"user"``) are
            watched; asked each time the watch set is computed (at the start and after every
            batch), so its answer may change during a session. Where it answers ``False``,
            only the root is watched: extension folders appearing and disappearing are seen,
            changes inside them are not. Default: every source is walked.
        skip: whether the folders of one extension (by id) are left unwalked (it is disabled);
            asked as ``walk`` is.
        copilot_root: Copilot CLI's user extension folder while it is a source (else ``None``);
            asked as ``walk`` is.
    """

    def __init__(
        self,
        project_root: Path,
        user_home: Path,
        apply: Apply,
        *,
        walk: WalkSource | None = None,
        skip: SkipExtension | None = None,
        copilot_root: ExtraRoot | None = None,
    ) -> None:
        self._own_roots: dict[Path, Source] = {
            (project_root / PROJECT_EXTENSIONS_DIR).resolve(): "project",
            extensions_dir(user_home).resolve(): "user",
        }
        self._apply = apply
        self._walk = walk
        self._skip = skip
        self._copilot_root = copilot_root
        # Folder -> extension ids, for the folders of every set computed since the last batch
        # was handed on (a batch may name folders gone since) and of the set then watched.
        self._owners: Mapping[Path, frozenset[str]] = {}
        self._over_bound: set[str] = set()
        self._refreshes: list[asyncio.Future[None]] = []
        self._watching = False
        self.batches = 0
        """How many batches were applied (for diagnostics and tests)."""

    @property
    def _roots(self) -> dict[Path, Source]:
        """The extension roots now, with their source."""
        extra = self._copilot_root() if self._copilot_root is not None else None
        if extra is None:
            return self._own_roots
        return {**self._own_roots, extra.resolve(): "copilot"}

    def extension_ids(self, changes: Iterable[tuple[watchfiles.Change, str]]) -> set[str]:
        """The ids of the extensions whose folders the changes touch (new or deleted ones too).

        A path under an extension root names the folder it is in; a path under the target of
        an extension folder that is a link names that extension, through the folders watched.
        """
        ids: set[str] = set()
        for _, path in changes:
            candidate = Path(path)
            for root, source in self._roots.items():
                if _is_within(candidate, root) and candidate != root:
                    ids.add(f"{source}:{candidate.relative_to(root).parts[0]}")
            for folder in (candidate, *candidate.parents):
                owners = self._owners.get(folder)
                if owners is not None:
                    ids |= owners
                    break
        return ids

    async def refresh(self, timeout: float = 5.0) -> None:
        """Compute the watch set again, though no file changed: ``walk``'s answer may have (the
        project was trusted, say); return once watching covers the new set (within about
        :data:`REFRESH_POLL_MS`, at most ``timeout`` seconds). No change is lost meanwhile."""
        if not self._watching:
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._refreshes.append(done)
        try:
            async with asyncio.timeout(timeout):
                await asyncio.shield(done)
        except TimeoutError:
            print(f"extension watching did not take a change of trust within {timeout:g} s", file=sys.stderr)

    def watch_paths(self) -> list[Path]:
        """The extension roots to watch (each non-recursively).

        The user's extension folder is created if missing (it is ours). A project without
        ``.github/extensions`` is watched at ``.github`` if that exists, and not at all
        otherwise: its extensions folder appearing is all that matters there.
        """
        paths: list[Path] = []
        for root, source in self._roots.items():
            if source == "user":
                root.mkdir(parents=True, exist_ok=True)
                paths.append(root)
            elif root.is_dir():
                paths.append(root)
            elif root.parent.is_dir():
                paths.append(root.parent)
        return paths

    def watch_set(self) -> WatchSet:
        """Every folder to watch now: the roots, and the folders of each extension in them that
        ``walk`` allows, found without following links (bar the extension folder itself).

        The set is also remembered: :meth:`extension_ids` maps paths through its folders, and
        through those of the sets before it until the watcher hands on its next batch.
        """
        folders: set[Path] = set()
        owners: dict[Path, set[str]] = {}
        extension_folders: set[Path] = set()
        for watched in self.watch_paths():
            folders.add(watched)
            source = self._roots.get(watched)
            if source is None or (self._walk is not None and not self._walk(source)):
                continue  # `.github` stands in for a missing root: nothing in it is an extension
            for child in _subfolders(watched, follow=True):
                extension_id = f"{source}:{child.name}"
                if self._skip is not None and self._skip(extension_id):
                    continue  # disabled: enabling it is told to the host, which refreshes the watch
                found = self._extension_folders(child, extension_id)
                if found:
                    extension_folders.add(found[0])
                for folder in found:
                    folders.add(folder)
                    owners.setdefault(folder, set()).add(extension_id)
        wanted = WatchSet(
            frozenset(folders),
            {folder: frozenset(ids) for folder, ids in owners.items()},
            frozenset(extension_folders),
        )
        self._owners = _merged(self._owners, wanted.owners)
        return wanted

    def _extension_folders(self, folder: Path, extension_id: str) -> list[Path]:
        """The extension folder (resolved) and its sub-folders, breadth first, links not
        followed, at most MAX_FOLDERS_PER_EXTENSION; sorted, so the same tree gives the same
        list and a cut-off extension does not make the watch restart after every batch."""
        try:
            top = folder.resolve(strict=True)
        except (OSError, RuntimeError):  # a dangling link or a link loop: nothing to watch
            return []
        if not top.is_dir():
            return []
        found = [top]
        pending = deque([top])
        while pending:
            for sub in _subfolders(pending.popleft(), follow=False):
                if len(found) >= MAX_FOLDERS_PER_EXTENSION:
                    if extension_id not in self._over_bound:
                        self._over_bound.add(extension_id)
                        print(
                            f"extension {extension_id} has more than {MAX_FOLDERS_PER_EXTENSION} "
                            "folders: only the first ones are watched, changes in the others do "
                            "not reload it",
                            file=sys.stderr,
                        )
                    return found
                found.append(sub)
                pending.append(sub)
        return found

    async def run(self, batches: AsyncIterator[FileChanges]) -> None:
        """Apply every batch; a failing apply is reported on stderr and watching goes on."""
        async for changes in batches:
            ids = self.extension_ids(changes)
            if not ids and not any(_is_within(root, Path(p)) for _, p in changes for root in self._roots):
                continue
            self.batches += 1
            try:
                await self._apply(ids)
            except Exception as exc:  # a reload bug must not end hot reload for the session
                print(f"extension reload failed: {type(exc).__name__}: {exc}", file=sys.stderr)

    async def watch(self, stop: asyncio.Event) -> None:
        """Watch until ``stop`` is set.

        The OS watches are in place before this first suspends, so a task running it has
        started watching once it has been given one turn of the event loop.
        """
        batches = self._batches(stop)
        try:
            await self.run(batches)
        finally:
            await batches.aclose()

    async def _batches(self, stop: asyncio.Event) -> AsyncGenerator[FileChanges, None]:
        """The batches of changes until ``stop`` is set, watching moving to the new set of
        folders (before the batch that changed it is handed on) whenever that set changes."""
        try:
            current = _Notifier(self.watch_set(), self._roots)
        except Exception as exc:  # e.g. the system's watches used up: the host runs on, unwatched
            print(f"extension folders cannot be watched: {type(exc).__name__}: {exc}", file=sys.stderr)
            await stop.wait()
            return
        halt = _Halt(stop)
        # One thread, so a notifier is only ever closed after its last wait has returned.
        waiter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="extension-watcher")
        loop = asyncio.get_running_loop()
        self._watching = True
        try:
            while True:
                try:
                    # A timeout comes only when nothing changed: the moment to look at refresh().
                    raw = await loop.run_in_executor(waiter, current.wait, halt, REFRESH_POLL_MS)
                except Exception as exc:  # the notifier broke: say so rather than end the task
                    print(f"extension watching stopped: {type(exc).__name__}: {exc}", file=sys.stderr)
                    return
                if raw == "stop":
                    return
                if isinstance(raw, str):  # a timeout or a signal: nothing happened
                    if not self._refreshes:
                        continue
                    raw = set()
                # Taken before the set is computed: a refresh asked for later is served next time.
                refreshed, self._refreshes = self._refreshes, []
                changes = current.accept(raw)
                # Watching moves to the folders there are now before the batch is applied, so the
                # reload it triggers reads files that are being watched. What the old notifier saw
                # in between (a step at most to collect) joins the batch; it may name new folders.
                for _ in range(MOVES_PER_BATCH):
                    wanted = self.watch_set()
                    if wanted.folders == current.folders:
                        break
                    try:
                        replacement = _Notifier(wanted, self._roots)
                    except Exception as exc:  # keep watching what was watched; tried again next batch
                        print(f"extension folders cannot be watched: {type(exc).__name__}: {exc}", file=sys.stderr)
                        break
                    old, current = current, replacement
                    try:
                        leftover = await loop.run_in_executor(waiter, old.wait, halt, 1)
                    finally:
                        waiter.submit(old.close)
                    if isinstance(leftover, str):
                        break
                    changes |= old.accept(leftover)
                for done in refreshed:
                    if not done.done():
                        done.set_result(None)
                if changes:
                    yield changes
                    self._owners = current.watched.owners
        finally:
            self._watching = False
            for done in self._refreshes:
                if not done.done():
                    done.set_result(None)  # nothing to wait for: watching is over
            halt.set()  # a wait still running returns within a step; then the notifier closes
            waiter.submit(current.close)
            waiter.shutdown(wait=False)


class _Notifier:
    """One watchfiles notifier over a fixed set of folders, each watched non-recursively."""

    def __init__(self, wanted: WatchSet, roots: Mapping[Path, str]) -> None:
        self.watched = wanted
        self.folders = wanted.folders
        self._filter = ExtensionFilter(roots, wanted.extension_folders)
        self._rust = RustNotify(
            sorted(str(folder) for folder in self.folders),
            False,  # debug
            _force_polling(),
            _poll_delay_ms(),
            False,  # recursive: the folders were chosen here, links left out
            True,  # ignore_permission_denied (a folder removed meanwhile is skipped too)
        )

    def wait(self, halt: _Halt, timeout_ms: int) -> set[tuple[int, str]] | str:
        """Block until a batch (a set), ``"stop"`` or, given a timeout, ``"timeout"``."""
        return self._rust.watch(DEBOUNCE_MS, STEP_MS, timeout_ms, halt)

    def accept(self, raw: set[tuple[int, str]]) -> FileChanges:
        """The changes of a batch that concern extensions."""
        changes = {(watchfiles.Change(change), path) for change, path in raw}
        return {(change, path) for change, path in changes if self._filter(change, path)}

    def close(self) -> None:
        """Remove the OS watches."""
        self._rust.close()


class _Halt:
    """What a waiting notifier polls every step: ``stop`` set, or watching over for this task."""

    def __init__(self, stop: asyncio.Event) -> None:
        self._stop = stop
        self._halted = False

    def is_set(self) -> bool:
        return self._halted or self._stop.is_set()

    def set(self) -> None:
        self._halted = True


def _subfolders(folder: Path, *, follow: bool) -> list[Path]:
    """The folders directly in ``folder`` that are worth watching, by name; links to folders
    count only if ``follow``. Unreadable folders have none."""
    found: list[Path] = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    is_folder = entry.is_dir(follow_symlinks=follow)
                except OSError:
                    continue
                if is_folder and entry.name not in IGNORED_DIRS:
                    found.append(folder / entry.name)
    except OSError:
        return []
    return sorted(found)


def _merged(first: Mapping[Path, frozenset[str]], second: Mapping[Path, frozenset[str]]) -> dict[Path, frozenset[str]]:
    merged = dict(first)
    for folder, ids in second.items():
        merged[folder] = merged.get(folder, frozenset()) | ids
    return merged


def _force_polling() -> bool:
    # As awatch reads WATCHFILES_FORCE_POLLING (for file systems without notifications).
    value = os.environ.get("WATCHFILES_FORCE_POLLING", "")
    return bool(value) and value.lower() not in {"false", "disable", "disabled"}


def _poll_delay_ms() -> int:
    # As awatch reads WATCHFILES_POLL_DELAY_MS.
    value = os.environ.get("WATCHFILES_POLL_DELAY_MS", "")
    return int(value) if value.isdecimal() else 300


def _is_within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents
