"""The suite's own tables and its reading of the wire, without node: the docs list exactly
the intended differences, each with its reason, the scenarios cover every surface in both
languages, and a tap file reads back into the messages and differences it holds."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from conformance.compare import Difference, compare
from conformance.differences import INTENDED, PAGE, classify, page_rows, page_table
from conformance.scenarios import LANGUAGES, SCENARIOS, SURFACES
from conformance.transcript import build, read_tap
from helpers import DOCS


def test_the_docs_list_exactly_the_intended_differences_in_the_tables_order() -> None:
    assert page_table((DOCS / PAGE).read_text(encoding="utf-8")) == page_rows(INTENDED), (
        f"docs/{PAGE} 'Differences from Copilot CLI' is not the table of tests/conformance/differences.py; "
        "paste: \n" + "\n".join(page_rows(INTENDED))
    )


def test_every_intended_difference_says_why() -> None:
    assert all(entry.reason for entry in INTENDED)


def test_the_scenarios_cover_every_surface_in_both_languages_under_unique_names() -> None:
    covered = [surface for scenario in SCENARIOS for surface in scenario.covers]
    assert set(covered) == set(SURFACES) and set(covered) <= set(SURFACES), set(SURFACES) ^ set(covered)
    assert len({scenario.name for scenario in SCENARIOS}) == len(SCENARIOS)
    assert all(scenario.code(language) for scenario in SCENARIOS for language in LANGUAGES)


def frame(message: object) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def write_tap(path: Path, chunks: list[tuple[str, bytes]]) -> None:
    lines = [json.dumps({"d": "meta", "pid": 7, "sdk": "/sdk"})]
    lines += [json.dumps({"d": d, "pid": 7, "b": base64.b64encode(chunk).decode()}) for d, chunk in chunks]
    path.write_text("\n".join(lines) + "\n")


def test_a_tap_file_reads_back_into_subjects_with_answers_paired_and_run_details_normalised(tmp_path: Path) -> None:
    resume = frame({"jsonrpc": "2.0", "id": 1, "method": "session.resume", "params": {"sessionId": "s-1"}})
    answer = frame({"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s-1", "workspacePath": "/run/x/files"}})
    event = {
        "type": "hook.start",
        "id": "e1",
        "timestamp": "2026-01-02T03:04:05.678Z",
        "data": {"hookType": "preToolUse"},
    }
    notify = frame({"jsonrpc": "2.0", "method": "session.event", "params": {"sessionId": "s-1", "event": event}})
    tap = tmp_path / "probe.jsonl"
    # A frame split across two chunks, and two frames in one chunk.
    write_tap(tap, [("out", resume[:10]), ("out", resume[10:]), ("in", answer + notify)])
    transcript = build("host", "probe", "/sdk", tap, {"/run/x": "<root>", "s-1": "<session>"})
    assert transcript.subjects() == ["session.resume", "result of session.resume", "event hook.start preToolUse"]
    assert transcript.messages[1].body == {"sessionId": "<session>", "workspacePath": "<root>/files"}
    assert transcript.messages[2].body["timestamp"] == "<time>" and transcript.messages[2].body["id"] == "<id>"
    assert "# sdk: /sdk" in transcript.dump()


def test_differences_name_the_subject_the_key_and_the_side_that_has_it(tmp_path: Path) -> None:
    connect = frame({"jsonrpc": "2.0", "id": 0, "method": "connect", "params": {}})
    cli_tap, host_tap = tmp_path / "cli.jsonl", tmp_path / "host.jsonl"
    result = {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 3, "ok": True}}
    write_tap(cli_tap, [("out", connect), ("in", frame(result))])
    write_tap(host_tap, [("out", connect), ("in", frame({**result, "result": {"protocolVersion": 2}}))])
    found = compare(build("cli", "p", "", cli_tap, {}), build("host", "p", "", host_tap, {}))
    assert [difference.line() for difference in found] == [
        "result of connect: key ok: CLI has it, host lacks it",
        "result of connect: key protocolVersion: CLI 3; host 2",
    ]


def test_a_difference_no_table_allows_is_left_for_the_test_to_report() -> None:
    assert classify(Difference("event session.usage_info", "", "cli only"), "mjs", "join") is not None
    assert classify(Difference("event no.such_event", "", "cli only"), "mjs", "join") is None
    link = Difference("event assistant.turn_start data.turnId", "event tool.execution_start data.turnId", "link")
    assert classify(link, "py", "deny") is not None and classify(link, "mjs", "deny") is None
    assert classify(Difference("hook sessionStart", "", "cli only"), "mjs", "join") is None


def test_a_tap_record_cut_short_by_its_process_exiting_is_left_out(tmp_path: Path) -> None:
    message = b'{"jsonrpc":"2.0","id":1,"result":{}}'
    frame = b"Content-Length: %d\r\n\r\n" % len(message) + message
    whole = json.dumps({"d": "in", "pid": 7, "b": base64.b64encode(frame).decode()})
    tap = tmp_path / "x.jsonl"
    tap.write_text(whole + "\n" + whole[: len(whole) // 2] + "\n")
    assert read_tap(tap) == [(0, 7, "to extension", json.loads(message))]
