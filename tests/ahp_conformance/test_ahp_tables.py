"""The AHP differential test's reading of the wire and its table, without node or a server: what
normalisation rewrites, how messages become subjects and differences, which step a late message
is recorded in, and that the documentation shows exactly the table."""

from __future__ import annotations

from typing import Any

from conformance.compare import Difference
from conformance.differences import page_rows, page_table

from ahp_conformance.ahp_client import Gate, Record, Script
from ahp_conformance.ahp_differences import INTENDED, PAGE, classify, stale
from ahp_conformance.ahp_transcript import compare, normalise, transcript
from helpers import DOCS

SESSION = "ahp-session:/0b6c2f0e-1111-4c1e-9a57-000000000001"


def action(kind: str, channel: str = SESSION, **fields: Any) -> dict[str, Any]:
    params = {"channel": channel, "serverSeq": 7, "action": {"type": kind, **fields}}
    return {"jsonrpc": "2.0", "method": "action", "params": params}


def test_the_docs_show_exactly_the_table_of_intended_differences_in_its_order() -> None:
    assert page_table((DOCS / PAGE).read_text(encoding="utf-8")) == page_rows(INTENDED), (
        f"docs/{PAGE} 'Differences from Copilot CLI' is not the table of tests/ahp_conformance/ahp_differences.py; "
        "paste:\n" + "\n".join(page_rows(INTENDED))
    )


def test_every_intended_difference_says_why_and_matches_one_kind_of_thing() -> None:
    assert all(entry.reason.strip() for entry in INTENDED)
    assert len({(entry.subject, entry.path, entry.kind) for entry in INTENDED}) == len(INTENDED)


def test_normalisation_replaces_what_varies_between_runs_and_servers_and_keeps_the_vocabulary() -> None:
    message = {
        "resource": SESSION,
        "chat": "ahp-chat:/4643f078134a5390b02f86e15871b965",
        "title": "0b6c2f0e-1111-4c1e-9a57-000000000001",
        "createdAt": "2026-11-27T12:28:43.746000000Z",
        "serverSeq": 12,
        "duration": 212,
        "status": 8,
        "toolCallId": "call_0",
        "toolInput": '{"text": "hi"}',
        "folder": "file:///run/x/project/a",
        "text": "please echo hi",
        "kind": "markdown",
        "flags": [True, None],
    }
    assert normalise(message, {"/run/x/project": "<project>"}) == {
        "resource": "ahp-session:/<id>",
        "chat": "ahp-chat:/<id>",
        "title": "<uuid>",
        "createdAt": "<time>",
        "serverSeq": "<n>",
        "duration": "<n>",
        "status": 8,
        "toolCallId": "<id>",
        "toolInput": '{"text":"hi"}',
        "folder": "file://<project>/a",
        "text": "<text>",
        "kind": "markdown",
        "flags": [True, None],
    }


def test_a_transcript_names_each_received_message_by_step_and_kind_and_leaves_out_what_the_client_sent() -> None:
    records = [
        Record("initialize", "sent", 1, {"jsonrpc": "2.0", "id": 1, "method": "initialize"}, "initialize"),
        Record("initialize", "received", 1, {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}}, "initialize"),
        Record("turn", "received", 1, action("chat/delta", turnId="turn-1", content="x")),
        Record("sessions", "received", 1, {"jsonrpc": "2.0", "method": "root/sessionAdded", "params": {}}),
        Record("cancel", "client", 0, {"note": "waited in vain", "what": "the end of turn-2"}),
    ]
    assert [message.subject for message in transcript(records, {})] == [
        "initialize: result of initialize",
        "turn: action chat/delta",
        "sessions: root/sessionAdded",
        "cancel: note waited in vain",
    ]


def test_comparison_reports_keys_one_side_lacks_and_values_that_differ_but_not_order_or_repeats() -> None:
    cli = [
        Record("turn", "received", 1, action("chat/turnComplete", "ahp-chat:/c", turnId="turn-1", duration=3)),
        Record("turn", "received", 1, action("session/activityChanged")),
        Record("turn", "received", 1, action("session/activityChanged")),
    ]
    host = [
        Record("turn", "received", 1, action("session/activityChanged")),
        Record("turn", "received", 1, action("chat/turnComplete", "ahp-chat:/c", turnId="turn-2")),
    ]
    lines = [difference.line() for difference in compare(transcript(cli, {}), transcript(host, {}))]
    assert lines == [
        "turn: action chat/turnComplete: key action.duration: CLI has it, host lacks it",
        'turn: action chat/turnComplete: key action.turnId: CLI "turn-1"; host "turn-2"',
    ]


def test_the_table_allows_what_it_names_and_an_entry_that_allows_nothing_is_stale() -> None:
    serverinfo = Difference("initialize: result of initialize", "serverInfo", "host only", "")
    unknown = Difference("turn: action chat/delta", "action.content", "cli only", "")
    assert classify(serverinfo) is not None and classify(unknown) is None
    assert [entry.path for entry in stale([serverinfo]) if entry.path == "serverInfo"] == []
    assert len(stale([serverinfo])) == len(INTENDED) - 1


def test_an_action_about_one_of_the_scripts_turns_is_recorded_in_that_turns_step_whenever_it_arrives() -> None:
    script = Script("ws://127.0.0.1:1/", "file:///p", Gate())
    script.step = "reconnect"
    script.received(1, action("chat/turnComplete", "ahp-chat:/c", turnId="turn-1"), None)
    script.received(1, action("chat/turnCancelled", "ahp-chat:/c", turnId="turn-2"), None)
    script.received(1, action("session/activityChanged"), None)
    script.received(1, action("chat/delta", "ahp-chat:/c", turnId="someone-elses"), None)
    assert [record.step for record in script.records] == ["turn", "cancel", "reconnect", "reconnect"]
    assert script.last_seq == 7
