"""Front matter of a Markdown file: the ``---`` block at its top, read as the small part of YAML
such files use, and the body after it.

:func:`split_front_matter` finds the block (after an optional byte-order mark, with ``\\n`` or
``\\r\\n`` line ends); :func:`parse_front_matter` reads its top-level ``key: value`` lines. Only
the values of the keys asked for are read, so anything else a file carries for other tools
(nested mappings, anchors) is skipped whole. A value is a plain, ``'single'`` or ``"double"``
quoted scalar (a trailing ``# comment`` dropped), a flow list ``[a, 'b']``, a block list
(``- a`` lines indented under the key) or a ``|``/``>`` block scalar; plain scalars ``true``,
``false``, ``null``, ``~`` and numbers are read as such. What it cannot read is a
:class:`FrontMatterError` whose message says which line and why.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Final

__all__ = [
    "FrontMatter",
    "FrontMatterError",
    "Value",
    "parse_front_matter",
    "split_front_matter",
]

Value = str | int | float | bool | None | list["Value"]
"""A value read from front matter."""

_FENCE: Final = "---"
_KEY_LINE: Final = re.compile(r"([^\s#:][^:]*?)\s*:(?:\s+(.*))?\Z")
_INT: Final = re.compile(r"[-+]?[0-9]+\Z")
_FLOAT: Final = re.compile(r"[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\Z")
_BLOCK_SCALAR: Final = re.compile(r"([|>])[-+]?\Z")
_ESCAPES: Final = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", "0": "\0", "r": "\r"}


class FrontMatterError(ValueError):
    """Front matter that cannot be read; the message names the line and what is wrong."""


@dataclass(frozen=True, slots=True)
class FrontMatter:
    """A file's front matter lines (without the fences) and its body."""

    lines: tuple[str, ...]
    first_line: int
    """The file's line number of ``lines[0]``."""
    body: str


def split_front_matter(text: str) -> FrontMatter | None:
    """The front matter block at the top of ``text`` and the body after it; ``None`` when the
    text does not open with a ``---`` line.

    Raises:
        FrontMatterError: the block is opened but never closed.
    """
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").split("\n")
    if lines[0].rstrip() != _FENCE:
        return None
    for end in range(1, len(lines)):
        if lines[end].rstrip() == _FENCE:
            return FrontMatter(tuple(lines[1:end]), 2, "\n".join(lines[end + 1 :]))
    raise FrontMatterError("the front matter opened by '---' on line 1 is never closed by a '---' line")


def parse_front_matter(matter: FrontMatter, keys: Collection[str]) -> dict[str, Value]:
    """The values of ``keys`` among the front matter's top-level keys (absent keys left out).

    Raises:
        FrontMatterError: a top-level line is not ``key: value``, a key is given twice, or the
            value of a key asked for cannot be read.
    """
    found: dict[str, Value] = {}
    seen: set[str] = set()
    lines = matter.lines
    index = 0
    while index < len(lines):
        line = lines[index]
        number = matter.first_line + index
        index += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] in " \t":
            raise FrontMatterError(f"line {number}: indented, but no key above it takes a nested value")
        match = _KEY_LINE.match(line.rstrip())
        if match is None:
            raise FrontMatterError(f"line {number}: expected 'key: value', found {line.strip()[:60]!r}")
        key, rest = _unquote_key(match.group(1)), (match.group(2) or "").strip()
        if key in seen:
            raise FrontMatterError(f"line {number}: key {key!r} is given twice")
        seen.add(key)
        nested_start = index
        while index < len(lines) and (not lines[index].strip() or lines[index][0] in " \t"):
            index += 1
        if key in keys:
            found[key] = _value(rest, list(lines[nested_start:index]), number)
    return found


def _unquote_key(key: str) -> str:
    if len(key) >= 2 and key[0] == key[-1] and key[0] in "'\"":
        return key[1:-1]
    return key


