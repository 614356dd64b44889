"""Unit tests for extension_protocol.framing: Content-Length framed JSON over a StreamReader, and fed in chunks."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extension_protocol.framing import (
    MAX_DEPTH,
    MAX_MESSAGE_BYTES,
    FrameDecoder,
    FramingError,
    MessageTooDeep,
    MessageTooLarge,
    encode_message,
    read_message,
)


async def _read(
    data: bytes,
    *,
    eof: bool = True,
    max_bytes: int = MAX_MESSAGE_BYTES,
    limit: int | None = None,
    max_depth: int = MAX_DEPTH,
) -> Any:
    """Feed ``data`` (then EOF unless told otherwise) to a fresh reader and read one frame."""
    reader = asyncio.StreamReader(limit=limit) if limit is not None else asyncio.StreamReader()
    reader.feed_data(data)
    if eof:
        reader.feed_eof()
    async with asyncio.timeout(5):
        return await read_message(reader, max_bytes, max_depth)


def read_one(data: bytes, **kwargs: Any) -> Any:
    """Synchronously read one frame from ``data``."""
    return asyncio.run(_read(data, **kwargs))


def frame(body: bytes, *headers: bytes) -> bytes:
    """A frame with the right Content-Length for ``body`` and any extra header lines."""
    lines = [b"Content-Length: %d" % len(body), *headers]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


# -- encode_message ----------------------------------------------------------------------


def test_encode_message_writes_content_length_header_then_compact_json_body() -> None:
    """encode_message produces exactly one header, an empty line and the compact body."""
    assert encode_message({"jsonrpc": "2.0", "id": 1}) == (b'Content-Length: 24\r\n\r\n{"jsonrpc":"2.0","id":1}')


def test_encode_message_counts_bytes_not_characters_for_non_ascii_text() -> None:
    """The announced length is the UTF-8 byte count, and the text is not \\u-escaped."""
    data = encode_message({"text": "héllo ✓ 日本"})
    header, _, body = data.partition(b"\r\n\r\n")
    assert body == '{"text":"héllo ✓ 日本"}'.encode()
    assert header == b"Content-Length: %d" % len(body)
    assert len(body) > len('{"text":"héllo ✓ 日本"}')


def test_round_trip_preserves_a_message_with_non_ascii_text() -> None:
    """read_message returns exactly what encode_message was given, including non-ASCII text."""
    params = {"text": "ünïcødé — 日本語 🎉", "n": [1, 2.5, None, True]}
    message = {"jsonrpc": "2.0", "id": "x", "params": params}
    assert read_one(encode_message(message)) == message


def test_consecutive_frames_are_read_one_at_a_time_then_eof_gives_none() -> None:
    """Two frames in one buffer come out as two messages, then a clean EOF returns None."""

    async def main() -> list[Any]:
        reader = asyncio.StreamReader()
        reader.feed_data(encode_message({"n": 1}) + encode_message({"n": 2}))
        reader.feed_eof()
        async with asyncio.timeout(5):
            return [await read_message(reader) for _ in range(3)]

    assert asyncio.run(main()) == [{"n": 1}, {"n": 2}, None]


def test_a_frame_split_across_several_feeds_is_reassembled() -> None:
    """Bytes arriving in small pieces, interleaved with the reader, still make one message."""

    async def main() -> tuple[Any, int]:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        data = encode_message({"split": "across feeds", "k": 42})
        pieces = [data[i : i + 3] for i in range(0, len(data), 3)]
        fed = 0

        def feed_next() -> None:
            nonlocal fed
            reader.feed_data(pieces[fed])
            fed += 1
            if fed < len(pieces):
                loop.call_soon(feed_next)

        task = asyncio.ensure_future(read_message(reader))
        loop.call_soon(feed_next)
        async with asyncio.timeout(5):
            return await task, fed

    message, fed = asyncio.run(main())
    assert message == {"split": "across feeds", "k": 42}
    assert fed > 10


# -- clean end of stream ----------------------------------------------------------------


def test_clean_eof_before_any_byte_returns_none() -> None:
    """An empty stream that ends is a clean end, not an error."""
    assert read_one(b"") is None


# -- headers -----------------------------------------------------------------------------


def test_content_type_and_other_extra_headers_are_accepted() -> None:
    """Headers besides Content-Length (e.g. Content-Type) are allowed and ignored."""
    body = b'{"ok":true}'
    data = frame(body, b"Content-Type: application/vscode-jsonrpc; charset=utf-8", b"X-Extra: 1")
    assert read_one(data) == {"ok": True}


def test_content_length_may_come_after_other_headers_and_in_any_case() -> None:
    """The Content-Length header name is matched case-insensitively and in any position."""
    body = b'{"a":1}'
    data = b"Content-Type: application/json\r\ncontent-LENGTH:   %d  \r\n\r\n%s" % (len(body), body)
    assert read_one(data) == {"a": 1}


def test_a_header_line_without_colon_is_a_framing_error() -> None:
    """A header line that is not 'Name: value' is rejected with a message saying so."""
    with pytest.raises(FramingError, match="malformed header line"):
        read_one(b"Content-Length 2\r\n\r\n{}")


def test_non_numeric_content_length_is_a_framing_error() -> None:
    """A Content-Length value that is not a number is rejected."""
    with pytest.raises(FramingError, match="not a number"):
        read_one(b"Content-Length: twelve\r\n\r\n{}")


@pytest.mark.parametrize(
    ("value", "error"),
    [
        (b"-5", "Content-Length is not a number: '-5'"),
        (b"+2", "Content-Length is not a number: '+2'"),
        (b"0_2", "Content-Length is not a number: '0_2'"),
        (b"\x0b2", "Content-Length is not a number: '\\x0b2'"),
        (b"\xd9\xa2", "Content-Length is not a number: '\u0662'"),
        (b"02", "Content-Length has a leading zero: '02'"),
    ],
)
def test_a_content_length_int_would_read_but_that_is_not_plain_digits_is_a_framing_error(
    value: bytes, error: str
) -> None:
    """A sign, an underscore, a space other than a blank or a tab, a digit that is not ASCII (an
    Arabic-Indic two) and a leading zero are refused, though int() reads every one of them."""
    for data in (
        b"Content-Length: " + value + b"\r\n\r\n{}",
        b"Content-Type: x\r\nContent-Length: " + value + b"\r\n\r\n{}",
    ):
        with pytest.raises(FramingError) as caught:
            read_one(data)
        assert str(caught.value) == error
        with pytest.raises(FramingError) as caught:
            FrameDecoder().feed(data)
        assert str(caught.value) == error


_HEADER_VALUES = st.text(st.sampled_from("0123456789 \t+-_.x\u0662\x0b"), max_size=6).map(str.encode)
"""Header values short enough that a plain number among them stays a small body."""


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(value=_HEADER_VALUES, after_another_header=st.booleans())
def test_a_content_length_is_read_only_when_it_is_plain_decimal_digits(
    value: bytes, after_another_header: bool
) -> None:
    """Whatever surrounds it, a value is taken exactly when it is ASCII digits without a leading
    zero between blanks and tabs, and then it is the length read; anything else is a FramingError."""
    plain = re.fullmatch(rb"[ \t]*(0|[1-9][0-9]*)[ \t]*", value)
    length = int(plain.group(1)) if plain is not None else None
    header = (b"Content-Type: x\r\n" if after_another_header else b"") + b"Content-Length:" + value
    data = header + b"\r\n\r\n" + b"{}".ljust(length or 0)
    if length is None:
        for read in (read_one, FrameDecoder().feed):
            with pytest.raises(FramingError, match=r"^Content-Length (is not a number|has a leading zero): "):
                read(data)
    elif length >= 2:
        assert read_one(data) == {}
        assert FrameDecoder().feed(data) == [{}]
    else:  # the length is taken: it cuts the body short of "{}"
        with pytest.raises(FramingError, match=r"^body is not valid JSON"):
            read_one(data)


def test_header_block_without_content_length_is_a_framing_error() -> None:
    """A header block that lacks Content-Length is rejected."""
    with pytest.raises(FramingError, match="no Content-Length"):
        read_one(b"Content-Type: application/json\r\n\r\n{}")


def test_a_header_block_longer_than_the_reader_limit_is_a_framing_error() -> None:
    """Header bytes without the terminating empty line beyond the reader's limit are rejected."""
    with pytest.raises(FramingError, match="too long"):
        read_one(b"X-Padding: " + b"a" * 200, eof=False, limit=64)


