"""The user's small JSON records (trust, enable/disable decisions): read, believed, written.

A record lives in the user's home and says what the user decided. :class:`PrivateRecord` reads
one through pydantic (a damaged file is an error that names it), refuses it if another user
could have written it or if it is not a regular file (a fifo in its place is never waited on),
refuses one written by a newer version, and writes it atomically (a temporary file renamed
into place, mode 0600) under an advisory lock beside it, so two commands at once lose nothing.
A record of secrets (``secret=True``) is also refused if others could read it, and a damaged
one is reported without pydantic's words, which would quote its contents. What a record means,
and what to do when one cannot be read, is its owner's business; this module knows files,
owners and the lock.

The records' models are declared with ``defer_build``: their validators are built when a
file is first read, so a command that finds none (or is told by the environment) builds none.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from .private_files import NotRegularFile, open_private, open_regular, private_folder, write_private

__all__ = ["PrivateRecord", "RecordError"]

Document = TypeVar("Document", bound=BaseModel)

RecordError = Callable[[Path, str], Exception]
"""Builds the error a record raises: ``(path, one-line message)``."""


class PrivateRecord(Generic[Document]):
    """One record file of the user's: ``path``, read as ``model``, written by format ``version``.

    ``error(path, message)`` is what is raised; ``redo`` ends the message of a record that cannot
    be used at all (what the user should do, e.g. ``remove it and decide again``); ``lock`` is the
    name of the lock file beside it; ``secret``: it holds secrets (see the module's docstring).
    """

    def __init__(
        self,
        path: Path,
        model: type[Document],
        *,
        version: int,
        error: RecordError,
        redo: str,
        lock: str,
        secret: bool = False,
    ) -> None:
        self.path: Final = path
        self.secret: Final = secret
        self._model = model
        self._version = version
        self._error = error
        self._redo = redo
        self._lock = lock

    def read(self) -> Document:
        """The record (the model's defaults when there is none).

        Raises:
            Exception: ``error(...)``: damaged, not a regular file, or writable by someone else.
        """
        path = self.path
        try:
            # Never waited on: a fifo in its place would otherwise hang every command.
            with open_regular(path, follow_symlinks=False) as (handle, info):
                self._check_owner(info)
                raw = handle.read()
        except FileNotFoundError:
            return self._model.model_construct()  # the defaults, as validated: nothing to build
        except NotRegularFile:
            raise self._error(path, f"{path} is not a regular file; {self._redo}") from None
        except OSError as exc:
            raise self._error(path, f"cannot read {path} ({exc.strerror or exc}); {self._redo}") from None
        try:
            document = self._model.model_validate(json.loads(raw))
        except (ValueError, ValidationError) as exc:
            if self.secret:
                raise self._error(path, f"{path} is damaged (not the JSON this version writes); {self._redo}") from None
            first = str(exc).splitlines()[0]
            raise self._error(
                path, f"{path} is damaged ({first}); fix it or remove it (every decision in it is lost)"
            ) from None
        version = int(getattr(document, "version", 0))
        if version > self._version:
            raise self._error(path, f"{path} was written by a newer version of extension-host (version {version})")
        return document

    @contextlib.contextmanager
    def update(self) -> Iterator[Document]:
        """The record to change in place, under the lock; written back when the block ends
        without an exception.

        Raises:
            Exception: ``error(...)``: it cannot be read, believed or written.
        """
        home = self.path.parent
        try:
            lock = open_private(private_folder(home) / self._lock, os.O_RDWR)
        except OSError as exc:
            raise self._error(self.path, f"cannot write {self.path}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            document = self.read()
            yield document
            self._write(document)
        finally:
            os.close(lock)  # releases the lock

    def _check_owner(self, info: os.stat_result) -> None:
        path = self.path
        if info.st_uid != os.geteuid():
            raise self._error(path, f"{path} belongs to uid {info.st_uid}, not you; {self._redo}")
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise self._error(
                path,
                f"{path} can be written by other users (mode {stat.S_IMODE(info.st_mode):04o}); "
                f"check its contents, then run 'chmod 600 {path}'",
            )
        if self.secret and info.st_mode & (stat.S_IRGRP | stat.S_IROTH):
            raise self._error(
                path,
                f"{path} can be read by other users (mode {stat.S_IMODE(info.st_mode):04o}): change the secrets "
                f"in it, then run 'chmod 600 {path}'",
            )

    def _write(self, document: Document) -> None:
        data = json.dumps(document.model_dump(), indent=2, sort_keys=True).encode() + b"\n"
        try:
            write_private(self.path, data)
        except OSError as exc:
            raise self._error(self.path, f"cannot write {self.path}: {exc.strerror or exc}") from None
