"""Bridges: the project's extensions offered to other agents (MCP clients, ...), one module per bridge.

Each bridge sits on top of :class:`~extension_host.host.ExtensionHost` and speaks another
agent's format; the host never imports a bridge, and a bridge's third-party library (the MCP
SDK for :mod:`.mcp_server`) is an optional extra imported only when that bridge runs.
"""

from __future__ import annotations

__all__: list[str] = []
