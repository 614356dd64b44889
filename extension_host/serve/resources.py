"""The client protocol's ``resource*`` commands: a session's files, and its content by reference.

:class:`Resources` answers ``resourceRead``, ``resourceWrite``, ``resourceList``,
``resourceCopy``, ``resourceDelete``, ``resourceMove`` and ``resourceRequest`` for one session,
with the agent host protocol's shapes. Files are ``file:`` URIs and only those inside the session's working
directory (``root``) may be touched: a path is judged by where it really leads (``..`` and
symlinks resolved), so ``..``, an absolute path elsewhere, a symlink that leads out, or another
scheme is ``PermissionDenied`` (-32009) whose data carries the ``resourceRequest`` the caller
would need (``{"request": {"uri", "read"|"write"}}``), and that request is denied too: this
server grants nothing beyond the working directory. ``resourceRead`` of a content URI (see
:mod:`extension_host.serve.contents`) is served from the :class:`ContentStore`.

What a command deletes, replaces or moves is the entry the URI names: a symlink at its end is
that entry, never what it leads to. No session's working directory (this one's, or another
session's of the server), nor a folder holding one, is ever deleted, replaced or moved:
``PermissionDenied``. How ``resourceCopy`` and ``resourceMove`` replace what is at the
destination (a folder only when empty or with ``recursive``; atomically) is :mod:`.moves`'.

A missing file is ``NotFound`` (-32008), an existing one where ``createOnly``/``failIfExists``
forbids it ``AlreadyExists`` (-32010, the protocol's newer code). Sizes are bounded
(:data:`MAX_READ_BYTES`, :data:`MAX_WRITE_BYTES`, :data:`MAX_LIST_ENTRIES`,
:data:`MAX_COPY_BYTES`); file work runs in a thread, off the event loop. Between the check of a
path and its use, a process that can write inside the working directory could swap a folder
for a symlink; the check stops clients, not local processes.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import mimetypes
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final, Literal, TypeVar
from urllib.parse import unquote, urlsplit

from extension_protocol.protocol import INVALID_PARAMS

from .content_params import (
    ResourceCopyParams,
    ResourceDeleteParams,
    ResourceListParams,
    ResourceReadParams,
    ResourceRequestParams,
    ResourceWriteParams,
    checked,
)
from .contents import ContentStore, is_content_uri
from .errors import ALREADY_EXISTS, NOT_FOUND, PERMISSION_DENIED, ServeError
from .moves import is_folder, transfer

__all__ = [
    "MAX_COPY_BYTES",
    "MAX_LIST_ENTRIES",
    "MAX_READ_BYTES",
    "MAX_WRITE_BYTES",
    "Resources",
]

MAX_READ_BYTES: Final = 8 * 1024 * 1024
"""The largest file ``resourceRead`` returns (its base64 stays under a message's limit)."""
MAX_WRITE_BYTES: Final = 8 * 1024 * 1024
"""The most bytes one ``resourceWrite`` writes (after decoding)."""
MAX_LIST_ENTRIES: Final = 10_000
"""Entries ``resourceList`` returns at most: the first by name."""
MAX_COPY_BYTES: Final = 256 * 1024 * 1024
"""The most bytes one ``resourceCopy`` of a folder copies; a larger folder is refused."""

_TEXT_APPLICATION_TYPES: Final = frozenset(
    {
        "application/json",
        "application/xml",
        "application/javascript",
        "application/x-sh",
        "application/toml",
        "application/yaml",
        "application/x-yaml",
        "application/sql",
    }
)

T = TypeVar("T")
Access = Literal["read", "write"]


class Resources:
    """The ``resource*`` commands for one session (see the module).

    Args:
        root: the session's working directory; nothing outside it is touched.
        contents: where content by reference is kept.
        working_directories: the working directories of every session of the server; none of
            them, nor a folder holding one, is ever deleted, replaced or moved (``root`` never is).
    """

    def __init__(
        self, root: Path, contents: ContentStore, working_directories: Callable[[], Iterable[Path]] = tuple
    ) -> None:
        self.root: Final = Path(os.path.realpath(root))
        self.contents: Final = contents
        self._working_directories = working_directories

    async def read(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``resourceRead`` → ``{data, encoding, contentType}``."""
        p = checked("resourceRead", ResourceReadParams, params)
        if is_content_uri(p["uri"]):
            data, content_type = self.contents.get(p["uri"])
            return _encoded(data, content_type, p.get("encoding"))
        path = self._inside(p["uri"], "read")
        data, content_type = await _off_loop(lambda: _read_file(path, p["uri"]))
        return _encoded(data, content_type, p.get("encoding"))

    async def write(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``resourceWrite`` → ``{}``; ``createOnly`` refuses an existing file."""
        p = checked("resourceWrite", ResourceWriteParams, params)
        path = self._inside(p["uri"], "write")
        data = _decoded(p["data"], p["encoding"], p["uri"])
        await _off_loop(lambda: _write_file(path, data, p.get("createOnly", False), p["uri"]))
        return {}

    async def list(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``resourceList`` → ``{entries: [{name, type}]}``, by name, at most
        :data:`MAX_LIST_ENTRIES`."""
        p = checked("resourceList", ResourceListParams, params)
        path = self._inside(p["uri"], "read")
        return {"entries": await _off_loop(lambda: _list_folder(path, p["uri"]))}

    async def copy(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``resourceCopy`` → ``{}``; a file or a folder (symlinks in it copied as links); what
        it may replace, and how, is :mod:`.moves`'."""
        p = checked("resourceCopy", ResourceCopyParams, params)
        source = self._inside(p["source"], "read")
        destination = self._entry(p["destination"], "replaced")
        await _off_loop(lambda: _transfer(source, destination, p, move=False))
        return {}

    async def move(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``resourceMove`` → ``{}``; a symlink moves as a link; what it may replace, and how,
        is :mod:`.moves`'."""
        p = checked("resourceMove", ResourceCopyParams, params)
        source = self._entry(p["source"], "moved")
        destination = self._entry(p["destination"], "replaced")
        await _off_loop(lambda: _transfer(source, destination, p, move=True))
        return {}

    async def delete(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``resourceDelete`` → ``{}``; a folder that is not empty needs ``recursive``; a
        symlink is deleted itself, not what it leads to."""
        p = checked("resourceDelete", ResourceDeleteParams, params)
        path = self._entry(p["uri"], "deleted")
        await _off_loop(lambda: _delete(path, p.get("recursive", False), p["uri"]))
        return {}

    async def request(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``resourceRequest`` → ``{}`` for anything inside the working directory; denied
        (``PermissionDenied``) for anything else."""
        p = checked("resourceRequest", ResourceRequestParams, params)
        self._inside(p["uri"], "write" if p.get("write") else "read")
        return {}

    def _inside(self, uri: str, access: Access) -> Path:
        """The real path of ``uri`` if it lies inside the working directory.

        Raises:
            ServeError: ``PermissionDenied`` when it is not a ``file:`` URI or leads outside;
                ``InvalidParams`` when it is not a usable file URI.
        """
        parts = urlsplit(uri)
        if parts.scheme != "file":
            raise _denied(uri, access, f"only file: URIs inside {self.root} can be {_past(access)} here")
        if parts.netloc not in ("", "localhost"):
            raise _denied(uri, access, f"host {parts.netloc!r} is not this machine")
        raw = unquote(parts.path)
        if "\0" in raw or not raw.startswith("/"):
            raise ServeError(INVALID_PARAMS, f"{uri}: not a file URI with an absolute path")
        real = Path(os.path.realpath(raw))  # ``..`` and every symlink on the way resolved
        if real != self.root and self.root not in real.parents:
            raise _denied(uri, access, f"it lies outside the session's working directory {self.root}")
        return real

    def _entry(self, uri: str, change: str) -> Path:
        """The entry ``uri`` names, to be ``change``d (deleted, replaced, moved): as
        :meth:`_inside` judges it, but a symlink at its end is the entry itself, not where it
        leads.

        Raises:
            ServeError: as :meth:`_inside`; ``PermissionDenied`` for a session's working
                directory or a folder that holds one.
        """
        real = self._inside(uri, "write")
        raw = unquote(urlsplit(uri).path)
        name = os.path.basename(raw)
        entry = real
        if name not in ("", ".", ".."):
            lexical = Path(os.path.realpath(os.path.dirname(raw))) / name
            if lexical == self.root or self.root in lexical.parents:
                entry = lexical
        for directory in {self.root, *self._working_directories()}:
            if entry == directory or entry in directory.parents:
                held = "" if entry == directory else "a folder holding "
                why = f"it is {held}the working directory {directory} of a session, which is never {change}"
                raise _denied(uri, "write", why)
        return entry


def _denied(uri: str, access: Access, why: str) -> ServeError:
    message = f"{uri}: permission denied: {why}; only files under the working directory can be {_past(access)}"
    return ServeError(PERMISSION_DENIED, message, {"request": {"uri": uri, access: True}})


def _past(access: Access) -> str:
    return "read" if access == "read" else "written"


async def _off_loop(work: Callable[[], T]) -> T:
    try:
        return await asyncio.to_thread(work)
    except ServeError:
        raise
    except FileNotFoundError as exc:  # gone between the check and the work
        raise ServeError(NOT_FOUND, f"{exc.filename or 'file'}: no such file or folder") from None
    except PermissionError as exc:  # the system's own permissions, inside the working directory
        raise ServeError(PERMISSION_DENIED, f"{exc.filename or 'file'}: {exc.strerror or exc}") from None
    except OSError as exc:
        raise ServeError(INVALID_PARAMS, f"{exc.filename or 'file'}: {exc.strerror or exc}") from None


def _encoded(data: bytes | str, content_type: str, wanted: str | None) -> dict[str, Any]:
    """The protocol's ``{data, encoding, contentType}``: text (text given as text, or bytes of a
    text type that decode) as utf-8 unless base64 is asked for; anything else base64."""
    if isinstance(data, str):
        if wanted == "base64":
            return {
                "data": base64.b64encode(data.encode("utf-8")).decode("ascii"),
                "encoding": "base64",
                "contentType": content_type,
            }
        return {"data": data, "encoding": "utf-8", "contentType": content_type}
    if wanted != "base64" and _is_text_type(content_type):
        try:
            return {"data": data.decode("utf-8"), "encoding": "utf-8", "contentType": content_type}
        except UnicodeDecodeError:
            pass  # binary: base64 whatever was asked for
    return {"data": base64.b64encode(data).decode("ascii"), "encoding": "base64", "contentType": content_type}


def _is_text_type(content_type: str) -> bool:
    """Whether ``content_type`` names text (binary content always goes as base64)."""
    kind = content_type.split(";", 1)[0].strip().lower()
    return kind.startswith("text/") or kind in _TEXT_APPLICATION_TYPES or kind.endswith(("+json", "+xml"))


def _decoded(data: str, encoding: str, uri: str) -> bytes:
    if encoding == "base64":
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise ServeError(INVALID_PARAMS, f"resourceWrite {uri}: data is not valid base64") from None
    else:
        raw = data.encode("utf-8", "surrogatepass")
    if len(raw) > MAX_WRITE_BYTES:
        raise ServeError(
            INVALID_PARAMS, f"resourceWrite {uri}: {len(raw)} bytes is more than {MAX_WRITE_BYTES} at once"
        )
    return raw


def _content_type(path: Path, data: bytes) -> str:
    guessed, _ = mimetypes.guess_type(path.name)
    if guessed:
        return guessed
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "application/octet-stream"
    return "text/plain"


def _missing(uri: str, what: str = "no such file or folder") -> ServeError:
    return ServeError(NOT_FOUND, f"{uri}: {what}")


def _read_file(path: Path, uri: str) -> tuple[bytes, str]:
    if not path.exists():
        raise _missing(uri)
    if not path.is_file():
        raise ServeError(INVALID_PARAMS, f"{uri}: not a file; list a folder with resourceList")
    size = path.stat().st_size
    if size > MAX_READ_BYTES:
        raise ServeError(INVALID_PARAMS, f"{uri}: {size} bytes is more than the {MAX_READ_BYTES} resourceRead returns")
    with path.open("rb") as handle:
        data = handle.read(MAX_READ_BYTES + 1)[:MAX_READ_BYTES]
    return data, _content_type(path, data)


def _write_file(path: Path, data: bytes, create_only: bool, uri: str) -> None:
    if not path.parent.is_dir():
        raise _missing(uri, f"its folder {path.parent} does not exist")
    if path.is_dir():
        raise ServeError(INVALID_PARAMS, f"{uri}: is a folder, not a file")
    if create_only:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            raise ServeError(ALREADY_EXISTS, f"{uri}: already exists and createOnly was set") from None
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        return
    # Whole or not at all: a reader never sees half a file.
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _list_folder(path: Path, uri: str) -> list[dict[str, str]]:
    if not path.exists():
        raise _missing(uri)
    if not path.is_dir():
        raise ServeError(INVALID_PARAMS, f"{uri}: not a folder")
    entries = []
    with os.scandir(path) as scan:
        for entry in scan:
            entries.append({"name": entry.name, "type": "directory" if entry.is_dir() else "file"})
    entries.sort(key=lambda entry: entry["name"])
    return entries[:MAX_LIST_ENTRIES]


def _folder_bytes(path: Path, uri: str) -> int:
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            with_link = Path(folder) / name
            total += with_link.lstat().st_size
            if total > MAX_COPY_BYTES:
                raise ServeError(
                    INVALID_PARAMS,
                    f"{uri}: the folder holds more than the {MAX_COPY_BYTES} bytes one resourceCopy copies",
                )
    return total


def _transfer(source: Path, destination: Path, p: ResourceCopyParams, *, move: bool) -> None:
    if not os.path.lexists(source):
        raise _missing(p["source"])
    if destination == source or source in destination.parents:
        raise ServeError(INVALID_PARAMS, f"{p['destination']}: lies in {p['source']}; pick a place outside it")
    if not destination.parent.is_dir():
        raise _missing(p["destination"], f"its folder {destination.parent} does not exist")
    if not move and is_folder(source):
        _folder_bytes(source, p["source"])
    transfer(source, destination, p, move=move)


def _delete(path: Path, recursive: bool, uri: str) -> None:
    if not os.path.lexists(path):
        raise _missing(uri)
    if is_folder(path) and any(path.iterdir()) and not recursive:
        raise ServeError(INVALID_PARAMS, f"{uri}: the folder is not empty; pass recursive: true to delete it all")
    if is_folder(path):
        shutil.rmtree(path)
    else:
        path.unlink()
