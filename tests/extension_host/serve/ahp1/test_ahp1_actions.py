"""A served session as AHP 1.0 shows it (:class:`ChatView`), without processes: its title, its
summaries, which of its actions carry a client's origin, a turn's duration, the session's news
(activity, title, tools, summary changes) and the agent's usage, as ``copilot --ahp-host`` sends
them."""

from __future__ import annotations

from typing import Any

from extension_host.info import ToolInfo
from extension_host.serve.ahp1.actions import ChatView, default_title, tool_definitions
from extension_host.serve.ahp1.state import IDLE, IN_PROGRESS

URI = "ahp-session:/0b6c2f0e-1111-4c1e-9a57-000000000001"
UUID = "0b6c2f0e-1111-4c1e-9a57-000000000001"


class Clock:
    """Epoch milliseconds that move only when told."""

    def __init__(self, now: int = 1_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def view(clock: Clock | None = None, **summary: Any) -> ChatView:
    given = {"provider": "openai", "createdAt": 1000, "modifiedAt": 2000, "workingDirectory": "file:///p", **summary}
    return ChatView(URI, given, now=clock or Clock())


def started(turn: str = "t1", text: str = "please echo hi\nand more") -> dict[str, Any]:
    return {"type": "session/turnStarted", "session": URI, "turnId": turn, "userMessage": {"text": text}}


def types(shown: list[tuple[str, dict[str, Any], bool]]) -> list[tuple[str, str, bool]]:
    return [(channel, action["type"], own) for channel, action, own in shown]


def test_a_new_session_is_titled_by_its_id_and_lists_its_one_chat_as_the_users_and_not_movable() -> None:
    shown = view()
    assert shown.session_state["title"] == UUID and shown.chat_state["title"] == UUID
    assert {"resource", "createdAt", "modifiedAt"}.isdisjoint(shown.session_state)  # a summary's, not a state's
    assert shown.session_state["chats"] == [
        {
            "resource": shown.chat,
            "title": UUID,
            "status": IDLE,
            "modifiedAt": "1970-01-01T00:00:02.000Z",
            "origin": {"kind": "user"},
            "movable": False,
        }
    ]
    assert shown.summary() == {
        "resource": URI,
        "provider": "openai",
        "title": UUID,
        "status": IDLE,
        "createdAt": "1970-01-01T00:00:01.000Z",
        "modifiedAt": "1970-01-01T00:00:02.000Z",
        "workingDirectories": ["file:///p"],
        "chats": [{"resource": shown.chat, "title": UUID, "origin": {"kind": "user"}, "status": IDLE}],
        "defaultChat": shown.chat,
    }


def test_a_session_with_a_title_of_its_own_keeps_it_through_its_first_prompt() -> None:
    shown = view(title="Named")
    assert "session/titleChanged" not in [action["type"] for _, action, _ in shown.translate(started())]
    assert shown.session_state["title"] == "Named"


def test_only_the_echo_of_the_clients_own_action_carries_its_origin_and_the_first_prompt_titles_the_session_once() -> (
    None
):
    shown = view()
    first = shown.translate(started())
    assert types(first) == [
        (shown.chat, "chat/turnStarted", True),
        (URI, "session/chatUpdated", False),
        (URI, "session/titleChanged", False),
    ]
    assert first[2][1]["title"] == "please echo hi"  # the prompt's first line
    assert shown.take_changes() == {
        "status": IN_PROGRESS,
        "modifiedAt": shown.modified,
        "title": "please echo hi",
        "chats": [{"resource": shown.chat, "title": UUID, "origin": {"kind": "user"}, "status": IN_PROGRESS}],
    }
    assert shown.take_changes() == {}
    shown.translate({"type": "session/turnComplete", "session": URI, "turnId": "t1"})
    shown.take_changes()
    second = shown.translate(started("t2", "again"))
    assert "session/titleChanged" not in [action["type"] for _, action, _ in second]
    assert shown.session_state["title"] == "please echo hi" and shown.chat_state["title"] == UUID


def test_a_turns_end_says_how_long_it_ran_then_that_the_session_is_idle_with_no_activity() -> None:
    clock = Clock()
    shown = view(clock)
    shown.translate(started())
    shown.take_changes()
    clock.now += 1234
    ended = shown.translate({"type": "session/turnComplete", "session": URI, "turnId": "t1"})
    assert types(ended) == [
        (shown.chat, "chat/turnComplete", True),
        (URI, "session/chatUpdated", False),
        (URI, "session/activityChanged", False),
    ]
    assert ended[0][1] == {"type": "chat/turnComplete", "turnId": "t1", "duration": 1234}
    assert ended[2][1] == {"type": "session/activityChanged"}
    assert "activity" not in shown.session_state  # the reducer's undefined, left out
    assert shown.chat_state["turns"][0]["duration"] == 1234
    assert shown.take_changes()["status"] == IDLE


def test_a_clients_cancel_is_echoed_with_the_duration_the_client_gave_and_an_error_ends_a_turn_too() -> None:
    clock = Clock()
    shown = view(clock)
    shown.translate(started())
    seed = shown.to_seed(shown.chat, {"type": "chat/turnCancelled", "turnId": "t1", "duration": 7})
    assert seed == {"type": "session/turnCancelled", "session": URI, "turnId": "t1"}
    clock.now += 500
    cancelled = shown.translate(seed)
    assert cancelled[0][1] == {"type": "chat/turnCancelled", "turnId": "t1", "duration": 7}
    shown.translate(started("t2"))
    clock.now += 20
    error = {"type": "session/error", "session": URI, "turnId": "t2", "error": {"errorType": "x", "message": "m"}}
    failed = shown.translate(error)
    assert failed[0][1] == {"type": "chat/error", "turnId": "t2", "error": error["error"], "duration": 20}
    assert types(failed)[-1] == (URI, "session/activityChanged", False)


def test_the_agents_usage_becomes_chat_usage_only_inside_a_turn_and_only_with_its_token_counts() -> None:
    shown = view()
    counts = {"model": "m", "inputTokens": 10, "outputTokens": 5, "duration": 3.5, "isByok": True}
    assert shown.usage(counts) == []  # no turn running
    shown.translate(started())
    [(channel, action, own)] = shown.usage(counts)
    assert (channel, own) == (shown.chat, False)
    assert action == {
        "type": "chat/usage",
        "turnId": "t1",
        "usage": {"inputTokens": 10, "outputTokens": 5, "model": "m"},
    }
    assert shown.chat_state["activeTurn"]["usage"] == action["usage"]
    assert shown.usage({"model": "m"}) == [] and shown.usage(None) == []


def test_the_sessions_tools_are_announced_the_first_time_and_then_only_when_they_change() -> None:
    shown = view()
    tools = tool_definitions(
        [
            ToolInfo("zeta", "Z.", None, "builtin"),
            ToolInfo("probe_echo", "Echo.", {"type": "object", "properties": {"text": {"type": "string"}}}, "probe"),
        ]
    )
    assert tools == [
        {
            "name": "probe_echo",
            "description": "Echo.",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
        },
        {"name": "zeta", "description": "Z."},
    ]
    assert types(shown.server_tools(tools)) == [(URI, "session/serverToolsChanged", False)]
    assert shown.session_state["serverTools"] == tools
    assert shown.server_tools(list(tools)) == []
    assert len(shown.server_tools(tools[:1])) == 1


def test_a_tool_calls_display_name_reads_as_words() -> None:
    shown = view()
    shown.translate(started())
    call = {"type": "session/toolCallStart", "session": URI, "turnId": "t1", "toolCallId": "c1"}
    [(_, action, own)] = shown.translate({**call, "toolName": "probe_echo", "displayName": "probe_echo"})
    assert action["displayName"] == "probe echo" and action["toolName"] == "probe_echo" and own


def test_a_sessions_default_title_is_the_last_segment_of_its_uri() -> None:
    assert default_title(URI) == UUID
    assert default_title("copilot:/abc") == "abc"
    assert default_title("session:xyz") == "xyz"
    assert default_title("odd:") == "odd:"
