"""The ``extensions`` parser: every command's name, summary, examples and options, built without the host.

A command line names one command, so only that command's parser is built in full: the others
are listed with their summary (:data:`COMMANDS`) and cost nothing. The commands that reach
extensions (``list``, ``call``, ...) have their options in :mod:`.command_options`, which names
their ``run`` function as text (``"call_command:call_command"``), imported when it runs; the
commands whose options live beside their code (``sessions``, ``serve``, ``chat``, ``mcp``,
``export``, ``hook``, ``completion``) are imported only when they are the one named.
``extensions --help`` and ``--version`` therefore import argparse and this module, not the
host, pydantic or asyncio.

Argparse, not Click, Typer or cyclopts: importing them costs, on a 2-core machine, about 12 ms
(argparse), 47 ms (Click), 100 ms (cyclopts) and 125 ms (Typer), against a budget of three
times ``python -c pass`` (~45 ms) for a whole ``--help``; argcomplete (27 ms) is replaced by
:mod:`.completion`, which answers from this same parser.

What argparse lacks is added here: the global options (:data:`GLOBAL_OPTIONS`) are accepted
before or after the command; a command's options may come among its names
(:class:`CommandParser`); a mistyped command, choice or option gets a "did you mean"; a usage
error is one line (``extensions: unknown command 'lst'; did you mean 'list'?``), exit 2; every
command's ``--help`` ends with examples (:data:`EXAMPLES`); numbers are checked
(:func:`seconds`).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence

from .. import __version__
from ..runtime.defaults import DEFAULT_READINESS_TIMEOUT

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at every start
if TYPE_CHECKING:
    from typing import Any, Final, NoReturn

__all__ = [
    "COMMANDS",
    "EXAMPLES",
    "GLOBAL_OPTIONS",
    "CommandParser",
    "CommandSpec",
    "build_parser",
    "command_of",
    "every_command_parser",
    "run_function",
    "seconds",
]

PROG: Final = "extensions"


class CommandSpec:
    """One command of ``extensions``: its summary line, and where its options are added.

    ``adder`` is ``"module:function"`` under :mod:`extension_host.frontends`: a function of
    :mod:`.command_options` (``command_options:add_list``) taking the command's parser, or one
    that takes the sub-commands action and adds the command itself
    (``sessions_command:add_sessions_command``). A plain class, not a dataclass or a named
    tuple: ``dataclasses`` (with ``inspect``) and ``typing`` would be a fifth of ``--help``'s budget.
    """

    __slots__ = ("adder", "summary")

    def __init__(self, summary: str, adder: str) -> None:
        self.summary: Final = summary
        self.adder: Final = adder

    @property
    def external(self) -> bool:
        """Whether the command's module adds the command itself (it is imported to build it)."""
        return not self.adder.startswith("command_options:")


