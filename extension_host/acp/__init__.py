"""`extensions acp`: this host and its agent as an Agent Client Protocol agent, for Zed and other ACP editors.

- :mod:`.protocol`: the ACP methods answered and called (one table each), their params' shapes
  and bounds.
- :mod:`.updates`: host events → ``session/update`` (one table).
- :mod:`.session`: one ACP session, a host in the client's folder: prompts, cancel,
  permission questions.
- :mod:`.server`: the connection's sessions and each method; :func:`~.server.serve_stdio`.
- :mod:`.wire`: newline-delimited JSON on stdio in front of the project's JSON-RPC connection.
- :mod:`.editors`: the registration snippets of ``--print-config`` (Zed, JetBrains).

Built on the project's own JSON-RPC connection rather than the ACP Python SDK: see
``docs/acp.md`` for why.
"""
