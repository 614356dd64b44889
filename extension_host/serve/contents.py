"""Content by reference: large data (long tool outputs, images) kept out of the state a client
is sent, and read back with ``resourceRead`` by its content URI.

:class:`ContentStore` holds each piece under a URI below its session's URI, as the protocol's
example (``copilot:/<uuid>/content/img-1``). It lives in memory, bounded by
:data:`MAX_CONTENT_BYTES` and :data:`MAX_CONTENT_ITEMS`: past either, the oldest pieces are
forgotten first, and reading one of them is ``ContentNotFound`` (-32006), which a client treats
as content that is gone. Memory rather than the session folder because a piece is a view of
something the session's log keeps anyway (a tool's whole result is in its
``tool.execution_complete``): it needs to outlive a client's reading, not the server. This
module knows URIs and bytes; what is worth storing by reference is the server's choice.
"""

from __future__ import annotations

import itertools
import re
from collections import OrderedDict
from typing import Final

from .errors import CONTENT_NOT_FOUND, ServeError

__all__ = ["CONTENT_SEGMENT", "MAX_CONTENT_BYTES", "MAX_CONTENT_ITEMS", "ContentStore", "is_content_uri"]

MAX_CONTENT_BYTES: Final = 64 * 1024 * 1024
"""Bytes of content kept, all sessions together; the oldest pieces are forgotten beyond it."""
MAX_CONTENT_ITEMS: Final = 10_000
"""Pieces of content kept, all sessions together; the oldest are forgotten beyond it."""
_NAME: Final = re.compile(r"[A-Za-z0-9_-]{1,128}")
CONTENT_SEGMENT: Final = "/content/"
"""What comes between a session's URI and a piece's name in a content URI."""


def is_content_uri(uri: str) -> bool:
    """Whether ``uri`` has the shape of a content URI (a session URI, ``/content/``, a name)."""
    head, found, name = uri.rpartition(CONTENT_SEGMENT)
    return bool(found and head and name and "/" not in name and not uri.startswith("file:"))


class ContentStore:
    """Content pieces by URI, bounded in memory (see the module)."""

    def __init__(self, max_bytes: int = MAX_CONTENT_BYTES, max_items: int = MAX_CONTENT_ITEMS) -> None:
        self._max_bytes = max_bytes
        self._max_items = max_items
        self._pieces: OrderedDict[str, tuple[bytes | str, str, int]] = OrderedDict()
        self._bytes = 0
        self._names = itertools.count(1)

    def __len__(self) -> int:
        return len(self._pieces)

    @property
    def size(self) -> int:
        """Bytes held now (text counted as UTF-8)."""
        return self._bytes

    def put(self, session_uri: str, data: bytes | str, content_type: str, *, name: str | None = None) -> str:
        """Keep ``data`` (text stays text, bytes stay bytes) and return its content URI,
        ``<session_uri>/content/c-<n>``, or ``.../content/<name>`` for a ``name`` of letters,
        digits, ``-`` and ``_`` (putting it again replaces it); older pieces are forgotten to
        make room.

        Raises:
            ValueError: ``data`` alone is larger than the store may hold.
        """
        size = len(data.encode("utf-8")) if isinstance(data, str) else len(data)
        if size > self._max_bytes:
            raise ValueError(
                f"content of {size} bytes for {session_uri} is larger than the {self._max_bytes} bytes "
                "the content store holds; pass a smaller piece"
            )
        piece = name if name is not None and _NAME.fullmatch(name) else f"c-{next(self._names)}"
        uri = f"{session_uri.rstrip('/')}{CONTENT_SEGMENT}{piece}"
        replaced = self._pieces.pop(uri, None)
        if replaced is not None:  # the same piece again (a named one): one copy, now the newest
            self._bytes -= replaced[2]
        self._pieces[uri] = (data, content_type, size)
        self._bytes += size
        while self._bytes > self._max_bytes or len(self._pieces) > self._max_items:
            _, (_, _, dropped) = self._pieces.popitem(last=False)
            self._bytes -= dropped
        return uri

    def get(self, uri: str) -> tuple[bytes | str, str]:
        """The data and content type kept under ``uri``.

        Raises:
            ServeError: ``CONTENT_NOT_FOUND``: no such piece, or it was forgotten.
        """
        piece = self._pieces.get(uri)
        if piece is None:
            raise ServeError(
                CONTENT_NOT_FOUND,
                f"content {uri} not found: it never existed, its session was disposed, or it was forgotten "
                f"to make room (the server keeps the last {self._max_bytes // (1024 * 1024)} MiB)",
            )
        data, content_type, _ = piece
        return data, content_type

    def forget(self, session_uri: str) -> int:
        """Forget every piece of ``session_uri`` (a disposed session); returns how many."""
        prefix = f"{session_uri.rstrip('/')}{CONTENT_SEGMENT}"
        gone = [uri for uri in self._pieces if uri.startswith(prefix)]
        for uri in gone:
            _, _, size = self._pieces.pop(uri)
            self._bytes -= size
        return len(gone)
