"""The line editor's parts that need no terminal: its history file, its completion, the
double Ctrl-C, and that nothing loads prompt_toolkit before a loop reads at a terminal."""

from __future__ import annotations

import json
import stat
import subprocess
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from extension_host.frontends.line_editor import (
    HISTORY_LINES,
    PRESS_AGAIN_SECONDS,
    DoublePress,
    file_history,
    word_completer,
)
from extension_host.launch.interpreter import python_command


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_history_is_a_private_file_read_back_newest_first(tmp_path: Path) -> None:
    path = tmp_path / "history" / "dev.jsonl"
    history = file_history(path)
    for line in ("call version", 'call add {"a": 1}', "multi\nline"):
        history.store_string(line)
    assert mode(path) == 0o600 and mode(path.parent) == 0o700
    assert list(file_history(path).load_history_strings()) == ["multi\nline", 'call add {"a": 1}', "call version"]


def test_a_history_file_made_readable_by_others_is_made_private_again(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text(json.dumps("older") + "\n")
    path.chmod(0o644)
    file_history(path).store_string("newer")
    assert mode(path) == 0o600
    assert list(file_history(path).load_history_strings()) == ["newer", "older"]


def test_history_past_twice_the_cap_is_trimmed_to_the_newest_lines_and_damaged_lines_are_skipped(
    tmp_path: Path,
) -> None:
    path = tmp_path / "dev.jsonl"
    entries = [f"line {n}" for n in range(2 * HISTORY_LINES + 1)]
    path.write_text("not json\n" + json.dumps(42) + "\n" + "".join(json.dumps(e) + "\n" for e in entries))
    loaded = list(file_history(path).load_history_strings())
    assert loaded == entries[::-1][:HISTORY_LINES]
    assert [json.loads(line) for line in path.read_text().splitlines()] == entries[-HISTORY_LINES:]
    assert mode(path) == 0o600


def test_history_below_twice_the_cap_is_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "dev.jsonl"
    text = "".join(json.dumps(f"line {n}") + "\n" for n in range(2 * HISTORY_LINES))
    path.write_text(text)
    assert len(list(file_history(path).load_history_strings())) == 2 * HISTORY_LINES
    assert path.read_text() == text


def completions(text: str) -> list[tuple[str, int]]:
    def candidates(words: tuple[str, ...]) -> list[str]:
        return {(): ["call", "list", "/deploy"], ("call",): ["version", "verify", "add"]}.get(words, [])

    found = word_completer(candidates).get_completions(Document(text), CompleteEvent(completion_requested=True))
    return [(completion.text, completion.start_position) for completion in found]


def test_completion_offers_the_words_that_may_come_next_with_the_typed_prefix() -> None:
    assert completions("") == [("/deploy", 0), ("call", 0), ("list", 0)]
    assert completions("ca") == [("call", -2)]
    assert completions("/d") == [("/deploy", -2)]
    assert completions("call ") == [("add", 0), ("verify", 0), ("version", 0)]
    assert completions("call ver") == [("verify", -3), ("version", -3)]
    assert completions("call version ") == []
    assert completions("list x") == []


def test_a_second_ctrl_c_leaves_only_soon_after_the_first() -> None:
    now = [100.0]
    presses = DoublePress(lambda: now[0])
    assert not presses.second()
    now[0] += PRESS_AGAIN_SECONDS + 1
    assert not presses.second()  # too late: a first press again
    now[0] += PRESS_AGAIN_SECONDS / 2
    assert presses.second()
    assert not presses.second()  # after leaving was asked for, the count starts over


def test_the_command_line_and_the_loops_import_no_line_editor_until_a_terminal_reads() -> None:
    code = (
        "import sys, extension_host.frontends.cli, extension_host.frontends.dev, extension_host.frontends.chat\n"
        "print(sorted(name for name in sys.modules if name.startswith('prompt_toolkit')))"
    )
    done = subprocess.run(python_command("-c", code), capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"
