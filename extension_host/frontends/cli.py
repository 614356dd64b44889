"""The ``extensions`` command: parse, call the host or the scaffolder, print. No logic of its own.

A command's options may come before, between or after its names (``extensions grant --revoke
NAME VAR``, ``extensions grant NAME VAR --revoke``): see :class:`_CommandParser`.

Exit codes: 0 success; 1 the operation failed (an extension failed to load, a tool call did
not succeed); 2 bad usage (unknown option, bad name, bad JSON, a ``--root`` that is not a
folder); 141 stdout was closed before everything was printed (``extensions list | head -1``:
the command stops quietly, as a process ended by SIGPIPE would, without a traceback).

One-shot commands (everything but ``dev``) stop their extensions with a short stop ladder,
:data:`~.one_shot.ONE_SHOT_STOP_GRACE` per step: nothing waits for their answers any more, and an
extension that ignores end of stream must not hold the command for the contract's 5 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from ..calls.command_registry import CommandInfo
from ..control.methods import METHOD_INSPECT, METHOD_LIST, METHOD_RELOAD
from ..control.service import describe_extension, describe_extensions
from ..errors import ExtensionHostError, ProjectRootError, ScaffoldError, SessionIdError
from ..hooks.runner import HookRecord
from ..hooks.unjudged import ALLOW_FAILED_GUARDS_OPTION
from ..host import ExtensionHost
from ..info import ExtensionInfo, ToolInfo
from ..launch.node_sdk import SDK_PATH_ENV, sdk_build
from ..outcomes import ReloadOutcome
from ..project.paths import PROJECT_EXTENSIONS_DIR, extensions_dir, find_project_root, user_home
from ..project.scaffold import DEFAULT_TEMPLATE, available_templates, scaffold, template_entry, tool_prefix
from ..project.trust import TrustStore
from ..runtime.options import DEFAULT_READINESS_TIMEOUT, Timeouts
from ..session.agents import AgentReply, ScriptedAgent
from ..session.model_context import ToolCall
from . import render
from .chat import add_chat_command
from .dev import EXIT_STDOUT_CLOSED, DevLoop, silence_stdout, stdin_reader
from .export import add_export_command
from .hook_command import add_hook_command
from .mcp_command import add_mcp_command
from .one_shot import ask_host_or_load, load_outcome, running_host, with_host
from .output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, indent, print_json, say
from .schema_command import add_schema_arguments, schema
from .serve_command import add_serve_command
from .sessions_command import add_sessions_command
from .trust_commands import grant, trust

__all__ = ["main"]

_BROKEN: Final = frozenset({"failed", "quarantined"})
"""Statuses that make ``list`` and ``inspect`` exit 1."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``extensions`` command line; returns the exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        if args.root is not None:
            find_project_root(args.root)  # a root that is not a folder is a usage error, up front
        if args.extension_sdk_path is not None:
            # Every host this command makes (and a host it starts in the background) reads it.
            os.environ[SDK_PATH_ENV] = str(sdk_build(args.extension_sdk_path))
        code: int = args.run(args)
        if sys.stdout is not None:  # None: started without a stdout at all (``>&-``)
            sys.stdout.flush()  # a closed stdout shows here, not in the interpreter's last flush
        return code
    except BrokenPipeError:
        silence_stdout()
        return EXIT_STDOUT_CLOSED
    except (ScaffoldError, ProjectRootError, SessionIdError) as exc:
        say(render.error_line(exc), err=True)
        return EXIT_USAGE
    except ExtensionHostError as exc:
        say(render.error_line(exc), err=True)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return 130


