"""Content by reference: URIs under the session's, text and bytes kept as given, the oldest
forgotten first, and a clear ContentNotFound for what is gone."""

from __future__ import annotations

import pytest

from extension_host.serve.contents import ContentStore, is_content_uri
from extension_host.serve.errors import CONTENT_NOT_FOUND, ServeError


def test_a_piece_gets_a_content_uri_under_its_session_and_reads_back_as_given() -> None:
    store = ContentStore()
    text_uri = store.put("copilot:/s-1", "a long tool output", "text/plain")
    image_uri = store.put("copilot:/s-1", b"\x89PNG\r\n", "image/png")
    assert text_uri.startswith("copilot:/s-1/content/") and image_uri.startswith("copilot:/s-1/content/")
    assert text_uri != image_uri
    assert store.get(text_uri) == ("a long tool output", "text/plain")
    assert store.get(image_uri) == (b"\x89PNG\r\n", "image/png")
    assert is_content_uri(text_uri) and not is_content_uri("file:///srv/project/content/x")


def test_the_oldest_pieces_are_forgotten_first_when_the_store_is_full() -> None:
    store = ContentStore(max_bytes=10, max_items=3)
    first = store.put("s:/a", b"12345", "application/octet-stream")
    second = store.put("s:/a", b"12345", "application/octet-stream")
    third = store.put("s:/a", b"1", "application/octet-stream")  # 11 bytes: the first goes
    with pytest.raises(ServeError) as gone:
        store.get(first)
    assert gone.value.code == CONTENT_NOT_FOUND
    assert f"content {first} not found" in gone.value.message
    assert store.get(second)[0] == b"12345" and store.size == 6
    for _ in range(3):
        store.put("s:/a", b"", "text/plain")
    assert len(store) == 3  # by count too
    with pytest.raises(ServeError):
        store.get(third)


def test_text_is_counted_as_utf8_and_a_piece_larger_than_the_store_is_refused() -> None:
    store = ContentStore(max_bytes=4)
    store.put("s:/a", "éé", "text/plain")
    assert store.size == 4
    with pytest.raises(ValueError, match="content of 6 bytes for s:/a is larger than the 4 bytes"):
        store.put("s:/a", "ééé", "text/plain")


def test_forgetting_a_session_drops_its_pieces_only() -> None:
    store = ContentStore()
    mine = store.put("copilot:/one", "x", "text/plain")
    other = store.put("copilot:/one-more", "y", "text/plain")
    assert store.forget("copilot:/one") == 1
    with pytest.raises(ServeError):
        store.get(mine)
    assert store.get(other) == ("y", "text/plain")


def test_a_named_piece_put_again_replaces_the_first_and_an_unusable_name_gets_a_number() -> None:
    store = ContentStore()
    first = store.put("copilot:/s-1", "one", "text/plain", name="tool-c1")
    second = store.put("copilot:/s-1", "two!", "text/plain", name="tool-c1")
    assert first == second == "copilot:/s-1/content/tool-c1"
    assert store.get(first) == ("two!", "text/plain")
    assert (len(store), store.size) == (1, 4)
    odd = store.put("copilot:/s-1", "x", "text/plain", name="../escape")
    assert odd.startswith("copilot:/s-1/content/c-") and is_content_uri(odd)
