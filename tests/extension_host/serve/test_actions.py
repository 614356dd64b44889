"""Action envelopes in memory: the sequence and its bounded replay buffer, and how host events
become session actions."""

from __future__ import annotations

from typing import Any

from extension_host.serve.actions import MAX_RESULT_CHARS, ActionLog, EventMapper
from extension_host.serve.contents import ContentStore

S = "copilot:/s"


def event(kind: str, **data: Any) -> dict[str, Any]:
    return {"id": "e", "timestamp": "t", "parentId": None, "type": kind, "data": data}


def kinds(mapped: list[tuple[dict[str, Any], Any]]) -> list[str]:
    return [action["type"] for action, _ in mapped]


def test_the_log_numbers_envelopes_from_one_and_replays_what_follows_a_sequence_number() -> None:
    log = ActionLog(capacity=3)
    for number in range(5):
        log.append({"type": "x", "n": number}, {"clientId": "c", "clientSeq": number} if number == 4 else None)
    assert log.server_seq == 5
    replay = log.since(3)
    assert replay is not None
    assert [(e["serverSeq"], e["action"]["n"], e["origin"]) for e in replay] == [
        (4, 3, None),
        (5, 4, {"clientId": "c", "clientSeq": 4}),
    ]
    at_end = log.since(5)
    assert at_end is not None and list(at_end) == []
    assert log.since(2) is not None and log.since(1) is None  # envelope 2 is gone from a buffer of 3
    assert log.since(6) is None  # a sequence this server never reached: another server's


def test_a_turn_of_deltas_makes_one_markdown_part_and_its_final_message_adds_nothing() -> None:
    mapper = EventMapper(S)
    started = mapper.map(event("user.message", content="hi", messageId="m1"))
    assert started == [
        ({"type": "session/turnStarted", "session": S, "turnId": "m1", "userMessage": {"text": "hi"}}, None)
    ]
    mapped = mapper.map(event("assistant.message_delta", messageId="a1", deltaContent="Hel"))
    mapped += mapper.map(event("assistant.message_delta", messageId="a1", deltaContent="lo"))
    mapped += mapper.map(event("assistant.message", messageId="a1", content="Hello"))
    assert kinds(mapped) == ["session/responsePart", "session/delta", "session/delta"]
    assert kinds(mapper.map(event("session.idle"))) == ["session/turnComplete"]
    assert mapper.turn_id is None
    assert mapper.map(event("assistant.message", messageId="a2", content="late")) == []


def test_a_client_started_turn_opens_with_the_clients_action_and_origin() -> None:
    mapper = EventMapper(S)
    action = {"type": "session/turnStarted", "session": S, "turnId": "mine", "userMessage": {"text": "hi"}}
    origin = {"clientId": "c", "clientSeq": 7}
    mapper.claim_turn("m1", "mine", action, origin)
    assert mapper.map(event("user.message", content="hi", messageId="m1")) == [(action, origin)]
    assert mapper.turn_id == "mine"
    # A second prompt queued behind it closes it first.
    mapped = mapper.map(event("user.message", content="next", messageId="m2"))
    assert kinds(mapped) == ["session/turnComplete", "session/turnStarted"]
    assert mapped[0][0]["turnId"] == "mine"


def test_a_hooks_own_decision_is_no_request_and_a_client_resolution_is_not_repeated() -> None:
    mapper = EventMapper(S)
    mapper.map(event("user.message", content="hi", messageId="m1"))
    hook = {"kind": "hook", "toolName": "x", "toolCallId": "c1", "hookMessage": "no"}
    assert mapper.map(event("permission.requested", requestId="p0", permissionRequest=hook, resolvedByHook=True)) == []
    assert mapper.map(event("permission.completed", requestId="p0", result={"kind": "denied"})) == []
    asked = mapper.map(event("permission.requested", requestId="p1", permissionRequest=hook))
    assert kinds(asked) == ["session/permissionRequest"]
    assert asked[0][0]["request"] == {
        "requestId": "p1",
        "permissionKind": "hook",
        "toolCallId": "c1",
        "toolName": "x",
        "message": "no",
    }
    mapper.client_resolved("p1")
    assert mapper.map(event("permission.completed", requestId="p1", result={"kind": "approved"})) == []
    mapper.map(event("permission.requested", requestId="p2", permissionRequest=hook))
    [(resolved, _)] = mapper.map(event("permission.completed", requestId="p2", result={"kind": "approved"}))
    assert resolved["approved"] is True and resolved["requestId"] == "p2"


