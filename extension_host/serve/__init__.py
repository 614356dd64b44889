"""``extensions serve``: the client protocol, for UIs, editors and scripts in other processes.

One server hosts many sessions, each an :class:`~extension_host.host.ExtensionHost` with its own
extension processes; clients speak JSON-RPC 2.0 to it (the agent host protocol) over
stdio, the project's Unix socket or a loopback WebSocket. This package sits above the host and
below the front ends.
"""

from __future__ import annotations

__all__: list[str] = []
