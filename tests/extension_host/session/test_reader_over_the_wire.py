"""session.eventLog.read across the process boundary, from a raw protocol client: what a hostile
or mistaken extension may send is refused with an error naming the parameter, and a good read
answers the SDK's shape. The SDKs' side is in test_copilot_sdk.py."""

from __future__ import annotations

import json
import os
import textwrap
from typing import Any

import pytest

from helpers import RAW_PROTOCOL, Project, run, wait_for_event

pytestmark = pytest.mark.subprocess

RAW_READS = r"""
    def handle(message):
        pass

    SESSION = os.environ["SESSION_ID"]
    request(1, "connect", {})
    request(2, "session.resume", {"sessionId": SESSION})
    replies = {}
    for number, (name, params) in enumerate(json.loads(os.environ["RAW_READS"]).items(), start=10):
        replies[name] = request(number, "session.eventLog.read", {"sessionId": SESSION, **params})
    replies["tail"] = request(99, "session.eventLog.tail", {"sessionId": SESSION})
    request(100, "session.log", {"sessionId": SESSION, "message": "replies " + json.dumps(replies)})
    while True:
        read()
"""

READS: dict[str, dict[str, Any]] = {
    "good": {"max": 1},
    "max_zero": {"max": 0},
    "max_huge": {"max": 1001},
    "max_text": {"max": "many"},
    "types_empty": {"types": []},
    "types_not_a_list": {"types": 7},
    "direction": {"direction": "up"},
    "wait_negative": {"waitMs": -5},
    "cursor_forged": {"cursor": "eyJmIjoxfQ.0123456789abcdef01234567"},
    "cursor_huge": {"cursor": "c" * 10_000},
}


def test_bad_read_params_are_refused_naming_the_parameter_and_a_good_read_answers(project: Project) -> None:
    project.add_extension("raw", RAW_PROTOCOL + textwrap.dedent(RAW_READS))
    environment = {**os.environ, "RAW_READS": json.dumps(READS)}

    async def scenario() -> None:
        async with project.host(environment=environment) as host:
            logged = await wait_for_event(
                host, lambda e: e["type"] == "session.info" and e["data"]["message"].startswith("replies "), 30
            )
            replies = json.loads(logged["data"]["message"].removeprefix("replies "))
            good = replies.pop("good")["result"]
            assert [event["type"] for event in good["events"]] == ["session.start"]
            assert good["cursorStatus"] == "ok" and isinstance(good["hasMore"], bool)
            assert isinstance(replies.pop("tail")["result"]["cursor"], str)
            fields = {name: reply["error"]["data"]["field"] for name, reply in replies.items()}
            assert fields == {
                "max_zero": "max",
                "max_huge": "max",
                "max_text": "max",
                "types_empty": "types",
                "types_not_a_list": "types",
                "direction": "direction",
                "wait_negative": "waitMs",
                "cursor_forged": "cursor",
                "cursor_huge": "cursor",
            }
            for name, reply in replies.items():
                assert reply["error"]["code"] == -32602, name
                assert reply["error"]["message"].startswith("session.eventLog.read: "), reply
            assert (host.extensions[0].status, host.extensions[0].error) == ("running", None)

    run(scenario())