# -- size --------------------------------------------------------------------------------


def test_announced_length_over_max_bytes_is_rejected_without_waiting_for_the_body() -> None:
    """An oversize Content-Length fails at once, even though the body never arrives."""
    with pytest.raises(FramingError, match="exceeds the limit of 10 bytes"):
        read_one(b"Content-Length: 11\r\n\r\n", eof=False, max_bytes=10)


def test_announced_length_equal_to_max_bytes_is_accepted() -> None:
    """The limit is inclusive: a body of exactly max_bytes is read."""
    body = b'{"k":"abc"}'
    assert read_one(frame(body), max_bytes=len(body)) == {"k": "abc"}


def test_default_limit_is_64_mebibytes() -> None:
    """MAX_MESSAGE_BYTES is the documented 64 MiB, and read_message applies it by default."""
    assert MAX_MESSAGE_BYTES == 64 * 1024 * 1024
    with pytest.raises(FramingError, match="exceeds the limit"):
        read_one(b"Content-Length: %d\r\n\r\n" % (MAX_MESSAGE_BYTES + 1), eof=False)


# -- cut short ---------------------------------------------------------------------------


def test_stream_ending_inside_the_header_is_a_framing_error() -> None:
    """EOF after some header bytes but before the empty line is an error, not a clean end."""
    with pytest.raises(FramingError, match="inside a header"):
        read_one(b"Content-Length: 5\r\n")