def _value(rest: str, nested: list[str], number: int) -> Value:
    """The value of the key on line ``number``: ``rest`` after its colon, ``nested`` the
    indented (or blank) lines under it."""
    body = [line for line in nested if line.strip() and not line.lstrip().startswith("#")]
    block = _BLOCK_SCALAR.match(rest)
    if block is not None:
        return _block_scalar(block.group(1), rest, nested)
    if rest and not rest.startswith("#"):
        if body and rest[0] not in "'\"[":
            rest = " ".join([rest, *(line.strip() for line in body)])  # a plain scalar over lines
        elif body:
            raise FrontMatterError(f"line {number + 1}: unexpected indented line after the value")
        return _inline(rest, number)
    if not body:
        return None
    if all(line.lstrip().startswith("-") for line in body):
        return [_inline(line.lstrip()[1:].strip(), number) for line in body]
    raise FrontMatterError(f"line {number}: a nested mapping is not a value this key takes")


def _block_scalar(style: str, header: str, nested: list[str]) -> str:
    while nested and not nested[-1].strip():
        nested = nested[:-1]
    indents = [len(line) - len(line.lstrip()) for line in nested if line.strip()]
    cut = min(indents, default=0)
    lines = [line[cut:] if line.strip() else "" for line in nested]
    if style == "|":
        text = "\n".join(lines)
    else:
        text = " ".join(line for line in lines if line) if all(lines) else _fold(lines)
    return text if header.endswith("-") else text + "\n"


def _fold(lines: list[str]) -> str:
    out: list[str] = []
    for line in lines:
        if not line:
            out.append("\n")
        elif out and not out[-1].endswith("\n"):
            out.append(" " + line)
        else:
            out.append(line)
    return "".join(out)


def _inline(text: str, number: int) -> Value:
    if not text:
        return None
    if text[0] == "[":
        return _flow_list(text, number)
    if text[0] in "'\"":
        value, rest = _quoted(text, number)
        if rest.strip() and not rest.strip().startswith("#"):
            raise FrontMatterError(f"line {number}: unexpected {rest.strip()[:30]!r} after a quoted value")
        return value
    if text[0] in "{&*!|>%@`":
        raise FrontMatterError(f"line {number}: {text[:30]!r}: write the value as plain text, quoted or a list")
    return _plain(_strip_comment(text))


def _strip_comment(text: str) -> str:
    match = re.search(r"\s#", text)
    return (text[: match.start()] if match else text).strip()


def _plain(text: str) -> Value:
    if text in ("null", "Null", "NULL", "~", ""):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text):
        return float(text)
    return text


def _quoted(text: str, number: int) -> tuple[str, str]:
    """The quoted string ``text`` opens with, and what follows its closing quote."""
    quote = text[0]
    out: list[str] = []
    index = 1
    while index < len(text):
        char = text[index]
        if quote == "'" and char == "'":
            if text[index + 1 : index + 2] == "'":
                out.append("'")
                index += 2
                continue
            return "".join(out), text[index + 1 :]
        if quote == '"' and char == "\\" and index + 1 < len(text):
            escaped = text[index + 1]
            out.append(_ESCAPES.get(escaped, "\\" + escaped))
            index += 2
            continue
        if quote == '"' and char == '"':
            return "".join(out), text[index + 1 :]
        out.append(char)
        index += 1
    raise FrontMatterError(f"line {number}: the string opened by {quote} is never closed on its line")


def _flow_list(text: str, number: int) -> list[Value]:
    items: list[Value] = []
    rest = text[1:].lstrip()
    while True:
        if not rest:
            raise FrontMatterError(f"line {number}: the list opened by '[' is never closed on its line")
        if rest[0] == "]":
            tail = rest[1:].strip()
            if tail and not tail.startswith("#"):
                raise FrontMatterError(f"line {number}: unexpected {tail[:30]!r} after the list")
            return items
        if rest[0] in "'\"":
            item, rest = _quoted(rest, number)
            items.append(item)
        elif rest[0] in "[{":
            raise FrontMatterError(f"line {number}: a list may hold only plain or quoted values")
        else:
            end = min((rest.find(c) for c in ",]" if c in rest), default=-1)
            if end < 0:
                raise FrontMatterError(f"line {number}: the list opened by '[' is never closed on its line")
            items.append(_plain(rest[:end].strip()))
            rest = rest[end:]
        rest = rest.lstrip()
        if rest.startswith(","):
            rest = rest[1:].lstrip()
        elif not rest.startswith("]"):
            raise FrontMatterError(f"line {number}: expected ',' or ']' in the list, found {rest[:20]!r}")
