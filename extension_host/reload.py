"""Hot reload: watch the extension folders and turn batches of file changes into reloads.

One watchfiles watcher covers the project's and the user's extension folders (a project
without ``.github/extensions`` yet is watched at ``.github``). Only files inside an
extension's folder count; ``__pycache__``, ``.git``, compiled files and editor swap or backup
files do not. watchfiles groups a burst of saves into one batch; while a batch is being
applied, later changes wait and arrive as the next batch, so reloads never pile up.

This module maps paths to extension ids and feeds them to an ``apply`` callable; what a reload
does is :mod:`extension_host.supervisor`'s business.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from pathlib import Path
from typing import Final

import watchfiles

from .paths import PROJECT_EXTENSIONS_DIR, extensions_dir

__all__ = ["STEP_MS", "ExtensionFilter", "ExtensionWatcher", "FileChanges"]

STEP_MS: Final = 30
"""A batch is yielded once no new change came for this long (ms): one save, one reload."""
DEBOUNCE_MS: Final = 500
"""The longest a stream of changes is grouped before a batch is yielded anyway (ms)."""

FileChanges = set[tuple[watchfiles.Change, str]]
Apply = Callable[[set[str]], Awaitable[object]]


class ExtensionFilter(watchfiles.DefaultFilter):
    """Accepts changes inside extension folders (and the creation of those folders)."""

    def __init__(self, roots: dict[Path, str]) -> None:
        super().__init__()
        self._roots = {root.resolve(): source for root, source in roots.items()}

    def __call__(self, change: watchfiles.Change, path: str) -> bool:
        if not super().__call__(change, path):
            return False
        candidate = Path(path)
        return any(
            _is_within(candidate, root) or _is_within(root, candidate) for root in self._roots
        )


class ExtensionWatcher:
    """Watches the extension roots and applies each batch of changes."""

    def __init__(self, project_root: Path, user_home: Path, apply: Apply) -> None:
        self._roots = {
            (project_root / PROJECT_EXTENSIONS_DIR).resolve(): "project",
            extensions_dir(user_home).resolve(): "user",
        }
        self._apply = apply
        self.batches = 0
        """How many batches were applied (for diagnostics and tests)."""

    def extension_ids(self, changes: Iterable[tuple[watchfiles.Change, str]]) -> set[str]:
        """The ids of the extensions whose folders the changes touch (new or deleted ones too)."""
        ids: set[str] = set()
        for _, path in changes:
            candidate = Path(path)
            for root, source in self._roots.items():
                if _is_within(candidate, root) and candidate != root:
                    ids.add(f"{source}:{candidate.relative_to(root).parts[0]}")
        return ids

    def watch_paths(self) -> list[Path]:
        """The folders to watch.

        The user's extension folder is created if missing (it is ours). A project without
        ``.github/extensions`` is watched at ``.github`` if that exists, and not at all
        otherwise: watching a whole repository would cost a watch per folder in it.
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
        """Watch until ``stop`` is set."""
        paths = self.watch_paths()
        if not paths:
            await stop.wait()
            return
        batches = watchfiles.awatch(
            *paths,
            watch_filter=ExtensionFilter(self._roots),
            step=STEP_MS,
            debounce=DEBOUNCE_MS,
            stop_event=stop,
            ignore_permission_denied=True,
        )
        await self.run(batches)


def _is_within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents
