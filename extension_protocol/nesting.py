"""How deeply JSON that comes from elsewhere may nest: the limit, the check, and a parse that applies it.

Python's ``json`` recurses once per level of arrays and objects, both ways, and so does nearly
everything that walks a parsed value afterwards (validation, rendering, encoding it again). A
document a few hundred levels deep therefore ends in :class:`RecursionError` somewhere far from
where it came in, and a reader that lets that escape dies on one line of hostile input. This
module owns :data:`MAX_DEPTH` and refuses deeper documents where they are read: :func:`loads`
never raises :class:`RecursionError`, and what it returns nests :data:`MAX_DEPTH` levels at most.

It knows JSON values and brackets; not frames, messages, logs or what the values mean.
"""

from __future__ import annotations

import json
from typing import Any, Final

__all__ = ["MAX_DEPTH", "TooDeep", "check_depth", "loads", "nests_deeper"]

MAX_DEPTH: Final = 100
"""Deepest nesting of arrays and objects accepted (``{}`` is one level, ``{"a": []}`` two). No
message of the protocol and no event comes close; a hostile document could otherwise exhaust the
decoder's recursion. Keep it well under Python's recursion limit: a document deeper than the
decoder can go is refused whatever this says."""


class TooDeep(ValueError):
    """A JSON document nests arrays and objects deeper than ``limit`` levels."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"nested deeper than {limit} levels")
        self.limit: Final = limit


def nests_deeper(value: Any, max_depth: int) -> bool:
    """Whether ``value`` (parsed JSON) has arrays and objects nested more than ``max_depth`` levels.

    Level by level with a list, not a recursion: the point is to stay away from the recursion
    limit. (Cheaper than a stack of (node, depth) pairs: nothing is built per container.)
    """
    if type(value) is not dict and type(value) is not list:
        return False
    level: list[Any] = [value]
    for _ in range(max_depth):
        below: list[Any] = []
        add = below.append
        for node in level:
            for child in node.values() if type(node) is dict else node:
                if type(child) is dict or type(child) is list:
                    add(child)
        if not below:
            return False
        level = below
    return True


def check_depth(value: Any, text: bytes | str, max_depth: int = MAX_DEPTH) -> None:
    """Refuse ``value``, parsed from ``text``, if it nests deeper than ``max_depth`` levels.

    Every level opens and closes with a bracket: a text shorter than twice the limit, or with
    few opening brackets (any message on the hot path), cannot nest too deeply, and a length
    and two counts cost next to nothing. Brackets inside strings count
    too, so a text with many still gets the precise walk.

    Raises:
        TooDeep: it does.
    """
    if len(text) <= 2 * max_depth:
        return  # each level takes two brackets: too short to nest deeper
    brackets = text.count(b"{") + text.count(b"[") if isinstance(text, bytes) else text.count("{") + text.count("[")
    if brackets > max_depth and nests_deeper(value, max_depth):
        raise TooDeep(max_depth)


def loads(text: bytes | str, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(text)``, refusing documents nested deeper than ``max_depth`` levels.

    Raises:
        TooDeep: the document nests deeper (also when the decoder ran out of recursion first).
        ValueError: it is not JSON (a :class:`json.JSONDecodeError`, a :class:`UnicodeDecodeError`,
            or a number too long to convert).
    """
    try:
        value = json.loads(text)
    except RecursionError:
        # The decoder recurses once per level: it gave up hundreds of levels down.
        raise TooDeep(max_depth) from None
    check_depth(value, text, max_depth)
    return value
