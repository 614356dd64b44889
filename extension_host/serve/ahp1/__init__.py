"""Agent Host Protocol 1.0 in ``extensions serve``, beside the seed protocol on one server.

The sessions underneath are the server's; what 1.0 adds is here, in the order of the flow:
:mod:`.params` (what a 1.0 client may send), :mod:`.state` (the 1.0 reducers),
:mod:`.turns` (a chat's window of finished turns and its cursor), :mod:`.actions` (each
session's :class:`~extension_host.serve.ahp1.actions.ChatView`: seed actions translated into
1.0 ones), :mod:`.rebuild` (a view made from a session's seed state for a late first 1.0
client) and :mod:`.server` (the 1.0 command table and what the server sends 1.0 clients).
"""

from __future__ import annotations

__all__: list[str] = []
