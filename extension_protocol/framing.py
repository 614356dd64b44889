"""Framing: bytes ↔ JSON messages, as in the Language Server Protocol base protocol.

A frame is a header block (``Content-Length: N``, optionally ``Content-Type``, each line ending
in ``\\r\\n``), an empty line, then N bytes of UTF-8 JSON. This module owns that and nothing
more: it does not know request ids, methods, tools or hooks.

It also owns the limits that keep a peer's bytes from costing more than they should: the size
of a header block (:data:`MAX_HEADER_BYTES`), of a body (:data:`MAX_MESSAGE_BYTES`, or the
reader's own limit) and how deeply a body may nest (:data:`MAX_DEPTH`, :mod:`.nesting`'s). A
header block is refused as soon as it cannot be a frame's, never waited on: one over the limit,
one with ``Content-Length`` twice (either length would be a guess, and the wrong one waits for
bytes that never come), one with a line that ends in a bare ``\\n``, or one whose
``Content-Length`` is anything but plain decimal digits (no sign, no ``_``, no leading zero,
however ``int()`` would read it). Whatever is wrong with
the bytes, the reader raises :class:`FramingError` and nothing else. On the way out, a frame
whose body would exceed the limit, or nest deeper than asked, is refused
(:class:`MessageTooLarge`, :class:`MessageTooDeep`) before a byte is written, and text that
UTF-8 cannot carry (lone surrogates, as ``os.listdir`` returns for a file name that is not
UTF-8) is sent with U+FFFD in their place rather than failing the send.

Only :func:`read_message` needs an event loop, and it imports asyncio when first called: a
blocking reader (a hook command on its socket) frames with :func:`encode_message` and
:class:`FrameDecoder` and the same rules, and pays for no event loop.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import TYPE_CHECKING, Any, Final

from .json_codec import orjson_dumps, standard_dumps
from .nesting import MAX_DEPTH, TooDeep, check_depth

if TYPE_CHECKING:
    import asyncio

__all__ = [
    "MAX_DEPTH",
    "MAX_HEADER_BYTES",
    "MAX_MESSAGE_BYTES",
    "FrameDecoder",
    "FramingError",
    "MessageTooDeep",
    "MessageTooLarge",
    "describe_size",
    "encode_body",
    "encode_message",
    "frame",
    "read_message",
]

MAX_MESSAGE_BYTES: Final = 64 * 1024 * 1024
"""Largest body accepted. A larger announced length is a protocol error, not an allocation."""

MAX_HEADER_BYTES: Final = 64 * 1024
"""Longest header block accepted: no real header comes close; garbage without a blank line does."""

_HEADER_END: Final = b"\r\n\r\n"
_CANONICAL_HEADER: Final = b"Content-Length: "
"""How every header this project writes begins; such a header is read without splitting lines."""
_SPACE: Final = b" \t"
"""What may surround a header's value (HTTP's optional whitespace)."""
_ZERO: Final = ord("0")

# Built once: ``json.dumps`` with options builds a new encoder for every message.
_ENCODER: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)
_DECODER: Final = json.JSONDecoder()
_C_ENCODE: Final[Callable[[Any, int], Any] | None] = (
    None
    if c_make_encoder is None
    # What _ENCODER.encode builds afresh for every message (a third of its cost), built once.
    # No table of the containers being encoded (``markers``): one shared across messages
    # would keep entries after a failed encoding; a cycle ends in RecursionError instead.
    else c_make_encoder(None, _ENCODER.default, encode_basestring, None, ":", ",", False, False, False)
)
_SCAN: Final[Callable[[str, int], tuple[Any, int]]] = _DECODER.scan_once  # type: ignore[attr-defined]
_JSON_SPACE: Final = " \t\n\r"


class FramingError(Exception):
    """The peer sent bytes that are not a valid frame (bad header, bad JSON, oversize, cut short)."""


class MessageTooLarge(ValueError):
    """A message to send is larger than the peer accepts; nothing was written."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"the message is {describe_size(size)}, over the limit of {describe_size(limit)} per message")
        self.size: Final = size
        self.limit: Final = limit