COMMANDS: Final[dict[str, CommandSpec]] = {
    "scaffold": CommandSpec("create a new extension from a template", "command_options:add_scaffold"),
    "list": CommandSpec("report every extension: the running host's, else start each once", "command_options:add_list"),
    "inspect": CommandSpec(
        "show one extension in full: status, tools with schemas, hooks, log tail", "command_options:add_inspect"
    ),
    "reload": CommandSpec(
        "make the running host reload one extension or all; with none, check them", "command_options:add_reload"
    ),
    "call": CommandSpec(
        "call one tool (through the running host, if there is one) and print its result", "command_options:add_call"
    ),
    "command": CommandSpec("run one slash command of an extension and say how it ended", "command_options:add_command"),
    "prompt": CommandSpec(
        "run the prompt hooks on TEXT and print the resulting prompt and context", "command_options:add_prompt"
    ),
    "install": CommandSpec(
        "install extensions from a git repository, a folder or a pip distribution",
        "package_options:add_install_command",
    ),
    "uninstall": CommandSpec(
        "remove an extension that install or link put in place", "package_options:add_uninstall_command"
    ),
    "update": CommandSpec(
        "move installed extensions to the newest commit of their ref, or the newest version",
        "package_options:add_update_command",
    ),
    "link": CommandSpec(
        "use a development folder in place, as an extension of the user or the project",
        "package_options:add_link_command",
    ),
    "trust": CommandSpec(
        "trust this project, so that its own extensions run (they do not until you do)", "command_options:add_trust"
    ),
    "grant": CommandSpec(
        "let an extension have sensitive environment variables it asks for", "command_options:add_grant"
    ),
    "enable": CommandSpec(
        "let a disabled extension run again (or look in Copilot CLI's extension folder)", "command_options:add_enable"
    ),
    "disable": CommandSpec(
        "keep an extension from running, in this project or in every one, without touching it",
        "command_options:add_disable",
    ),
    "doctor": CommandSpec(
        "check the setup and every extension without starting any, and say what to fix", "command_options:add_doctor"
    ),
    "config": CommandSpec(
        "show or change an extension's settings (secrets are kept outside the project and never shown)",
        "config_command:add_config_command",
    ),
    "dev": CommandSpec(
        "run a host for the project in the foreground: hot reload, logs, commands on stdin", "command_options:add_dev"
    ),
    "sessions": CommandSpec(
        "list, show or remove the persisted sessions (their events and workspaces)",
        "sessions_command:add_sessions_command",
    ),
    "serve": CommandSpec(
        "serve the client protocol (JSON-RPC) to UIs, editors and scripts: many sessions, one process",
        "serve_command:add_serve_command",
    ),
    "chat": CommandSpec(
        "chat with a model (any OpenAI-compatible endpoint) in the project, with its extensions",
        "chat:add_chat_command",
    ),
    "mcp": CommandSpec(
        "serve the project's extensions to an MCP client over stdio (Claude Code, Gemini CLI, VS Code, ...)",
        "mcp_command:add_mcp_command",
    ),
    "acp": CommandSpec(
        "be an Agent Client Protocol agent on stdio, for Zed, JetBrains IDEs and other ACP editors",
        "acp_command:add_acp_command",
    ),
    "export": CommandSpec(
        "write what another agent needs to run an extension (copilot: GitHub Copilot CLI)",
        "export:add_export_command",
    ),
    "hook": CommandSpec(
        "answer Claude Code or Gemini CLI hook calls with this project's extensions, or install the hooks",
        "hook_command:add_hook_command",
    ),
    "demo": CommandSpec("scaffold an extension into a temporary project and call its tool", "command_options:add_demo"),
    "schema": CommandSpec("print the JSON Schema of session events or of the wire API", "command_options:add_schema"),
    "completion": CommandSpec(
        "print the shell completion script for bash, zsh or fish", "completion:add_completion_command"
    ),
}
"""Every command, in the order ``extensions --help`` lists them."""

EXAMPLES: Final[dict[str, str]] = {
    "scaffold": "extensions scaffold greet\nextensions scaffold notes --user --template mjs",
    "list": "extensions list\nextensions list --json | jq '.extensions[].id'\nextensions list --root ~/src/app",
    "inspect": "extensions inspect greet\nextensions inspect user:notes --json",
    "reload": "extensions reload\nextensions reload greet",
    "call": 'extensions call greet_count_lines \'{"path": "README.md"}\'\n'
    'extensions call add \'{"a": 1, "b": 2}\' --json -v',
    "command": "extensions command deploy\nextensions command /deploy 'staging --dry-run'",
    "prompt": "extensions prompt 'fix the failing test'\nextensions prompt 'summarise README.md' --json",
    "install": "extensions install https://github.com/octo/greet.git\n"
    "extensions install ./tools/lint --project\n"
    "extensions install git+ssh://git@host/team/exts.git --subdir .github/extensions/deploy --ref v1.2 --yes\n"
    "extensions install hello-ext==1.0\nextensions install dist/hello_ext-1.0-py3-none-any.whl --json",
    "uninstall": "extensions uninstall greet\nextensions uninstall package:hello --json",
    "update": "extensions update\nextensions update greet --ref v2.0",
    "link": "extensions link ~/src/greet\nextensions link . --name greet-dev --project",
    "trust": "extensions trust\nextensions trust --revoke",
    "grant": "extensions grant deploy GITHUB_TOKEN\nextensions grant deploy\n"
    "extensions grant deploy GITHUB_TOKEN --revoke",
    "enable": "extensions enable lint\nextensions enable notes --user\nextensions enable --copilot-folder",
    "disable": "extensions disable lint\nextensions disable user:notes --project\nextensions disable lint --json",
    "doctor": "extensions doctor\nextensions doctor --json | jq '.checks[] | select(.level != \"ok\")'",
    "config": "extensions config lint\nextensions config lint max_lines 200 --user\n"
    "extensions config deploy api_token -\nextensions config lint max_lines --unset",
    "dev": "extensions dev\nextensions dev --resume 2f6c0d1e-...",
    "sessions": "extensions sessions list\nextensions sessions show ID\nextensions sessions rm ID",
    "sessions list": "extensions sessions list\nextensions sessions list --json",
    "sessions show": "extensions sessions show ID\nextensions sessions show ID --json | jq .type",
    "sessions rm": "extensions sessions rm ID",
    "serve": "extensions serve\nextensions serve --socket\n"
    "extensions serve --listen 127.0.0.1:8765 --agent scripted:turns.json",
    "chat": "OPENAI_BASE_URL=http://localhost:11434/v1 extensions chat --model llama3.2\nextensions chat --resume ID",
    "mcp": "extensions mcp\nextensions mcp --print-config claude\nextensions mcp --http 127.0.0.1:0",
    "acp": "extensions acp --print-config zed\nextensions acp --print-config jetbrains --base-url http://localhost:11434/v1\n"
    "OPENAI_BASE_URL=http://localhost:11434/v1 extensions acp --model llama3.2",
    "export": "extensions export copilot greet",
    "export copilot": "extensions export copilot greet\nextensions export copilot greet --force --json",
    "hook": "extensions hook install claude\nextensions hook check gemini\nextensions hook stop",
    "hook claude": 'echo "$PAYLOAD" | extensions hook claude PreToolUse',
    "hook gemini": 'echo "$PAYLOAD" | extensions hook gemini BeforeTool',
    "hook install": "extensions hook install claude --dry-run\nextensions hook install gemini --user",
    "hook check": "extensions hook check claude\nextensions hook check gemini --json",
    "hook stop": "extensions hook stop",
    "demo": "extensions demo",
    "schema": "extensions schema events\nextensions schema api --output api.schema.json",
    "completion": (
        "extensions completion bash > ~/.local/share/bash-completion/completions/extensions\n"
        'extensions completion zsh > "${fpath[1]}/_extensions"\n'
        "extensions completion fish > ~/.config/fish/completions/extensions.fish"
    ),
}
"""The ``Examples:`` block at the end of each command's ``--help`` (by its words after ``extensions``)."""