def test_stream_ending_inside_the_body_is_a_framing_error() -> None:
    """EOF before Content-Length body bytes arrived reports how many came."""
    with pytest.raises(FramingError, match="after 3 of 10 body bytes"):
        read_one(b'Content-Length: 10\r\n\r\n{"a')


# -- body --------------------------------------------------------------------------------


def test_body_that_is_not_json_is_a_framing_error() -> None:
    """A body that does not parse as JSON is rejected."""
    with pytest.raises(FramingError, match="not valid JSON"):
        read_one(frame(b"{not json"))


def test_body_that_is_not_utf8_is_a_framing_error() -> None:
    """A body with invalid UTF-8 bytes is rejected as invalid JSON, not a crash."""
    with pytest.raises(FramingError, match="not valid JSON"):
        read_one(frame(b'{"a":"\xff\xfe"}'))


@pytest.mark.parametrize("body", [b"[1,2,3]", b'"text"', b"42", b"null", b"true"])
def test_json_body_that_is_not_an_object_is_a_framing_error(body: bytes) -> None:
    """Arrays, strings, numbers, null and booleans are not messages."""
    with pytest.raises(FramingError, match="not an object"):
        read_one(frame(body))


def test_zero_length_body_is_a_framing_error() -> None:
    """Content-Length: 0 gives an empty body, which is not JSON."""
    with pytest.raises(FramingError, match="not valid JSON"):
        read_one(b"Content-Length: 0\r\n\r\n")


def test_a_bad_frame_after_a_good_one_still_yields_the_good_one_first() -> None:
    """Messages before a broken frame are delivered; the error comes on the next read."""

    async def main() -> tuple[Any, BaseException | None]:
        reader = asyncio.StreamReader()
        reader.feed_data(encode_message({"first": 1}) + b"Content-Length: x\r\n\r\n")
        reader.feed_eof()
        async with asyncio.timeout(5):
            first = await read_message(reader)
            try:
                await read_message(reader)
            except FramingError as exc:
                return first, exc
        return first, None

    first, error = asyncio.run(main())
    assert first == {"first": 1}
    assert isinstance(error, FramingError)


def test_encoded_body_is_valid_json_of_the_message() -> None:
    """The body of an encoded frame parses back to the message with the standard json module."""
    message = {"a": [1, {"b": None}], "c": "d"}
    _, _, body = encode_message(message).partition(b"\r\n\r\n")
    assert json.loads(body) == message


# -- FrameDecoder: the same frames, fed in chunks of any size ------------------------------

CHUNK_SIZES = [None, 1, 2, 7]
"""Whole data at once, then byte by byte and in small odd chunks (cutting headers and bodies)."""


def decode_all(data: bytes, chunk_size: int | None, max_bytes: int = MAX_MESSAGE_BYTES) -> list[Any]:
    """Feed ``data`` to a fresh decoder in chunks of ``chunk_size`` (all at once for None), then end it."""
    decoder = FrameDecoder(max_bytes)
    step = chunk_size or max(len(data), 1)
    messages: list[Any] = []
    for start in range(0, len(data), step):
        messages.extend(decoder.feed(data[start : start + step]))
    decoder.end()
    return messages


@pytest.mark.parametrize("chunk_size", CHUNK_SIZES)
@pytest.mark.parametrize(
    "header",
    [
        b"Content-Length: %d",
        b"content-length: %d",
        b"Content-Length:%d",
        b"Content-Length:   %d  ",
        b"Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8",
        b"Content-Type: application/json\r\nCONTENT-LENGTH: %d",
    ],
)
def test_decoder_reads_canonical_and_other_headers_alike(header: bytes, chunk_size: int | None) -> None:
    """Any valid header block gives the same messages, however the bytes are cut."""
    body = b'{"a":[1,"\xc3\xa9"]}'
    data = (header % len(body)) + b"\r\n\r\n" + body
    assert decode_all(data * 3, chunk_size) == [{"a": [1, "é"]}] * 3


