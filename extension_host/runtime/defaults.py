"""The host's default waits that the command line shows before any host is made.

Owns the numbers only; :mod:`.options` builds :class:`~.options.Timeouts` from them, and the
``extensions`` parser names them in its ``--help`` without importing the runtime.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING: the parser reads this module at every start, typing is 3 ms
if TYPE_CHECKING:
    from typing import Final

__all__ = ["DEFAULT_READINESS_TIMEOUT", "STOP_QUIET"]

DEFAULT_READINESS_TIMEOUT: Final = 30.0
"""Seconds an extension has to join after it is started."""

STOP_QUIET: Final = 0.1
"""Seconds an extension's connection must have been quiet before its stdin is closed, so that a
request it sent just before (a ``session.log`` right after joining) is answered."""