def _path(text: str) -> Any:
    """A folder or file named on the command line (pathlib is imported when one is given)."""
    from pathlib import Path

    return Path(text).expanduser()


def seconds(text: str) -> float:
    """A positive, finite number of seconds, as an option gives it (a usage error otherwise)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):  # refuses nan as well: every comparison with it is false
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return value


GLOBAL_OPTIONS: Final[dict[str, dict[str, Any]]] = {
    "--root": {
        "type": _path,
        "metavar": "DIR",
        "help": "project folder (default: the git root of the working directory)",
    },
    "--home": {
        "type": _path,
        "metavar": "DIR",
        "help": "user folder for extensions and logs (default: $EXTENSION_HOST_HOME or the platform's config folder)",
    },
    "--extension-sdk-path": {
        "type": _path,
        "metavar": "DIR",
        "help": "run JavaScript extensions on this Copilot SDK build (a folder with index.js and extension.js, "
        "as Copilot CLI's --extension-sdk-path) instead of the pinned @github/copilot-sdk",
    },
    "--readiness-timeout": {
        "type": seconds,
        "metavar": "SECONDS",
        "default": DEFAULT_READINESS_TIMEOUT,
        "help": f"how long each extension has to join (default: {DEFAULT_READINESS_TIMEOUT:g})",
    },
}
"""Options every command takes, before or after its name; each takes a value."""


def _did_you_mean(word: str, choices: Sequence[str]) -> str:
    """``; did you mean 'X'?`` for the closest of ``choices`` (nothing when none is close)."""
    import difflib  # only on a mistake

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Help as argparse writes it, examples kept as written, fitted to the terminal's width
    read without ``shutil`` (whose imports cost more than the rest of ``--help``)."""

    def __init__(self, prog: str, **kwargs: Any) -> None:
        try:
            columns = int(os.environ.get("COLUMNS") or os.get_terminal_size(sys.stdout.fileno()).columns)
        except (OSError, ValueError, AttributeError):
            columns = 80
        super().__init__(prog, width=kwargs.pop("width", None) or columns - 2, **kwargs)