def test_a_call_denied_before_it_ran_is_made_ready_then_completed_unsuccessfully() -> None:
    mapper = EventMapper(S)
    mapper.map(event("user.message", content="hi", messageId="m1"))
    requests = [{"toolCallId": "c1", "name": "rm", "arguments": {}}]
    assert kinds(mapper.map(event("assistant.message", messageId="a", content="", toolRequests=requests))) == [
        "session/toolCallStart"
    ]
    result = {"content": "denied", "resultType": "denied"}
    mapped = mapper.map(event("tool.execution_complete", toolCallId="c1", success=False, result=result))
    assert kinds(mapped) == ["session/toolCallReady", "session/toolCallComplete"]
    assert mapped[1][0]["result"]["success"] is False
    # The second result for the same call (a post hook's) adds nothing.
    assert mapper.map(event("tool.execution_complete", toolCallId="c1", success=True, result=result)) == []


def test_the_log_forgets_its_oldest_envelopes_beyond_its_size_bound() -> None:
    log = ActionLog(capacity=1000, max_bytes=10_000)
    for number in range(10):
        log.append({"type": "session/delta", "session": S, "content": "x" * 3000, "n": number})
    assert log.since(7) is not None and log.since(6) is None  # three of 3 KB fit in 10 KB
    [newest] = list(log.since(9) or [])
    assert newest["action"]["n"] == 9
    log.append({"type": "session/delta", "session": S, "content": "y" * 50_000})
    last = log.since(10)
    assert last is not None and len(list(last)) == 1  # one larger than the bound is still kept


def completed_call(mapper: EventMapper, content: str) -> Any:
    """What ``mapper`` makes of a turn whose one call (``cat``, ``c1``) returns ``content``: the
    call's completion."""
    mapper.map(event("user.message", content="hi", messageId="m1"))
    requests = [{"toolCallId": "c1", "name": "cat", "arguments": {}}]
    mapper.map(event("assistant.message", messageId="a", content="", toolRequests=requests))
    mapper.map(event("tool.execution_start", toolCallId="c1", toolName="cat", arguments={}))
    result = {"content": content, "resultType": "success"}
    [(complete, _)] = mapper.map(event("tool.execution_complete", toolCallId="c1", success=True, result=result))
    return complete


def test_a_long_tool_result_reaches_clients_cut_saying_how_much() -> None:
    complete = completed_call(EventMapper(S), "z" * (MAX_RESULT_CHARS + 10))
    text = complete["result"]["content"][0]["text"]
    assert text == "z" * MAX_RESULT_CHARS + "…[truncated: 10 characters]"


def test_with_a_content_store_a_long_tool_result_is_also_kept_whole_and_named_by_its_call() -> None:
    store = ContentStore()
    results = []
    for _ in range(2):  # the same events mapped again (as fetchTurns does) name the same piece
        complete = completed_call(EventMapper(S, store), "é" * (MAX_RESULT_CHARS + 10))
        results.append(complete["result"]["content"])
    assert results[0] == results[1]
    cut, whole = results[0]
    assert cut["text"].endswith("…[truncated: 10 characters]")
    assert whole == {
        "type": "resource",
        "uri": f"{S}/content/tool-c1",
        "contentType": "text/plain",
        "sizeHint": 2 * (MAX_RESULT_CHARS + 10),
    }
    assert store.get(whole["uri"]) == ("é" * (MAX_RESULT_CHARS + 10), "text/plain")
    assert len(store) == 1


def test_a_short_tool_result_is_not_put_in_the_content_store() -> None:
    store = ContentStore()
    mapper = EventMapper(S, store)
    mapper.map(event("user.message", content="hi", messageId="m1"))
    requests = [{"toolCallId": "c1", "name": "cat", "arguments": {}}]
    mapper.map(event("assistant.message", messageId="a", content="", toolRequests=requests))
    mapper.map(event("tool.execution_start", toolCallId="c1", toolName="cat", arguments={}))
    result = {"content": "short", "resultType": "success"}
    [(complete, _)] = mapper.map(event("tool.execution_complete", toolCallId="c1", success=True, result=result))
    assert complete["result"]["content"] == [{"type": "text", "text": "short"}]
    assert len(store) == 0


