"""What the commands that reach extensions do: ``scaffold``, ``list``, ``inspect``, ``reload``,
``command``, ``prompt``, ``dev`` and ``demo``; their options are :mod:`.parser`'s.

``list``, ``inspect`` and ``reload`` (and ``call``, :mod:`.call_command`) ask the host running
for the project when there is one (over its control socket: :func:`.one_shot.running_host`), and
start a host of their own only when there is none; asking imports the control client, not the
host. The others start a host of their own (:func:`.one_shot.with_host`), or are one (``dev``).

One-shot commands stop their extensions with a short stop ladder,
:data:`~.one_shot.ONE_SHOT_STOP_GRACE` per step: nothing waits for their answers any more, and an
extension that ignores end of stream must not hold the command for the contract's 5 s.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..control.methods import METHOD_INSPECT, METHOD_LIST, METHOD_RELOAD
from ..outcomes import ReloadOutcome
from ..project.paths import PROJECT_EXTENSIONS_DIR, extensions_dir, find_project_root, user_home
from . import render
from .one_shot import ask_host_or_load, load_outcome, running_host, with_host
from .output import EXIT_FAILED, EXIT_OK, indent, print_json, say

if TYPE_CHECKING:  # imported where a command starts a host: asking a running one needs none of it
    from ..host import ExtensionHost

__all__ = [
    "command_command",
    "demo_command",
    "dev_command",
    "inspect_command",
    "list_command",
    "prompt_command",
    "reload_command",
    "scaffold_command",
]

_BROKEN: Final = frozenset({"failed", "quarantined"})
"""Statuses that make ``list`` and ``inspect`` exit 1."""


def scaffold_command(args: argparse.Namespace) -> int:
    from ..project.scaffold import scaffold, template_entry, tool_prefix
    from ..project.trust import TrustStore

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


def list_command(args: argparse.Namespace) -> int:
    def show(listing: dict[str, Any]) -> int:
        from ..info import ExtensionInfo

        infos = [ExtensionInfo.from_json(item) for item in listing["extensions"]]
        if args.json:
            print_json(listing)
        else:
            say(render.extensions_table(infos))
        return EXIT_FAILED if any(info.status in _BROKEN for info in infos) else EXIT_OK

    def load(host: ExtensionHost) -> dict[str, Any]:
        from ..control.service import describe_extensions

        return describe_extensions(host)

    return asyncio.run(ask_host_or_load(args, METHOD_LIST, None, load, show))


def inspect_command(args: argparse.Namespace) -> int:
    def show(detail: dict[str, Any]) -> int:
        from ..calls.command_registry import CommandInfo
        from ..hooks.runner import HookRecord
        from ..info import ExtensionInfo, ToolInfo

        if args.json:
            print_json(detail)
        else:
            commands = [CommandInfo(**command) for command in detail.get("commands") or ()]
            names = {"tools": [tool["name"] for tool in detail["tools"]], "commands": [c.name for c in commands]}
            info = ExtensionInfo.from_json({**detail, **names})
            tools = [ToolInfo.from_json(tool) for tool in detail["tools"]]
            calls = [HookRecord(**call) for call in detail["recent_hook_calls"]]
            say(render.extension_detail(info, tools, detail["log_tail"], calls, commands))
            if detail.get("origin"):
                say(render.origin_line(detail["origin"]))
        return EXIT_FAILED if detail["status"] in _BROKEN else EXIT_OK

    def load(host: ExtensionHost) -> dict[str, Any]:
        from ..control.service import describe_extension

        return describe_extension(host, args.name)

    return asyncio.run(ask_host_or_load(args, METHOD_INSPECT, {"name": args.name}, load, show))


def reload_command(args: argparse.Namespace) -> int:
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


def command_command(args: argparse.Namespace) -> int:
    async def run(host: ExtensionHost) -> int:
        result = await host.run_command(args.name, args.args)
        if args.json:
            print_json(result.to_json())
        else:
            say(render.command_result(result), err=not result.ok)
        return EXIT_OK if result.ok else EXIT_FAILED

    return asyncio.run(with_host(args, run))


def prompt_command(args: argparse.Namespace) -> int:
    async def run(host: ExtensionHost) -> int:
        outcome = await host.submit_prompt(args.text)
        if args.json:
            print_json(outcome.to_json())
        else:
            say(render.prompt_result(outcome))
        return EXIT_FAILED if outcome.rejected else EXIT_OK

    return asyncio.run(with_host(args, run))


def dev_command(args: argparse.Namespace) -> int:
    from ..host import ExtensionHost
    from ..runtime.options import Timeouts
    from .dev import DevLoop, stdin_reader

    async def run() -> int:
        host = ExtensionHost(
            args.root, args.home, timeouts=Timeouts(readiness=args.readiness_timeout), session=args.resume
        )
        return await DevLoop(host, interactive=sys.stdin is not None and sys.stdin.isatty()).run(await stdin_reader())

    return asyncio.run(run())


def demo_command(args: argparse.Namespace) -> int:
    import tempfile

    from ..project.scaffold import scaffold, tool_prefix
    from ..project.trust import TrustStore
    from ..session.agents import AgentReply, ScriptedAgent
    from ..session.model_context import ToolCall

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
