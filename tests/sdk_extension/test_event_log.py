"""session.event_log: the Python SDK's reads of the session's events, shaped as the host expects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from helpers import run
from sdk_extension.event_log import EventLogReader
from sdk_extension.session import Session


class FakeSession:
    """Records each session-scoped request and answers as the host would."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def answer(self, method: str, params: Mapping[str, Any] | None) -> Any:
        self.sent.append((method, dict(params or {})))
        if method == "session.eventLog.tail":
            return {"cursor": "at-the-end"}
        return {"events": [{"id": "e1"}], "cursor": "next", "hasMore": True, "cursorStatus": "expired"}

    def rpc(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        return self.answer(method, params)

    async def rpc_async(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        return self.answer(method, params)


def reader() -> tuple[EventLogReader, FakeSession]:
    session = FakeSession()
    return EventLogReader(cast(Session, session)), session


def test_a_read_sends_only_what_was_asked_in_the_sdk_s_names_and_answers_a_page() -> None:
    log, session = reader()
    page = log.read()
    assert session.sent == [("session.eventLog.read", {})]
    assert (page.events, page.cursor, page.has_more, page.expired) == ([{"id": "e1"}], "next", True, True)
    log.read("c1", max=10, wait=2.5, types=["session.info"], backward=True, include_ephemeral=False)
    assert session.sent[-1] == (
        "session.eventLog.read",
        {
            "cursor": "c1",
            "max": 10,
            "waitMs": 2500,
            "types": ["session.info"],
            "direction": "backward",
            "includeEphemeral": False,
        },
    )


def test_tail_and_the_async_forms_ask_the_same() -> None:
    log, session = reader()
    assert log.tail() == "at-the-end"

    async def scenario() -> None:
        assert await log.tail_async() == "at-the-end"
        page = await log.read_async("c2", max=5)
        assert page.cursor == "next"

    run(scenario())
    assert session.sent == [
        ("session.eventLog.tail", {}),
        ("session.eventLog.tail", {}),
        ("session.eventLog.read", {"cursor": "c2", "max": 5}),
    ]
