"""The ``extensions`` command: parse, call the host or the scaffolder, print. No logic of its own.

Exit codes: 0 success; 1 the operation failed (an extension failed to load, a tool call did
not succeed); 2 bad usage (unknown option, bad name, bad JSON, a ``--root`` that is not a
folder); 141 stdout was closed before everything was printed (``extensions list | head -1``:
the command stops quietly, as a process ended by SIGPIPE would, without a traceback).

One-shot commands (everything but ``dev``) stop their extensions with a short stop ladder,
:data:`ONE_SHOT_STOP_GRACE` per step: nothing waits for their answers any more, and an
extension that ignores end of stream must not hold the command for the contract's 5 s.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any, Final

from ..control import (
    METHOD_INSPECT,
    METHOD_LIST,
    METHOD_REFRESH,
    METHOD_RELOAD,
    ControlClient,
    connect_to_host,
    describe_extension,
    describe_extensions,
)
from ..discovery import ExtensionSpec, discover
from ..environment import VARIABLE_NAME, is_sensitive
from ..errors import ExtensionHostError, ProjectRootError, ScaffoldError, UnknownExtensionError, UnknownToolError
from ..hooks.runner import HookRecord
from ..host import DEFAULT_READINESS_TIMEOUT, ExtensionHost
from ..info import ExtensionInfo, ToolInfo
from ..outcomes import ReloadOutcome
from ..paths import PROJECT_EXTENSIONS_DIR, extensions_dir, find_project_root, user_home
from ..trust import TrustStore
from . import render
from .dev import EXIT_STDOUT_CLOSED, DevLoop, silence_stdout, stdin_reader
from .scaffold import DEFAULT_TEMPLATE, available_templates, scaffold, tool_prefix

__all__ = ["main"]

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
EXIT_USAGE: Final = 2
_BROKEN: Final = frozenset({"failed", "quarantined"})
"""Statuses that make ``list`` and ``inspect`` exit 1."""
_PROGRESS_AFTER_SECONDS: Final = 1.0
"""Loading that takes longer than this gets a line on stderr, so a slow start never looks hung."""
ONE_SHOT_STOP_GRACE: Final = 0.5
"""Seconds each step of the stop ladder waits in a one-shot command (a long-running host: 5 s).
A well-behaved extension exits on end of stream in milliseconds."""


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
        code: int = args.run(args)
        if sys.stdout is not None:  # None: started without a stdout at all (``>&-``)
            sys.stdout.flush()  # a closed stdout shows here, not in the interpreter's last flush
        return code
    except BrokenPipeError:
        silence_stdout()
        return EXIT_STDOUT_CLOSED
    except (ScaffoldError, ProjectRootError) as exc:
        _say(render.error_line(exc), err=True)
        return EXIT_USAGE
    except ExtensionHostError as exc:
        _say(render.error_line(exc), err=True)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return 130


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
        "--readiness-timeout",
        type=float,
        default=DEFAULT_READINESS_TIMEOUT,
        metavar="SECONDS",
        help=f"how long each extension has to join (default: {DEFAULT_READINESS_TIMEOUT:g})",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

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
        help=f"template: {', '.join(available_templates())} (default: {DEFAULT_TEMPLATE})",
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

    sub = command("prompt", _prompt, "run the prompt hooks on TEXT and print the resulting prompt and context")
    sub.add_argument("text", help="the prompt")
    sub.add_argument("--json", action="store_true", help="print JSON for scripts")

    sub = command("trust", _trust, "trust this project, so that its own extensions run (they do not until you do)")
    sub.add_argument("--revoke", action="store_true", help="withdraw the trust: its extensions stop running")
    sub.add_argument("--json", action="store_true", help="print JSON for scripts")

    sub = command("grant", _grant, "let an extension have sensitive environment variables it asks for")
    sub.add_argument("name", help="extension name or id (project:NAME, user:NAME)")
    sub.add_argument("variables", nargs="*", metavar="VAR", help="variable names (none: show what it is granted)")
    sub.add_argument("--revoke", action="store_true", help="take these variables back")
    sub.add_argument("--json", action="store_true", help="print JSON for scripts")

    command("dev", _dev, "run a host for the project in the foreground: hot reload, logs, commands on stdin")

    command("demo", _demo, "scaffold an extension into a temporary project and call its tool")
    return parser


# -- commands ----------------------------------------------------------------------------


def _scaffold(args: argparse.Namespace) -> int:
    project_root = find_project_root(args.root)
    root = extensions_dir(user_home(args.home)) if args.user else project_root / PROJECT_EXTENSIONS_DIR
    folder = scaffold(args.name, root, args.template)
    entry = folder / "extension.py"
    newly_trusted = False
    if not args.user:
        # Creating your own code in a project is consent to run that project's extensions.
        store = TrustStore(user_home(args.home))
        newly_trusted = not store.project_trusted(project_root)
        if newly_trusted:
            store.set_project_trusted(project_root, True)
    if args.json:
        _print_json(
            {
                "name": args.name,
                "path": str(folder),
                "entry": str(entry),
                "template": args.template,
                "trusted_project": newly_trusted,
            }
        )
    else:
        _say(f"created {entry}")
        if newly_trusted:
            _say(f"trusted {project_root}: its extensions run from now on (undo: extensions trust --revoke)")
        _say(
            f'try it:  extensions call {tool_prefix(args.name)}_count_lines \'{{"path": "README.md"}}\''
            if args.template == "basic"
            else "try it:  extensions list"
        )
    return EXIT_OK


def _list(args: argparse.Namespace) -> int:
    def show(listing: dict[str, Any]) -> int:
        infos = [ExtensionInfo.from_json(item) for item in listing["extensions"]]
        if args.json:
            _print_json(listing)
        else:
            _say(render.extensions_table(infos))
        return EXIT_FAILED if any(info.status in _BROKEN for info in infos) else EXIT_OK

    return asyncio.run(_ask_host_or_load(args, METHOD_LIST, None, describe_extensions, show))


def _inspect(args: argparse.Namespace) -> int:
    def show(detail: dict[str, Any]) -> int:
        if args.json:
            _print_json(detail)
        else:
            info = ExtensionInfo.from_json({**detail, "tools": [tool["name"] for tool in detail["tools"]]})
            tools = [ToolInfo.from_json(tool) for tool in detail["tools"]]
            calls = [HookRecord(**call) for call in detail["recent_hook_calls"]]
            _say(render.extension_detail(info, tools, detail["log_tail"], calls))
        return EXIT_FAILED if detail["status"] in _BROKEN else EXIT_OK

    def load(host: ExtensionHost) -> dict[str, Any]:
        return describe_extension(host, args.name)

    return asyncio.run(_ask_host_or_load(args, METHOD_INSPECT, {"name": args.name}, load, show))


def _reload(args: argparse.Namespace) -> int:
    def show(root: str, host_running: bool, outcomes: list[ReloadOutcome], text: str) -> int:
        if args.json:
            _print_json({"root": root, "host_running": host_running, "outcomes": [o.to_json() for o in outcomes]})
        else:
            _say(text)
        return EXIT_OK if all(outcome.ok for outcome in outcomes) else EXIT_FAILED

    async def check(host: ExtensionHost) -> int:
        infos = [host.extension(args.name)] if args.name else host.extensions
        outcomes = [_load_outcome(info) for info in infos]
        return show(str(host.project_root), False, outcomes, render.extension_statuses(infos))

    async def run() -> int:
        client = await _running_host(args)
        if client is None:
            root = find_project_root(args.root)
            _say(f"no host is running for {root}; loading every extension once to check it", err=True)
            return await _with_host(args, check)
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
        _say(f"error: ARGUMENTS is not valid JSON ({exc}); pass an object such as '{{\"a\": 1}}'", err=True)
        return EXIT_USAGE
    if not isinstance(arguments, dict):
        _say("error: ARGUMENTS must be a JSON object, such as '{\"a\": 1}'", err=True)
        return EXIT_USAGE

    async def run(host: ExtensionHost) -> int:
        tool = host.tools.get(args.tool)
        result = await host.call_tool(args.tool, arguments)
        if args.json:
            _print_json({"tool": args.tool, "owner": tool.owner if tool else None, **result.to_json()})
        else:
            _say(render.tool_result(result.result))
        if args.verbose:
            for event in host.events.history("hook.end"):
                _say(render.hook_end(event["data"]), err=True)
            for hook, owner in host.skipped_hooks(args.tool):
                if hook == "on_post_tool_use" and result.decision == "deny":
                    continue  # denied before the tool ran: no post hook was due
                _say(render.hook_skipped(hook, owner, args.tool), err=True)
            if result.decided_by:
                _say(f"decided {result.decision} by {render.safe_cell(result.decided_by)}", err=True)
            if result.additional_context:
                _say(render.additional_context(result.additional_context), err=True)
        return EXIT_OK if result.success else EXIT_FAILED

    return asyncio.run(_with_host(args, run))


def _prompt(args: argparse.Namespace) -> int:
    async def run(host: ExtensionHost) -> int:
        outcome = await host.submit_prompt(args.text)
        if args.json:
            _print_json(outcome.to_json())
        else:
            _say(render.prompt_result(outcome))
        return EXIT_FAILED if outcome.rejected else EXIT_OK

    return asyncio.run(_with_host(args, run))


def _trust(args: argparse.Namespace) -> int:
    root = find_project_root(args.root)
    home = user_home(args.home)
    store = TrustStore(home)
    store.set_project_trusted(root, not args.revoke)
    specs = [found.spec for found in discover(root, home) if found.spec.source == "project"]
    outcomes = asyncio.run(_tell_running_host(args, METHOD_REFRESH, None))
    if args.json:
        _print_json(
            {
                "project": str(root),
                "trusted": not args.revoke,
                "record": str(store.path),
                "extensions": [_spec_json(spec) for spec in specs],
                "host_outcomes": None if outcomes is None else [outcome.to_json() for outcome in outcomes],
            }
        )
    else:
        _say(render.trust_change(root, not args.revoke, specs, store.path))
        if outcomes:
            _say("the running host applied it:\n" + render.reload_outcomes(outcomes))
    return EXIT_OK if outcomes is None or all(outcome.ok for outcome in outcomes) else EXIT_FAILED


def _grant(args: argparse.Namespace) -> int:
    bad = [name for name in args.variables if not VARIABLE_NAME.fullmatch(name)]
    if bad:
        _say(render.error_line(f"{bad[0]!r} is not an environment variable name"), err=True)
        return EXIT_USAGE
    root = find_project_root(args.root)
    home = user_home(args.home)
    spec = _find_extension(root, home, args.name)
    store = TrustStore(home)
    if not args.variables:
        granted = store.granted(root, spec.source, spec.name)
    elif args.revoke:
        granted = store.revoke(root, spec.source, spec.name, args.variables)
    else:
        granted = store.grant(root, spec.source, spec.name, args.variables)
    notes = [
        f"{name} is not withheld from extensions: they have it without a grant"
        for name in args.variables
        if not args.revoke and not is_sensitive(name)
    ]
    # A running host restarts the extension, so that it asks again and gets what it is granted now.
    outcomes = asyncio.run(_tell_running_host(args, METHOD_RELOAD, {"name": spec.id})) if args.variables else None
    if args.json:
        _print_json(
            {
                "extension": spec.id,
                "project": str(root) if spec.source == "project" else None,
                "granted": sorted(granted),
                "record": str(store.path),
                "notes": notes,
                "host_outcomes": None if outcomes is None else [outcome.to_json() for outcome in outcomes],
            }
        )
    else:
        _say(render.grants(spec.id, args.variables, args.revoke, sorted(granted)))
        for note in notes:
            _say(f"note: {note}", err=True)
        if outcomes:
            _say("the running host applied it:\n" + render.reload_outcomes(outcomes))
    return EXIT_OK


async def _tell_running_host(args: argparse.Namespace, method: str, params: Any) -> list[ReloadOutcome] | None:
    """Ask the host running for the project, if any, to apply a decision just recorded; its
    outcomes (``None``: no host runs, or it could not be told, which is said on stderr)."""
    try:
        client = await connect_to_host(args.root)
    except ExtensionHostError as exc:
        _say(render.error_line(f"the decision is recorded, but the running host cannot be told: {exc}"), err=True)
        return None
    if client is None:
        return None
    try:
        answer = await client.request(method, params, timeout=None)
    except ExtensionHostError as exc:
        _say(render.error_line(f"the decision is recorded, but the running host did not apply it: {exc}"), err=True)
        return None
    finally:
        await client.close()
    return [ReloadOutcome.from_json(item) for item in answer["outcomes"]]


def _find_extension(root: Path, home: Path, name: str) -> ExtensionSpec:
    """The extension ``name`` (or id) discovered in ``root`` and ``home``, without running any.

    A name is the project's extension of that name if it has one, else the user's.
    """
    specs = [found.spec for found in discover(root, home)]
    for spec in specs:
        if name in (spec.id, spec.name):
            return spec
    raise UnknownExtensionError(name, [spec.id for spec in specs])


def _spec_json(spec: ExtensionSpec) -> dict[str, Any]:
    return {
        "id": spec.id,
        "name": spec.name,
        "path": str(spec.folder),
        "entry": spec.entry_name,
        "runtime": spec.runtime,
        "link_target": str(spec.link_target) if spec.link_target else None,
    }


def _dev(args: argparse.Namespace) -> int:
    async def run() -> int:
        host = ExtensionHost(args.root, args.home, readiness_timeout=args.readiness_timeout)
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
        _say(f"1. scaffolded {folder.relative_to(project)}/extension.py into a temporary project")
        demo_args = argparse.Namespace(**{**vars(args), "root": project, "home": Path(temp) / "home"})

        async def run(host: ExtensionHost) -> int:
            _say("2. started the host; the extensions it found:\n")
            _say(_indent(render.extensions_table(host.extensions)))
            tool = f"{tool_prefix('hello')}_count_lines"
            _say(f'\n3. called {tool} {{"path": "README.md"}} through the host:\n')
            result = await host.call_tool(tool, {"path": "README.md"})
            _say(_indent(render.tool_result(result.result)))
            _say(f'\n4. called {tool} {{"path": ".env"}}; the extension\'s on_pre_tool_use hook stops it:\n')
            guarded = await host.call_tool(tool, {"path": ".env"})
            _say(_indent(render.tool_result(guarded.result)))
            logs = [render.safe_text(str(e["data"]["message"])) for e in host.events.history("session.info")]
            _say("\n5. what the extension logged to the session:\n")
            _say(_indent("\n".join(logs) or "(nothing)"))
            ok = (
                result.success
                and guarded.result_type == "denied"
                and all(info.status == "running" for info in host.extensions)
            )
            _say("\nEverything worked." if ok else "\nSomething failed; see above.")
            return EXIT_OK if ok else EXIT_FAILED

        return asyncio.run(_with_host(demo_args, run))


# -- helpers -----------------------------------------------------------------------------


async def _with_host(args: argparse.Namespace, run: Callable[[ExtensionHost], Any]) -> int:
    # A one-shot command is not a session: the session hooks are for the agents that embed the host.
    host = ExtensionHost(
        args.root,
        args.home,
        readiness_timeout=args.readiness_timeout,
        session_hooks=False,
        watch=False,
        stop_grace=ONE_SHOT_STOP_GRACE,
    )
    async with _progress_note(f"starting extensions of {host.project_root} ..."):
        await host.start()
    try:
        code: int = await run(host)
        return code
    except (UnknownToolError, UnknownExtensionError) as exc:
        _say(render.error_line(exc), err=True)
        return EXIT_FAILED
    finally:
        await host.stop()


async def _running_host(args: argparse.Namespace) -> ControlClient | None:
    """The host running for the project, if there is one; says so (or that its socket was stale) on stderr."""

    def stale(_path: Path) -> None:
        _say("removed a stale control socket (its host is gone)", err=True)

    client = await connect_to_host(args.root, on_stale=stale)
    if client is not None:
        _say(f"(from the running host, pid {client.pid})", err=True)
    return client


async def _ask_host_or_load(
    args: argparse.Namespace,
    method: str,
    params: Any,
    load: Callable[[ExtensionHost], dict[str, Any]],
    show: Callable[[dict[str, Any]], int],
) -> int:
    """``show`` the running host's answer to ``method``; with no host running, ``show`` the same
    answer built by ``load`` from a host started just for this command."""
    client = await _running_host(args)
    if client is None:

        async def run(host: ExtensionHost) -> int:
            return show(load(host))

        return await _with_host(args, run)
    try:
        return show(await client.request(method, params))
    finally:
        await client.close()


def _load_outcome(info: ExtensionInfo) -> ReloadOutcome:
    # What a fresh load did to one extension, in the shape a running host's reload reports.
    action = {"running": "started", "failed": "failed"}.get(info.status, info.status)
    return ReloadOutcome(info.id, action, info.status, info.error, info.tools)


@contextlib.asynccontextmanager
async def _progress_note(message: str) -> AsyncIterator[None]:
    async def note() -> None:
        await asyncio.sleep(_PROGRESS_AFTER_SECONDS)
        _say(message, err=True)

    task = asyncio.create_task(note())
    try:
        yield
    finally:
        task.cancel()


def _print_json(value: Any) -> None:
    """Every ``--json`` print: the data exact, no character a terminal would act on."""
    print(render.json_text(value))


def _say(text: str, *, err: bool = False) -> None:
    """Every human print, on stdout or (``err``) stderr.

    What is printed has been built by ``render``; the last pass of ``render.safe_text`` (a
    no-op on such text) keeps that true for a message composed here around a path or an
    exception.
    """
    stream = sys.stderr if err else sys.stdout
    if stream is not None:  # None: the process was started without it; print would pick stdout
        print(render.safe_text(text), file=stream, flush=err)


def _indent(text: str) -> str:
    return "\n".join(f"   {line}" if line else "" for line in text.splitlines())
