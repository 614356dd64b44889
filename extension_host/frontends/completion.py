"""Shell completion of ``extensions``: the scripts for bash, zsh and fish, and the answers they ask for.

``extensions completion SHELL`` prints a small script (:data:`SCRIPTS`); at each TAB it runs
``extensions __complete WORD...`` (the words typed after ``extensions``, the last one the word
being completed) and offers what that prints, one candidate a line. The answers come from the
parser itself (:mod:`.parser`: command names, sub-commands, options, choices), so they never
drift from it, and from the project for the names in :data:`NAMES`: extensions (their folders,
discovered without starting them), tools (asked of the host running for the project; none
when no host runs) and session ids (the sessions folder). Options that take a folder complete
folders. Nothing here starts an extension or a host, and a failure to find names offers none.

A hand-written generator rather than argcomplete: argcomplete costs ~27 ms of imports at every
start of the command, and its zsh and fish support goes through bash emulation.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final

from .parser import COMMANDS, GLOBAL_OPTIONS, build_parser, command_of

__all__ = ["NAMES", "SCRIPTS", "SHELLS", "add_completion_command", "candidates", "complete", "completion_command"]

NAMES: Final[dict[tuple[str, str], str]] = {
    ("inspect", "name"): "extensions",
    ("reload", "name"): "extensions",
    ("grant", "name"): "extensions",
    ("config", "name"): "extensions",
    ("export copilot", "name"): "extensions",
    ("call", "tool"): "tools",
    ("sessions show", "id"): "sessions",
    ("sessions rm", "id"): "sessions",
    ("dev", "resume"): "sessions",
    ("chat", "resume"): "sessions",
}
"""(command words, argument or option dest) → the kind of name it takes."""
_FOLDER_OPTIONS: Final = frozenset({"--root", "--home", "--extension-sdk-path"})
_TOOLS_TIMEOUT: Final = 2.0
"""Seconds a TAB waits for the running host's list of tools before it offers none."""

SCRIPTS: Final[dict[str, str]] = {
    "bash": """\
# bash completion for extensions: eval "$(extensions completion bash)"
_extensions_complete() {
    local IFS=$'\\n'
    COMPREPLY=($("${COMP_WORDS[0]}" __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
    if [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == */ ]]; then
        compopt -o nospace 2>/dev/null
    fi
}
complete -F _extensions_complete extensions
""",
    "zsh": """\
#compdef extensions
# zsh completion for extensions: extensions completion zsh > "${fpath[1]}/_extensions"
_extensions() {
    local -a candidates
    candidates=(${(f)"$(${words[1]} __complete "${(@)words[2,CURRENT]}" 2>/dev/null)"})
    compadd -- "${candidates[@]}"
}
if [[ "${funcstack[1]}" == "_extensions" ]]; then
    _extensions "$@"
else
    compdef _extensions extensions
fi
""",
    "fish": """\
# fish completion for extensions: extensions completion fish > ~/.config/fish/completions/extensions.fish
function __extensions_complete
    set -l words (commandline -opc)
    set -e words[1]
    extensions __complete $words (commandline -ct) 2>/dev/null
end
complete -c extensions -f -a '(__extensions_complete)'
""",
}
"""The script each shell sources."""
SHELLS: Final = tuple(SCRIPTS)


def add_completion_command(commands: Any) -> None:
    """Add ``completion SHELL`` to the ``extensions`` parser's subcommands."""
    text = "print the shell completion script for bash, zsh or fish"
    sub = commands.add_parser("completion", help=text, description=text)
    sub.add_argument("shell", choices=SHELLS, metavar="SHELL", help=f"the shell: {', '.join(SHELLS)}")
    sub.set_defaults(run=completion_command)


def completion_command(args: argparse.Namespace) -> int:
    """``extensions completion SHELL``: print the script."""
    sys.stdout.write(SCRIPTS[args.shell])
    return 0


def complete(words: Sequence[str]) -> int:
    """``extensions __complete WORD...``: print the candidates for the last word, one a line."""
    for candidate in candidates(list(words) or [""]):
        print(candidate)
    return 0


def candidates(words: list[str]) -> list[str]:
    """What may stand in place of ``words[-1]``, given the words before it."""
    before, current = words[:-1], words[-1]
    if before and before[-1] in _FOLDER_OPTIONS:
        return _folders(current)
    command = command_of(before)
    if command is None:
        if current.startswith("-"):
            return _matching(["--help", "--version", *GLOBAL_OPTIONS], current)
        return _matching(COMMANDS, current)
    if command not in COMMANDS:
        return []
    parser, path, rest = _leaf(build_parser(command), before, command)
    options = {option: action for action in parser._actions for option in action.option_strings}
    if before and before[-1] in options and _takes_value(options[before[-1]]):
        return _values(options[before[-1]], path, current, before)
    if current.startswith("-"):
        return _matching(options, current)
    positionals = [action for action in parser._actions if not action.option_strings]
    index = _positional_index(rest, options)
    if index >= len(positionals):
        last = positionals[-1] if positionals else None
        if last is None or last.nargs not in ("*", "+"):
            return []
        index = len(positionals) - 1
    return _values(positionals[index], path, current, before)


