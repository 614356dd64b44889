"""What ``resourceCopy`` and ``resourceMove`` do on disk once
:class:`~extension_host.serve.resources.Resources` has judged their paths.

The protocol overwrites an existing destination unless ``failIfExists`` is set
(``AlreadyExists``, -32010). Here that holds for a file or a symlink; a folder at the
destination is replaced only if it is empty or the request sets ``recursive`` (the field
``resourceDelete`` has, with the same meaning: the folder and everything in it go), else
``InvalidParams`` says so and nothing changes. A symlink at the destination is replaced itself,
never what it leads to.

A replacement has no moment where neither the old entry nor the new one is in place, and loses
nothing when it fails: the new entry is first made beside the destination, inside a temporary
folder ``.<name>.<random>`` (copied there, or the source moved there); then the old entry is
renamed into that folder and the new one renamed into place; only then is the temporary folder,
with the old entry, removed. If the new one cannot be put in place, the old one is renamed back
and a moved source returned. A process killed half way leaves the old entry in that folder.

This module knows paths on disk. Which paths a session may touch, and that no session's working
directory is ever replaced, are :mod:`.resources`' rules.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Final

from extension_protocol.protocol import INVALID_PARAMS

from .content_params import ResourceCopyParams
from .errors import ALREADY_EXISTS, ServeError

__all__ = ["is_folder", "transfer"]

_NEW: Final = "new"
_OLD: Final = "old"


def is_folder(path: Path) -> bool:
    """Whether ``path`` is a folder itself (a symlink to one is not)."""
    return path.is_dir() and not path.is_symlink()


def transfer(source: Path, destination: Path, p: ResourceCopyParams, *, move: bool) -> None:
    """Copy (or move) ``source`` to ``destination``, replacing what is there as the module says.

    Both paths exist as given (``source``: the entry to copy or move; ``destination``: the
    entry to create or replace, in an existing folder); neither lies in the other.

    Raises:
        ServeError: ``AlreadyExists`` (``failIfExists``), ``InvalidParams`` (a folder with
            something in it, without ``recursive``).
        OSError: the disk said no; nothing was replaced.
    """
    if os.path.lexists(destination):
        if p.get("failIfExists"):
            raise ServeError(ALREADY_EXISTS, f"{p['destination']}: already exists and failIfExists was set")
        if is_folder(destination) and not p.get("recursive") and any(destination.iterdir()):
            raise ServeError(
                INVALID_PARAMS,
                f"{p['destination']}: is a folder that is not empty; pass recursive: true to replace it "
                "and everything in it, or pick another destination",
            )
    with tempfile.TemporaryDirectory(
        dir=destination.parent, prefix=f".{destination.name}.", ignore_cleanup_errors=True
    ) as staging:
        staged = Path(staging) / _NEW
        if move:
            shutil.move(source, staged)
        elif is_folder(source):
            shutil.copytree(source, staged, symlinks=True)
        else:
            shutil.copy2(source, staged)
        try:
            _put_in_place(staged, destination, Path(staging) / _OLD)
        except BaseException:
            if move and os.path.lexists(staged):
                shutil.move(staged, source)
            raise


def _put_in_place(staged: Path, destination: Path, aside: Path) -> None:
    """Rename ``staged`` to ``destination``; what was there goes to ``aside`` (or back, on failure)."""
    if not os.path.lexists(destination):
        os.rename(staged, destination)
    elif not is_folder(destination) and not is_folder(staged):
        os.replace(staged, destination)  # a file over a file: one atomic step
    else:
        os.rename(destination, aside)
        try:
            os.rename(staged, destination)
        except BaseException:
            os.rename(aside, destination)
            raise
