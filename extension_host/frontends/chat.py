"""``extensions chat``: talk to a model in the terminal, with the project's extensions at work.

A host for the project runs with an :class:`~extension_host.agents.OpenAIChatAgent` (any
OpenAI-compatible endpoint: ``--base-url``, ``--model``, ``OPENAI_API_KEY``) and a persisted
session (``--resume ID`` continues one). Each line typed is a prompt; the reply streams as it
comes, each tool call and its result is a line (``→``/``←``), hooks that deny, ask or fail are
shown, and a hook's ``ask`` is a question answered at the prompt (y/n; a no may carry feedback
for the model). ``/NAME ARGS`` runs an extension's slash command; ``/new``, ``/help`` and
``/exit`` are the chat's own. Every error is one line. Lines come from stdin whatever it is (a
terminal, a pipe, a file), so a conversation can be scripted.

Keys, the same as ``dev``'s: Ctrl-C during a turn cancels it, and otherwise says how to leave
(a typed line is dropped); a second Ctrl-C within :data:`~.line_editor.PRESS_AGAIN_SECONDS`
leaves (exit code :data:`EXIT_INTERRUPTED`); Ctrl-D on an empty line leaves (exit code 0). When
stdin and stdout are a terminal, lines are read by :class:`~.line_editor.TerminalLines`: line
editing, history across chats, Tab completing the slash commands, and what the chat prints
(a streaming reply, a log line) appears above the line being typed.

This module does the reading and the printing; the text is :mod:`.chat_view`'s and
:mod:`.render`'s, the work the host's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Iterable
from typing import Any, Final, TextIO

from extension_protocol.protocol import Event

from ..errors import ExtensionHostError
from ..host import ExtensionHost
from ..project.paths import history_path
from ..runtime.options import Timeouts
from . import chat_view, render
from .command_options import add_agent_endpoint
from .dev import EXIT_STDOUT_CLOSED, LineReader, silence_stdout, stdin_reader
from .line_editor import PRESS_AGAIN_SECONDS, DoublePress, TerminalLines, editing
from .output import EXIT_OK

__all__ = ["EXIT_INTERRUPTED", "ChatLoop", "add_chat_command"]

EXIT_INTERRUPTED: Final = 130
_OWN_COMMANDS: Final = frozenset({"exit", "quit", "new", "help"})


def add_chat_command(commands: Any) -> None:
    """Add ``chat`` to the ``extensions`` command's subcommands."""
    help_text = "chat with a model (any OpenAI-compatible endpoint) in the project, with its extensions"
    sub = commands.add_parser("chat", help=help_text, description=help_text)
    add_agent_endpoint(sub)
    sub.add_argument("--resume", metavar="ID", help="continue this persisted session (see 'extensions sessions list')")
    sub.set_defaults(run=_chat)


def _chat(args: argparse.Namespace) -> int:
    from ..agents.openai_chat import OpenAIChatAgent  # the client library only for this command

    async def run() -> int:
        agent = OpenAIChatAgent(args.model, base_url=args.base_url)
        try:
            await agent.prepare()
            host = ExtensionHost(
                args.root,
                args.home,
                timeouts=Timeouts(readiness=args.readiness_timeout),
                session=args.resume,
                agent=agent,
                permission_clients=True,
            )
            interactive = sys.stdin is not None and sys.stdin.isatty()
            loop = ChatLoop(host, agent.base_url, resumed=args.resume is not None, interactive=interactive)
            agent.on_retry = lambda notice: loop.say(f"  ({notice})")
            return await loop.run(await stdin_reader())
        finally:
            await agent.close()

    return asyncio.run(run())


