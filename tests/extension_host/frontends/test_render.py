"""Human output and terminal safety: text from an extension never controls the terminal."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extension_host.frontends import render
from extension_host.hooks.runner import HookRecord
from extension_host.info import ExtensionInfo, ToolInfo
from extension_host.outcomes import PromptResult, ReloadOutcome
from extension_protocol.results import ToolResult

BIDI = "\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
UNSAFE = frozenset(
    [chr(code) for code in range(0x20) if chr(code) not in "\n\t"]
    + [chr(code) for code in range(0x7F, 0xA0)]
    + list(BIDI)
)
"""What must never reach a terminal raw (newline and tab aside)."""
UNSAFE_IN_CELL = UNSAFE | {"\n", "\t"}

HOSTILE = "\x1b[2J\x1b]0;pwned\x07ok\r\nnext\x9b31m\x7f\u202eevil\u2066\ttab\x00"
"""Clears the screen, sets the window title, rewrites a line, one-byte CSI, DEL, bidi."""


def raw_controls(text: str, unsafe: frozenset[str] = UNSAFE) -> set[str]:
    return {char for char in text if char in unsafe}


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b[2Jclear", "\\x1b[2Jclear"),
        ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),
        ("progress 50%\rdone", "progress 50%\\rdone"),
        ("\x9b31mred", "\\x9b31mred"),
        ("a\x7fb", "a\\x7fb"),
        ("\x00\x08\x0b\x0c\x1f", "\\x00\\x08\\x0b\\x0c\\x1f"),
        ("txt.\u202eexe", "txt.\\u202eexe"),
        ("\u2066isolated\u2069 \u200e\u200f\u061c", "\\u2066isolated\\u2069 \\u200e\\u200f\\u061c"),
        ("lone \ud800 surrogate", "lone \\ud800 surrogate"),
    ],
)
def test_safe_text_shows_control_characters_as_visible_escapes(text: str, shown: str) -> None:
    """ESC sequences, CR, C1, DEL, C0, bidi controls and lone surrogates become readable escapes."""
    assert render.safe_text(text) == shown
    assert render.safe_cell(text) == shown


def test_safe_text_keeps_lines_tabs_and_printable_text() -> None:
    """Newline and tab stay, and so does every printable character (accents, CJK, emoji, backslashes)."""
    text = "line 1\n\tindented é 漢字 🙂 C:\\path\\x1b"
    assert render.safe_text(text) == text


def test_safe_cell_also_shows_newline_and_tab() -> None:
    """A one-line cell cannot start a new line or jump to a tab stop."""
    assert render.safe_cell("a\nb\tc\r\n") == "a\\nb\\tc\\r\\n"


def test_making_text_safe_twice_changes_nothing() -> None:
    """The escapes are themselves safe, so the last-pass guard of cli and dev is a no-op."""
    once = render.safe_cell(HOSTILE)
    assert render.safe_cell(once) == once
    assert render.safe_text(once) == once
    assert render.safe_text(render.safe_text(HOSTILE)) == render.safe_text(HOSTILE)


HOSTILE_INFO = ExtensionInfo(
    id=f"project:{HOSTILE}",  # a folder name may hold anything
    name=HOSTILE,
    source="project",
    path=Path(f"/p/.github/extensions/{HOSTILE}"),
    status="failed",
    pid=42,
    tools=(f"t{HOSTILE}", "ok_tool"),
    hooks=(f"on_{HOSTILE}",),
    error=f"RuntimeError: {HOSTILE}",
    log_path=Path(f"/logs/{HOSTILE}.log"),
    shadowed_by=f"user:{HOSTILE}",
    reload_error=f"SyntaxError: {HOSTILE}",
)


def test_extensions_table_with_hostile_values_keeps_one_row_per_extension() -> None:
    """Every cell is made safe: no raw control, the escapes are visible, and the lines of an
    error start in the NOTE column, so none of them can pass for another extension's row."""
    infos = [
        HOSTILE_INFO,
        replace(HOSTILE_INFO, error=None, status="running"),
        replace(HOSTILE_INFO, error=None, shadowed_by=None),
    ]
    out = render.extensions_table(infos)
    assert raw_controls(out, UNSAFE_IN_CELL - {"\n"}) == set()
    lines = out.splitlines()
    rows = [line for line in lines if not line.startswith(" ")]
    assert len(rows) == 1 + len(infos)
    note_column = lines[0].index("NOTE")
    assert all(line[:note_column].isspace() for line in lines if line not in rows)
    assert "\\x1b[2J" in out and "\\x9b31m" in out and "\\u202e" in out


