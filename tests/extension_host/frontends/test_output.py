"""Tables at a terminal: drawn by Rich to the terminal's width, statuses in colour, NO_COLOR
honoured, nothing an extension wrote read as markup; to a pipe the plain text as it is."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from extension_host.frontends import render
from extension_host.frontends.output import say
from extension_host.info import ExtensionInfo
from helpers import CALC, Project

SGR = re.compile(r"\x1b\[[0-9;]*m")


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def info(name: str, status: str, error: str | None = None, tools: tuple[str, ...] = ()) -> ExtensionInfo:
    return ExtensionInfo(
        id=f"project:{name}",
        name=name,
        source="project",
        path=Path(f"/p/.github/extensions/{name}"),
        status=status,  # type: ignore[arg-type]
        pid=4242 if status == "running" else None,
        tools=tools,
        hooks=(),
        error=error,
    )


LONG_ERROR = (
    "exited with code 1 before joining: ModuleNotFoundError: No module named 'some_rather_long_module_name'\n"
    "install it into the host's Python: /home/someone/.local/share/pipx/venvs/extension-host/bin/python -m pip "
    "install some_rather_long_module_name"
)
INFOS = [
    info("good", "running", tools=("add", "sub")),
    info("broken", "failed", LONG_ERROR),
    info("odd", "untrusted", "[bold red]not markup[/bold red] :smile: 12345"),
]


def drawn(monkeypatch: pytest.MonkeyPatch, columns: int = 80, *, no_color: bool = False) -> str:
    monkeypatch.setenv("COLUMNS", str(columns))
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
    terminal = Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    say(render.extensions_table(INFOS))
    return terminal.getvalue()


def test_at_a_terminal_the_table_fits_its_width_and_splits_no_word(monkeypatch: pytest.MonkeyPatch) -> None:
    """At 80 columns no line is longer, and every word of the notes is whole on some line."""
    text = SGR.sub("", drawn(monkeypatch))
    lines = text.splitlines()
    assert all(len(line.rstrip()) <= 80 for line in lines), text
    words = set(text.split())
    for word in ("ModuleNotFoundError:", "'some_rather_long_module_name'", "install", "12345"):
        assert word in words, text
    assert lines[0].split() == ["ID", "STATUS", "PID", "TOOLS", "HOOKS", "NOTE"]


def test_a_word_longer_than_its_column_is_cut_with_an_ellipsis(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pipx path does not fit the NOTE column at 80 columns: it ends in an ellipsis, not
    on the next line."""
    text = SGR.sub("", drawn(monkeypatch))
    assert "…" in text and "/bin/python" not in text


def test_statuses_are_coloured_by_what_they_mean(monkeypatch: pytest.MonkeyPatch) -> None:
    """running green, failed red, untrusted yellow; the colour wraps the status word."""
    text = drawn(monkeypatch, 120)
    assert re.search(r"\x1b\[32mrunning\s*\x1b\[0m", text)
    assert re.search(r"\x1b\[31mfailed\s*\x1b\[0m", text)
    assert re.search(r"\x1b\[33muntrusted\s*\x1b\[0m", text)


def test_no_color_leaves_the_colours_out_and_keeps_the_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    """NO_COLOR: no colour code at all (bold headers aside), the same words in the same places."""
    plain = drawn(monkeypatch, 120, no_color=True)
    assert not re.search(r"\x1b\[3\dm", plain)
    assert SGR.sub("", plain) == SGR.sub("", drawn(monkeypatch, 120))


def test_an_extensions_text_is_never_read_as_markup_or_emoji(monkeypatch: pytest.MonkeyPatch) -> None:
    """Square brackets and emoji codes are printed as written."""
    text = SGR.sub("", drawn(monkeypatch, 160))
    assert "[bold red]not markup[/bold red] :smile: 12345" in text


def test_an_extensions_control_characters_stay_escapes_at_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cells reach Rich made safe: an escape sequence shows as text."""
    monkeypatch.setenv("COLUMNS", "160")
    terminal = Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    say(render.extensions_table([replace(INFOS[1], error="\x1b[2Jgone")]))
    assert "\x1b[2J" not in terminal.getvalue() and "\\x1b[2Jgone" in terminal.getvalue()


def test_to_a_pipe_the_table_is_its_plain_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """No colour, no width: the text ``render`` built, unchanged."""
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stdout", pipe)
    table = render.extensions_table(INFOS)
    say(table)
    assert pipe.getvalue() == f"{table}\n" and "\x1b" not in pipe.getvalue()


@pytest.mark.subprocess
def test_a_piped_or_json_list_does_not_import_rich(project: Project) -> None:
    """Rich costs tens of milliseconds: only a terminal pays for it."""
    project.add_extension("calc", CALC)
    for args in (["list"], ["list", "--json"]):
        command = project.command(*args)
        done = subprocess.run(
            [command[0], "-X", "importtime", *command[1:]], capture_output=True, text=True, timeout=60, check=True
        )
        imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time")}
        assert "extension_host.frontends.output" in imported
        assert not {name for name in imported if name == "rich" or name.startswith("rich.")}