def test_an_aborted_run_ends_its_turn_as_cancelled_and_its_idle_adds_nothing() -> None:
    mapper = EventMapper(S)
    mapper.map(event("user.message", content="hi", messageId="m1"))
    assert kinds(mapper.map(event("abort", reason="user_initiated"))) == ["session/turnCancelled"]
    assert mapper.map(event("session.idle", aborted=True)) == []


def pre_tool_hook(mapper: EventMapper, invocation: int, call_id: str, calls: list[dict[str, Any]]) -> list[Any]:
    tool_calls = [{"id": call_id, "name": "count", "args": {}}]
    mapped = mapper.map(
        event(
            "hook.start",
            hookInvocationId=invocation,
            hookType="preToolUse",
            hook="on_pre_tool_use",
            input={"sessionId": "s", "cwd": "/", "toolCalls": tool_calls},
        )
    )
    mapped += mapper.map(
        event(
            "hook.end",
            hookInvocationId=invocation,
            hookType="preToolUse",
            hook="on_pre_tool_use",
            success=True,
            calls=calls,
        )
    )
    return mapped


def test_a_calls_result_names_each_pre_tool_hook_that_decided_or_failed_and_what_it_decided() -> None:
    mapper = EventMapper(S)
    mapper.map(event("user.message", content="hi", messageId="m1"))
    mapper.map(
        event(
            "assistant.message",
            messageId="a1",
            content="",
            toolRequests=[
                {"toolCallId": "c1", "name": "count", "arguments": {}},
                {"toolCallId": "c2", "name": "count", "arguments": {}},
            ],
        )
    )
    calls: list[dict[str, Any]] = [
        {"extensionId": "project:quiet", "outcome": "ok", "decision": None, "durationMs": 1.0},
        {"extensionId": "project:guard", "outcome": "ok", "decision": "deny", "durationMs": 1.0},
        {
            "extensionId": "user:broken",
            "outcome": "error",
            "decision": "deny",
            "durationMs": 1.0,
            "error": {"message": "boom"},
        },
    ]
    # Two calls' hooks at once: each decision lands on its own call, and making it adds no action.
    assert pre_tool_hook(mapper, 1, "c1", calls) == []
    assert pre_tool_hook(mapper, 2, "c2", [calls[0]]) == []
    first = mapper.map(
        event(
            "tool.execution_complete",
            toolCallId="c1",
            success=False,
            result={"content": "Denied by preToolUse hook: no"},
        )
    )
    second = mapper.map(event("tool.execution_complete", toolCallId="c2", success=True, result={"content": "1"}))
    assert first[-1][0]["result"]["_meta"] == {
        "hookDecisions": [
            {"extension": "project:guard", "hook": "on_pre_tool_use", "decision": "deny", "outcome": "ok"},
            {
                "extension": "user:broken",
                "hook": "on_pre_tool_use",
                "decision": "deny",
                "outcome": "error",
                "error": "boom",
            },
        ]
    }
    assert "_meta" not in second[-1][0]["result"]  # its only hook had no say


def test_canvas_events_are_the_sessions_actions_in_a_turn_or_not_with_what_their_declaration_says() -> None:
    described: list[tuple[str, str]] = []

    def describe(owner: str, canvas_id: str) -> dict[str, Any]:
        described.append((owner, canvas_id))
        return {"displayName": "Board", "actions": [{"name": "add"}]}

    mapper = EventMapper(S, describe_canvas=describe)
    instance = {"instanceId": "b1", "extensionId": "project:x", "canvasId": "board", "url": "http://127.0.0.1:9/"}
    outside = mapper.map(event("session.canvas.opened", **instance, input={"big": "x" * 5000}))
    canvas = {**instance, "displayName": "Board", "actions": [{"name": "add"}]}  # an input this long is left out
    assert outside == [({"type": "session/canvasOpened", "session": S, "canvas": canvas}, None)]
    assert described == [("project:x", "board")]
    mapper.map(event("user.message", content="hi", messageId="m1"))
    inside = mapper.map(event("session.canvas.closed", instanceId="b1", canvasId="board", extensionId="project:x"))
    assert inside == [({"type": "session/canvasClosed", "session": S, "instanceId": "b1"}, None)]
    by_subagent = {**event("session.canvas.opened", **instance, input={"n": 1}), "agentId": "a1"}
    assert mapper.map(by_subagent)[0][0]["canvas"]["input"] == {"n": 1}
    assert mapper.map(event("capabilities.changed", ui={"canvases": True})) == []
