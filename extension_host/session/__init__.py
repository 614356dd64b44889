"""The session above the extension runtime: its durable log, projections, turns and agents.

A session is the ordered events of one conversation: persisted as they happen, replayed to
resume, and projected into what the model sees, the timeline and live state. The extension
runtime below (instances, registry, hooks, dispatch) knows nothing of this package; the host
composes the two.
"""

from __future__ import annotations

__all__: list[str] = []