class MessageTooDeep(ValueError):
    """A message to send nests deeper than the peer accepts; nothing was written."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the message nests arrays and objects deeper than the {limit} levels the peer accepts")
        self.limit: Final = limit


def encode_message(message: dict[str, Any], max_bytes: int | None = None, max_depth: int | None = None) -> bytes:
    """Return one complete frame for ``message`` (:func:`encode_body`, then :func:`frame`).

    Raises:
        As :func:`encode_body`.
    """
    return frame(encode_body(message, max_bytes, max_depth))


def encode_body(message: dict[str, Any], max_bytes: int | None = None, max_depth: int | None = None) -> bytes:
    """Return the body of ``message``'s frame: compact UTF-8 JSON, which never holds a raw
    line break (so it is also the message as a line of newline-delimited JSON).

    Lone surrogates in its strings (and keys) are written as U+FFFD: UTF-8 cannot carry them,
    and a result that cannot be sent at all is worse than one with a replaced character.

    Raises:
        MessageTooLarge: the body would exceed ``max_bytes``.
        MessageTooDeep: it nests deeper than ``max_depth`` levels, which a peer with that limit
            would answer by closing the connection.
        TypeError, ValueError: ``message`` holds a value JSON cannot represent.
    """
    body = orjson_dumps(message)
    if body is None:
        body = _standard_body(message)
    if max_bytes is not None and len(body) > max_bytes:
        raise MessageTooLarge(len(body), max_bytes)
    if max_depth is not None:
        try:
            check_depth(message, body, max_depth)
        except TooDeep:
            raise MessageTooDeep(max_depth) from None
    return body


def _standard_body(message: dict[str, Any]) -> bytes:
    """The body of ``message`` by the standard library (see :mod:`.json_codec`)."""
    try:
        text = standard_dumps(_encode_text, message)
    except RecursionError:
        raise ValueError("the message nests too deeply, or refers to itself") from None
    try:
        return text.encode()
    except UnicodeEncodeError:
        # Through UTF-16: a surrogate pair left split in the str is joined back into its
        # character, and only the truly lone ones are replaced.
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode()


def _encode_text(message: Any) -> str:
    return "".join(_C_ENCODE(message, 0)) if _C_ENCODE is not None else _ENCODER.encode(message)


def frame(body: bytes) -> bytes:
    """The frame carrying ``body``, an encoded JSON message (see :func:`encode_message`)."""
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def describe_size(size: int) -> str:
    """A byte count for people: ``65.0 MiB (68157440 bytes)``, or ``512 bytes``."""
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MiB ({size} bytes)"
    return f"{size} bytes"


def _content_length(header_block: bytes, max_header_bytes: int) -> int:
    if header_block.startswith(_CANONICAL_HEADER):
        digits = header_block[len(_CANONICAL_HEADER) :]
        # Only ASCII digits (no other header line, no sign, no spaces), no leading zero, and
        # few enough that int() cannot refuse them: anything else takes the general way.
        if len(digits) <= 18 and digits.isdigit() and (digits[0] != _ZERO or len(digits) == 1):
            return int(digits)
    if len(header_block) > max_header_bytes:
        raise FramingError(f"header block is too long: {len(header_block)} bytes, over the limit of {max_header_bytes}")
    _check_line_ends(header_block)
    length: int | None = None
    first = b""
    for raw_line in header_block.split(b"\r\n"):
        if not raw_line:
            continue
        name, sep, value = raw_line.partition(b":")
        if not sep:
            raise FramingError(f"malformed header line {_preview(raw_line)}: expected 'Name: value'")
        if name.strip().lower() == b"content-length":
            if length is not None:
                raise FramingError(
                    f"Content-Length appears twice in one header block ({_preview(first)} and "
                    f"{_preview(value.strip(_SPACE))}); a frame has exactly one"
                )
            first = value.strip(_SPACE)
            length = _length(first)
    if length is None:
        raise FramingError(f"header block has no Content-Length: {_preview(header_block)}")
    return length


def _length(value: bytes) -> int:
    """The byte count a ``Content-Length`` value (spaces and tabs around it removed) gives: ASCII
    decimal digits and nothing else. No sign, no ``_``, no other space and no leading zero, all of
    which ``int()`` would take: a number has one spelling, so no two readers of the same bytes
    can disagree on where the frame ends (some read ``010`` as eight)."""
    if not value.isdigit():  # bytes: ASCII digits only
        raise FramingError(f"Content-Length is not a number: {_preview(value)}")
    if value[0] == _ZERO and len(value) > 1:
        raise FramingError(f"Content-Length has a leading zero: {_preview(value)}")
    try:
        return int(value)
    except ValueError:  # more digits than int() converts
        raise FramingError(f"Content-Length is not a number: {_preview(value)}") from None


def _check_line_ends(header: bytes, partial: bool = False) -> None:
    """Refuse header bytes with a line break other than ``\\r\\n`` (a bare ``\\n`` or ``\\r``):
    ``\\r\\n\\r\\n`` may never come, and the reader would wait for it. A ``partial`` header
    may end in the ``\\r`` of a ``\\r\\n`` whose ``\\n`` is still on its way."""
    if partial and header.endswith(b"\r"):
        header = header[:-1]
    crlf = header.count(b"\r\n")
    if header.count(b"\n") != crlf or header.count(b"\r") != crlf:
        raise FramingError(
            f"header block has a line break other than \\r\\n: {_preview(header)}; header lines end in \\r\\n"
        )


async def read_message(
    reader: asyncio.StreamReader, max_bytes: int = MAX_MESSAGE_BYTES, max_depth: int = MAX_DEPTH
) -> dict[str, Any] | None:
    """Read one frame and return its JSON object, or ``None`` at a clean end of stream.

    Raises:
        FramingError: the bytes are not a frame, the body is not a JSON object or nests deeper
            than ``max_depth`` levels, the announced length exceeds ``max_bytes``, or the
            stream ends inside a frame.
    """
    import asyncio  # here, not at the top: a blocking reader (a hook command) shares the rest without it

    try:
        header = await reader.readuntil(_HEADER_END)
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise FramingError(f"stream ended inside a header: {_preview(exc.partial)}") from None
    except asyncio.LimitOverrunError:
        raise FramingError("header block is too long: no empty line within the stream reader's limit") from None
    length = _content_length(header[: -len(_HEADER_END)], MAX_HEADER_BYTES)
    if length > max_bytes:
        raise FramingError(f"message of {length} bytes exceeds the limit of {max_bytes} bytes")
    try:
        body = await reader.readexactly(length)
    except asyncio.IncompleteReadError as exc:
        raise FramingError(f"stream ended after {len(exc.partial)} of {length} body bytes") from None
    return _decode(body, max_depth)


class FrameDecoder:
    """Turns bytes, as they arrive in chunks of any size, into complete messages.

    The incremental twin of :func:`read_message`: no awaiting per frame, so a reader can hand
    over whatever one read returned and dispatch every message it contained at once.
    """

    def __init__(
        self,
        max_bytes: int = MAX_MESSAGE_BYTES,
        max_depth: int = MAX_DEPTH,
        max_header_bytes: int = MAX_HEADER_BYTES,
    ) -> None:
        self._buffer = bytearray()
        self._body_length: int | None = None
        self._max_bytes = max_bytes
        self._max_depth = max_depth
        self._max_header_bytes = max_header_bytes
        self.skip: tuple[bytes, ...] = ()
        """Bodies that begin with one of these are dropped unread (framing still checked):
        notices the reader has no use for."""

    @property
    def buffered(self) -> int:
        """Bytes held for a frame not yet complete: at most the larger of the body limit and
        the header limit, whatever the peer sends."""
        return len(self._buffer)

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        """Add ``data``; return the messages it completed (possibly none).

        Raises:
            FramingError: as :func:`read_message`; the decoder is unusable afterwards.
        """
        buffer = self._buffer
        if buffer:
            # A frame was cut between reads: gather until it can be complete, then go on
            # from one bytes object like a whole read (a long body is not copied per read).
            buffer += data
            if self._body_length is not None and len(buffer) < self._body_length:
                return []
            data = bytes(buffer)
            buffer.clear()
        # Frames are read in place in ``data``: usually one read holds whole frames, and then
        # nothing is copied but each header and body on its own.
        messages: list[dict[str, Any]] = []
        position = 0
        size = len(data)
        length = self._body_length
        while position < size:
            if length is None:
                end = data.find(_HEADER_END, position)
                if end < 0:
                    if size - position > self._max_header_bytes:
                        raise FramingError(
                            f"header block is too long: no empty line within {self._max_header_bytes} bytes"
                        )
                    _check_line_ends(data[position:], partial=True)
                    break
                length = _content_length(data[position:end], self._max_header_bytes)
                if length > self._max_bytes:
                    raise FramingError(f"message of {length} bytes exceeds the limit of {self._max_bytes} bytes")
                position = end + len(_HEADER_END)
            if size - position < length:
                break
            body = data[position : position + length]
            if not (self.skip and body.startswith(self.skip)):
                messages.append(_decode(body, self._max_depth))
            position += length
            length = None
        self._body_length = length
        if position < size:
            buffer += memoryview(data)[position:]
        return messages

    def end(self) -> None:
        """The stream ended: fine between frames.

        Raises:
            FramingError: it ended inside a frame.
        """
        if self._body_length is not None:
            raise FramingError(f"stream ended after {len(self._buffer)} of {self._body_length} body bytes")
        if self._buffer:
            raise FramingError(f"stream ended inside a header: {_preview(bytes(self._buffer))}")


def _standard_decode(body: bytes, max_depth: int) -> Any:
    """The value of ``body`` by the standard library (see :mod:`.json_codec`)."""
    try:
        if body[:1] == b"{" and body[1:2] != b"\0":
            # What json.loads(bytes) would do for a body starting with "{" (its encoding
            # sniffing says UTF-8 then), without the sniffing and the type checks.
            text = body.decode("utf-8", "surrogatepass")
            # The decoder's own scan, without decode()'s two whitespace searches: nothing but
            # whitespace may follow the object, as json.loads requires.
            message, end = _SCAN(text, 0)
            if end != len(text) and text[end:].strip(_JSON_SPACE):
                raise json.JSONDecodeError("Extra data", text, end)
        else:
            message = json.loads(body)
    except RecursionError:
        # The decoder recurses once per level: it gave up hundreds of levels down.
        raise FramingError(f"body is {TooDeep(max_depth)}") from None
    except StopIteration:  # the scan found no value where one must start
        raise FramingError("body is not valid JSON: expecting value") from None
    except ValueError as exc:
        # JSONDecodeError and UnicodeDecodeError, and a number too long to convert.
        raise FramingError(f"body is not valid JSON: {exc}") from None
    return message


def _decode(body: bytes, max_depth: int) -> dict[str, Any]:
    message = _standard_decode(body, max_depth)
    if not isinstance(message, dict):
        raise FramingError(f"body is JSON but not an object: {_preview(body)}")
    try:
        check_depth(message, body, max_depth)
    except TooDeep as exc:
        raise FramingError(f"body is {exc}") from None
    return message


def _preview(data: bytes, limit: int = 60) -> str:
    text = data[:limit].decode("utf-8", "replace")
    return repr(text + ("…" if len(data) > limit else ""))