@pytest.mark.parametrize("chunk_size", CHUNK_SIZES)
def test_decoder_returns_every_frame_of_a_read_in_order(chunk_size: int | None) -> None:
    """Several frames in one read all come back, in order, split or not."""
    messages = [{"id": n, "text": "x" * n} for n in range(20)]
    data = b"".join(encode_message(m) for m in messages)
    assert decode_all(data, chunk_size) == messages


def test_decoder_keeps_a_partial_frame_until_the_rest_arrives() -> None:
    """A feed that ends inside a frame returns the complete ones; the next feed finishes it."""
    data = encode_message({"first": 1}) + encode_message({"second": 2})
    for cut in range(len(data) + 1):
        decoder = FrameDecoder()
        got = decoder.feed(data[:cut])
        got += decoder.feed(data[cut:])
        decoder.end()
        assert got == [{"first": 1}, {"second": 2}], cut


@pytest.mark.parametrize("chunk_size", CHUNK_SIZES)
@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b"Content-Length 2\r\n\r\n{}", "malformed header line 'Content-Length 2'"),
        (b"Content-Length: twelve\r\n\r\n{}", "Content-Length is not a number: 'twelve'"),
        (b"Content-Length: 1 2\r\n\r\n{}", "Content-Length is not a number: '1 2'"),
        (b"Content-Length: -5\r\n\r\n{}", "Content-Length is not a number: '-5'"),
        (b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n{}", "Content-Length is not a number: '999"),
        (b"Content-Length: " + b"9" * 19 + b"\r\n\r\n{}", "message of 9999999999999999999 bytes exceeds"),
        (b"Content-Length: 2\r\nbad\r\n\r\n{}", "malformed header line 'bad'"),
        (b"Content-Type: application/json\r\n\r\n{}", "header block has no Content-Length"),
        (b"Content-Length: 11\r\n\r\n", "message of 11 bytes exceeds the limit of 10 bytes"),
        (b"Content-Length: 5\r\n", "stream ended inside a header: 'Content-Length: 5\\r\\n'"),
        (b'Content-Length: 10\r\n\r\n{"a', "stream ended after 3 of 10 body bytes"),
        (b"Content-Length: 4\r\n\r\n{no}", "body is not valid JSON"),
        (b"Content-Length: 3\r\n\r\n[1]", "body is JSON but not an object"),
        (b"Content-Length: 0\r\n\r\n", "body is not valid JSON"),
    ],
)
def test_decoder_rejects_bad_frames_with_the_same_messages(data: bytes, error: str, chunk_size: int | None) -> None:
    """Bad headers, sizes, bodies and cut streams raise the errors read_message raises."""
    with pytest.raises(FramingError) as caught:
        decode_all(data, chunk_size, max_bytes=10)
    assert str(caught.value).startswith(error)


