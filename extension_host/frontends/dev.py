"""``extensions dev``: the extension author's loop, a long-running host in the foreground.

It starts a watching host for the project, prints what happens in a readable form (extensions
started, reloaded, kept after a failed reload, stopped; what they log; hook decisions), and
takes commands on stdin: ``call TOOL [JSON]``, ``prompt TEXT``, ``/NAME [ARGS]`` (a slash
command), ``list``, ``reload [NAME]``, ``help``, ``quit``. It opens the project's control
socket, so ``extensions list``, ``inspect`` and ``reload`` in another shell talk to it. While
the extensions start it shows which still are (:mod:`.progress`); then the session, the
extensions and the folder of their logs. SIGINT
and SIGTERM stop it cleanly: every extension process is stopped before it exits.

On a terminal it asks two kinds of question, answered by the next line typed: whether to trust
a project whose extensions the user has not trusted yet (asked once, before anything runs), and
whether to grant an extension the environment variables it failed to get (a yes is recorded
and the extension reloaded; a no is remembered for that exact set until dev ends). Without a
terminal it asks nothing: untrusted extensions are listed as such, with the command that
trusts them. The printing and asking are this module's, its text built by ``render`` (which
shows an extension's control characters as escapes and prefixes each line an extension logs
with its id); the host does the work.

Commands are read from stdin whatever it is: a pipe or a terminal through the event loop, a
file or ``/dev/null`` (which the loop cannot watch) by a thread. At the end of stdin dev keeps
running until SIGINT, SIGTERM or ``quit``. If its stdout is closed (``extensions dev | head``),
dev stops every extension and exits with :data:`EXIT_STDOUT_CLOSED`, printing nothing more.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import shlex
import signal
import stat
import sys
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from typing import BinaryIO, Final, Protocol, TextIO

from extension_protocol.protocol import Event

from ..control.service import ControlServer
from ..errors import ExtensionHostError
from ..host import ExtensionHost
from ..outcomes import ReloadOutcome
from ..project.discovery import discover
from ..project.paths import PROJECT_EXTENSIONS_DIR, project_logs_dir
from . import render
from .progress import host_starting

__all__ = ["EXIT_STDOUT_CLOSED", "HELP", "DevLoop", "LineReader", "silence_stdout", "stdin_reader"]

EXIT_STDOUT_CLOSED: Final = 141
"""Exit code when the reader of stdout went away: the shell's code for a process ended by
SIGPIPE (128 + 13), which is what ``yes | head -1`` reports for ``yes``."""
_QUEUED_LINES: Final = 64
"""Lines read ahead from a stdin the event loop cannot watch (a file); the thread that reads
it waits while dev is this far behind, so a huge file is never held in memory."""


class LineReader(Protocol):
    """Where dev reads its commands: ``readline()`` returns ``b""`` at the end."""

    async def readline(self) -> bytes: ...


HELP = """commands:
  call TOOL [JSON]   call a tool through the hooks, e.g.  call git_stats {"max_files": 5}
  prompt TEXT        run the prompt hooks on TEXT
  /NAME [ARGS]       run an extension's slash command, e.g.  /deploy staging
  list               the extensions and their status
  reload [NAME]      reload one extension, or all
  help               this text
  quit               stop every extension and exit (Ctrl-C does the same)"""


class DevLoop:
    """One ``extensions dev`` session."""

    def __init__(self, host: ExtensionHost, out: TextIO = sys.stdout, *, interactive: bool = False) -> None:
        """``interactive``: a person answers on stdin (a terminal), so dev may ask questions."""
        self._host = host
        self._out = out
        self._stop = asyncio.Event()
        self._interactive = interactive
        self._questions: deque[tuple[str, Callable[[bool], Awaitable[None]]]] = deque()
        self._asked: set[tuple[str, frozenset[str]]] = set()
        self._out_closed = False

    def say(self, text: str) -> None:
        """Print a line (or lines) and flush, so a pipe reader sees it at once.

        What is said has been built by ``render``; the last pass of ``render.safe_text`` (a
        no-op on such text) keeps that true for a message composed here around a path or an
        exception. If nobody reads the output any more, dev stops (quietly).
        """
        if self._out_closed:
            return
        try:
            print(render.safe_text(text), file=self._out, flush=True)
        except BrokenPipeError:
            self._output_closed()

    def _output_closed(self) -> None:
        self._out_closed = True
        if self._out is sys.stdout:
            silence_stdout()
        self._stop.set()

    def _watch_output(self) -> Callable[[], None]:
        """Notice at once when the reader of a piped stdout goes away, rather than at the next
        line printed (which may never come); returns the function that stops watching."""
        loop = asyncio.get_running_loop()
        try:
            fd = self._out.fileno()
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                return lambda: None
        except (OSError, ValueError, AttributeError):
            return lambda: None

        def closed() -> None:
            # epoll reports an error on a pipe's write end once its read end is closed, and
            # asyncio passes that to a reader callback; a writable pipe never looks readable.
            loop.remove_reader(fd)
            self._output_closed()

        loop.add_reader(fd, closed)

        def unwatch() -> None:
            loop.remove_reader(fd)

        return unwatch

    async def run(self, commands: LineReader | None) -> int:
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
            if self._interactive and commands is not None and not await self._ask_trust(commands):
                return 0  # stopped while the question was open
            async with host_starting(host):
                await host.start()
            host.on_event(self._on_event)
            self.say(f"session {host.session_id} (resume it with: extensions dev --resume {host.session_id})")
            self.say(render.extensions_table(host.extensions))
            self.say(f"extension logs: {project_logs_dir(host.user_home, host.project_root)} (one file per extension)")
            self.say(f"\nwatching {extensions_dir} and {host.user_home / 'extensions'}; type 'help' for commands")
            self._offer_grants()
            reader = asyncio.ensure_future(self._read(commands)) if commands is not None else None
            unwatch = self._watch_output()
            await self._stop.wait()
            unwatch()
            if reader is not None:
                reader.cancel()
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
            self.say("stopping every extension ...")
            await control.close()
            await host.stop()
            self.say("stopped")
        return EXIT_STDOUT_CLOSED if self._out_closed else 0

    # -- commands -----------------------------------------------------------------------

    async def _read(self, commands: LineReader) -> None:
        while not self._stop.is_set():
            line = await commands.readline()
            if not line:
                return  # stdin closed: keep serving until a signal or quit
            text = line.decode("utf-8", "replace").strip()
            try:
                if self._questions:
                    _, answer = self._questions.popleft()
                    await answer(_is_yes(text))
                    if self._questions:
                        self.say(self._questions[0][0])
                else:
                    await self.execute(text)
            except Exception as exc:  # a bad command must never end the session
                self.say(render.error_line(f"{type(exc).__name__}: {exc}"))

    # -- questions ----------------------------------------------------------------------

    async def _ask_trust(self, commands: LineReader) -> bool:
        """Ask whether to trust the project if it has extensions nobody trusted; False if dev
        was stopped meanwhile."""
        host = self._host
        decision = host.trust
        if decision.trusted or decision.problem is not None:
            return True
        ids = [found.spec.id for found in discover(host.project_root, host.user_home) if found.spec.source == "project"]
        if not ids:
            return True
        self.say(
            f"{host.project_root} has {len(ids)} extension{'s' if len(ids) > 1 else ''} you have not trusted: "
            f"{', '.join(ids)}\nThey would run as you, with access to your files. "
            "Trust this project and run them? [y/N]"
        )
        line = asyncio.ensure_future(commands.readline())
        stopped = asyncio.ensure_future(self._stop.wait())
        await asyncio.wait({line, stopped}, return_when=asyncio.FIRST_COMPLETED)
        stopped.cancel()
        if not line.done():
            line.cancel()
            return False
        if _is_yes(line.result().decode("utf-8", "replace")):
            host.trust_store.set_project_trusted(host.project_root, True)
            self.say(f"trusted {host.project_root} (undo: extensions trust --revoke)")
        else:
            self.say("not trusted: its extensions stay stopped; run 'extensions trust' to change that")
        return True

    def _offer_grants(self) -> None:
        """Queue a question for each extension that failed for want of a variable, once per set."""
        if not self._interactive:
            return
        for info in self._host.extensions:
            if info.status != "failed" or not info.environment_missing:
                continue
            key = (info.id, frozenset(info.environment_missing))
            if key in self._asked:
                continue
            self._asked.add(key)
            question = (
                f"{info.id} asks for the environment variable{'s' if len(key[1]) > 1 else ''} "
                f"{', '.join(info.environment_missing)}. Grant {'them' if len(key[1]) > 1 else 'it'}? [y/N]"
            )
            self._questions.append((question, self._grant_answer(info.id, info.environment_missing)))
            if len(self._questions) == 1:
                self.say(question)

    def _grant_answer(self, extension_id: str, names: tuple[str, ...]) -> Callable[[bool], Awaitable[None]]:
        async def answer(yes: bool) -> None:
            if not yes:
                self.say(f"not granted: {extension_id} stays failed (this dev session will not ask again)")
                return
            host = self._host
            info = host.extension(extension_id)
            host.trust_store.grant(host.project_root, info.source, info.name, names)
            self.say(f"granted {', '.join(names)} to {extension_id}; reloading it")
            await host.reload(extension_id)

        return answer

    async def execute(self, line: str) -> None:
        """Run one command line."""
        if not line:
            return
        word, _, rest = line.partition(" ")
        if word.startswith("/") and len(word) > 1:
            self.say(render.command_result(await self._host.run_command(word, rest.strip())))
            return
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
            self.say(f'arguments are not valid JSON ({exc}); e.g. call {tool} {{"a": 1}}')
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
            self._offer_grants()
        elif kind in ("session.info", "session.warning", "session.error"):
            level = "" if kind == "session.info" else kind.split(".")[1]
            self.say(render.session_message(str(data.get("extensionId", "host")), str(data.get("message", "")), level))
        elif kind == "hook.end" and (lines := render.hook_end(data, notable_only=True)):
            self.say("\n".join(f"[hook] {line}" for line in lines.splitlines()))


def _is_yes(answer: str) -> bool:
    return answer.strip().lower() in ("y", "yes")


async def stdin_reader() -> LineReader | None:
    """A reader of this process's stdin, or ``None`` if there is none.

    A pipe, socket or terminal is read by the event loop. Anything else (a file, ``/dev/null``)
    cannot be watched by it (epoll refuses them, and asyncio would say so with a traceback), so
    a thread reads it, a few lines ahead of dev.
    """
    if sys.stdin is None or sys.stdin.closed:
        return None
    try:
        fd = sys.stdin.fileno()
        mode = os.fstat(fd).st_mode
    except (OSError, ValueError):
        return None
    loop = asyncio.get_running_loop()
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd):
        reader = asyncio.StreamReader()
        try:
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
            return reader
        except (ValueError, OSError):
            pass
    return _ThreadedLines(sys.stdin.buffer, loop)


class _ThreadedLines:
    """Lines of a blocking binary stream, read by a daemon thread into a bounded queue."""

    def __init__(self, stream: BinaryIO, loop: asyncio.AbstractEventLoop) -> None:
        self._lines: asyncio.Queue[bytes] = asyncio.Queue(_QUEUED_LINES)
        self._loop = loop
        self._ended = False
        threading.Thread(target=self._pump, args=(stream,), name="dev-stdin", daemon=True).start()

    def _pump(self, stream: BinaryIO) -> None:
        while True:
            try:
                line = stream.readline()
            except (OSError, ValueError):
                line = b""
            try:
                # Waits while the queue is full: a long file is read as fast as dev uses it.
                asyncio.run_coroutine_threadsafe(self._lines.put(line), self._loop).result()
            except (RuntimeError, concurrent.futures.CancelledError):
                return  # dev has ended
            if not line:
                return

    async def readline(self) -> bytes:
        if self._ended:
            return b""
        line = await self._lines.get()
        self._ended = not line
        return line


def silence_stdout() -> None:
    """Point stdout at ``/dev/null`` after its reader went away, so that neither a later print
    nor the interpreter's final flush fails (the Python docs' advice for ``SIGPIPE``)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    finally:
        os.close(devnull)
