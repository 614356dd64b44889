"""Forking a session at a turn: what the fork holds, its chain and record, the source untouched,
and a resumed fork that sees what the source's agent saw at that turn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extension_host import AgentReply, ExtensionHost, ScriptedAgent, ToolCall
from extension_host.errors import SessionError, UnknownSessionError
from extension_host.events import make_event
from extension_host.session.fork import TurnNotForkable, forked_events, turn_end
from extension_host.session.log import LogReader, encode_event
from extension_host.session.model_context import ContextMessage
from extension_host.session.store import SessionStore
from extension_protocol.protocol import Event
from helpers import Project, run
from sdk_extension import tool


@tool(description="Count the lines of a text")
def count_lines(text: str) -> str:
    return str(len(text.splitlines()))


def script() -> ScriptedAgent:
    return ScriptedAgent(
        [
            [AgentReply("counting", (ToolCall("count_lines", {"text": "a\nb"}, "c1"),)), AgentReply("2 lines")],
            [AgentReply("second answer")],
            [AgentReply("the fork's own answer")],
        ]
    )


def host(project: Project, agent: ScriptedAgent, session: str | None = None) -> ExtensionHost:
    return project.host(
        watch=False,
        fork_server=False,
        session_hooks=False,
        builtin_tools=[count_lines],
        agent=agent,
        session=session,
    )


def two_turns(project: Project) -> tuple[str, str, list[ContextMessage]]:
    """A persisted session with two prompts; returns its id, the first prompt's message id and
    the model context as it was when the first prompt's run ended."""

    async def scenario() -> tuple[str, str, list[ContextMessage]]:
        async with host(project, script()) as source:
            first = await source.send("count these")
            await source.wait_idle(10)
            at_first = list(source.model_context.messages)
            await source.send_and_wait("and then?", timeout=10)
            return source.session_id, first, at_first

    return run(scenario(), timeout=30)


def events_of(store: SessionStore, session_id: str) -> list[Event]:
    return list(store.events(session_id))


def test_a_fork_holds_the_sources_events_up_to_the_end_of_the_turns_response(project: Project) -> None:
    source_id, first, _ = two_turns(project)
    store = SessionStore(project.home)
    source_events = events_of(store, source_id)
    source_bytes = (store.folder(source_id) / "events.jsonl").read_bytes()

    fork_id = store.fork(source_id, first)

    assert fork_id != source_id
    forked = events_of(store, fork_id)
    start, *copied = forked
    assert start["type"] == "session.start" and start["parentId"] is None
    assert start["data"]["sessionId"] == fork_id
    kept = [e for e in source_events if e["type"] not in ("session.start", "session.resume", "session.shutdown")]
    first_run = kept[: [e["type"] for e in kept].index("user.message", 1)]
    assert [e["id"] for e in copied] == [e["id"] for e in first_run]
    assert [e["data"] for e in copied] == [e["data"] for e in first_run]
    assert copied[-1]["type"] == "assistant.turn_end"  # the response's last step
    assert [e["data"]["content"] for e in forked if e["type"] == "user.message"] == ["count these"]
    chain = [start["id"], *(e["id"] for e in copied)]
    assert [e["parentId"] for e in copied] == chain[:-1]
    record = json.loads((store.folder(fork_id) / "session.json").read_text())
    assert (record["forkedFrom"], record["forkedAtTurn"]) == (source_id, first)
    assert record["projectRoot"] == str(project.root)
    assert (store.folder(source_id) / "events.jsonl").read_bytes() == source_bytes  # untouched
    assert not store.summary(fork_id).in_use  # left unlocked, ready to resume


def test_a_resumed_fork_gives_the_agent_the_context_the_source_had_at_that_turn(project: Project) -> None:
    source_id, first, at_first = two_turns(project)
    fork_id = SessionStore(project.home).fork(source_id, first)
    agent = script()

    async def scenario() -> None:
        async with host(project, agent, session=fork_id) as forked:
            assert forked.session_id == fork_id
            assert forked.model_context.messages == at_first
            await forked.send_and_wait("something new", timeout=10)
            asked = agent.requests[0].messages  # the context grows on: compare what it began with
            assert asked[: len(at_first)] == at_first
            assert asked[len(at_first)].content == "something new"

    run(scenario(), timeout=30)


def test_forking_at_an_unknown_turn_or_session_is_a_clear_error(project: Project) -> None:
    source_id, _, _ = two_turns(project)
    store = SessionStore(project.home)
    before = set(store.root.iterdir())
    with pytest.raises(SessionError, match=f"session {source_id} cannot be forked: it has no turn 'nope'"):
        store.fork(source_id, "nope")
    with pytest.raises(UnknownSessionError, match="session missing: no such session"):
        store.fork("missing", "nope")
    assert set(store.root.iterdir()) == before  # nothing half-made