def test_decoder_rejects_a_header_block_that_never_ends() -> None:
    """More header bytes than MAX_HEADER_BYTES without an empty line is an error, not a wait."""
    from extension_protocol.framing import MAX_HEADER_BYTES

    decoder = FrameDecoder()
    with pytest.raises(FramingError, match="header block is too long"):
        for _ in range(MAX_HEADER_BYTES // 1000 + 2):
            decoder.feed(b"X-Padding: " + b"a" * 989)


def feed_without_end(data: bytes, chunk_size: int | None, **limits: int) -> list[Any]:
    """Feed ``data`` to a fresh decoder in chunks, never ending the stream: a peer that keeps its
    connection open. What the decoder has not refused by the last byte, it is waiting for."""
    decoder = FrameDecoder(**limits)
    step = chunk_size or max(len(data), 1)
    messages: list[Any] = []
    for start in range(0, len(data), step):
        messages.extend(decoder.feed(data[start : start + step]))
    return messages


@pytest.mark.parametrize("chunk_size", CHUNK_SIZES)
@pytest.mark.parametrize(
    ("header", "values"),
    [
        (b"Content-Length: 2\r\nContent-Length: 100000", "'2' and '100000'"),
        (b"Content-Length: 100000\r\nContent-Length: 2", "'100000' and '2'"),
        (b"Content-Length: 2\r\nContent-Length: 2", "'2' and '2'"),
        (b"content-length: 2\r\nContent-Type: application/json\r\nCONTENT-LENGTH:  2 ", "'2' and '2'"),
        (b"Content-Length: 2\r\nContent-Length: x", "'2' and 'x'"),
    ],
    ids=["small-then-large", "large-then-small", "same-twice", "any-case", "second-not-a-number"],
)
def test_a_header_block_with_content_length_twice_is_refused_before_any_body_byte_is_awaited(
    header: bytes, values: str, chunk_size: int | None
) -> None:
    """Either length would be a guess, and the larger one waits forever for bytes that never come:
    the header block is refused as soon as it is complete, naming both values."""
    with pytest.raises(FramingError) as caught:
        feed_without_end(header + b"\r\n\r\n{}", chunk_size)
    assert str(caught.value) == (
        f"Content-Length appears twice in one header block ({values}); a frame has exactly one"
    )
    with pytest.raises(FramingError, match=r"^Content-Length appears twice"):
        read_one(header + b"\r\n\r\n{}", eof=False)


@pytest.mark.parametrize("chunk_size", [None, 64 * 1024, 4096])
def test_a_200_kb_header_line_is_refused_even_when_an_empty_line_ends_it(chunk_size: int | None) -> None:
    """However the bytes are cut, a header block over MAX_HEADER_BYTES is refused, not read:
    whether its empty line came in the same read or never comes."""
    from extension_protocol.framing import MAX_HEADER_BYTES

    body = b'{"jsonrpc":"2.0","id":1,"method":"m"}'
    padded = b"Content-Length: %d\r\nX-Padding: %s\r\n\r\n%s" % (len(body), b"a" * 200_000, body)
    with pytest.raises(FramingError, match=r"^header block is too long: "):
        feed_without_end(padded, chunk_size)
    with pytest.raises(FramingError, match=r"^header block is too long: "):
        feed_without_end(padded[: -len(body) - 4], chunk_size)
    header_bytes = len(padded) - len(body) - 4
    with pytest.raises(FramingError) as caught:
        read_one(padded, limit=1024 * 1024)
    assert str(caught.value) == f"header block is too long: {header_bytes} bytes, over the limit of {MAX_HEADER_BYTES}"


@pytest.mark.parametrize("chunk_size", CHUNK_SIZES)
@pytest.mark.parametrize(
    "data",
    [
        b"Content-Length: 2\n\n{}",
        b"Content-Length: 2\r\nContent-Type: application/json\n\n{}",
        b"Content-Length: 2\n\r\n\r\n{}",
        b"X-A: b\rContent-Length: 2\r\n\r\n{}",
        b"Content-Length: 2\r\r\n\r\n{}",
    ],
    ids=["lf-only", "lf-after-crlf", "lf-then-crlf", "bare-cr", "cr-cr-lf"],
)
def test_a_header_line_break_other_than_crlf_is_refused_without_waiting_for_more(
    data: bytes, chunk_size: int | None
) -> None:
    """A header whose lines end in \\n alone would wait forever for \\r\\n\\r\\n; a bare \\r hides
    a line inside another: either is refused at once, saying what header lines end in."""
    with pytest.raises(FramingError, match=r"^header block has a line break other than \\r\\n: .*; header lines end"):
        feed_without_end(data, chunk_size)


SMALL_HEADER_BYTES = 128
SMALL_DEPTH = 8


FLAWS = ["too-deep", "far-too-deep", "twice", "bad-value", "no-length", "bare-lf", "bare-cr", "too-long", "no-colon"]


@st.composite
def hostile_frames(draw: st.DrawFn) -> tuple[bytes, Any]:
    """One frame and what the decoder must make of it: the message, or ``None`` for a
    FramingError. Its header spells Content-Length in any case and any valid way, among other
    headers; half the frames have one or two flaws (``FLAWS``), so both sides are tried."""
    flaws = draw(st.just(frozenset[str]()) | st.frozensets(st.sampled_from(FLAWS), min_size=1, max_size=2))
    depth = draw(st.integers(2, SMALL_DEPTH))
    if "too-deep" in flaws:
        depth = draw(st.integers(SMALL_DEPTH + 1, 4 * SMALL_DEPTH))
    if "far-too-deep" in flaws:
        depth = 3000  # past the JSON decoder's own recursion
    body = nested(depth, kind=draw(st.sampled_from(["list", "object"])))
    size = len(body)
    name = draw(st.sampled_from([b"Content-Length", b"content-length", b"CONTENT-LENGTH", b" Content-length "]))
    value = draw(st.sampled_from([b"%d" % size, b"  %d\t" % size]))
    if "bad-value" in flaws:
        too_large = b"%d" % (MAX_MESSAGE_BYTES + 1)
        value = draw(st.sampled_from([b"-%d" % size, b"+%d" % size, b"000%d" % size, b"%dx" % size, b"", too_large]))
    lines = [] if "no-length" in flaws else [name + b":" + value]
    if "twice" in flaws:
        for _ in range(2 - len(lines)):
            lines.append(b"Content-Length: " + draw(st.sampled_from([b"%d" % size, b"%d" % (size + 50)])))
    lines += draw(st.lists(st.sampled_from([b"Content-Type: application/json", b"X-A: b"]), max_size=2))
    if "too-long" in flaws:
        lines.append(b"X-Padding: " + b"a" * draw(st.sampled_from([SMALL_HEADER_BYTES, 200_000])))
    if "no-colon" in flaws:
        lines.append(b"garbage")
    if flaws & {"bare-lf", "bare-cr"}:
        lines += [b"X-A: b"] * (2 - len(lines))  # a line break needs two lines
    lines = draw(st.permutations(lines))
    breaks = [b"\r\n"] * (len(lines) - 1)
    for flaw, bare in (("bare-lf", b"\n"), ("bare-cr", b"\r")):
        if flaw in flaws:
            breaks[draw(st.integers(0, len(breaks) - 1))] = bare
    header = lines[0] if lines else b""
    for line_break, line in zip(breaks, lines[1:], strict=True):
        header += line_break + line
    return header + b"\r\n\r\n" + body, None if flaws else json.loads(body)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame_and_outcome=hostile_frames(), chunk=st.integers(1, 64))
