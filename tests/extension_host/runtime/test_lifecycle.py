"""The ``session.updated`` notice: the frame made from a cached head is the message it stands for."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from extension_host.events import iso_now
from extension_host.runtime.lifecycle import SessionUpdated
from extension_protocol.framing import FrameDecoder


def decoded(frame: bytes) -> object:
    (message,) = FrameDecoder().feed(frame)
    return message


@given(session_id=st.text(), start_time=st.text())
def test_the_frame_is_the_session_updated_notice_whatever_the_session_id_and_start_time_hold(
    session_id: str, start_time: str
) -> None:
    modified = iso_now()
    assert decoded(SessionUpdated().frame(session_id, start_time, modified)) == {
        "jsonrpc": "2.0",
        "method": "session.lifecycle",
        "params": {
            "type": "session.updated",
            "sessionId": session_id,
            "metadata": {"startTime": start_time, "modifiedTime": modified},
        },
    }


def test_a_new_session_gets_a_new_head() -> None:
    notices = SessionUpdated()
    first = decoded(notices.frame("s-1", "t-1", "2026-01-01T00:00:00.000+00:00"))
    second = decoded(notices.frame("s-2", "t-2", "2026-01-01T00:00:01.000+00:00"))
    assert isinstance(first, dict) and isinstance(second, dict)
    assert first["params"]["sessionId"] == "s-1"
    assert second["params"] == {
        "type": "session.updated",
        "sessionId": "s-2",
        "metadata": {"startTime": "t-2", "modifiedTime": "2026-01-01T00:00:01.000+00:00"},
    }
