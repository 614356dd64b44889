"""The ``session.lifecycle`` notice that a session changed, as the extensions are sent it.

As Copilot CLI, the host tells every connected extension after each persisted event that the
session changed (``session.updated``, with the event's time). That is several notices per tool
call, to every extension, so the frame is made once per event for all of them, from a head
encoded once per session: only the time differs from one to the next. It begins with
:data:`~extension_protocol.protocol.SESSION_UPDATED_START`, by which an SDK that has no use for
it drops it unread. What sends it, and to whom, is
:mod:`~extension_host.runtime.extension_runtime`'s.
"""

from __future__ import annotations

import json

from extension_protocol.framing import frame
from extension_protocol.protocol import SESSION_UPDATED_START

__all__ = ["SessionUpdated"]


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
            self._head = b'%s"sessionId":%s,"metadata":{"startTime":%s,"modifiedTime":' % (
                SESSION_UPDATED_START,
                json.dumps(session_id).encode(),
                json.dumps(start_time).encode(),
            )
            self._session = (session_id, start_time)
        return frame(b'%s"%s"}}}' % (self._head, modified.encode("ascii")))
