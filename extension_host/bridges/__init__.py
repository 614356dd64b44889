"""Bridges: this project's extensions used from other agents (Claude Code, Gemini CLI, ...).

Each bridge is a module of its own; nothing here is imported eagerly, so a hook command that
imports one bridge module pays for that module only.
"""

from __future__ import annotations

__all__: list[str] = []