def test_a_hostile_header_or_nesting_yields_the_message_or_a_framing_error_never_a_wait(
    frame_and_outcome: tuple[bytes, Any], chunk: int
) -> None:
    """Sizes, duplicates, bad values, any case, missing CRLF, padding and nesting: by the last
    byte the decoder has either the message or refused the frame, whatever the chunking; it
    never waits for more."""
    data, expected = frame_and_outcome
    limits = {"max_depth": SMALL_DEPTH, "max_header_bytes": SMALL_HEADER_BYTES}
    for size in (None, chunk):
        if expected is None:
            with pytest.raises(FramingError):
                feed_without_end(data, size, **limits)
        else:
            assert feed_without_end(data, size, **limits) == [expected]


@pytest.mark.parametrize(
    "body",
    [
        b'{"a":"\xed\xa0\x80"}',  # a UTF-8 encoded surrogate: json.loads lets it through
        b'\xef\xbb\xbf{"a":1}',  # a UTF-8 byte order mark
        '{"a":1}'.encode("utf-16-le"),
        '{"a":1}'.encode("utf-16"),
        b' \n{"a":1}',
        b'{"a":1} \t\r\n',  # whitespace after the object
    ],
)
def test_decoder_accepts_the_bodies_json_loads_accepts(body: bytes) -> None:
    """A body is read exactly as json.loads reads bytes, whatever it starts with."""
    data = b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    assert decode_all(data, None) == [json.loads(body)]
    assert read_one(data) == json.loads(body)


def test_decoder_rejects_invalid_utf8_like_json_loads() -> None:
    """Invalid UTF-8 is 'not valid JSON' with json.loads's own reason."""
    body = b'{"a":"\xff"}'
    try:
        json.loads(body)
    except UnicodeDecodeError as exc:
        reason = str(exc)
    with pytest.raises(FramingError) as caught:
        decode_all(b"Content-Length: %d\r\n\r\n%s" % (len(body), body), None)
    assert str(caught.value) == f"body is not valid JSON: {reason}"


# -- nesting depth -------------------------------------------------------------------------


def nested(depth: int, *, kind: str) -> bytes:
    """A JSON object ``depth`` levels deep (itself the first level), of lists or of objects inside."""
    if kind == "list":
        return b'{"a":' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"
    return b'{"a":' * (depth - 1) + b"{}" + b"}" * (depth - 1)


