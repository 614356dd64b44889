"""Lines typed at a terminal, for ``extensions dev`` and ``chat``: line editing, history,
completion, and output printed above the line being typed.

Why prompt_toolkit: the loops run on asyncio and print events (logs, reloads, a streaming
reply) while a line is being typed. The standard library's ``readline`` edits lines only inside
a blocking ``input()`` on a thread and cannot redraw the line below text printed meanwhile, so
log lines would land after the prompt. prompt_toolkit reads in the event loop
(``prompt_async``), redraws the input line below whatever is printed (``patch_stdout``), and
brings history search, Emacs and Vi keys and a completion menu. Its import costs 0.15 s on an
idle 2-core machine (0.3 s under load), paid only when stdin and stdout are both terminals
(:func:`is_terminal`): nothing imports it at module level, so pipes, files and every other
command never load it (a test holds that).

Keys, the same in both loops: Ctrl-C on a typed line discards the line; on an empty line it is
the loop's interrupt (:class:`DoublePress` decides whether it leaves); Ctrl-D on an empty line
is the end of input; Up and Down walk the history, Tab completes. A SIGINT that arrives while no
line is being read (a command or a turn running) is the loop's own signal handler's.

History is one file per loop in the user's home (:func:`~extension_host.project.paths.history_path`),
mode 0600, one JSON string a line, trimmed to the last :data:`HISTORY_LINES` when it grows past
twice that. What the lines mean, and what to complete, is the loops' business.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Final, TextIO

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.completion import CompleteEvent, Completer, Completion
    from prompt_toolkit.document import Document
    from prompt_toolkit.history import History

__all__ = [
    "HISTORY_LINES",
    "PRESS_AGAIN_SECONDS",
    "Candidates",
    "DoublePress",
    "TerminalLines",
    "editing",
    "file_history",
    "is_terminal",
    "word_completer",
]

HISTORY_LINES: Final = 1000
"""Lines of history kept per loop."""
PRESS_AGAIN_SECONDS: Final = 3.0
"""How soon a second Ctrl-C must follow the first to leave."""

Candidates = Callable[[tuple[str, ...]], Iterable[str]]
"""The words that may come next after the words already typed on the line (``()`` for the first)."""


def is_terminal() -> bool:
    """Whether a person types at a terminal and reads one: stdin and stdout are both terminals."""
    try:
        return sys.stdin is not None and sys.stdout is not None and sys.stdin.isatty() and sys.stdout.isatty()
    except (ValueError, OSError):
        return False


class DoublePress:
    """Ctrl-C twice within :data:`PRESS_AGAIN_SECONDS` leaves; once only warns (or cancels)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._last: float | None = None

    def second(self) -> bool:
        """Record a press; True if it follows another one soon enough to leave."""
        now = self._clock()
        again = self._last is not None and now - self._last <= PRESS_AGAIN_SECONDS
        self._last = None if again else now
        return again


