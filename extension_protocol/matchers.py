"""Hook matchers: which tools a tool hook is for, checked and compiled once.

An extension (or an in-process plugin) may limit ``on_pre_tool_use`` / ``on_post_tool_use`` (the
hook points whose input names a tool, per the table in :mod:`extension_protocol.hook_points`) to some
tools: tool names or ``fnmatch`` patterns, bounded in number and length. This module checks
them and compiles them into one regular expression per hook; it does not decide when a hook
runs (the host's runner does, caching the decision per tool).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from .hook_points import HOOK_POINTS, hook_point

__all__ = ["MAX_MATCHER_PATTERNS", "MAX_MATCHER_PATTERN_LENGTH", "Matcher", "compile_matcher", "compile_matchers"]

MAX_MATCHER_PATTERNS: Final = 32
"""The most tool patterns one hook of one extension may give."""
MAX_MATCHER_PATTERN_LENGTH: Final = 128
"""The longest tool pattern, in characters."""
_PATTERN_CHARS: Final = re.compile(r"\A[A-Za-z0-9_\-*?\[\]!]+\Z")
"""Tool-name characters plus fnmatch's ``* ? [ ] !``: nothing else can match a tool name."""


@dataclass(frozen=True, slots=True)
class Matcher:
    """Which tools a tool hook is for: names or ``fnmatch`` patterns, compiled once."""

    patterns: tuple[str, ...]
    _regex: re.Pattern[str] = dataclasses.field(repr=False, compare=False)

    def matches(self, tool_name: str) -> bool:
        """Whether the hook is for ``tool_name`` (case-sensitive, like tool names)."""
        return self._regex.fullmatch(tool_name) is not None


def compile_matchers(matchers: Mapping[str, Any] | None, hooks: Iterable[str]) -> dict[str, Matcher]:
    """Check an extension's matchers and compile them, keyed by the hook's Python name.

    ``matchers`` maps any spelling of a tool hook (one of ``hooks``) to a list of tool names or
    patterns. A hook left out is called for every tool.

    Raises:
        ValueError: one line naming the hook and the pattern at fault.
    """
    declared = set(hooks)
    compiled: dict[str, Matcher] = {}
    for alias, patterns in (matchers or {}).items():
        point = hook_point(alias) if isinstance(alias, str) else None
        if point is None:
            raise ValueError(f"hook matcher for unknown hook {alias!r}; the hook points are: {', '.join(HOOK_POINTS)}")
        name = point.name
        if not point.for_tools:
            tool_hooks = ", ".join(p.name for p in HOOK_POINTS.values() if p.for_tools)
            raise ValueError(f"hook {name} is not about a tool and takes no matcher (matchers are for: {tool_hooks})")
        if name not in declared:
            raise ValueError(f"hook {name} has a matcher but no handler; add the hook or drop its matcher")
        if name in compiled:
            raise ValueError(f"hook {name} has matchers under two spellings; give them once")
        compiled[name] = compile_matcher(name, patterns)
    return compiled


def compile_matcher(name: str, patterns: Any) -> Matcher:
    """Check one tool hook's patterns (a list of tool names or patterns; a string is one) and
    compile them; ``name`` is how the error names the hook.

    Raises:
        ValueError: one line naming the hook and the pattern at fault.
    """
    if isinstance(patterns, str):
        patterns = [patterns]
    if not isinstance(patterns, (list, tuple)) or not patterns:
        raise ValueError(
            f"hook {name}: matcher must be a non-empty list of tool names or patterns "
            "(leave the hook out of the matchers to call it for every tool)"
        )
    if len(patterns) > MAX_MATCHER_PATTERNS:
        raise ValueError(f"hook {name}: {len(patterns)} matcher patterns; at most {MAX_MATCHER_PATTERNS}")
    for pattern in patterns:
        if not isinstance(pattern, str) or not pattern:
            raise ValueError(f"hook {name}: matcher pattern {pattern!r} is not a non-empty string")
        if len(pattern) > MAX_MATCHER_PATTERN_LENGTH:
            raise ValueError(
                f"hook {name}: matcher pattern {pattern[:20]!r}... is longer than "
                f"{MAX_MATCHER_PATTERN_LENGTH} characters"
            )
        if not _PATTERN_CHARS.fullmatch(pattern):
            raise ValueError(
                f"hook {name}: matcher pattern {pattern!r} can match no tool "
                "(use tool-name characters A-Z a-z 0-9 _ - and the wildcards * ? [ ])"
            )
    unique = tuple(dict.fromkeys(patterns))
    regex = re.compile("|".join(f"(?:{fnmatch.translate(pattern)})" for pattern in unique))
    return Matcher(unique, regex)