@pytest.mark.parametrize("kind", ["list", "object"])
def test_a_body_at_max_depth_passes_and_one_level_more_is_a_framing_error(kind: str) -> None:
    """MAX_DEPTH levels are accepted; one more says how deep is allowed. Brackets in a string
    beside them (so that counting brackets cannot settle it) change neither."""
    assert MAX_DEPTH == 100
    padding = b',"pad":"' + b"[{" * MAX_DEPTH + b'"}'
    for depth, ok in ((MAX_DEPTH, True), (MAX_DEPTH + 1, False)):
        for body in (nested(depth, kind=kind), nested(depth, kind=kind)[:-1] + padding):
            for read in (lambda data: decode_all(data, None)[0], read_one):
                if ok:
                    assert read(frame(body)) == json.loads(body)
                else:
                    with pytest.raises(FramingError, match=f"^body is nested deeper than {MAX_DEPTH} levels$"):
                        read(frame(body))


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100_000,  # what made json.loads raise RecursionError out of the reader
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
        b'{"a":' + b"[" * 100_000,
    ],
    ids=["unterminated-lists", "lists", "objects", "in-an-object"],
)
@pytest.mark.parametrize("chunk_size", [None, 4096])
def test_a_body_nested_100000_deep_is_a_framing_error_not_a_recursion_error(
    body: bytes, chunk_size: int | None
) -> None:
    """However the deep body is shaped, the reader raises FramingError and nothing else."""
    with pytest.raises(FramingError, match=f"^body is nested deeper than {MAX_DEPTH} levels$"):
        decode_all(frame(body), chunk_size)
    with pytest.raises(FramingError, match=f"^body is nested deeper than {MAX_DEPTH} levels$"):
        read_one(frame(body))


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    """Text full of brackets (source code in a tool result) is one level deep, whatever it holds."""
    message = {"text": "[" * 5000 + "{" * 5000, "keys": {"[[[[": "{{{{" * 100}, "list": ["[", "{"] * 200}
    data = encode_message(message)
    assert decode_all(data, None) == [message]
    assert read_one(data) == message


def test_max_depth_is_a_parameter_of_the_decoder_and_of_read_message() -> None:
    """A smaller limit is applied as precisely as the default one."""
    ok, too_deep = frame(b'{"a":{"b":[]}}'), frame(b'{"a":{"b":[[]]}}')
    decoder = FrameDecoder(max_depth=3)
    assert decoder.feed(ok) == [{"a": {"b": []}}]
    with pytest.raises(FramingError, match=r"^body is nested deeper than 3 levels$"):
        decoder.feed(too_deep)
    assert asyncio.run(_read(ok, max_depth=3)) == {"a": {"b": []}}
    with pytest.raises(FramingError, match=r"^body is nested deeper than 3 levels$"):
        asyncio.run(_read(too_deep, max_depth=3))


def test_a_number_too_long_to_convert_is_a_framing_error() -> None:
    """json raises a plain ValueError for an integer of more digits than Python converts: still 'not valid JSON'."""
    data = frame(b'{"a":' + b"1" * 5000 + b"}")
    with pytest.raises(FramingError, match=r"^body is not valid JSON: "):
        decode_all(data, None)
    with pytest.raises(FramingError, match=r"^body is not valid JSON: "):
        read_one(data)


# -- what goes out: text UTF-8 cannot carry, and the size limit ----------------------------


def test_lone_surrogates_are_sent_as_replacement_characters_and_pairs_stay_characters() -> None:
    """os.listdir gives '\\udcff' for a byte that is not UTF-8: the frame carries U+FFFD instead of
    failing; a pair split into two surrogates is joined back into its character."""
    name = b"caf\xff.txt".decode("utf-8", "surrogateescape")
    message = {"text": name, "lone": "\ud800", "pair": "\ud83d\ude00", name: "key too"}
    assert decode_all(encode_message(message), None) == [
        {"text": "caf\ufffd.txt", "lone": "\ufffd", "pair": "\U0001f600", "caf\ufffd.txt": "key too"}
    ]


def test_a_message_over_the_limit_is_refused_with_its_size_and_the_limit() -> None:
    """Nothing is built for the peer to refuse: the caller learns the size and the limit."""
    assert decode_all(encode_message({"a": "x" * 100}, max_bytes=108), None) == [{"a": "x" * 100}]
    with pytest.raises(
        MessageTooLarge, match=r"^the message is 109 bytes, over the limit of 108 bytes per message$"
    ) as caught:
        encode_message({"a": "x" * 101}, max_bytes=108)
    assert (caught.value.size, caught.value.limit) == (109, 108)


# -- properties: whatever the bytes, frames or FramingError, and bounded buffering -----------

SMALL_BODY_LIMIT = 64
SMALL_HEADER_LIMIT = 48

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)
_pieces = st.one_of(
    st.binary(max_size=80),
    st.builds(lambda value: encode_message({"v": value}), _json_values),
    st.builds(lambda n: b"Content-Length: %d\r\n\r\n" % n, st.integers(-5, 200)),
    st.sampled_from([b"\r\n", b"\r\n\r\n", b"{", b"[" * 40, b"]" * 40, b"Content-Length: ", b"\xff\xfe", b"\x00"]),
)