class ChatLoop:
    """One ``extensions chat`` session over ``host`` (whose agent answers)."""

    def __init__(
        self,
        host: ExtensionHost,
        base_url: str,
        out: TextIO = sys.stdout,
        *,
        resumed: bool = False,
        interactive: bool = False,
    ) -> None:
        """``interactive``: a person types at a terminal, so a ``>`` marks where."""
        self._host = host
        self._mark_prompt = interactive
        self._base_url = base_url
        self._out = out
        self._resumed = resumed
        self._stop = asyncio.Event()
        self._questions: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._settled: dict[str, asyncio.Event] = {}  # request id -> set once it is no longer pending
        self._reading: asyncio.Future[bytes] | None = None
        self._lines: LineReader | None = None
        self._in_turn = False
        self._presses = DoublePress()
        self._open_line = False  # streamed text printed without its newline yet
        self._streamed: set[str] = set()
        self._usage = [0, 0, 0]  # tokens in, out, model calls of the running prompt
        self._out_closed = False
        self._interrupted = False

    # -- output -------------------------------------------------------------------------

    def say(self, text: str) -> None:
        """Print whole lines (built by ``render``/``chat_view``), ending streamed text first."""
        self._write(("\n" if self._open_line else "") + render.safe_text(text) + "\n")
        self._open_line = False

    def _write(self, text: str) -> None:
        if self._out_closed:
            return
        try:
            self._out.write(text)
            self._out.flush()
        except BrokenPipeError:
            self._out_closed = True
            if self._out is sys.stdout:
                silence_stdout()
            self._stop.set()

    # -- the loop -----------------------------------------------------------------------

    async def run(self, lines: LineReader | None) -> int:
        """Chat until Ctrl-D, ``/exit``, Ctrl-C twice or SIGTERM; returns the exit code.

        Raises:
            ExtensionHostError: the host could not start (its session is locked, say).
        """
        self._mark_prompt = self._mark_prompt and not isinstance(lines, TerminalLines)  # else the reader marks it
        history = history_path(self._host.user_home, "chat")
        with editing(
            lines, self._out, prompt="> ", history=history, candidates=self._candidates, on_interrupt=self._interrupt
        ) as self._out:
            return await self._run(lines)

    async def _run(self, lines: LineReader | None) -> int:
        self._lines = lines
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, self._interrupt)
        loop.add_signal_handler(signal.SIGTERM, self._stop.set)
        host = self._host
        started = False
        try:
            await host.start()  # its errors are the command's: one line on stderr, exit 1
            started = True
            host.on_event(self._on_event)
            agent = host.agent
            model = getattr(agent, "model", None)
            self.say(
                chat_view.banner(
                    host.session_id, self._resumed, model, self._base_url, host.extensions, len(host.tools)
                )
            )
            while not self._stop.is_set():
                if self._mark_prompt:
                    self._write("> ")
                    self._open_line = True  # what is printed before the line is typed starts below it
                line = await self._read_line()
                self._open_line = False  # the terminal echoed the line and its newline
                if line is None:
                    break
                await self._handle(line.strip())
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
            session_id = host.session_id
            await host.stop()
            if self._reading is not None:
                self._reading.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._reading  # the terminal is given back before the last line
            if started:
                self.say(f"session {session_id} kept; resume it with: extensions chat --resume {session_id}")
        if self._out_closed:
            return EXIT_STDOUT_CLOSED
        return EXIT_INTERRUPTED if self._interrupted else EXIT_OK

    async def _read_line(self, withdrawn: asyncio.Event | None = None) -> str | None:
        """The next line typed, or ``None`` at the end of input, when the chat stops, or when
        ``withdrawn`` is set (a question answered elsewhere). A read so interrupted is kept for
        the next call, so no line is lost."""
        if self._lines is None:
            return None
        if self._reading is None:
            self._reading = asyncio.ensure_future(self._lines.readline())
        stopped: asyncio.Future[Any] = asyncio.ensure_future(self._stop.wait())
        waits: set[asyncio.Future[Any]] = {self._reading, stopped}
        if withdrawn is not None:
            waits.add(asyncio.ensure_future(withdrawn.wait()))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in waits - {self._reading}:
                waiting.cancel()
        if not self._reading.done():
            return None
        raw, self._reading = self._reading.result(), None
        return raw.decode("utf-8", "replace").rstrip("\r\n") if raw else None

    async def _handle(self, line: str) -> None:
        if not line:
            return
        if line.startswith("/") and len(line) > 1:
            name, _, rest = line[1:].partition(" ")
            if name in _OWN_COMMANDS:
                await self._own_command(name)
                return
            self.say(render.command_result(await self._host.run_command(name, rest.strip())))
            await self._wait_turn()  # the command may have sent a prompt
            return
        try:
            await self._host.send(line)
        except ExtensionHostError as exc:
            self.say(render.error_line(exc))
            return
        await self._wait_turn()

    async def _own_command(self, name: str) -> None:
        if name in ("exit", "quit"):
            self._stop.set()
        elif name == "help":
            self.say(chat_view.commands_help(self._host.commands))
        else:
            session_id = await self._host.new_session()
            self.say(f"new session {session_id}")

    async def _wait_turn(self) -> None:
        """Wait until the session is idle, asking the questions that come meanwhile."""
        self._in_turn = True
        self._usage = [0, 0, 0]
        try:
            while not self._stop.is_set():
                idle: asyncio.Future[Any] = asyncio.ensure_future(self._host.wait_idle())
                question: asyncio.Future[Any] = asyncio.ensure_future(self._questions.get())
                stopped: asyncio.Future[Any] = asyncio.ensure_future(self._stop.wait())
                done, pending = await asyncio.wait({idle, question, stopped}, return_when=asyncio.FIRST_COMPLETED)
                for waiting in pending:
                    waiting.cancel()
                if question in done:
                    await self._ask(question.result())
                    continue
                break
        finally:
            self._in_turn = False
        if self._usage[2]:
            self.say(chat_view.usage_line(*self._usage))

    async def _ask(self, request: dict[str, Any]) -> None:
        request_id = str(request["requestId"])
        settled = self._settled.setdefault(request_id, asyncio.Event())
        try:
            if settled.is_set():
                return  # answered, timed out or cancelled before it was asked
            self.say(chat_view.permission_question(request.get("permissionRequest") or {}))
            answer = await self._read_line(settled)
            if settled.is_set():
                self.say("(the question no longer stands: the request was settled meanwhile)")
                return
            if answer is not None and answer.strip().lower() in ("y", "yes"):
                self._host.resolve_permission(request_id, True)
                return
            feedback = None
            if answer is not None:
                self.say("why not? (a note for the model; Enter for none)")
                feedback = (await self._read_line(settled) or "").strip() or None
            self._host.resolve_permission(request_id, False, feedback)
        finally:
            self._settled.pop(request_id, None)

    # -- Ctrl-C -------------------------------------------------------------------------

    def _interrupt(self) -> bool:
        """Ctrl-C: SIGINT, or the key on the prompt of a terminal; whether the chat goes on."""
        if self._presses.second():
            self._interrupted = True
            self._stop.set()
            return False
        if self._in_turn and self._host.cancel_turn():
            self.say(f"cancelling the turn ... (Ctrl-C again within {PRESS_AGAIN_SECONDS:g} s leaves the chat)")
        else:
            self.say(f"(Ctrl-C again within {PRESS_AGAIN_SECONDS:g} s leaves the chat; so do Ctrl-D and /exit)")
        return True

    def _candidates(self, words: tuple[str, ...]) -> Iterable[str]:
        """What Tab offers: the slash commands, the chat's own and the extensions'."""
        if words:
            return ()
        return [f"/{name}" for name in (*sorted(_OWN_COMMANDS), *self._host.commands)]

    # -- what happens -------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        kind, data = event["type"], event["data"]
        if kind == "assistant.message_delta":
            self._streamed.add(str(data["messageId"]))
            text = render.safe_text(str(data["deltaContent"]))
            self._write(text)
            self._open_line = not text.endswith("\n")
        elif kind == "assistant.message":
            if str(data["messageId"]) in self._streamed:
                self._streamed.discard(str(data["messageId"]))
                if self._open_line:
                    self._write("\n")
                    self._open_line = False
            elif data.get("content"):
                self.say(str(data["content"]))
        elif kind == "assistant.usage":
            self._usage[0] += int(data.get("inputTokens") or 0)
            self._usage[1] += int(data.get("outputTokens") or 0)
            self._usage[2] += 1
        elif kind == "tool.execution_start":
            self.say(chat_view.tool_start(data))
        elif kind == "tool.execution_complete":
            self.say(chat_view.tool_complete(data))
        elif kind == "hook.end" and (lines := render.hook_end(data, notable_only=True)):
            self.say("\n".join(f"  [hook] {line}" for line in lines.splitlines()))
        elif kind == "permission.requested" and not data.get("resolvedByHook"):
            self._settled.setdefault(str(data["requestId"]), asyncio.Event())
            self._questions.put_nowait(dict(data))
        elif kind == "permission.completed" and str(data["requestId"]) in self._settled:
            self._settled[str(data["requestId"])].set()
        elif kind in ("session.info", "session.warning", "session.error"):
            level = "" if kind == "session.info" else kind.split(".")[1]
            self.say(render.session_message(str(data.get("extensionId", "host")), str(data.get("message", "")), level))