def event(kind: str, data: dict[str, object] | None = None) -> Event:
    return make_event(kind, dict(data or {}))


def test_a_turn_ends_at_its_last_step_or_its_error_and_not_at_what_follows_before_the_next_prompt() -> None:
    events = [
        event("session.start"),
        event("user.message", {"content": "one", "messageId": "m1"}),
        event("assistant.turn_start", {"turnId": "1"}),
        event("assistant.turn_end", {"turnId": "1"}),
        event("assistant.turn_start", {"turnId": "2"}),
        event("assistant.turn_end", {"turnId": "2"}),
        event("session.error", {"errorType": "agent", "message": "boom"}),
        event("session.warning", {"warningType": "hook", "message": "later"}),
        event("user.message", {"content": "two", "messageId": "m2"}),
        event("assistant.turn_start", {"turnId": "3"}),
    ]
    assert turn_end(events, "m1") == 6
    assert turn_end(events, events[1]["id"]) == 6  # the event's own id names it too
    with pytest.raises(TurnNotForkable, match="turn 'm2' has no response yet"):
        turn_end(events, "m2")
    with pytest.raises(TurnNotForkable, match="it has no turn 'm3'"):
        turn_end(events, "m3")


def test_a_subagents_prompt_and_steps_inside_a_turn_belong_to_that_turn() -> None:
    def child(kind: str, data: dict[str, object]) -> Event:
        return make_event(kind, data, agent_id="child-1")

    events = [
        event("user.message", {"content": "one", "messageId": "m1"}),
        event("assistant.turn_start", {"turnId": "1"}),
        child("user.message", {"content": "review", "messageId": "c1"}),
        child("assistant.turn_end", {"turnId": "1"}),
        event("assistant.turn_end", {"turnId": "1"}),
        event("user.message", {"content": "two", "messageId": "m2"}),
    ]
    assert turn_end(events, "m1") == 4
    with pytest.raises(TurnNotForkable, match="it has no turn 'c1'"):
        turn_end(events, "c1")


def test_the_sources_lifecycle_is_left_out_and_the_rest_rechained() -> None:
    events = [
        event("session.start"),
        event("user.message", {"messageId": "m1"}),
        event("session.shutdown"),
        event("session.resume"),
        event("assistant.turn_end"),
        event("user.message", {"messageId": "m2"}),
    ]
    start = event("session.start", {"sessionId": "fork"})
    forked = list(forked_events(events, 4, start))
    assert [e["id"] for e in forked] == [start["id"], events[1]["id"], events[4]["id"]]
    assert [e["parentId"] for e in forked] == [None, start["id"], events[1]["id"]]


def test_a_long_turn_is_forked_whole(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "home")
    opened = store.create(tmp_path)
    lines = [event("user.message", {"content": "x" * 1000, "messageId": "m1"})]
    lines += [event("tool.execution_complete", {"toolCallId": f"c{n}"}) for n in range(2000)]
    lines += [event("assistant.turn_end", {"turnId": "1"})]
    opened.events_path.write_text("".join(encode_event(e) for e in lines))
    opened.close()
    fork_id = store.fork(opened.id, "m1")
    assert sum(1 for _ in LogReader(store.folder(fork_id) / "events.jsonl")) == len(lines) + 1


def test_a_line_nested_1000_deep_in_the_source_is_left_out_of_the_fork(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "home")
    opened = store.create(tmp_path)
    lines = [event("user.message", {"messageId": "m1"}), event("assistant.turn_end", {"turnId": "1"})]
    deep = '{"id":"d","timestamp":"t","type":"assistant.message","data":' + "[" * 1000 + "]" * 1000 + "}\n"
    opened.events_path.write_text(encode_event(lines[0]) + deep + encode_event(lines[1]))
    opened.close()
    fork_id = store.fork(opened.id, "m1")
    forked = list(LogReader(store.folder(fork_id) / "events.jsonl"))
    assert [e["id"] for e in forked[1:]] == [e["id"] for e in lines]


def test_a_live_session_is_forked_at_a_turn_that_just_ended_once_its_host_has_flushed(project: Project) -> None:
    async def scenario() -> None:
        async with host(project, script()) as source:
            first = await source.send("count these")
            await source.wait_idle(10)
            source.flush()
            fork_id = SessionStore(project.home).fork(source.session_id, first)
            forked = events_of(SessionStore(project.home), fork_id)
            assert forked[-1]["type"] == "assistant.turn_end"

    run(scenario(), timeout=30)
