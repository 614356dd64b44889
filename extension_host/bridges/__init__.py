"""Bridges: this project's extensions used by other agents.

MCP clients (:mod:`.mcp`), Claude Code and Gemini CLI hooks (:mod:`.agent_hooks`), GitHub
Copilot CLI (:mod:`.copilot`).

Each bridge sits on top of :class:`~extension_host.host.ExtensionHost` and speaks another
agent's format; the host never imports a bridge, and a bridge's third-party library (the MCP
SDK for :mod:`.mcp`) is an optional extra imported only when that bridge runs. Nothing
here is imported eagerly, so a hook command that imports one bridge module pays for that
module only.
"""