@pytest.mark.slow
@settings(max_examples=500, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(_pieces, max_size=12), cuts=st.lists(st.integers(0, 400), max_size=12))
def test_any_byte_stream_in_any_chunking_yields_frames_or_a_framing_error_and_bounded_buffering(
    pieces: list[bytes], cuts: list[int]
) -> None:
    """Fed to the decoder in arbitrary chunks: messages (objects) or FramingError, nothing else;
    between feeds it never holds more than the larger of the body and header limits."""
    stream = b"".join(pieces)
    bounds = sorted({0, len(stream), *(min(cut, len(stream)) for cut in cuts)})
    decoder = FrameDecoder(SMALL_BODY_LIMIT, max_depth=8, max_header_bytes=SMALL_HEADER_LIMIT)
    try:
        for start, end in itertools.pairwise(bounds):
            for message in decoder.feed(stream[start:end]):
                assert isinstance(message, dict)
            assert decoder.buffered <= max(SMALL_BODY_LIMIT, SMALL_HEADER_LIMIT)
        decoder.end()
    except FramingError:
        pass


@settings(max_examples=200, deadline=None, database=None)
@given(values=st.lists(_json_values, max_size=6), chunk=st.integers(1, 50))
def test_frames_of_any_values_come_back_whole_in_any_chunking(values: list[Any], chunk: int) -> None:
    """The decoder gives back exactly what was encoded, however the bytes are cut."""
    messages = [{"v": value} for value in values]
    assert decode_all(b"".join(encode_message(m) for m in messages), chunk) == messages


@settings(max_examples=300, deadline=None, database=None)
@given(text=st.text(alphabet=st.characters(categories=["Cs"]) | st.characters()))
def test_any_text_with_or_without_lone_surrogates_encodes_and_decodes_as_text(text: str) -> None:
    """Whatever str a result holds, it becomes a frame; what arrives is the same text with each
    lone surrogate replaced by U+FFFD."""
    [decoded] = decode_all(encode_message({"text": text}), None)
    expected = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    assert decoded == {"text": expected}


@pytest.mark.parametrize("body", [b'{"a":1}x', b'{"a":1} {}', b'{"a":1}\x00', b'{"a":', b"{]"])
def test_a_body_with_anything_but_whitespace_after_its_object_or_a_broken_object_is_a_framing_error(
    body: bytes,
) -> None:
    """What json.loads refuses (extra data, a cut or broken object) the decoder refuses too."""
    with pytest.raises(json.JSONDecodeError):
        json.loads(body)
    with pytest.raises(FramingError, match="not valid JSON"):
        decode_all(b"Content-Length: %d\r\n\r\n%s" % (len(body), body), None)


def test_a_message_nested_deeper_than_asked_is_refused_before_a_byte_is_built() -> None:
    """At the limit it goes out; one level more is refused, saying the limit (brackets inside
    strings count for nothing); without a limit anything JSON can hold goes."""
    at_limit = json.loads(nested(MAX_DEPTH, kind="list"))
    assert decode_all(encode_message(at_limit, max_depth=MAX_DEPTH), None) == [at_limit]
    text = {"text": "[" * 5000}
    assert decode_all(encode_message(text, max_depth=2), None) == [text]
    too_deep = json.loads(nested(MAX_DEPTH + 1, kind="object"))
    with pytest.raises(MessageTooDeep) as caught:
        encode_message(too_deep, max_depth=MAX_DEPTH)
    assert (
        str(caught.value) == f"the message nests arrays and objects deeper than the {MAX_DEPTH} levels the peer accepts"
    )
    assert caught.value.limit == MAX_DEPTH
    assert encode_message(too_deep).endswith(nested(MAX_DEPTH + 1, kind="object"))


def test_a_message_that_refers_to_itself_is_refused_with_a_value_error() -> None:
    """A cycle cannot be encoded: the sender gets a ValueError it already handles, not a crash."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": "m"}
    message["params"] = message
    with pytest.raises(ValueError, match="refers to itself"):
        encode_message(message)


def test_a_decoder_drops_bodies_that_begin_as_told_unread_and_still_checks_their_framing() -> None:
    decoder = FrameDecoder()
    decoder.skip = (b'{"method":"noise"',)
    noise = encode_message({"method": "noise", "params": {"n": 1}})
    wanted = encode_message({"method": "wanted"})
    assert decoder.feed(noise + wanted + noise[:10]) == [{"method": "wanted"}]
    assert decoder.feed(noise[10:]) == []
    # Unread, yet not unchecked: a broken header still ends the stream.
    with pytest.raises(FramingError):
        decoder.feed(b"Content-Length: x\r\n\r\n")
