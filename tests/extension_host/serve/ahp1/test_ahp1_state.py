"""The AHP 1.0 reducers, checked against the specification's reducer scenarios
(``types/test-cases/reducers/`` of the agent host protocol): each scenario transcribed as its
initial state, actions and expected state, the clock at 9999 ms as there, a missing key equal to
``null``; the scenario's number leads the test id.

Checked, for the chat reducer (``ahp-chat:`` channels): 005-032 but 030 and 033-038 (turns,
deltas, reasoning, response parts, turn end with error and cancel, the tool-call lifecycle with
confirmation, denial, result confirmation, re-confirmation, usage, no-ops for another turn or call),
039-057 (steering and queued messages, their reordering), 063-069 (truncation), 070 (a whole turn),
075 (a new turn clears the read flag), 084-086 (tool-call content), 088 and 090-097 (no-ops). The
scenarios 039-057, 063-066 and 069 are stored only in the seed protocol's shapes (``session/…``
actions, ``userMessage``); they are carried over to 1.0's (``chat/…``, ``message``) unchanged
otherwise. For the session reducer (``ahp-session:`` channels): 003, 004, 030, 071-074. The
specification's state type keeps a session's summary fields inline (``provider``, ``title``,
``status`` beside ``lifecycle`` and ``chats``, as its reducer source and its client mirror read
them) while those stored scenarios still nest them under ``summary``: they are transcribed
inline, with ISO 8601 timestamps. 030 follows the reducer source: a new title leaves
``modifiedAt`` as it was.

Left out: 033, 035-038 and 058-062 (model, active client, customizations: actions these
reducers do not implement), 071-083 and 089 of the terminal reducer, and the root and changeset
reducers' scenarios. The session actions ``session/chatAdded``, ``chatRemoved``, ``chatUpdated``,
``defaultChatChanged``, ``activityChanged``, ``metaChanged`` and the chat actions
``chat/activityChanged``, ``turnsLoaded`` and ``draftChanged`` have no stored scenario: they are
checked against the specification's reducer source (the cases without a number);
:func:`test_every_action_the_reducers_know_is_checked_by_a_case` keeps every action type covered.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from extension_host.serve.ahp1.state import (
    CHAT_ACTIONS,
    ERROR,
    IDLE,
    IN_PROGRESS,
    INPUT_NEEDED,
    IS_ARCHIVED,
    IS_READ,
    SESSION_ACTIONS,
    iso,
    reduce_chat,
    reduce_session,
)

S = "copilot:/test-session"
T0 = "1970-01-01T00:00:01.000Z"
T2 = "1970-01-01T00:00:02.000Z"
NOW = "1970-01-01T00:00:09.999Z"
State = dict[str, Any]
Case = tuple[str, State, list[State], State]


def message(text: str = "Hello") -> State:
    return {"text": text, "origin": {"kind": "user"}}


HELLO = message()


def chat(status: int = IDLE, modified: str = T2, **extra: Any) -> State:
    return {"turns": [], "resource": S, "title": "Test Session", "status": status, "modifiedAt": modified, **extra}


def turn(turn_id: str = "turn-1", text: str = "Hello", *parts: State, **extra: Any) -> State:
    return {"id": turn_id, "message": message(text), "responseParts": list(parts), "usage": None} | extra


def active(*parts: State, status: int = IN_PROGRESS, **extra: Any) -> State:
    return chat(status, activeTurn=turn("turn-1", "Hello", *parts), **extra)


def ended(state: str, *parts: State, status: int = IDLE, error: Any = None) -> State:
    return chat(status, NOW, turns=[turn("turn-1", "Hello", *parts, state=state, error=error)], activeTurn=None)


def call(status: str, **fields: Any) -> State:
    base = {"status": status, "toolCallId": "tc-1", "toolName": "bash", "displayName": "Run Command"}
    return {"kind": "toolCall", "toolCall": base | fields}


def act(kind: str, **fields: Any) -> State:
    return {"type": f"chat/{kind}", "turnId": "turn-1", **fields}


def tool(kind: str, **fields: Any) -> State:
    return act(kind, toolCallId="tc-1", **fields)


START = tool("toolCallStart", toolName="bash", displayName="Run Command")
AUTO = tool("toolCallReady", invocationMessage="Run", confirmed="not-needed")
DONE = {"success": True, "pastTenseMessage": "Done"}
MD = {"kind": "markdown", "id": "md-1", "content": ""}


def md(content: str, part_id: str = "md-1") -> State:
    return {"kind": "markdown", "id": part_id, "content": content}


def pending(entry_id: str, text: str) -> State:
    return {"id": entry_id, "message": message(text)}


def set_pending(kind: str, entry_id: str, text: str) -> State:
    return {"type": "chat/pendingMessageSet", "kind": kind, "id": entry_id, "message": message(text)}


def remove_pending(kind: str, entry_id: str) -> State:
    return {"type": "chat/pendingMessageRemoved", "kind": kind, "id": entry_id}


def reorder(*order: str) -> State:
    return {"type": "chat/queuedMessagesReordered", "order": list(order)}


QUEUED = [pending("pm-1", "First"), pending("pm-2", "Second"), pending("pm-3", "Third")]
OLD_TURNS: list[State] = [
    {"id": f"t{n}", "message": message(f"Turn {n}"), "responseParts": [], "usage": None, "state": "complete"}
    for n in (1, 2, 3)
]


def truncated(kept: int, status: int = IDLE) -> State:
    return chat(status, NOW, turns=OLD_TURNS[:kept], activeTurn=None)


RUNNING = call("running", invocationMessage="Running", toolInput="ls", confirmed="user-action")
COMPLETED = call(
    "completed",
    invocationMessage="Ran command",
    toolInput="ls",
    confirmed="user-action",
    success=True,
    pastTenseMessage="Ran command",
)
TERMINAL = [{"type": "terminal", "resource": "agenthost:/terminal/1", "title": "bash"}]

CHAT_CASES: list[Case] = [
    (
        "005 turnStarted opens the active turn",
        chat(IDLE, T0),
        [act("turnStarted", message=HELLO)],
        active(modifiedAt=NOW),
    ),
    (
        "006 turnStarted with a queuedMessageId removes that queued message",
        chat(IDLE, T0, queuedMessages=[pending("q-1", "First"), pending("q-2", "Second")]),
        [act("turnStarted", message=message("First"), queuedMessageId="q-1")],
        chat(IN_PROGRESS, NOW, activeTurn=turn("turn-1", "First"), queuedMessages=[pending("q-2", "Second")]),
    ),
    (
        "007 turnStarted with the last queued message leaves no queue",
        chat(IDLE, T0, queuedMessages=[pending("q-1", "Only")]),
        [act("turnStarted", message=message("Only"), queuedMessageId="q-1")],
        chat(IN_PROGRESS, NOW, activeTurn=turn("turn-1", "Only")),
    ),
    (
        "008 turnStarted with the steering message's id removes it",
        chat(IDLE, T0, steeringMessage=pending("s-1", "Steer")),
        [act("turnStarted", message=message("Steer"), queuedMessageId="s-1")],
        chat(IN_PROGRESS, NOW, activeTurn=turn("turn-1", "Steer")),
    ),
    (
        "009 turnStarted without a queuedMessageId keeps the pending messages",
        chat(IDLE, T0, steeringMessage=pending("s-1", "Steer"), queuedMessages=[pending("q-1", "Queued")]),
        [act("turnStarted", message=HELLO)],
        active(modifiedAt=NOW, steeringMessage=pending("s-1", "Steer"), queuedMessages=[pending("q-1", "Queued")]),
    ),
    (
        "010 delta appends to its markdown part",
        active(),
        [
            act("responsePart", part=MD),
            act("delta", partId="md-1", content="Hello "),
            act("delta", partId="md-1", content="world"),
        ],
        active(md("Hello world")),
    ),
    (
        "011 a delta for another turn changes nothing",
        active(md("a")),
        [{**act("delta", partId="md-1", content="b"), "turnId": "turn-2"}],
        active(md("a")),
    ),
    ("012 a delta without an active turn changes nothing", chat(), [act("delta", partId="md-1", content="b")], chat()),
    ("013 responsePart adds a part", active(), [act("responsePart", part=md("hi"))], active(md("hi"))),
    (
        "014 turnComplete finalizes the turn with its streamed text",
        active(),
        [act("responsePart", part=MD), act("delta", partId="md-1", content="Response text"), act("turnComplete")],
        ended("complete", md("Response text")),
    ),
    ("015 turnCancelled finalizes the turn as cancelled", active(), [act("turnCancelled")], ended("cancelled")),
    (
        "016 error finalizes the turn with its error and the chat in error",
        active(),
        [act("error", error={"errorType": "runtime", "message": "Something broke"})],
        ended("error", status=ERROR, error={"errorType": "runtime", "message": "Something broke"}),
    ),
    (
        "017 turnComplete cancels a tool call still streaming as skipped",
        active(),
        [START, act("turnComplete")],
        ended("complete", call("cancelled", invocationMessage="", toolInput=None, reason="skipped")),
    ),
    (
        "018 turnComplete for another turn changes nothing",
        active(),
        [{**act("turnComplete"), "turnId": "turn-2"}],
        active(),
    ),
    (
        "019 a tool call's whole lifecycle: start, delta, ready, confirmed, complete",
        active(),
        [
            {**START, "intention": "List the files in the current directory"},
            tool("toolCallDelta", content="ls -la", invocationMessage="Listing files"),
            tool("toolCallReady", invocationMessage="Run: ls -la", toolInput="ls -la"),
            tool("toolCallConfirmed", approved=True, confirmed="user-action"),
            tool("toolCallComplete", result={"success": True, "pastTenseMessage": "Ran command"}),
        ],
        active(
            call(
                "completed",
                intention="List the files in the current directory",
                invocationMessage="Run: ls -la",
                toolInput="ls -la",
                confirmed="user-action",
                success=True,
                pastTenseMessage="Ran command",
            )
        ),
    ),
    (
        "020 a tool call ready with confirmation not needed runs at once",
        active(),
        [START, AUTO],
        active(call("running", invocationMessage="Run", confirmed="not-needed")),
    ),
    (
        "021 a denied tool call is cancelled with the reason",
        active(),
        [
            START,
            tool("toolCallReady", invocationMessage="Run: rm -rf /"),
            tool("toolCallConfirmed", approved=False, reason="denied"),
        ],
        active(call("cancelled", invocationMessage="Run: rm -rf /", reason="denied")),
    ),
    (
        "022 a result waiting for confirmation completes when approved",
        active(),
        [
            START,
            AUTO,
            tool("toolCallComplete", result=DONE, requiresResultConfirmation=True),
            tool("toolCallResultConfirmed", approved=True),
        ],
        active(call("completed", invocationMessage="Run", confirmed="not-needed", **DONE)),
    ),
    (
        "023 a denied result cancels the call as result-denied",
        active(),
        [
            START,
            AUTO,
            tool("toolCallComplete", result=DONE, requiresResultConfirmation=True),
            tool("toolCallResultConfirmed", approved=False),
        ],
        active(call("cancelled", invocationMessage="Run", reason="result-denied")),
    ),
    (
        "024 a call completed while waiting for confirmation counts as not needing it",
        active(),
        [START, tool("toolCallReady", invocationMessage="Run"), tool("toolCallComplete", result=DONE)],
        active(call("completed", invocationMessage="Run", confirmed="not-needed", **DONE)),
    ),
    (
        "025 an action for an unknown tool call changes nothing",
        active(),
        [act("toolCallDelta", toolCallId="nonexistent", content="data")],
        active(),
    ),
    (
        "026 toolCallReady sends a running call back to pending-confirmation",
        active(),
        [
            START,
            AUTO,
            tool(
                "toolCallReady",
                invocationMessage="Run: rm -rf /tmp/test",
                _meta={"permissionKind": "shell", "fullCommandText": "rm -rf /tmp/test"},
            ),
        ],
        active(
            call(
                "pending-confirmation",
                _meta={"permissionKind": "shell", "fullCommandText": "rm -rf /tmp/test"},
                invocationMessage="Run: rm -rf /tmp/test",
            ),
            status=INPUT_NEEDED,
        ),
    ),
    (
        "027 a re-confirmation approved runs the call again",
        active(),
        [
            START,
            AUTO,
            tool("toolCallReady", invocationMessage="Permission needed"),
            tool("toolCallConfirmed", approved=True, confirmed="user-action"),
        ],
        active(call("running", invocationMessage="Permission needed", confirmed="user-action")),
    ),
    (
        "028 a re-confirmation denied cancels the call",
        active(),
        [
            START,
            AUTO,
            tool("toolCallReady", invocationMessage="Permission needed"),
            tool("toolCallConfirmed", approved=False, reason="denied"),
        ],
        active(call("cancelled", invocationMessage="Permission needed", reason="denied")),
    ),
    (
        "029 toolCallReady leaves a call already waiting for confirmation as it is",
        active(call("pending-confirmation", invocationMessage="Run"), status=INPUT_NEEDED),
        [tool("toolCallReady", invocationMessage="Run again")],
        active(call("pending-confirmation", invocationMessage="Run"), status=INPUT_NEEDED),
    ),
    (
        "031 usage lands on the active turn",
        active(),
        [act("usage", usage={"inputTokens": 100, "outputTokens": 50})],
        chat(IN_PROGRESS, activeTurn=turn(usage={"inputTokens": 100, "outputTokens": 50})),
    ),
    (
        "032 reasoning appends to its reasoning part",
        active(),
        [
            act("responsePart", part={"kind": "reasoning", "id": "r-1", "content": ""}),
            act("reasoning", partId="r-1", content="Thinking about "),
            act("reasoning", partId="r-1", content="the answer"),
        ],
        active({"kind": "reasoning", "id": "r-1", "content": "Thinking about the answer"}),
    ),
    (
        "039 a steering message is set",
        chat(),
        [set_pending("steering", "sm-1", "Focus on tests")],
        chat(steeringMessage=pending("sm-1", "Focus on tests")),
    ),
    (
        "040 a new steering message replaces the one there",
        chat(steeringMessage=pending("sm-1", "Old")),
        [set_pending("steering", "sm-2", "New")],
        chat(steeringMessage=pending("sm-2", "New")),
    ),
    (
        "041 setting the steering message with its id updates its text",
        chat(steeringMessage=pending("sm-1", "Old")),
        [set_pending("steering", "sm-1", "Updated")],
        chat(steeringMessage=pending("sm-1", "Updated")),
    ),
    (
        "042 the steering message is removed",
        chat(steeringMessage=pending("sm-1", "Hello")),
        [remove_pending("steering", "sm-1")],
        chat(),
    ),
    (
        "043 removing a steering message by another id changes nothing",
        chat(steeringMessage=pending("sm-1", "Hello")),
        [remove_pending("steering", "sm-unknown")],
        chat(steeringMessage=pending("sm-1", "Hello")),
    ),
    (
        "044 removing a steering message when there is none changes nothing",
        chat(),
        [remove_pending("steering", "sm-1")],
        chat(),
    ),
    ("045 a queued message is set", chat(), [set_pending("queued", "pm-1", "First")], chat(queuedMessages=QUEUED[:1])),
    (
        "046 a queued message with a new id is appended",
        chat(queuedMessages=QUEUED[:1]),
        [set_pending("queued", "pm-2", "Second")],
        chat(queuedMessages=QUEUED[:2]),
    ),
    (
        "047 a queued message with a known id is updated in place",
        chat(queuedMessages=QUEUED[:2]),
        [set_pending("queued", "pm-1", "Updated first")],
        chat(queuedMessages=[pending("pm-1", "Updated first"), QUEUED[1]]),
    ),
    (
        "048 a queued message is removed",
        chat(queuedMessages=QUEUED[:2]),
        [remove_pending("queued", "pm-1")],
        chat(queuedMessages=QUEUED[1:2]),
    ),
    (
        "049 removing the last queued message leaves no queue",
        chat(queuedMessages=QUEUED[:1]),
        [remove_pending("queued", "pm-1")],
        chat(),
    ),
    (
        "050 removing an unknown queued message changes nothing",
        chat(queuedMessages=QUEUED[:1]),
        [remove_pending("queued", "pm-9")],
        chat(queuedMessages=QUEUED[:1]),
    ),
    (
        "051 removing from an empty queue changes nothing",
        chat(queuedMessages=[]),
        [remove_pending("queued", "pm-1")],
        chat(queuedMessages=[]),
    ),
    (
        "052 steering and queued messages are independent",
        chat(),
        [
            set_pending("steering", "sm-1", "Steer"),
            set_pending("queued", "pm-1", "First"),
            remove_pending("steering", "sm-1"),
        ],
        chat(queuedMessages=QUEUED[:1]),
    ),
    (
        "053 queued messages are reordered",
        chat(queuedMessages=QUEUED),
        [reorder("pm-3", "pm-1", "pm-2")],
        chat(queuedMessages=[QUEUED[2], QUEUED[0], QUEUED[1]]),
    ),
    (
        "054 messages missing from the order keep theirs, at the end",
        chat(queuedMessages=QUEUED),
        [reorder("pm-3")],
        chat(queuedMessages=[QUEUED[2], QUEUED[0], QUEUED[1]]),
    ),
    (
        "055 unknown ids in the order are ignored",
        chat(queuedMessages=QUEUED[:2]),
        [reorder("pm-9", "pm-2", "pm-1")],
        chat(queuedMessages=[QUEUED[1], QUEUED[0]]),
    ),
    (
        "056 an empty order keeps the queue as it was",
        chat(queuedMessages=QUEUED),
        [reorder()],
        chat(queuedMessages=QUEUED),
    ),
    ("057 reordering without queued messages changes nothing", chat(), [reorder("pm-1")], chat()),
    (
        "063 truncated keeps the turns up to turnId",
        chat(turns=OLD_TURNS),
        [{"type": "chat/truncated", "turnId": "t2"}],
        truncated(2),
    ),
    (
        "064 truncated at the last turn keeps them all",
        chat(turns=OLD_TURNS),
        [{"type": "chat/truncated", "turnId": "t3"}],
        truncated(3),
    ),
    (
        "065 truncated at the first turn keeps only it",
        chat(turns=OLD_TURNS),
        [{"type": "chat/truncated", "turnId": "t1"}],
        truncated(1),
    ),
    (
        "066 truncated without a turnId clears them all",
        chat(turns=OLD_TURNS),
        [{"type": "chat/truncated"}],
        truncated(0),
    ),
    (
        "067 truncated drops the active turn",
        active(turns=OLD_TURNS[:2]),
        [{"type": "chat/truncated", "turnId": "t1"}],
        truncated(1),
    ),
    ("068 truncated drops the active turn when clearing all", active(), [{"type": "chat/truncated"}], truncated(0)),
    (
        "069 truncated at an unknown turn changes nothing",
        chat(turns=OLD_TURNS),
        [{"type": "chat/truncated", "turnId": "t9"}],
        chat(turns=OLD_TURNS),
    ),
    (
        "070 a whole turn: text, two tool calls (one re-confirmed), usage, reasoning",
        chat(IDLE, T0),
        [
            {**act("turnStarted", message=message("Fix the bug")), "turnId": "t1"},
            *(
                {**action, "turnId": "t1"}
                for action in (
                    act("responsePart", part=MD),
                    act("delta", partId="md-1", content="I will "),
                    act("delta", partId="md-1", content="fix it."),
                    act("toolCallStart", toolCallId="tc1", toolName="edit", displayName="Edit File"),
                    act("toolCallReady", toolCallId="tc1", invocationMessage="Edit main.ts", confirmed="not-needed"),
                    act(
                        "toolCallComplete",
                        toolCallId="tc1",
                        result={"success": True, "pastTenseMessage": "Edited main.ts"},
                    ),
                    act("toolCallStart", toolCallId="tc2", toolName="write", displayName="Write File"),
                    act("toolCallReady", toolCallId="tc2", invocationMessage="Write /tmp/out", confirmed="not-needed"),
                    act(
                        "toolCallReady",
                        toolCallId="tc2",
                        invocationMessage="Write to /tmp/out",
                        _meta={"permissionKind": "write", "path": "/tmp/out"},
                    ),
                    act("toolCallConfirmed", toolCallId="tc2", approved=True, confirmed="user-action"),
                    act(
                        "toolCallComplete", toolCallId="tc2", result={"success": True, "pastTenseMessage": "Wrote file"}
                    ),
                    act("usage", usage={"inputTokens": 200, "outputTokens": 100}),
                    act("responsePart", part={"kind": "reasoning", "id": "r-1", "content": ""}),
                    act("reasoning", partId="r-1", content="The bug was in line 42"),
                    act("responsePart", part=md("## Fix applied", "md-2")),
                    act("turnComplete"),
                )
            ),
        ],
        chat(
            IDLE,
            NOW,
            activeTurn=None,
            turns=[
                turn(
                    "t1",
                    "Fix the bug",
                    md("I will fix it."),
                    call(
                        "completed",
                        toolCallId="tc1",
                        toolName="edit",
                        displayName="Edit File",
                        invocationMessage="Edit main.ts",
                        confirmed="not-needed",
                        success=True,
                        pastTenseMessage="Edited main.ts",
                    ),
                    call(
                        "completed",
                        toolCallId="tc2",
                        toolName="write",
                        displayName="Write File",
                        _meta={"permissionKind": "write", "path": "/tmp/out"},
                        invocationMessage="Write to /tmp/out",
                        confirmed="user-action",
                        success=True,
                        pastTenseMessage="Wrote file",
                    ),
                    {"kind": "reasoning", "id": "r-1", "content": "The bug was in line 42"},
                    md("## Fix applied", "md-2"),
                    usage={"inputTokens": 200, "outputTokens": 100},
                    state="complete",
                )
            ],
        ),
    ),
    (
        "075 turnStarted clears the read flag",
        chat(IDLE | IS_READ, T0),
        [act("turnStarted", message=HELLO)],
        active(modifiedAt=NOW),
    ),
    (
        "084 toolCallContentChanged sets the content of a running call",
        active(call("running", invocationMessage="Running command", toolInput="ls -la", confirmed="user-action")),
        [tool("toolCallContentChanged", content=TERMINAL)],
        active(
            call(
                "running",
                invocationMessage="Running command",
                toolInput="ls -la",
                confirmed="user-action",
                content=TERMINAL,
            )
        ),
    ),
    (
        "085 toolCallContentChanged leaves a finished call as it is",
        active(COMPLETED),
        [tool("toolCallContentChanged", content=TERMINAL)],
        active(COMPLETED),
    ),
    (
        "086 toolCallContentChanged replaces the content there",
        active({**RUNNING, "toolCall": {**RUNNING["toolCall"], "content": TERMINAL}}),
        [tool("toolCallContentChanged", content=[*TERMINAL, {"type": "text", "text": "additional output"}])],
        active(
            {
                **RUNNING,
                "toolCall": {
                    **RUNNING["toolCall"],
                    "content": [*TERMINAL, {"type": "text", "text": "additional output"}],
                },
            }
        ),
    ),
    ("088 an unknown action changes nothing", active(), [{"type": "chat/somethingNew", "turnId": "turn-1"}], active()),
    (
        "090 toolCallDelta for another turn changes nothing",
        active(call("streaming")),
        [{**tool("toolCallDelta", content="x"), "turnId": "turn-2"}],
        active(call("streaming")),
    ),
    (
        "091 responsePart for another turn changes nothing",
        active(),
        [{**act("responsePart", part=md("x")), "turnId": "turn-2"}],
        active(),
    ),
    ("092 toolCallStart for another turn changes nothing", active(), [{**START, "turnId": "turn-2"}], active()),
    (
        "093 usage for another turn changes nothing",
        active(),
        [{**act("usage", usage={"inputTokens": 1}), "turnId": "turn-2"}],
        active(),
    ),
    (
        "094 a delta for an unknown part changes nothing",
        active(md("a")),
        [act("delta", partId="md-9", content="b")],
        active(md("a")),
    ),
    (
        "095 toolCallDelta on a call no longer streaming changes nothing",
        active(RUNNING),
        [tool("toolCallDelta", content="extra data")],
        active(RUNNING),
    ),
    (
        "096 toolCallConfirmed on a call not waiting changes nothing",
        active(RUNNING),
        [tool("toolCallConfirmed", approved=True, confirmed="user-action")],
        active(RUNNING),
    ),
    (
        "097 toolCallComplete on a finished call changes nothing",
        active(COMPLETED),
        [tool("toolCallComplete", result=DONE)],
        active(COMPLETED),
    ),
    # From the specification's reducer source: no stored scenario.
    (
        "activityChanged sets the chat's activity",
        chat(),
        [{"type": "chat/activityChanged", "activity": "Thinking"}],
        chat(activity="Thinking"),
    ),
    (
        "turnsLoaded puts older turns first, skips known ones and keeps the next cursor",
        chat(turns=OLD_TURNS[2:], turnsNextCursor="c1"),
        [{"type": "chat/turnsLoaded", "turns": OLD_TURNS, "turnsNextCursor": "c0"}],
        chat(turns=OLD_TURNS, turnsNextCursor="c0"),
    ),
    (
        "draftChanged sets the draft",
        chat(),
        [{"type": "chat/draftChanged", "draft": message("Half")}],
        chat(draft=message("Half")),
    ),
]


def session(status: int = IDLE, lifecycle: str = "ready", **extra: Any) -> State:
    summary = {"resource": S, "provider": "copilot", "title": "Test Session", "status": status}
    return summary | {"createdAt": iso(1000), "modifiedAt": iso(1000), "lifecycle": lifecycle, "chats": []} | extra


def chat_summary(name: str, status: int = IDLE, **extra: Any) -> State:
    return {"resource": f"ahp-chat:/{name}", "title": name, "status": status, "modifiedAt": T0, **extra}


CHATS = [chat_summary("a"), chat_summary("b")]
FAILURE = {"errorType": "init", "message": "Failed to start"}

SESSION_CASES: list[Case] = [
    ("003 ready makes the session ready", session(lifecycle="creating"), [{"type": "session/ready"}], session()),
    (
        "004 creationFailed records the error",
        session(lifecycle="creating"),
        [{"type": "session/creationFailed", "error": FAILURE}],
        session(lifecycle="creationFailed", creationError=FAILURE),
    ),
    (
        "034 serverToolsChanged sets the server's tools",
        session(lifecycle="creating"),
        [{"type": "session/serverToolsChanged", "tools": [{"name": "bash", "description": "Run shell commands"}]}],
        session(lifecycle="creating", serverTools=[{"name": "bash", "description": "Run shell commands"}]),
    ),
    (
        "030 titleChanged sets the title",
        session(lifecycle="creating"),
        [{"type": "session/titleChanged", "title": "New Title"}],
        session(lifecycle="creating", title="New Title"),
    ),
    (
        "071 isReadChanged marks the session read",
        session(),
        [{"type": "session/isReadChanged", "isRead": True}],
        session(IDLE | IS_READ),
    ),
    (
        "072 isReadChanged marks it unread",
        session(IDLE | IS_READ),
        [{"type": "session/isReadChanged", "isRead": False}],
        session(),
    ),
    (
        "073 isArchivedChanged archives it",
        session(),
        [{"type": "session/isArchivedChanged", "isArchived": True}],
        session(IDLE | IS_ARCHIVED),
    ),
    (
        "074 isArchivedChanged unarchives it",
        session(IDLE | IS_ARCHIVED),
        [{"type": "session/isArchivedChanged", "isArchived": False}],
        session(),
    ),
    # From the specification's reducer source: no stored scenario.
    (
        "chatAdded appends a new chat and replaces a known one in place",
        session(chats=CHATS),
        [
            {"type": "session/chatAdded", "summary": chat_summary("c")},
            {"type": "session/chatAdded", "summary": chat_summary("a", title="Renamed")},
        ],
        session(chats=[chat_summary("a", title="Renamed"), CHATS[1], chat_summary("c")]),
    ),
    (
        "chatRemoved removes the chat and the default that named it",
        session(chats=CHATS, defaultChat="ahp-chat:/a"),
        [
            {"type": "session/chatRemoved", "chat": "ahp-chat:/a"},
            {"type": "session/chatRemoved", "chat": "ahp-chat:/z"},
        ],
        session(chats=CHATS[1:]),
    ),
    (
        "chatUpdated merges the changes but never the resource, and ignores an unknown chat",
        session(chats=CHATS),
        [
            {
                "type": "session/chatUpdated",
                "chat": "ahp-chat:/b",
                "changes": {"status": IN_PROGRESS, "resource": "ahp-chat:/x"},
            },
            {"type": "session/chatUpdated", "chat": "ahp-chat:/z", "changes": {"status": ERROR}},
        ],
        session(chats=[CHATS[0], chat_summary("b", IN_PROGRESS)]),
    ),
    (
        "defaultChatChanged sets the default chat",
        session(chats=CHATS),
        [{"type": "session/defaultChatChanged", "defaultChat": "ahp-chat:/b"}],
        session(chats=CHATS, defaultChat="ahp-chat:/b"),
    ),
    (
        "defaultChatChanged without a chat clears it",
        session(defaultChat="ahp-chat:/a"),
        [{"type": "session/defaultChatChanged"}],
        session(),
    ),
    (
        "activityChanged sets the session's activity",
        session(),
        [{"type": "session/activityChanged", "activity": "Editing"}],
        session(activity="Editing"),
    ),
    (
        "metaChanged replaces _meta",
        session(_meta={"a": 1}),
        [{"type": "session/metaChanged", "_meta": {"b": 2}}],
        session(_meta={"b": 2}),
    ),
]

Reducer = Callable[..., State]
CASES: list[tuple[str, Reducer, State, list[State], State]] = [
    (name, reduce_chat, initial, actions, expected) for name, initial, actions, expected in CHAT_CASES
] + [(name, reduce_session, initial, actions, expected) for name, initial, actions, expected in SESSION_CASES]


def nulls_dropped(value: Any) -> Any:
    """``value`` with every ``null`` member left out: a missing key equals ``null``."""
    if isinstance(value, dict):
        return {key: nulls_dropped(inner) for key, inner in value.items() if inner is not None}
    if isinstance(value, list):
        return [nulls_dropped(inner) for inner in value]
    return value


@pytest.mark.parametrize(
    ("reducer", "initial", "actions", "expected"),
    [pytest.param(*rest, id=name) for name, *rest in CASES],
)
def test_the_reducers_reach_the_specifications_expected_state(
    reducer: Reducer, initial: State, actions: list[State], expected: State
) -> None:
    state = initial
    before = copy.deepcopy(initial)
    for action in actions:
        state = reducer(state, action, now=lambda: 9999)
    assert nulls_dropped(state) == nulls_dropped(expected)
    assert initial == before  # the reducer never changes the state it is given


def test_every_action_the_reducers_know_is_checked_by_a_case() -> None:
    chat_types = {action["type"] for _, _, actions, _ in CHAT_CASES for action in actions}
    session_types = {action["type"] for _, _, actions, _ in SESSION_CASES for action in actions}
    assert CHAT_ACTIONS - chat_types == set()
    assert SESSION_ACTIONS - session_types == set()


def test_a_new_turn_clears_the_read_flag_and_keeps_the_archived_one() -> None:
    state = reduce_chat(chat(IDLE | IS_READ | IS_ARCHIVED), act("turnStarted", message=HELLO))
    assert state["status"] == IN_PROGRESS | IS_ARCHIVED


def test_an_unknown_action_returns_the_very_state_it_was_given() -> None:
    state = active()
    assert reduce_chat(state, {"type": "chat/somethingNew"}) is state
    assert reduce_session(state, {"type": "session/somethingNew"}) is state


@given(st.integers(min_value=0, max_value=2**41))
def test_timestamps_are_iso_8601_with_milliseconds_in_utc(ms: int) -> None:
    text = iso(ms)
    assert text.endswith("Z") and len(text.split(".")[1]) == 4 and int(text.split(".")[1][:3]) == ms % 1000