class _CommandParser(argparse.ArgumentParser):
    """A command's parser: its options may come anywhere among its names (argparse's intermixed
    parsing); a command made of sub-commands (``sessions``, ``hook``) parses as usual."""

    _intermixing = False

    def parse_known_args(  # type: ignore[override]  # one method for typeshed's overloads
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        nested = any(action.nargs in (argparse.PARSER, argparse.REMAINDER) for action in self._get_positional_actions())
        if self._intermixing or nested:
            return super().parse_known_args(args, namespace)
        self._intermixing = True  # the intermixed parse calls this method for each of its passes
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False


def _seconds(text: str) -> float:
    """A positive number of seconds, as an option gives it (a usage error otherwise)."""
    try:
        return Timeouts(readiness=float(text)).readiness
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds") from None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="extensions", description="Discover, run and call extensions of an AI coding agent."
    )
    parser.add_argument("--root", type=Path, help="project folder (default: the git root of the working directory)")
    parser.add_argument(
        "--home",
        type=Path,
        help="user folder for extensions and logs (default: $EXTENSION_HOST_HOME or the platform's config folder)",
    )
    parser.add_argument(
        "--extension-sdk-path",
        type=Path,
        metavar="DIR",
        help="run JavaScript extensions on this Copilot SDK build (a folder with index.js and extension.js, "
        "as Copilot CLI's --extension-sdk-path) instead of the pinned @github/copilot-sdk",
    )
    parser.add_argument(
        "--readiness-timeout",
        type=_seconds,
        default=DEFAULT_READINESS_TIMEOUT,
        metavar="SECONDS",
        help=f"how long each extension has to join (default: {DEFAULT_READINESS_TIMEOUT:g})",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_CommandParser)

    def command(name: str, run: Callable[[argparse.Namespace], int], help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.set_defaults(run=run)
        return sub

    sub = command("scaffold", _scaffold, "create a new extension from a template")
    sub.add_argument("name", help="the extension's name (its folder name)")
    sub.add_argument("--user", action="store_true", help="create it in the user folder instead of the project")
    sub.add_argument(
        "--template",
        default=DEFAULT_TEMPLATE,
        help=f"template: {', '.join(available_templates())}, or mjs (a Copilot SDK extension.mjs); "
        f"default: {DEFAULT_TEMPLATE}",
    )
    sub.add_argument("--json", action="store_true", help="print the result as JSON")

    sub = command("list", _list, "report every extension: the running host's, else start each once")
    sub.add_argument("--json", action="store_true", help="print JSON for scripts")

    sub = command("inspect", _inspect, "show one extension in full: status, tools with schemas, hooks, log tail")
    sub.add_argument("name", help="extension name or id (project:NAME, user:NAME)")
    sub.add_argument("--json", action="store_true", help="print JSON for scripts")

    sub = command("reload", _reload, "make the running host reload one extension or all; with none, check them")
    sub.add_argument("name", nargs="?", help="extension name or id (default: all of them)")
    sub.add_argument("--json", action="store_true", help="print JSON for scripts")

    sub = command("call", _call, "call one tool through the host and print its result")
    sub.add_argument("tool", help="tool name")
    sub.add_argument("arguments", nargs="?", default="{}", help="arguments as a JSON object (default: {})")
    sub.add_argument("--json", action="store_true", help="print the whole result as JSON")
    sub.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="also show the hook trail: who was called, who decided, who was skipped by its matcher (on stderr)",
    )

    sub = command("command", _command, "run one slash command of an extension and say how it ended")
    sub.add_argument("name", help="the command's name (deploy or /deploy)")
    sub.add_argument("args", nargs="?", default="", help="its argument string, as one argument (default: none)")
    sub.add_argument("--json", action="store_true", help="print the result as JSON")

    sub = command("prompt", _prompt, "run the prompt hooks on TEXT and print the resulting prompt and context")
    sub.add_argument("text", help="the prompt")
    sub.add_argument("--json", action="store_true", help="print JSON for scripts")

    sub = command("trust", trust, "trust this project, so that its own extensions run (they do not until you do)")
    decision = sub.add_mutually_exclusive_group()
    decision.add_argument("--revoke", action="store_true", help="withdraw the trust: its extensions stop running")
    decision.add_argument(
        ALLOW_FAILED_GUARDS_OPTION,
        action="store_true",
        help="let Claude Code and Gemini CLI calls through (with a warning) while one of the extensions "
        "cannot run; without it they are blocked (this decision only: trusting again without it ends it)",
    )
    sub.add_argument("--json", action="store_true", help="print JSON for scripts")

    sub = command("grant", grant, "let an extension have sensitive environment variables it asks for")
    sub.add_argument("name", help="extension name or id (project:NAME, user:NAME)")
    sub.add_argument(
        "variables", nargs="*", default=[], metavar="VAR", help="variable names (none: show what it is granted)"
    )
    sub.add_argument("--revoke", action="store_true", help="take these variables back")
    sub.add_argument("--json", action="store_true", help="print JSON for scripts")

    sub = command("dev", _dev, "run a host for the project in the foreground: hot reload, logs, commands on stdin")
    sub.add_argument("--resume", metavar="ID", help="resume this persisted session (see 'extensions sessions list')")

    add_sessions_command(commands)
    add_serve_command(commands)

    add_chat_command(commands)

    add_mcp_command(commands)

    add_export_command(commands)

    add_hook_command(commands)

    command("demo", _demo, "scaffold an extension into a temporary project and call its tool")

    add_schema_arguments(command("schema", schema, "print the JSON Schema of session events or of the wire API"))
    return parser


# -- commands ----------------------------------------------------------------------------


