"""``extensions mcp``: a host's tools, prompts and log as an MCP server.

The MCP Python SDK's server (:mod:`.server`), what it tells the client (:mod:`.shapes`), stdio
on the event loop (:mod:`.stdio`) and the ``--print-config`` snippets (:mod:`.config`).

The optional ``mcp`` extra is imported here alone, and only when the bridge runs.
"""
