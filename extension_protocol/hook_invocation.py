"""What every hook handler is given besides its input: :class:`HookInvocation`.

Kept apart from :mod:`extension_protocol.hook_models` (which re-exports it) so that a host that
runs hooks builds one per call without the models of every hook point having been created
first. This module only declares the shape.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["HookInvocation"]


@dataclass(frozen=True, slots=True)
class HookInvocation:
    """Passed to every hook handler as its second argument."""

    session_id: str
