"""Writing JSON for the wire and the session log: orjson where it is in use, else the standard library.

Every message either side sends, and every line of a session's log, is written as JSON, several
per tool call. orjson (the ``fast`` extra) writes it about ten times faster. It is optional,
and used only by the processes that ask for it (:func:`use_orjson`: the host, and an
extension's SDK), which send many messages: importing it costs a few milliseconds where
``asyncio`` is loaded already and about twenty where it is not (it imports ``dataclasses``,
``uuid``, ``inspect``), more than a short-lived process such as a hook command would gain.

Without it, or where it declines a value, the standard library does the work, and the result is
the same either way:

- what orjson declines goes to the standard library whole: integers beyond 64 bits, strings
  with lone surrogates, keys that are not strings, subclasses of ``str``/``int``/``dict``/
  ``list``, dataclasses, dates and anything else that is not plain JSON data, and nesting
  deeper than orjson's limit. Those keep the standard library's rules (and its errors);
- a NaN or an infinity is written as ``null`` by both, as JavaScript's ``JSON.stringify``
  writes it (the text ``NaN`` that Python would write is not JSON: a JavaScript peer would fail
  to read the whole message).

Differences that remain: an ``enum.Enum`` member or a ``uuid.UUID`` is written as its value by
orjson and refused by the standard library (with a ``TypeError``); a float is written in its
shortest form by either, which may differ in the text (``1e16``, ``1e+16``), never in the value.

Reading stays with the standard library: orjson reads only about twice as fast, and what it
reads differently (an integer beyond 64 bits becomes a float) could not be told apart without
a scan of the text that costs more than the reading it would save.

This module knows JSON values, not frames, messages or events.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final

__all__ = ["backend", "finite", "orjson_dumps", "standard_dumps", "use_orjson"]

orjson: Any = None
"""The orjson module, once :func:`use_orjson` has found it."""
_OPTIONS = 0
"""What orjson would write its own way goes to the standard library instead (see the module)."""
_NOT_FINITE: Final = "Out of range float values are not JSON compliant"
"""How the standard library's encoder refuses a NaN or an infinity (``allow_nan=False``)."""


def use_orjson() -> bool:
    """Encode with orjson from now on in this process, if it is installed (the
    ``fast`` extra); says whether it is."""
    global orjson, _OPTIONS
    if orjson is None:
        try:
            import orjson as module
        except ImportError:
            return False
        _OPTIONS = module.OPT_PASSTHROUGH_SUBCLASS | module.OPT_PASSTHROUGH_DATACLASS | module.OPT_PASSTHROUGH_DATETIME
        orjson = module
    return True


def backend() -> str:
    """Which library does the work where it can in this process: ``orjson`` or ``json``."""
    return "json" if orjson is None else "orjson"


def orjson_dumps(value: Any) -> bytes | None:
    """``value`` as compact UTF-8 JSON by orjson, or ``None`` when orjson is not in use (see
    :func:`use_orjson`) or declines it (the caller then encodes it with the standard library, see the module)."""
    if orjson is None:
        return None
    try:
        dumped: bytes = orjson.dumps(value, option=_OPTIONS)
    except orjson.JSONEncodeError:
        return None
    return dumped


def standard_dumps(encode: Callable[[Any], str], value: Any) -> str:
    """``encode(value)``, a standard library encoder made with ``allow_nan=False``, except that
    a NaN or an infinity is written as ``null`` (as orjson writes it) instead of refused."""
    try:
        return encode(value)
    except ValueError as exc:
        if not str(exc).startswith(_NOT_FINITE):
            raise
        return encode(finite(value))


def finite(value: Any) -> Any:
    """``value`` with every NaN and infinity in it replaced by ``None``: what is written for a
    value the standard library refused (``allow_nan=False``) for holding one."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    return value