class TerminalLines:
    """A :class:`~extension_host.frontends.dev.LineReader` of lines typed at a terminal.

    Made before its loop knows what to offer; the loop reads inside :meth:`editing`, which says
    the prompt, the history file, what to complete and what Ctrl-C on an empty line does.
    Outside it, lines are read plainly with ``> ``.
    """

    def __init__(self) -> None:
        self._prompt = "> "
        self._history: Path | None = None
        self._candidates: Candidates | None = None
        self._on_interrupt: Callable[[], bool] = lambda: True
        self._session: PromptSession[str] | None = None

    @contextlib.contextmanager
    def editing(
        self, *, prompt: str, history: Path | None, candidates: Candidates | None, on_interrupt: Callable[[], bool]
    ) -> Iterator[TextIO]:
        """Read with ``prompt``, ``history`` and ``candidates`` while inside; ``sys.stdout``, which
        it yields, prints above the line being typed.

        ``on_interrupt`` runs for Ctrl-C on an empty line; it returns whether to read on (False:
        the loop is ending, and :meth:`readline` returns ``b""``)."""
        from prompt_toolkit.patch_stdout import patch_stdout

        self._prompt, self._history, self._candidates, self._on_interrupt = prompt, history, candidates, on_interrupt
        with patch_stdout(raw=True):  # raw: the loops' text is already made safe by render
            yield sys.stdout

    async def readline(self) -> bytes:
        """The next line with its newline, or ``b""`` after Ctrl-D on an empty line."""
        session = self._session or self._start()
        while True:
            try:
                text = await session.prompt_async(handle_sigint=False, set_exception_handler=False)
            except KeyboardInterrupt:
                if self._on_interrupt():
                    continue
                return b""
            except EOFError:
                return b""
            return (text + "\n").encode()

    def _start(self) -> PromptSession[str]:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import InMemoryHistory
        from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

        bindings = KeyBindings()

        @bindings.add("c-c")
        def _interrupt(event: KeyPressEvent) -> None:
            if event.current_buffer.text:
                event.current_buffer.reset()  # a typed line: dropped, as a shell does
            else:
                event.app.exit(exception=KeyboardInterrupt, style="class:aborting")

        self._session = PromptSession(
            self._prompt,
            history=file_history(self._history) if self._history is not None else InMemoryHistory(),
            completer=word_completer(self._candidates) if self._candidates is not None else None,
            complete_while_typing=False,
            key_bindings=bindings,
        )
        return self._session


@contextlib.contextmanager
def editing(
    reader: object,
    out: TextIO,
    *,
    prompt: str,
    history: Path,
    candidates: Candidates,
    on_interrupt: Callable[[], bool],
) -> Iterator[TextIO]:
    """Where a loop prints while it reads its lines from ``reader``: inside
    :meth:`TerminalLines.editing` if ``reader`` is one, else ``out`` as it is."""
    if not isinstance(reader, TerminalLines):
        yield out
        return
    with reader.editing(prompt=prompt, history=history, candidates=candidates, on_interrupt=on_interrupt) as above:
        yield above


def word_completer(candidates: Candidates) -> Completer:
    """A prompt_toolkit completer of the word under the cursor from ``candidates``."""
    from prompt_toolkit.completion import Completer, Completion

    class WordCompleter(Completer):
        """The candidates for the word under the cursor, given the words before it."""

        def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
            before = document.text_before_cursor
            words = before.split()
            partial = "" if not words or before[-1:].isspace() else words.pop()
            for word in sorted(set(candidates(tuple(words)))):
                if word.startswith(partial):
                    yield Completion(word, start_position=-len(partial))

    return WordCompleter()


def file_history(path: Path) -> History:
    """A prompt_toolkit history kept in ``path`` (see the module's docstring)."""
    from prompt_toolkit.history import History

    class CappedFileHistory(History):
        """History in a private file, one JSON string a line, trimmed to the newest lines."""

        def load_history_strings(self) -> Iterable[str]:
            lines = _read_history(path)
            if len(lines) > 2 * HISTORY_LINES:
                lines = lines[-HISTORY_LINES:]
                _rewrite_history(path, lines)
            return reversed(lines)  # newest first

        def store_string(self, string: str) -> None:
            with contextlib.suppress(OSError):
                _append_history(path, string)

    return CappedFileHistory()


def _read_history(path: Path) -> list[str]:
    try:
        raw = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    lines = []
    for line in raw.splitlines():
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            if isinstance(entry, str):
                lines.append(entry)
    return lines


def _open_private(path: Path, flags: int) -> int:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, flags | os.O_WRONLY | os.O_CREAT, 0o600)
    os.fchmod(fd, 0o600)  # a file made earlier by other means is made private too
    return fd


def _append_history(path: Path, line: str) -> None:
    fd = _open_private(path, os.O_APPEND)
    with os.fdopen(fd, "a", encoding="utf-8") as file:
        file.write(json.dumps(line, ensure_ascii=False) + "\n")


def _rewrite_history(path: Path, lines: list[str]) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    with contextlib.suppress(OSError):
        fd = _open_private(temporary, os.O_TRUNC)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.writelines(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        os.replace(temporary, path)