def _leaf(
    parser: argparse.ArgumentParser, before: list[str], command: str
) -> tuple[argparse.ArgumentParser, str, list[str]]:
    """The parser of the deepest sub-command named in ``before``, its words, and the words after them."""
    rest = before[before.index(command) + 1 :]
    path = command
    current = _sub_parsers(parser)[command]
    while True:
        subs = _sub_parsers(current)
        named = next((word for word in rest if word in subs), None) if subs else None
        if named is None:
            return current, path, rest
        rest = rest[rest.index(named) + 1 :]
        path = f"{path} {named}"
        current = subs[named]


def _sub_parsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _takes_value(action: argparse.Action) -> bool:
    return action.nargs != 0


def _positional_index(words: list[str], options: dict[str, argparse.Action]) -> int:
    """How many positional words ``words`` holds (options and their values left out)."""
    count = 0
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word.startswith("-"):
            action = options.get(word)
            skip = action is not None and _takes_value(action) and "=" not in word
        else:
            count += 1
    return count


def _values(action: argparse.Action, path: str, current: str, before: list[str]) -> list[str]:
    """The values ``action`` takes that begin with ``current``."""
    if action.choices is not None:
        return _matching([str(choice) for choice in action.choices], current)
    kind = NAMES.get((path, action.dest))
    if kind == "extensions":
        return _matching(_extension_names(before), current)
    if kind == "tools":
        return _matching(_tool_names(before), current)
    if kind == "sessions":
        return _matching(_session_ids(before), current)
    return []


def _matching(names: Iterable[str], prefix: str) -> list[str]:
    return sorted({name for name in names if name.startswith(prefix)})


def _option_value(before: list[str], option: str) -> str | None:
    """The value given to a global option among ``before`` (``--root X`` or ``--root=X``)."""
    for index, word in enumerate(before):
        if word == option and index + 1 < len(before):
            return before[index + 1]
        if word.startswith(f"{option}="):
            return word.split("=", 1)[1]
    return None


def _folders(prefix: str) -> list[str]:
    """Folders whose path begins with ``prefix``, each with a trailing ``/``."""
    head, _, tail = prefix.rpartition("/")
    folder = Path(os.path.expanduser(head or ".")) if head or not prefix.startswith("/") else Path("/")
    try:
        entries = [entry for entry in folder.iterdir() if entry.is_dir() and entry.name.startswith(tail)]
    except OSError:
        return []
    base = f"{head}/" if head or prefix.startswith("/") else ""
    return sorted(f"{base}{entry.name}/" for entry in entries if tail.startswith(".") or not entry.name.startswith("."))


def _extension_names(before: list[str]) -> list[str]:
    """The extensions' folder names in the project and the user folder (none started)."""
    from ..errors import ExtensionHostError
    from ..project.discovery import ENTRY_FILES
    from ..project.paths import PROJECT_EXTENSIONS_DIR, extensions_dir, find_project_root, user_home

    try:
        folders = [
            find_project_root(_option_value(before, "--root")) / PROJECT_EXTENSIONS_DIR,
            extensions_dir(user_home(_option_value(before, "--home"))),
        ]
    except ExtensionHostError:
        return []
    names = []
    for folder in folders:
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        names += [entry.name for entry in entries if any((entry / name).is_file() for name in ENTRY_FILES)]
    return names


def _tool_names(before: list[str]) -> list[str]:
    """The tools of the host running for the project (none when no host runs)."""
    import asyncio

    from ..control.client import connect_to_host
    from ..control.methods import METHOD_LIST
    from ..errors import ExtensionHostError

    async def ask() -> list[str]:
        client = await connect_to_host(_option_value(before, "--root"))
        if client is None:
            return []
        try:
            listing = await client.request(METHOD_LIST, timeout=_TOOLS_TIMEOUT)
        finally:
            await client.close()
        return [str(tool) for extension in listing["extensions"] for tool in extension.get("tools") or ()]

    try:
        return asyncio.run(ask())
    except (ExtensionHostError, OSError, KeyError, TypeError):
        return []


def _session_ids(before: list[str]) -> list[str]:
    """The persisted sessions' ids: the folder names under the sessions folder."""
    from ..errors import ExtensionHostError
    from ..project.paths import sessions_dir, user_home

    try:
        entries = list(sessions_dir(user_home(_option_value(before, "--home"))).iterdir())
    except (ExtensionHostError, OSError):
        return []
    return [entry.name for entry in entries if entry.is_dir()]
