"""``extensions dev``: the extension author's loop, a long-running host in the foreground.

It starts a watching host for the project, prints what happens in a readable form (extensions
started, reloaded, kept after a failed reload, stopped; what they log; hook decisions), and
takes commands on stdin: ``call TOOL [JSON]``, ``prompt TEXT``, ``list``, ``reload [NAME]``,
``help``, ``quit``. It opens the project's control socket, so ``extensions list``, ``inspect``
and ``reload`` in another shell talk to it. SIGINT and SIGTERM stop it cleanly: every extension process is stopped
before it exits. The printing is this module's, its text built by ``render`` (which shows
an extension's control characters as escapes and prefixes each line an extension logs with
its id); the host does the work.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import TextIO

from sdk_extension.protocol import Event

from . import render
from .control import ControlServer
from .errors import ExtensionHostError
from .host import ExtensionHost
from .outcomes import ReloadOutcome
from .paths import PROJECT_EXTENSIONS_DIR

__all__ = ["HELP", "DevLoop"]

HELP = """commands:
  call TOOL [JSON]   call a tool through the hooks, e.g.  call git_stats {"max_files": 5}
  prompt TEXT        run the prompt hooks on TEXT
  list               the extensions and their status
  reload [NAME]      reload one extension, or all
  help               this text
  quit               stop every extension and exit (Ctrl-C does the same)"""


class DevLoop:
    """One ``extensions dev`` session."""

    def __init__(self, host: ExtensionHost, out: TextIO = sys.stdout) -> None:
        self._host = host
        self._out = out
        self._stop = asyncio.Event()

    def say(self, text: str) -> None:
        """Print a line (or lines) and flush, so a pipe reader sees it at once.

        What is said has been built by ``render``; the last pass of ``render.safe_text`` (a
        no-op on such text) keeps that true for a message composed here around a path or an
        exception.
        """
        print(render.safe_text(text), file=self._out, flush=True)

    async def run(self, commands: asyncio.StreamReader | None) -> int:
        """Run until ``quit``, SIGINT or SIGTERM; returns the exit code."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self._stop.set)
        host = self._host
        extensions_dir = host.project_root / PROJECT_EXTENSIONS_DIR
        if not extensions_dir.exists():
            extensions_dir.mkdir(parents=True)
            self.say(f"created {extensions_dir} so that new extensions are picked up")
        control = ControlServer(host)
        try:
            await control.start()  # first: a second dev for the same project stops here
        except ExtensionHostError as exc:
            self.say(render.error_line(exc))
            return 1
        try:
            await host.start()
            host.on_event(self._on_event)
            self.say(render.extensions_table(host.extensions))
            self.say(f"\nwatching {extensions_dir} and {host.user_home / 'extensions'}; type 'help' for commands")
            reader = asyncio.ensure_future(self._read(commands)) if commands is not None else None
            await self._stop.wait()
            if reader is not None:
                reader.cancel()
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
            self.say("stopping every extension ...")
            await control.close()
            await host.stop()
            self.say("stopped")
        return 0

    # -- commands -----------------------------------------------------------------------

    async def _read(self, commands: asyncio.StreamReader) -> None:
        while not self._stop.is_set():
            line = await commands.readline()
            if not line:
                return  # stdin closed: keep serving until a signal or quit
            try:
                await self.execute(line.decode("utf-8", "replace").strip())
            except Exception as exc:  # a bad command must never end the session
                self.say(render.error_line(f"{type(exc).__name__}: {exc}"))

    async def execute(self, line: str) -> None:
        """Run one command line."""
        if not line:
            return
        word, _, rest = line.partition(" ")
        handler = self._commands().get(word)
        if handler is None:
            self.say(f"unknown command {word!r}; type 'help'")
            return
        await handler(rest.strip())

    def _commands(self) -> dict[str, Callable[[str], Awaitable[None]]]:
        return {
            "call": self._call,
            "prompt": self._prompt,
            "list": self._list,
            "reload": self._reload,
            "help": self._help,
            "quit": self._quit,
            "exit": self._quit,
        }

    async def _call(self, rest: str) -> None:
        tool, _, raw = rest.partition(" ")
        if not tool:
            self.say("usage: call TOOL [JSON]")
            return
        try:
            arguments = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as exc:
            self.say(f"arguments are not valid JSON ({exc}); e.g. call {tool} {{\"a\": 1}}")
            return
        try:
            result = await self._host.call_tool(tool, arguments)
        except ExtensionHostError as exc:
            self.say(render.error_line(exc))
            return
        self.say(render.tool_result(result.result))
        if result.additional_context:
            self.say(render.context_note(result.additional_context))

    async def _prompt(self, rest: str) -> None:
        outcome = await self._host.submit_prompt(rest)
        if outcome.rejected:
            self.say(render.prompt_rejection(outcome))
            return
        self.say(render.safe_text(outcome.prompt))
        if outcome.additional_context:
            self.say(render.context_note(outcome.additional_context))

    async def _list(self, rest: str) -> None:
        self.say(render.extensions_table(self._host.extensions))

    async def _reload(self, rest: str) -> None:
        name = shlex.split(rest)[0] if rest else None
        try:
            outcomes = await self._host.reload(name)
        except ExtensionHostError as exc:
            self.say(render.error_line(exc))
            return
        if not outcomes:
            self.say("nothing to reload")

    async def _help(self, rest: str) -> None:
        self.say(HELP)

    async def _quit(self, rest: str) -> None:
        self._stop.set()

    # -- what happens -------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        kind, data = event["type"], event["data"]
        if kind == "session.extensions_loaded":
            for change in data.get("changes", []):
                self.say(render.reload_outcome(ReloadOutcome.from_json(change)))
        elif kind in ("session.info", "session.warning", "session.error"):
            level = "" if kind == "session.info" else kind.split(".")[1]
            self.say(render.session_message(str(data.get("extensionId", "host")), str(data.get("message", "")), level))
        elif kind == "hook.end" and (data.get("decision") in ("deny", "ask") or data.get("outcome") != "ok"):
            self.say(f"[hook] {render.hook_end(data)}")


async def stdin_reader() -> asyncio.StreamReader | None:
    """An asyncio reader of this process's stdin, or ``None`` if stdin cannot be read that way."""
    if sys.stdin is None or sys.stdin.closed:
        return None
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    except (ValueError, OSError):  # a regular file or /dev/null on some platforms
        return None
    return reader