class CommandParser(argparse.ArgumentParser):
    """Every parser of ``extensions``: a usage error is one line on stderr and exit 2, a
    mistyped choice or option gets the closest name, ``--help`` ends with examples, and a
    command's options may come anywhere among its names (argparse's intermixed parsing; a
    command made of sub-commands, ``sessions``, parses as usual). An option is taken only as
    spelt in full: a prefix (``--js``) is a mistyped option, never another option it happens
    to begin."""

    _intermixing = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        hint = "" if message.endswith(("?", ")")) else f" (see '{self.prog} --help')"
        self.exit(2, f"{self.prog}: {message}{hint}\n")

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is None or value in choices:
            return
        names = [str(choice) for choice in choices]
        if isinstance(action, argparse._SubParsersAction):
            raise argparse.ArgumentError(None, f"unknown command '{value}'{_did_you_mean(str(value), names)}")
        what = action.metavar or action.dest
        choose = f"unknown {str(what).lower()} '{value}' (choose from {', '.join(names)})"
        raise argparse.ArgumentError(None, choose + _did_you_mean(str(value), names))

    def parse_args(  # type: ignore[override]  # one method for typeshed's overloads
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self.error(self._unexpected(extras[0], parsed))
        return parsed

    def _unexpected(self, word: str, parsed: argparse.Namespace) -> str:
        if not word.startswith("-") or word == "-":
            return f"unexpected argument '{word}'"
        leaf = getattr(parsed, "_parser", self)
        known = [option for action in leaf._actions for option in action.option_strings]
        return f"unknown option '{word.split('=')[0]}'{_did_you_mean(word.split('=')[0], known)}"

    def parse_known_args(  # type: ignore[override]  # one method for typeshed's overloads
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        nested = any(action.nargs in (argparse.PARSER, argparse.REMAINDER) for action in self._get_positional_actions())
        if self._intermixing or nested:
            return super().parse_known_args(args, namespace)
        self._intermixing = True  # the intermixed parse calls this method for each of its passes
        try:
            parsed, extras = self.parse_known_intermixed_args(args, namespace)
            if getattr(parsed, "_parser", None) is None:
                parsed._parser = self  # the deepest command parsed: whose options a mistyped one is compared with
            return parsed, extras
        finally:
            self._intermixing = False


class _Version(argparse.Action):
    """``--version``: prints ``extensions <version>`` and exits 0."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit", **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_args: Any, **_kwargs: Any) -> None:
        print(f"{PROG} {__version__}")
        parser.exit(0)


def _add_global_options(parser: argparse.ArgumentParser, *, top: bool) -> None:
    """The options of :data:`GLOBAL_OPTIONS`. Under a command they are left unset when not given,
    so the value given before the command (or the default) stands, and out of its ``--help``
    (``extensions --help`` lists them once, and says they may follow the command)."""
    for flag, options in GLOBAL_OPTIONS.items():
        under = {**options, "default": argparse.SUPPRESS, "help": argparse.SUPPRESS}
        parser.add_argument(flag, **(options if top else under))


def command_of(argv: Sequence[str]) -> str | None:
    """The command a command line names: its first word that is neither an option nor the
    value of a global option (``None``: no command)."""
    words = iter(argv)
    for word in words:
        if word == "--":
            return next(words, None)
        if word in GLOBAL_OPTIONS:
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser, with ``command`` built in full (every command when ``None``: the README's
    table, the completion of a command's options). The others are their summary only."""
    parser = CommandParser(
        prog=PROG,
        description="Discover, run and call extensions of an AI coding agent.",
        epilog="Examples:\n  extensions scaffold greet\n  extensions list\n  extensions call greet_count_lines "
        "'{\"path\": \"README.md\"}'\n  extensions dev\n\nRun 'extensions COMMAND --help' for a command's options; "
        "the options above may also follow the command (extensions list --root DIR).",
    )
    parser.add_argument("--version", action=_Version)
    _add_global_options(parser, top=True)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)
    for name, spec in COMMANDS.items():
        if command is not None and name != command:
            commands.add_parser(name, help=spec.summary, description=spec.summary)
            continue
        module, function = spec.adder.split(":")
        adder = getattr(importlib.import_module(f".{module}", __package__), function)
        if spec.external:
            adder(commands)
            sub = commands.choices[name]
        else:
            sub = commands.add_parser(name, help=spec.summary, description=spec.summary)
            adder(sub)
        _finish(sub, name)
    return parser


def every_command_parser(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parsers under ``parser``, by their words after ``extensions`` (``sessions list``)."""
    found: dict[str, argparse.ArgumentParser] = {}

    def walk(current: argparse.ArgumentParser, words: str) -> None:
        for action in current._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    path = f"{words} {name}".strip()
                    found[path] = sub
                    walk(sub, path)

    walk(parser, "")
    return found


def _finish(parser: argparse.ArgumentParser, words: str) -> None:
    """What every built command gets: its examples, the global options, one-line errors."""
    parser.formatter_class = _Formatter
    examples = EXAMPLES.get(words)
    if examples:
        parser.epilog = "Examples:\n" + "\n".join(f"  {line}" for line in examples.splitlines())
    _add_global_options(parser, top=False)
    for name, sub in every_command_parser(parser).items():
        _finish(sub, f"{words} {name}")


def run_function(target: str | Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """A command's ``run``: given, or named ``"module:function"`` under the front ends."""
    if not isinstance(target, str):
        return target
    module, function = target.split(":")
    found: Callable[[argparse.Namespace], int] = getattr(importlib.import_module(f".{module}", __package__), function)
    return found


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """The command line parsed, with the named command built (exits 2 on a usage error)."""
    command = command_of(argv)
    parser = build_parser(command if command in COMMANDS else "")
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        parser.exit(2)
    return args
