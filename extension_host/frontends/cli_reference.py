"""The ``extensions`` command's reference as Markdown, generated from its parser: every command
and sub-command with its usage, its description, each argument's help and its epilog (the
examples ``--help`` ends with).

The documentation site's CLI page inserts it at build time (``docs/_hooks/cli_reference.py``),
so the page names what the parser has and nothing else; ``python -m
extension_host.frontends.cli_reference`` prints it. Only the parser is read; nothing runs.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from typing import Final

__all__ = ["commands", "reference"]

USAGE_WIDTH: Final = 100
"""Columns the usage lines are wrapped at, whatever the terminal that builds the page."""

_ESCAPE: Final = re.compile(r"([\\`*_\[\]])")


def commands(parser: argparse.ArgumentParser, prefix: str = "") -> Iterator[tuple[str, str, argparse.ArgumentParser]]:
    """Each command and sub-command under ``parser``, depth first in the parser's order: its
    words after the program's name (``sessions list``), its one-line help and its parser."""
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
        for name, sub in action.choices.items():
            words = f"{prefix} {name}".strip()
            yield words, helps.get(name, ""), sub
            yield from commands(sub, words)


def _text(text: str) -> str:
    """Help text as Markdown that shows it as written."""
    return _ESCAPE.sub(r"\\\1", " ".join(text.split())).replace("<", "&lt;")


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(parser.prog, width=USAGE_WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups, prefix="")
    return formatter.format_help().strip()


def _arguments(parser: argparse.ArgumentParser) -> list[str]:
    """One list item per argument and option (not ``--help``, not a sub-command's slot)."""
    formatter = argparse.HelpFormatter(parser.prog, width=USAGE_WIDTH)
    items = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
            continue
        if action.option_strings:
            metavar = "" if action.nargs == 0 else " " + formatter._format_args(action, action.dest.upper())
            name = ", ".join(f"{option}{metavar}" for option in action.option_strings)
        else:
            name = formatter._format_args(action, action.dest)
        help_text = formatter._expand_help(action) if action.help else ""
        items.append(f"- `{name}`" + (f": {_text(help_text)}" if help_text else ""))
    return items


def _sentence(text: str) -> str:
    """A help line as a sentence: a capital first, a full stop last."""
    text = _text(text)
    return text[:1].upper() + text[1:] + ("" if text.endswith((".", ")")) else ".")


def _section(words: str, help_text: str, parser: argparse.ArgumentParser, level: int) -> list[str]:
    lines = [f"{'#' * level} `extensions {words}`" if words else f"{'#' * level} Global options", ""]
    description = parser.description or help_text
    if description:
        lines += [_sentence(description), ""]
    lines += ["```text", _usage(parser), "```", ""]
    arguments = _arguments(parser)
    if arguments:
        lines += [*arguments, ""]
    if parser.epilog:  # examples and notes, kept as the terminal shows them
        lines += ["```text", parser.epilog.strip("\n"), "```", ""]
    return lines


def reference(parser: argparse.ArgumentParser, level: int = 2) -> str:
    """The whole reference: the program's own options, then each command at heading ``level``
    and each sub-command one level below its command."""
    lines = _section("", "", parser, level)
    for words, help_text, sub in commands(parser):
        lines += _section(words, help_text, sub, level + words.count(" "))
    return "\n".join(lines)


if __name__ == "__main__":
    from .cli import _parser

    print(reference(_parser()))
