"""The extensions parser: --version, global options anywhere, did-you-mean, one-line usage errors, examples."""

from __future__ import annotations

import argparse

import pytest

from extension_host import __version__
from extension_host.frontends.cli import main
from extension_host.frontends.parser import COMMANDS, EXAMPLES, build_parser, command_of, every_command_parser
from helpers import Project


def test_version_prints_the_command_and_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"extensions {__version__}\n"


def test_the_package_version_is_the_installed_distribution_s() -> None:
    import importlib.metadata

    assert __version__ == importlib.metadata.version("extension-host")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["lst"], "extensions: unknown command 'lst'; did you mean 'list'?\n"),
        (["sessions", "lst"], "extensions sessions: unknown command 'lst'; did you mean 'list'?\n"),
        (["list", "--jsn"], "extensions: unknown option '--jsn'; did you mean '--json'?\n"),
        (["call", "add", "--verbse"], "extensions: unknown option '--verbse'; did you mean '--verbose'?\n"),
        (["list", "--rot", "x"], "extensions: unknown option '--rot'; did you mean '--root'?\n"),
        (["list", "--js"], "extensions: unknown option '--js'; did you mean '--json'?\n"),
        (["list", "--ro", "x"], "extensions: unknown option '--ro'; did you mean '--root'?\n"),
        (["xyzzy"], "extensions: unknown command 'xyzzy' (see 'extensions --help')\n"),
        (
            ["schema", "evnts"],
            "extensions schema: unknown schema 'evnts' (choose from events, api); did you mean 'events'?\n",
        ),
    ],
)
def test_a_mistyped_name_is_one_line_with_the_closest_name_and_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err == message
    assert captured.out == ""


def test_a_missing_argument_names_its_metavar_not_an_internal_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 2
    err = capsys.readouterr().err
    assert err == "extensions schema: the following arguments are required: SCHEMA (see 'extensions schema --help')\n"
    assert "which" not in err


@pytest.mark.parametrize("flag", ["--root", "--home"])
def test_global_options_are_taken_before_or_after_the_command(
    project: Project, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    """``extensions list --root X`` is ``extensions --root X list``: the same project, the same answer."""
    value = str(project.root if flag == "--root" else project.home)
    other = "--home" if flag == "--root" else "--root"
    other_value = str(project.home if flag == "--root" else project.root)
    assert main([other, other_value, flag, value, "sessions", "list", "--json"]) == 0
    before = capsys.readouterr().out
    assert main([other, other_value, "sessions", "list", flag, value, "--json"]) == 0
    assert capsys.readouterr().out == before


def test_a_global_option_after_the_command_overrides_nothing_it_was_not_given() -> None:
    """Under a command the global options default to nothing, so the value given before stands."""
    parser = build_parser("list")
    args = parser.parse_args(["--root", "/a", "--readiness-timeout", "5", "list"])
    assert (str(args.root), args.readiness_timeout, args.home) == ("/a", 5.0, None)
    args = parser.parse_args(["list", "--readiness-timeout", "7", "--json"])
    assert (args.root, args.readiness_timeout, args.json) == (None, 7.0, True)


def test_a_root_after_the_command_that_is_not_a_folder_is_a_usage_error(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["list", "--root", str(project.root / "missing")]) == 2
    assert "missing" in capsys.readouterr().err


def test_the_command_of_a_command_line_skips_global_options_and_their_values() -> None:
    assert command_of(["--root", "list", "call", "x"]) == "call"
    assert command_of(["--root=x", "-h"]) is None
    assert command_of(["--", "list"]) == "list"
    assert command_of([]) is None


def test_every_command_and_sub_command_ends_its_help_with_examples() -> None:
    parsers = every_command_parser(build_parser())
    assert set(COMMANDS) <= set(parsers)
    for words, parser in parsers.items():
        assert parser.epilog is not None and parser.epilog.startswith("Examples:\n  "), words
        assert f"extensions {words}" in parser.epilog, words
        assert parser.formatter_class is not argparse.HelpFormatter  # the examples keep their lines
    assert set(EXAMPLES) == set(parsers)


def test_a_command_s_help_shows_its_examples_line_by_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["call", "--help"]) == 0
    out = capsys.readouterr().out
    assert '\nExamples:\n  extensions call greet_count_lines \'{"path": "README.md"}\'\n  extensions call add' in out
    assert "--readiness-timeout" not in out  # taken here too, but listed once, by extensions --help


def test_the_top_level_help_lists_every_command_without_building_them(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name, spec in COMMANDS.items():
        assert f"    {name} " in out, name
        assert spec.summary.split()[0] in out
    assert "Examples:" in out


def test_a_command_built_in_full_has_the_summary_the_listing_shows() -> None:
    """The listing is built from :data:`COMMANDS` alone; each command, built, says the same."""
    parsers = every_command_parser(build_parser())
    for name, spec in COMMANDS.items():
        assert parsers[name].description == spec.summary, name
