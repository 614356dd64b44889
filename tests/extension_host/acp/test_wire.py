"""ACP's lines in front of the JSON-RPC connection: each good line becomes one frame, each bad one
one error answer, and what comes after a bad line is read as usual."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from extension_host.acp.wire import LineReader, LineWriter, _lines
from extension_protocol.framing import FrameDecoder, encode_message


class _Source:
    def deliver_to(self, on_data: Callable[[bytes], None], on_end: Callable[[Exception | None], None]) -> None:
        self.on_data = on_data


def _reader(max_line_bytes: int = 1024) -> tuple[_Source, list[bytes], list[bytes]]:
    source, frames, refused = _Source(), list[bytes](), list[bytes]()
    reader = LineReader(source, refused.append, max_line_bytes)
    reader.deliver_to(frames.append, lambda _error: None)
    return source, frames, refused


def _messages(frames: list[bytes]) -> list[dict[str, Any]]:
    return FrameDecoder().feed(b"".join(frames))


def test_lines_cut_anywhere_become_the_same_messages() -> None:
    source, frames, refused = _reader()
    data = b'{"a": 1}\r\n\n{"b": [2]}\n{"c"'
    for at in range(len(data)):
        source.on_data(data[at : at + 1])
    source.on_data(b": 3}\n")
    assert _messages(frames) == [{"a": 1}, {"b": [2]}, {"c": 3}]
    assert refused == []


def test_a_bad_line_is_refused_once_with_its_id_when_readable_and_the_next_line_is_read() -> None:
    source, frames, refused = _reader()
    source.on_data(
        b'{"jsonrpc": "2.0", "id": 4, "method": oops}\n[1]\n' + b"[" * 300 + b"]" * 300 + b'\n{"ok": true}\n'
    )
    assert _messages(frames) == [{"ok": True}]
    answers = [json.loads(line) for line in refused]
    assert [answer["id"] for answer in answers] == [4, None, None]
    assert {answer["error"]["code"] for answer in answers} == {-32700}


def test_an_overlong_line_is_dropped_as_it_arrives_and_answered_once() -> None:
    source, frames, refused = _reader(max_line_bytes=100)
    source.on_data(b'{"id": "x", "pad": "' + b"a" * 90)
    for _ in range(50):
        source.on_data(b"a" * 100)
    source.on_data(b'"}\n{"next": 1}\n')
    assert _messages(frames) == [{"next": 1}]
    (answer,) = [json.loads(line) for line in refused]
    assert answer["id"] == "x"
    assert answer["error"]["message"] == "line longer than 100 bytes"


@given(st.binary(max_size=300))
def test_no_bytes_make_the_reader_raise_or_hand_on_anything_but_objects(data: bytes) -> None:
    source, frames, refused = _reader(max_line_bytes=200)
    source.on_data(data + b"\n")
    assert all(isinstance(message, dict) for message in _messages(frames))
    assert all(json.loads(line)["error"]["code"] == -32700 for line in refused)


@given(st.lists(st.dictionaries(st.text(max_size=5), st.text(max_size=20) | st.integers()), max_size=5))
def test_frames_written_become_one_line_each(messages: list[dict[str, object]]) -> None:
    data = b"".join(encode_message({"jsonrpc": "2.0", "params": message}) for message in messages)
    if not messages:
        return
    lines = _lines(data).split(b"\n")
    assert lines[-1] == b""
    assert [json.loads(line)["params"] for line in lines[:-1]] == messages


def test_the_writer_passes_the_pipes_transport_to_the_connection() -> None:
    class Pipe:
        transport = object()

    assert LineWriter(Pipe()).transport is Pipe.transport
