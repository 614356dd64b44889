"""How long one hook command may take: one deadline from its start, which every wait draws from.

Claude Code and Gemini CLI give a hook command 60 s and read a command they had to kill as a
non-blocking error: "carry on". A guard that is still waiting when the agent kills it has
therefore let the call through. So a hook command has one budget, :data:`HOOK_DEADLINE` seconds
from its start (``$EXTENSION_HOST_HOOK_TIMEOUT`` lowers it, never raises it), and every wait in it
takes only what is left (:meth:`HookDeadline.left_for`): the lock of the background host's start,
that start, the host's answer, the probe of a host marked unhealthy, and a host started for the
call with its extensions and hooks. When nothing is left, :class:`HookDeadlineError` says which
of them took too long; the adapter blocks a guard event with it and warns at any other.

After the deadline a command may still stop what it started or found hung (a host started for
the call, a background host that stopped answering); each of those has its own short, fixed
ladder, so the whole command ends well inside the agents' 60 s.

It owns the budget and its error; what each wait is, is its caller's. Light to import (it is paid
on every call).
"""

from __future__ import annotations

import math
import os
import time
from typing import Final

from ...errors import ExtensionHostError

__all__ = [
    "HOOK_DEADLINE",
    "HOOK_TIMEOUT_ENV",
    "HookDeadline",
    "HookDeadlineError",
    "hook_deadline_seconds",
    "seconds_from_env",
]

HOOK_DEADLINE: Final = 50.0
"""Seconds one hook command may take in all, from its start: under the 60 s both agents give it,
with room for the stop ladders that may follow (a hung background host: 2 × 2 s)."""
HOOK_TIMEOUT_ENV: Final = "EXTENSION_HOST_HOOK_TIMEOUT"
"""Seconds instead of :data:`HOOK_DEADLINE`; only a shorter deadline is taken."""


def seconds_from_env(name: str) -> float | None:
    """The number of seconds ``$name`` holds; ``None`` when it is unset or not a finite number
    (a hook call must not fail over a setting)."""
    try:
        seconds = float(os.environ.get(name, ""))
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) else None


def hook_deadline_seconds() -> float:
    """``$EXTENSION_HOST_HOOK_TIMEOUT`` seconds when that is a positive number below
    :data:`HOOK_DEADLINE`, else that. Never longer: past the agents' own limit the command would
    be killed, which both read as "carry on"."""
    seconds = seconds_from_env(HOOK_TIMEOUT_ENV)
    return seconds if seconds is not None and 0 < seconds < HOOK_DEADLINE else HOOK_DEADLINE


class HookDeadlineError(ExtensionHostError):
    """``what`` was still under way when the hook command's ``seconds`` were up."""

    def __init__(self, what: str, seconds: float) -> None:
        super().__init__(f"{what} took longer than the {seconds:g} s a hook command has")
        self.what: Final = what
        self.seconds: Final = seconds


class HookDeadline:
    """The moment one hook command's answer is due: ``seconds`` (default
    :func:`hook_deadline_seconds`) after it was made."""

    __slots__ = ("_due", "seconds")

    def __init__(self, seconds: float | None = None) -> None:
        self.seconds: Final = hook_deadline_seconds() if seconds is None else seconds
        self._due: Final = time.monotonic() + self.seconds

    def remaining(self) -> float:
        """Seconds left, ``0.0`` once it has passed."""
        return max(0.0, self._due - time.monotonic())

    def left_for(self, what: str) -> float:
        """The seconds left for ``what`` (a wait about to begin, in words: "the background
        host's start").

        Raises:
            HookDeadlineError: none are left.
        """
        remaining = self.remaining()
        if remaining <= 0:
            raise HookDeadlineError(what, self.seconds)
        return remaining