def _scaffold(args: argparse.Namespace) -> int:
    project_root = find_project_root(args.root)
    root = extensions_dir(user_home(args.home)) if args.user else project_root / PROJECT_EXTENSIONS_DIR
    folder = scaffold(args.name, root, args.template)
    entry = folder / template_entry(args.template)
    newly_trusted = False
    if not args.user:
        # Creating your own code in a project is consent to run that project's extensions.
        store = TrustStore(user_home(args.home))
        newly_trusted = not store.project_trusted(project_root)
        if newly_trusted:
            store.set_project_trusted(project_root, True)
    if args.json:
        print_json(
            {
                "name": args.name,
                "path": str(folder),
                "entry": str(entry),
                "template": args.template,
                "trusted_project": newly_trusted,
            }
        )
    else:
        say(f"created {entry}")
        if newly_trusted:
            say(f"trusted {project_root}: its extensions run from now on (undo: extensions trust --revoke)")
        say(
            f'try it:  extensions call {tool_prefix(args.name)}_count_lines \'{{"path": "README.md"}}\''
            if args.template == "basic"
            else "try it:  extensions list"
        )
    return EXIT_OK


def _list(args: argparse.Namespace) -> int:
    def show(listing: dict[str, Any]) -> int:
        infos = [ExtensionInfo.from_json(item) for item in listing["extensions"]]
        if args.json:
            print_json(listing)
        else:
            say(render.extensions_table(infos))
        return EXIT_FAILED if any(info.status in _BROKEN for info in infos) else EXIT_OK

    return asyncio.run(ask_host_or_load(args, METHOD_LIST, None, describe_extensions, show))


def _inspect(args: argparse.Namespace) -> int:
    def show(detail: dict[str, Any]) -> int:
        if args.json:
            print_json(detail)
        else:
            commands = [CommandInfo(**command) for command in detail.get("commands") or ()]
            names = {"tools": [tool["name"] for tool in detail["tools"]], "commands": [c.name for c in commands]}
            info = ExtensionInfo.from_json({**detail, **names})
            tools = [ToolInfo.from_json(tool) for tool in detail["tools"]]
            calls = [HookRecord(**call) for call in detail["recent_hook_calls"]]
            say(render.extension_detail(info, tools, detail["log_tail"], calls, commands))
        return EXIT_FAILED if detail["status"] in _BROKEN else EXIT_OK

    def load(host: ExtensionHost) -> dict[str, Any]:
        return describe_extension(host, args.name)

    return asyncio.run(ask_host_or_load(args, METHOD_INSPECT, {"name": args.name}, load, show))


def _reload(args: argparse.Namespace) -> int:
    def show(root: str, host_running: bool, outcomes: list[ReloadOutcome], text: str) -> int:
        if args.json:
            print_json({"root": root, "host_running": host_running, "outcomes": [o.to_json() for o in outcomes]})
        else:
            say(text)
        return EXIT_OK if all(outcome.ok for outcome in outcomes) else EXIT_FAILED

    async def check(host: ExtensionHost) -> int:
        infos = [host.extension(args.name)] if args.name else host.extensions
        outcomes = [load_outcome(info) for info in infos]
        return show(str(host.project_root), False, outcomes, render.extension_statuses(infos))

    async def run() -> int:
        client = await running_host(args)
        if client is None:
            root = find_project_root(args.root)
            say(f"no host is running for {root}; loading every extension once to check it", err=True)
            return await with_host(args, check)
        try:
            # No limit of our own: the host bounds each step (every extension's readiness
            # timeout, the stop ladder), and a reload of many extensions adds those up.
            answer = await client.request(METHOD_RELOAD, {"name": args.name} if args.name else None, timeout=None)
        finally:
            await client.close()
        outcomes = [ReloadOutcome.from_json(item) for item in answer["outcomes"]]
        return show(str(client.status["root"]), True, outcomes, render.reload_outcomes(outcomes))

    return asyncio.run(run())


def _call(args: argparse.Namespace) -> int:
    try:
        arguments = json.loads(args.arguments)
    except json.JSONDecodeError as exc:
        say(f"error: ARGUMENTS is not valid JSON ({exc}); pass an object such as '{{\"a\": 1}}'", err=True)
        return EXIT_USAGE
    if not isinstance(arguments, dict):
        say("error: ARGUMENTS must be a JSON object, such as '{\"a\": 1}'", err=True)
        return EXIT_USAGE

    async def run(host: ExtensionHost) -> int:
        tool = host.tools.get(args.tool)
        result = await host.call_tool(args.tool, arguments)
        if args.json:
            print_json({"tool": args.tool, "owner": tool.owner if tool else None, **result.to_json()})
        else:
            say(render.tool_result(result.result))
        if args.verbose:
            for event in host.events.history("hook.end"):
                say(render.hook_end(event["data"]), err=True)
            for hook, owner in host.skipped_hooks(args.tool):
                if hook == "on_post_tool_use" and result.decision == "deny":
                    continue  # denied before the tool ran: no post hook was due
                say(render.hook_skipped(hook, owner, args.tool), err=True)
            if result.decided_by:
                say(f"decided {result.decision} by {render.safe_cell(result.decided_by)}", err=True)
            if result.additional_context:
                say(render.additional_context(result.additional_context), err=True)
        return EXIT_OK if result.success else EXIT_FAILED

    return asyncio.run(with_host(args, run))


