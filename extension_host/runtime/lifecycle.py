"""The ``session.lifecycle`` notice that a session changed, as the extensions are sent it.

As Copilot CLI, the host tells every connected extension after each persisted event that the
session changed (``session.updated``, with the event's time). That is several notices per tool
call, to every extension, so the frame is made once per event for all of them, from a head
encoded once per session: only the time differs from one to the next. What sends it, and to
whom, is :mod:`~extension_host.runtime.extension_runtime`'s.
"""

from __future__ import annotations

import json

from extension_protocol.framing import frame
from extension_protocol.protocol import METHOD_SESSION_LIFECYCLE, SessionLifecycleParams

__all__ = ["SessionUpdated"]

_LAST = '""}}}'
"""How the encoded notice ends when its last value, the time, is empty."""


class SessionUpdated:
    """Makes the ``session.updated`` frames of one session after another."""

    def __init__(self) -> None:
        self._session: tuple[str, str] | None = None
        self._head = b""

    def frame(self, session_id: str, start_time: str, modified: str) -> bytes:
        """The frame saying session ``session_id`` (started ``start_time``) changed at
        ``modified``, an event's timestamp (ASCII, without quotes or backslashes, as every
        event's is)."""
        if self._session != (session_id, start_time):
            params: SessionLifecycleParams = {
                "type": "session.updated",
                "sessionId": session_id,
                "metadata": {"startTime": start_time, "modifiedTime": ""},
            }
            text = json.dumps({"jsonrpc": "2.0", "method": METHOD_SESSION_LIFECYCLE, "params": params})
            assert text.endswith(_LAST)  # the time is the last value
            self._head = text[: -len(_LAST)].encode()
            self._session = (session_id, start_time)
        return frame(b'%s"%s"}}}' % (self._head, modified.encode("ascii")))
