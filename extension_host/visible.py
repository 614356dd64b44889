"""Text a terminal shows but never obeys: control characters made visible, JSON made inert.

Text that comes from an extension (or any other process) reaches terminals: the CLI's output
and a hook command's stderr line, which the agents show. :func:`safe_text` and :func:`safe_cell`
show control characters as visible escapes (``\\x1b``, ``\\r``, ``\\u202e``) instead of
letting the terminal act on them; :func:`json_text` and :func:`json_line` are the JSON
counterparts: the data stays exact, and the characters a terminal would act on are written as
``\\uXXXX`` escapes. Only ``re`` and ``json``: a hook command imports it on every call.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

__all__ = ["json_line", "json_text", "safe_cell", "safe_text"]

# Character classes in regular-expression syntax (the re module reads the escapes).
_BIDI_CONTROLS: Final = r"\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
"""Marks, embeddings, overrides and isolates: they reorder what is shown (a "Trojan Source"
line reads differently from what it is), so they are shown, not obeyed."""
_LONE_SURROGATES: Final = r"\ud800-\udfff"
"""An extension's JSON can carry "\\ud800"; no terminal shows one, and writing one to a UTF-8
stream fails, so they are escaped like the controls."""
_JSON_UNSAFE_CHARS: Final = r"\x7f-\x9f" + _BIDI_CONTROLS + _LONE_SURROGATES
"""DEL, C1 (``\\x9b`` is a one-byte CSI), bidi, lone surrogates: what ``json.dumps`` leaves
raw of the characters made safe here."""
_UNSAFE_CHARS: Final = r"\x00-\x08\x0b-\x1f" + _JSON_UNSAFE_CHARS
"""C0 but newline and tab (carriage return included: it rewrites the line), and the above."""

_UNSAFE: Final = re.compile(f"[{_UNSAFE_CHARS}]")
_UNSAFE_IN_CELL: Final = re.compile(f"[\\n\\t{_UNSAFE_CHARS}]")
_JSON_UNSAFE: Final = re.compile(f"[{_JSON_UNSAFE_CHARS}]")
_NAMED: Final = {"\r": "\\r", "\n": "\\n", "\t": "\\t"}


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_text(text: str) -> str:
    """``text`` with every character a terminal would act on shown as a visible escape.

    C0 controls but newline and tab (so ``\\r`` too), DEL, C1 controls such as ``\\x9b``, the
    bidi controls and lone surrogates become ``\\x1b``, ``\\r``, ``\\x9b``, ``\\u202e``...; lines and
    indentation stay. Backslashes are left alone (paths stay readable): the escapes are for
    reading, not for decoding. Applying it twice changes nothing.
    """
    return _UNSAFE.sub(_visible, text)


def safe_cell(text: str) -> str:
    """:func:`safe_text` for one-line cells and notes: newline and tab are shown as ``\\n`` and
    ``\\t`` too, so a value can neither break a table nor start a line of its own."""
    return _UNSAFE_IN_CELL.sub(_visible, text)


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def json_text(value: Any) -> str:
    """``value`` as indented JSON for ``--json``: the decoded data is exactly ``value``, and the
    text holds no character a terminal would act on.

    ``json.dumps`` escapes C0 controls; DEL, C1, the bidi controls and lone surrogates are
    written as ``\\uXXXX`` here. Outside strings JSON text is ASCII, so every such character is
    inside a string, where its escape decodes to the same character.
    """
    dumped = json.dumps(value, indent=2, ensure_ascii=False)
    return _JSON_UNSAFE.sub(_json_escape, dumped)


def json_line(value: Any) -> str:
    """:func:`json_text` on one line (compact), for output with one JSON value per line."""
    dumped = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return _JSON_UNSAFE.sub(_json_escape, dumped)