def _command(args: argparse.Namespace) -> int:
    async def run(host: ExtensionHost) -> int:
        result = await host.run_command(args.name, args.args)
        if args.json:
            print_json(result.to_json())
        else:
            say(render.command_result(result), err=not result.ok)
        return EXIT_OK if result.ok else EXIT_FAILED

    return asyncio.run(with_host(args, run))


def _prompt(args: argparse.Namespace) -> int:
    async def run(host: ExtensionHost) -> int:
        outcome = await host.submit_prompt(args.text)
        if args.json:
            print_json(outcome.to_json())
        else:
            say(render.prompt_result(outcome))
        return EXIT_FAILED if outcome.rejected else EXIT_OK

    return asyncio.run(with_host(args, run))


def _dev(args: argparse.Namespace) -> int:
    async def run() -> int:
        host = ExtensionHost(
            args.root, args.home, timeouts=Timeouts(readiness=args.readiness_timeout), session=args.resume
        )
        return await DevLoop(host, interactive=sys.stdin is not None and sys.stdin.isatty()).run(await stdin_reader())

    return asyncio.run(run())


def _demo(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="extension-host-demo-") as temp:
        project = Path(temp) / "project"
        (project / ".git").mkdir(parents=True)
        (project / "README.md").write_text(
            "# A demo project\n\nIt is here so that the demo tool has a file to read.\n", encoding="utf-8"
        )
        folder = scaffold("hello", project / PROJECT_EXTENSIONS_DIR)
        TrustStore(Path(temp) / "home").set_project_trusted(project, True)  # its own code: trusted
        say(f"1. scaffolded {folder.relative_to(project)}/extension.py into a temporary project")
        demo_args = argparse.Namespace(**{**vars(args), "root": project, "home": Path(temp) / "home"})

        async def run(host: ExtensionHost) -> int:
            say("2. started the host; the extensions it found:\n")
            say(indent(render.extensions_table(host.extensions)))
            tool = f"{tool_prefix('hello')}_count_lines"
            say(f'\n3. called {tool} {{"path": "README.md"}} through the host:\n')
            result = await host.call_tool(tool, {"path": "README.md"})
            say(indent(render.tool_result(result.result)))
            say(f'\n4. called {tool} {{"path": ".env"}}; the extension\'s on_pre_tool_use hook stops it:\n')
            guarded = await host.call_tool(tool, {"path": ".env"})
            say(indent(render.tool_result(guarded.result)))
            logs = [render.safe_text(str(e["data"]["message"])) for e in host.events.history("session.info")]
            say("\n5. what the extension logged to the session:\n")
            say(indent("\n".join(logs) or "(nothing)"))
            say('\n6. a scripted agent answered "How long is the README?" (the events of its turn):\n')
            reply = await host.send_and_wait("How long is the README?", timeout=30)
            history = host.events.history()
            start = next((n for n, e in enumerate(history) if e["type"] == "user.message"), len(history))
            turn = [e for e in history[start:] if e["type"].startswith(_TURN_EVENTS)]
            say(indent("\n".join(render.safe_text(_describe_turn_event(e)) for e in turn)))
            ok = (
                result.success
                and reply is not None
                and guarded.result_type == "denied"
                and all(info.status == "running" for info in host.extensions)
            )
            say("\nEverything worked." if ok else "\nSomething failed; see above.")
            return EXIT_OK if ok else EXIT_FAILED

        count = ToolCall(f"{tool_prefix('hello')}_count_lines", {"path": "README.md"})
        demo_agent = ScriptedAgent([[AgentReply("Let me count.", (count,)), AgentReply("The README has 3 lines.")]])
        return asyncio.run(with_host(demo_args, run, agent=demo_agent))


_TURN_EVENTS: Final = ("user.", "assistant.", "tool.", "session.idle")


def _describe_turn_event(event: Any) -> str:
    data = event["data"]
    detail = data.get("content") or data.get("toolName") or data.get("turnId") or ""
    if event["type"] == "tool.execution_complete":
        detail = f"{data['toolName']}: {data['result']['content']}"
    return f"{event['type']:<26} {detail}".rstrip()
