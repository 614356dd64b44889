"""The CLI reference rendered from a parser: a section per command and sub-command, nested one
heading level down, with its usage and each argument's help shown as written."""

from __future__ import annotations

import argparse

import pytest

from extension_host.frontends.cli_reference import USAGE_WIDTH, commands, reference


def _toy() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="extensions", description="do things")
    parser.add_argument("--root", help="project folder")
    subs = parser.add_subparsers(dest="command", metavar="COMMAND")
    grant = subs.add_parser("grant", help="let an extension have variables")
    grant.add_argument("name", help="extension name or id (project:NAME)")
    grant.add_argument(
        "variables", nargs="*", default=[], metavar="VAR", help="names like *_TOKEN or <none> (default: %(default)s)"
    )
    grant.add_argument("--hidden", help=argparse.SUPPRESS)
    sessions = subs.add_parser("sessions", help="the persisted sessions")
    actions = sessions.add_subparsers(dest="action", metavar="ACTION")
    show = actions.add_parser("show", help="one session's timeline", epilog="example:\n  extensions sessions show a\n")
    show.add_argument("id", choices=["a", "b"], help="which one")
    return parser


def test_every_command_and_sub_command_is_listed_depth_first_with_its_help() -> None:
    listed = [(words, help_text) for words, help_text, _parser in commands(_toy())]
    assert listed == [
        ("grant", "let an extension have variables"),
        ("sessions", "the persisted sessions"),
        ("sessions show", "one session's timeline"),
    ]


def test_a_sub_command_s_heading_is_one_level_below_its_command_s() -> None:
    headings = [line for line in reference(_toy(), level=3).splitlines() if line.startswith("#")]
    assert headings == [
        "### Global options",
        "### `extensions grant`",
        "### `extensions sessions`",
        "#### `extensions sessions show`",
    ]


def test_help_is_shown_as_written_and_a_suppressed_option_is_left_out() -> None:
    text = reference(_toy())
    assert "- `[VAR ...]`: names like \\*\\_TOKEN or &lt;none> (default: \\[\\])" in text
    assert "- `name`: extension name or id (project:NAME)" in text
    assert "- `{a,b}`: which one" in text
    assert "Let an extension have variables." in text
    assert "--hidden" not in text


def test_a_command_s_epilog_is_shown_as_the_terminal_shows_it() -> None:
    section = reference(_toy()).split("`extensions sessions show`")[1]
    assert section.endswith("```text\nexample:\n  extensions sessions show a\n```\n")


@pytest.mark.parametrize("columns", ["20", "300"])
def test_usage_is_wrapped_at_the_same_width_whatever_the_terminal(
    monkeypatch: pytest.MonkeyPatch, columns: str
) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    parser = argparse.ArgumentParser(prog="extensions")
    for number in range(12):
        parser.add_argument(f"--option-{number}", metavar="VALUE")
    usage = reference(parser).split("```text\n")[1].split("\n```")[0]
    assert max(len(line) for line in usage.splitlines()) <= USAGE_WIDTH < len(" ".join(usage.split()))