def test_the_note_column_says_what_a_start_is_busy_with_and_how_it_was_started() -> None:
    """While starting, its activity (installing npm dependencies); once started, a note of the
    host's (scripts left out); both survive the JSON a client gets over the control socket."""
    base = ExtensionInfo("project:web", "web", "project", Path("/p/web"), "starting")
    busy = replace(base, activity="installing npm dependencies…")
    started = replace(base, status="running", note="npm dependency scripts were not run (--ignore-scripts)")
    out = render.extensions_table([busy, started]).splitlines()
    note = out[0].index("NOTE")
    assert [line[note:] for line in out[1:]] == [
        "installing npm dependencies…",
        "npm dependency scripts were not run (--ignore-scripts)",
    ]
    assert [ExtensionInfo.from_json(json.loads(json.dumps(i.to_json()))) for i in (busy, started)] == [busy, started]
    assert render.extensions_table([replace(busy, status="failed", error="boom")]).splitlines()[1].endswith("boom")
    assert "  now:     installing npm dependencies…" in render.extension_detail(busy, [], []).splitlines()
    assert (
        "  note:    npm dependency scripts were not run (--ignore-scripts)"
        in render.extension_detail(started, [], []).splitlines()
    )


def test_a_syntax_errors_source_line_and_caret_stay_under_it_in_the_note_column() -> None:
    """The lines of an error keep their place: the caret stays under the column it marks."""
    info = replace(
        HOSTILE_INFO,
        id="project:bad",
        tools=(),
        hooks=(),
        shadowed_by=None,
        reload_error=None,
        error="SyntaxError: expected ':' at extension.py:2:9\n    def f(x)\n            ^",
        overrides_builtin=("bash",),
    )
    out = render.extensions_table([info]).splitlines()
    note = out[0].index("NOTE")
    assert out[1][note:] == "SyntaxError: expected ':' at extension.py:2:9; overrides built-in bash"
    assert [line[note:] for line in out[2:]] == ["    def f(x)", "            ^"]
    assert all(line[:note].isspace() for line in out[2:])
    detail = render.extension_detail(info, [], []).splitlines()
    at = detail.index("  error:   SyntaxError: expected ':' at extension.py:2:9")
    assert detail[at + 1 : at + 3] == [" " * 11 + "    def f(x)", " " * 11 + "            ^"]


def test_statuses_and_reload_outcomes_with_hostile_values_show_no_raw_control() -> None:
    """The header-less tables of reload make their cells safe as well."""
    statuses = render.extension_statuses([HOSTILE_INFO, replace(HOSTILE_INFO, error=None, shadowed_by=None)])
    outcomes = render.reload_outcomes(
        [
            ReloadOutcome(f"project:{HOSTILE}", "kept", "running", HOSTILE, ("a",)),
            ReloadOutcome("project:b", "reloaded", "running", None, (HOSTILE,)),
            ReloadOutcome("project:c", "failed", "failed", HOSTILE),
        ]
    )
    for out, rows in ((statuses, 2), (outcomes, 3)):
        assert raw_controls(out) == set()
        assert len([line for line in out.splitlines() if not line.startswith(" ")]) == rows


def test_extension_detail_with_hostile_values_shows_no_raw_control() -> None:
    """Fields, tool names and descriptions, schemas, hook calls and log lines are all made safe."""
    tool = ToolInfo(
        f"t{HOSTILE}",
        f"describes {HOSTILE}",
        {"type": "object", "properties": {HOSTILE: {"type": "string", "description": HOSTILE}}},
        "project:x",
    )
    calls = [HookRecord(f"on_{HOSTILE}", "project:x", "error", HOSTILE, 1.5, f"boom {HOSTILE}")]
    log_tail = [HOSTILE, "plain line"]
    out = render.extension_detail(HOSTILE_INFO, [tool], log_tail, calls)
    assert raw_controls(out) == set()
    lines = out.splitlines()
    # Each log line is one printed line: a hostile one cannot print a line without the "| " mark.
    assert [line for line in lines if line.startswith("    | ")] == [
        f"    | {render.safe_cell(HOSTILE)}",
        "    | plain line",
    ]
    # An error's lines stay indented under it.
    first, rest = render.safe_cell(HOSTILE.split("\n")[0]), render.safe_cell(HOSTILE.split("\n")[1])
    at = lines.index(f"  error:   RuntimeError: {first}")
    assert lines[at + 1] == " " * 11 + rest


