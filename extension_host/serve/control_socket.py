"""A served session's share of the project's control socket: hook commands reach ``serve``.

The first session a server runs in a project opens that project's control socket
(:class:`~extension_host.control.service.ControlServer`) for its host, so ``extensions hook``,
``list``, ``inspect`` and ``reload`` in that project talk to the served session's extensions
instead of starting their own. Only one host answers a project's socket: when another already
does (``extensions dev``, the background host of hook commands, an earlier session of this
server), the session runs without it. The socket closes with the session that opened it. A
decision recorded meanwhile (``extensions trust``, ``extensions grant --revoke``) reaches every
session of the server in the project through the one that holds the socket: the others are its
peers.

It owns that claim and its release; the answers are :mod:`extension_host.control.service`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..control.service import ControlServer
from ..errors import ExtensionHostError
from ..host import ExtensionHost

__all__ = ["claim_control_socket"]


async def claim_control_socket(
    host: ExtensionHost, peers: Callable[[], Iterable[ExtensionHost]]
) -> ControlServer | None:
    """Open the control socket of ``host``'s project for it, ``peers()`` hearing of recorded
    decisions too; ``None`` when another host already answers there or the socket cannot be
    made (the session works without it)."""
    control = ControlServer(host, peers=peers)
    try:
        await control.start()
    except (ExtensionHostError, OSError):
        return None
    return control
