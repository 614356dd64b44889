"""The options of the commands that reach extensions (``scaffold``, ``list``, ``call``, ...), and
which function runs each, named as text so that it is imported only when it runs.

:mod:`.parser` calls ``add_NAME(parser)`` for the one command a command line names; the commands
whose options live beside their code (``sessions``, ``serve``, ...) are not here.
"""

from __future__ import annotations

import argparse

__all__ = [
    "add_agent_endpoint",
    "add_call",
    "add_command",
    "add_demo",
    "add_dev",
    "add_grant",
    "add_inspect",
    "add_list",
    "add_prompt",
    "add_reload",
    "add_scaffold",
    "add_schema",
    "add_trust",
]


def json_option(parser: argparse.ArgumentParser, text: str = "print JSON for scripts") -> None:
    parser.add_argument("--json", action="store_true", help=text)


def add_scaffold(sub: argparse.ArgumentParser) -> None:
    from ..project.scaffold import DEFAULT_TEMPLATE, available_templates

    sub.add_argument("name", help="the extension's name (its folder name)")
    sub.add_argument("--user", action="store_true", help="create it in the user folder instead of the project")
    sub.add_argument(
        "--template",
        default=DEFAULT_TEMPLATE,
        choices=[*available_templates(), "mjs"],
        metavar="TEMPLATE",
        help=f"template: {', '.join(available_templates())}, or mjs (a Copilot SDK extension.mjs); "
        f"default: {DEFAULT_TEMPLATE}",
    )
    json_option(sub, "print the result as JSON")
    sub.set_defaults(run="host_commands:scaffold_command")


def add_list(sub: argparse.ArgumentParser) -> None:
    json_option(sub)
    sub.set_defaults(run="host_commands:list_command")


def add_inspect(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("name", help="extension name or id (project:NAME, user:NAME)")
    json_option(sub)
    sub.set_defaults(run="host_commands:inspect_command")


def add_reload(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("name", nargs="?", help="extension name or id (default: all of them)")
    json_option(sub)
    sub.set_defaults(run="host_commands:reload_command")


def add_call(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("tool", help="tool name")
    sub.add_argument("arguments", nargs="?", default="{}", help="arguments as a JSON object (default: {})")
    json_option(sub, "print the whole result as JSON")
    sub.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="also show the hook trail: who was called, who decided, who was skipped by its matcher (on stderr)",
    )
    sub.set_defaults(run="call_command:call_command")


def add_command(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("name", help="the command's name (deploy or /deploy)")
    sub.add_argument("args", nargs="?", default="", help="its argument string, as one argument (default: none)")
    json_option(sub, "print the result as JSON")
    sub.set_defaults(run="host_commands:command_command")


def add_prompt(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("text", help="the prompt")
    json_option(sub)
    sub.set_defaults(run="host_commands:prompt_command")


def add_trust(sub: argparse.ArgumentParser) -> None:
    from ..hooks.unjudged import ALLOW_FAILED_GUARDS_OPTION

    decision = sub.add_mutually_exclusive_group()
    decision.add_argument("--revoke", action="store_true", help="withdraw the trust: its extensions stop running")
    decision.add_argument(
        ALLOW_FAILED_GUARDS_OPTION,
        action="store_true",
        help="let Claude Code and Gemini CLI calls through (with a warning) while one of the extensions "
        "cannot run; without it they are blocked (this decision only: trusting again without it ends it)",
    )
    json_option(sub)
    sub.set_defaults(run="trust_commands:trust")


def add_grant(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("name", help="extension name or id (project:NAME, user:NAME)")
    sub.add_argument(
        "variables", nargs="*", default=[], metavar="VAR", help="variable names (none: show what it is granted)"
    )
    sub.add_argument("--revoke", action="store_true", help="take these variables back")
    json_option(sub)
    sub.set_defaults(run="trust_commands:grant")


def _add_switch(sub: argparse.ArgumentParser, verb: str) -> None:
    sub.add_argument("name", nargs="?", help="extension name or id (project:NAME, user:NAME, copilot:NAME)")
    scope = sub.add_mutually_exclusive_group()
    scope.add_argument(
        "--user", action="store_true", help=f"{verb} it in every project (default for all but project extensions)"
    )
    scope.add_argument(
        "--project",
        action="store_true",
        help=f"{verb} it in this project only (default for project extensions; outranks --user)",
    )
    sub.add_argument(
        "--copilot-folder",
        action="store_true",
        help=f"{verb} Copilot CLI's user extension folder ($COPILOT_HOME/extensions) as a source of extensions",
    )
    json_option(sub)
    sub.set_defaults(run=f"enable_commands:{verb}")


def add_enable(sub: argparse.ArgumentParser) -> None:
    _add_switch(sub, "enable")


def add_disable(sub: argparse.ArgumentParser) -> None:
    _add_switch(sub, "disable")


def add_doctor(sub: argparse.ArgumentParser) -> None:
    json_option(sub)
    sub.set_defaults(run="doctor:doctor")


def add_dev(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--resume", metavar="ID", help="resume this persisted session (see 'extensions sessions list')")
    sub.set_defaults(run="host_commands:dev_command")


def add_demo(sub: argparse.ArgumentParser) -> None:
    sub.set_defaults(run="host_commands:demo_command")


def add_schema(sub: argparse.ArgumentParser) -> None:
    from .schema_command import add_schema_arguments

    add_schema_arguments(sub)
    sub.set_defaults(run="schema_command:schema")


def add_agent_endpoint(parser: argparse.ArgumentParser) -> None:
    """``--model`` and ``--base-url``: the OpenAI-compatible endpoint of ``chat``'s and ``acp``'s agent."""
    parser.add_argument("--model", help="the model to use (default: $OPENAI_MODEL, or the endpoint's only model)")
    parser.add_argument(
        "--base-url", help="the endpoint, e.g. http://localhost:11434/v1 (default: $OPENAI_BASE_URL, else OpenAI's)"
    )
