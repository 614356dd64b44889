"""How long a host waits, and how much it keeps: :class:`Timeouts` and :class:`Limits`, the two
objects ``ExtensionHost(timeouts=..., limits=...)`` takes, with the defaults in one place.

The keywords they replace (``tool_timeout=``, ``history_limit=``, ...) still work for one
release: :func:`options_from` turns them into the objects with a :class:`DeprecationWarning`
naming the replacement. The crash and reload budgets stay objects of their own
(:mod:`.budget`): they are policies of a watching host, not bounds every host has.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Final, TypedDict

from ..errors import ExtensionHostError
from ..events import HISTORY_BYTES, HISTORY_EVENT_BYTES, HISTORY_LIMIT
from ..hooks.runner import DEFAULT_HOOK_TIMEOUT
from ..launch.npm_deps import DEFAULT_INSTALL_TIMEOUT
from ..launch.process_groups import STOP_GRACE_SECONDS
from .context import MAX_QUEUED_BYTES
from .defaults import DEFAULT_READINESS_TIMEOUT, STOP_QUIET

__all__ = [
    "DEFAULT_INSTALL_TIMEOUT",
    "DEFAULT_READINESS_TIMEOUT",
    "DEFAULT_TOOL_TIMEOUT",
    "INSTALL_TIMEOUT_ENV",
    "DeprecatedOptions",
    "InstallTimeoutError",
    "Limits",
    "Timeouts",
    "options_from",
]

DEFAULT_TOOL_TIMEOUT: Final = 600.0
"""Seconds a tool call may run before its result is ``timeout``; generous, as tools build and test."""

INSTALL_TIMEOUT_ENV: Final = "EXTENSION_HOST_INSTALL_TIMEOUT"
"""Seconds, the default of :attr:`Timeouts.install` (for the command line, where no
:class:`Timeouts` is given)."""


class InstallTimeoutError(ExtensionHostError, ValueError):
    """:data:`INSTALL_TIMEOUT_ENV` is not a positive number of seconds."""


def default_install_timeout() -> float:
    """:data:`INSTALL_TIMEOUT_ENV` if set, else :data:`DEFAULT_INSTALL_TIMEOUT`.

    Raises:
        InstallTimeoutError: it is set to something else than a positive number.
    """
    configured = os.environ.get(INSTALL_TIMEOUT_ENV, "").strip()
    if not configured:
        return DEFAULT_INSTALL_TIMEOUT
    try:
        seconds = float(configured)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise InstallTimeoutError(f"{INSTALL_TIMEOUT_ENV} must be a positive number of seconds, not {configured!r}")
    return seconds


@dataclass(frozen=True, slots=True)
class Timeouts:
    """How long a host waits, in seconds."""

    readiness: float = DEFAULT_READINESS_TIMEOUT
    """For an extension to join after it is started; past it, the extension is ``failed``."""
    tool: float = DEFAULT_TOOL_TIMEOUT
    """For a tool call; past it, its result is ``timeout``."""
    hook: float = DEFAULT_HOOK_TIMEOUT
    """For one hook implementation (of any hook point not in :attr:`hooks`)."""
    hooks: Mapping[str, float] = field(default_factory=dict, hash=False)
    """Per hook point (``{"on_pre_tool_use": 5}``), in place of :attr:`hook`."""
    stop_grace: float = STOP_GRACE_SECONDS
    """For each step of the stop ladder (end of stream, SIGTERM, SIGKILL) before the next."""
    install: float = field(default_factory=default_install_timeout)
    """For installing an extension's dependencies (its Python environment, its npm packages)
    before its first start; past it, the install is stopped and the extension is ``failed``
    (default: :data:`INSTALL_TIMEOUT_ENV`, else :data:`DEFAULT_INSTALL_TIMEOUT`)."""

    stop_quiet: float = STOP_QUIET
    """How long an extension's connection must have been quiet before its stdin is closed (at
    most 1 s), so that what it asked just before is answered; what it sends after that, until
    it exits, is still read and handled, with nobody left to answer it."""

    def __post_init__(self) -> None:
        for name in ("readiness", "tool", "hook", "stop_grace", "stop_quiet", "install"):
            _positive(f"Timeouts.{name}", getattr(self, name))
        for point, seconds in self.hooks.items():
            _positive(f"Timeouts.hooks[{point!r}]", seconds)
        object.__setattr__(self, "hooks", MappingProxyType(dict(self.hooks)))


@dataclass(frozen=True, slots=True)
class Limits:
    """How much a host keeps."""

    queued_bytes: int = MAX_QUEUED_BYTES
    """Bytes queued towards an extension that does not read its input before it is failed."""
    history_events: int = HISTORY_LIMIT
    """Events :attr:`~extension_host.ExtensionHost.events` keeps (listeners see every event)."""
    history_bytes: int = HISTORY_BYTES
    """Estimated bytes the kept events may take together."""
    history_event_bytes: int = HISTORY_EVENT_BYTES
    """An event larger than this is kept with its long strings cut (listeners get it whole)."""

    def __post_init__(self) -> None:
        for option in fields(self):
            value = getattr(self, option.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"Limits.{option.name} must be a whole number of at least 1, not {value!r}")


class DeprecatedOptions(TypedDict, total=False):
    """The keywords :class:`Timeouts` and :class:`Limits` replace (kept for one release)."""

    readiness_timeout: float
    tool_timeout: float
    hook_timeout: float
    hook_timeouts: Mapping[str, float] | None
    stop_grace: float
    max_queued_bytes: int
    history_limit: int
    history_bytes: int
    history_event_bytes: int


_REPLACED: Final[dict[str, tuple[str, str]]] = {
    "readiness_timeout": ("timeouts", "readiness"),
    "tool_timeout": ("timeouts", "tool"),
    "hook_timeout": ("timeouts", "hook"),
    "hook_timeouts": ("timeouts", "hooks"),
    "stop_grace": ("timeouts", "stop_grace"),
    "max_queued_bytes": ("limits", "queued_bytes"),
    "history_limit": ("limits", "history_events"),
    "history_bytes": ("limits", "history_bytes"),
    "history_event_bytes": ("limits", "history_event_bytes"),
}
"""Each old keyword → the object and field that replace it."""


def options_from(
    timeouts: Timeouts | None, limits: Limits | None, old: Mapping[str, object], caller: str = "ExtensionHost"
) -> tuple[Timeouts, Limits]:
    """The options of a host given ``timeouts``, ``limits`` and old keywords ``old``.

    Raises:
        TypeError: a keyword that is none of the old ones, or an old one beside the object
            that replaces it.
    """
    changes: dict[str, dict[str, object]] = {"timeouts": {}, "limits": {}}
    given = {"timeouts": timeouts, "limits": limits}
    for keyword in old:  # every error before any warning: with warnings as errors, the error shows
        if keyword not in _REPLACED:
            raise TypeError(f"{caller}() got an unexpected keyword argument {keyword!r}")
        holder, name = _REPLACED[keyword]
        if given[holder] is not None:
            raise TypeError(
                f"{caller}() got both {keyword}= and {holder}=; give {holder.capitalize()}({name}=...) alone"
            )
    for keyword, value in old.items():
        holder, name = _REPLACED[keyword]
        warnings.warn(
            f"{caller}({keyword}=...) is deprecated; use {holder}={holder.capitalize()}({name}=...)",
            DeprecationWarning,
            stacklevel=3,
        )
        if value is not None:  # hook_timeouts=None meant "none"
            changes[holder][name] = value
    return (
        replace(timeouts or Timeouts(), **changes["timeouts"]),  # type: ignore[arg-type]
        replace(limits or Limits(), **changes["limits"]),  # type: ignore[arg-type]
    )


def _positive(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"{name} must be a positive number of seconds, not {value!r}")
