"""ACP's lines for the JSON-RPC connection: each good line becomes one message, each bad one one
error answer, what comes after a bad line is read as usual, and each message sent is one line."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from extension_host.acp.wire import LineDecoder, line
from extension_protocol.framing import encode_body


def _reader(max_line_bytes: int = 1024) -> tuple[Callable[[bytes], None], list[dict[str, Any]], list[bytes]]:
    messages, refused = list[dict[str, Any]](), list[bytes]()
    decoder = LineDecoder(refused.append, max_line_bytes)

    def feed(data: bytes) -> None:
        messages.extend(decoder.feed(data))

    return feed, messages, refused


def test_lines_cut_anywhere_become_the_same_messages() -> None:
    feed, messages, refused = _reader()
    data = b'{"a": 1}\r\n\n{"b": [2]}\n{"c"'
    for at in range(len(data)):
        feed(data[at : at + 1])
    feed(b": 3}\n")
    assert messages == [{"a": 1}, {"b": [2]}, {"c": 3}]
    assert refused == []


def test_lines_that_begin_as_skipped_are_dropped_unread_and_the_others_read() -> None:
    decoder = LineDecoder(lambda _answer: None)
    decoder.skip = (b'{"method":"noise"',)
    assert decoder.feed(b'{"method":"noise", oops\n{"method":"kept"}\n') == [{"method": "kept"}]


def test_a_bad_line_is_refused_once_with_its_id_when_readable_and_the_next_line_is_read() -> None:
    feed, messages, refused = _reader()
    feed(b'{"jsonrpc": "2.0", "id": 4, "method": oops}\n[1]\n' + b"[" * 300 + b"]" * 300 + b'\n{"ok": true}\n')
    assert messages == [{"ok": True}]
    answers = [json.loads(line) for line in refused]
    assert [answer["id"] for answer in answers] == [4, None, None]
    assert {answer["error"]["code"] for answer in answers} == {-32700}


def test_an_overlong_line_is_dropped_as_it_arrives_and_answered_once() -> None:
    feed, messages, refused = _reader(max_line_bytes=100)
    feed(b'{"id": "x", "pad": "' + b"a" * 90)
    for _ in range(50):
        feed(b"a" * 100)
    feed(b'"}\n{"next": 1}\n')
    assert messages == [{"next": 1}]
    (answer,) = [json.loads(line) for line in refused]
    assert answer["id"] == "x"
    assert answer["error"]["message"] == "line longer than 100 bytes"


@given(st.binary(max_size=300))
def test_no_bytes_make_the_reader_raise_or_hand_on_anything_but_objects(data: bytes) -> None:
    feed, messages, refused = _reader(max_line_bytes=200)
    feed(data + b"\n")
    assert all(isinstance(message, dict) for message in messages)
    assert all(json.loads(line)["error"]["code"] == -32700 for line in refused)


@given(st.lists(st.dictionaries(st.text(max_size=5), st.text(max_size=20) | st.integers()), max_size=5))
def test_messages_written_become_one_line_each_and_read_back_the_same(messages: list[dict[str, object]]) -> None:
    data = b"".join(line(encode_body({"jsonrpc": "2.0", "params": message})) for message in messages)
    lines = data.split(b"\n")
    assert lines[-1] == b""
    assert [json.loads(one)["params"] for one in lines[:-1]] == messages
    feed, read, refused = _reader(max_line_bytes=4096)
    feed(data)
    assert [message["params"] for message in read] == messages
    assert refused == []