def test_hook_end_and_reload_outcome_are_one_safe_line() -> None:
    """A hook.end event (one line per call) and a reload outcome print one line, escapes
    visible; the further lines of an outcome's error are indented under it."""
    hook = render.hook_end(
        {
            "hook": HOSTILE,
            "calls": [
                {
                    "extensionId": f"project:{HOSTILE}",
                    "outcome": "error",
                    "decision": HOSTILE,
                    "durationMs": 2.0,
                    "error": {"message": HOSTILE},
                }
            ],
        }
    )
    outcome = render.reload_outcome(ReloadOutcome(f"project:{HOSTILE}", "kept", "running", HOSTILE))
    first, *rest = outcome.split("\n")
    for out in (hook, first):
        assert raw_controls(out, UNSAFE_IN_CELL) == set()
        assert "\\x1b]0;pwned\\x07" in out
    assert rest and all(line.startswith("  ") and raw_controls(line, UNSAFE_IN_CELL) == set() for line in rest)


def test_tool_result_keeps_its_lines_and_shows_the_controls() -> None:
    """A result's lines stay lines; its controls and its type are shown, not obeyed."""
    ok = render.tool_result(ToolResult(HOSTILE))
    assert raw_controls(ok) == set()
    assert ok == render.safe_text(HOSTILE) and "\\r\nnext" in ok
    failed = render.tool_result(ToolResult(HOSTILE, result_type="failure"))
    assert failed.startswith("[failure] \\x1b[2J")


def test_prompt_context_and_error_renderers_show_no_raw_control() -> None:
    """Rewritten prompts, contexts, rejections (and who rejected) and error lines are made safe."""
    rejected = PromptResult("p", rejected=True, reason=HOSTILE, rejected_by=f"project:{HOSTILE}")
    accepted = PromptResult(HOSTILE, additional_context=HOSTILE)
    outputs = [
        render.prompt_result(rejected),
        render.prompt_rejection(rejected),
        render.prompt_result(accepted),
        render.additional_context(HOSTILE),
        render.context_note(HOSTILE),
        render.error_line(RuntimeError(HOSTILE)),
    ]
    for out in outputs:
        assert raw_controls(out) == set(), out
    assert render.prompt_result(accepted).split("\n\n", 1)[1].startswith("additional context:\n\\x1b[2J")
    assert render.prompt_rejection(rejected).startswith("rejected by project:\\x1b[2J")


def test_session_message_prefixes_every_line() -> None:
    """A multi-line message cannot print a line that looks like another extension's or the host's."""
    out = render.session_message("project:a", "line 1\n[project:b] fake\r\n[host] fake\x1b[1A")
    assert out.split("\n") == [
        "[project:a] line 1",
        "[project:a] [project:b] fake\\r",
        "[project:a] [host] fake\\x1b[1A",
    ]
    assert render.session_message("project:a", "one\ntwo", "warning") == (
        "[project:a] warning: one\n[project:a] warning: two"
    )
    assert render.session_message("project:a\n[host]", "x") == "[project:a\\n[host]] x"


@pytest.mark.parametrize(
    "value",
    [
        HOSTILE,
        {"text": HOSTILE, HOSTILE: [HOSTILE, 1, None, True], "nested": {"k": "\u0085\u009f\x7f"}},
        ["\ud800 lone", "é 漢字 🙂", 'back\\slash "quoted"'],
    ],
    ids=["string", "nested", "surrogate-and-plain"],
)
def test_json_text_decodes_to_the_exact_value_and_holds_no_raw_control(value: object) -> None:
    """--json keeps the data exact; C0, C1, DEL, bidi and lone surrogates are \\u escapes in the text."""
    out = render.json_text(value)
    assert json.loads(out) == value
    assert raw_controls(out) == set()
    assert not any(0xD800 <= ord(char) <= 0xDFFF for char in out)


def test_json_text_escapes_controls_and_leaves_other_text_readable() -> None:
    """Controls are \\uXXXX escapes; accents, CJK and emoji stay as they are (not ASCII-escaped)."""
    out = render.json_text({"a": "\x1b\x9b\x7f\u202e é 漢字 🙂"})
    assert out == '{\n  "a": "\\u001b\\u009b\\u007f\\u202e é 漢字 🙂"\n}'


@settings(max_examples=300, deadline=None, database=None)
@given(text=st.text(alphabet=st.characters(codec=None, exclude_categories=())))
def test_any_text_made_safe_holds_no_raw_control_and_json_round_trips_it(text: str) -> None:
    """Whatever an extension sends: safe_text leaves no unsafe character but lines and tabs,
    safe_cell not even those, and json_text decodes to the exact text with nothing raw."""
    assert raw_controls(render.safe_text(text)) == set()
    assert raw_controls(render.safe_cell(text), UNSAFE_IN_CELL) == set()
    assert "\n" not in render.safe_cell(text)
    out = render.json_text({"text": text})
    assert json.loads(out) == {"text": text}
    assert raw_controls(out) == set()
