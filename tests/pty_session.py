"""A command run in a pseudo-terminal, as a person at a terminal runs it (import as ``pty_session``).

The child gets the terminal's other end as stdin, stdout and stderr, in a session of its own
with the terminal as its controlling terminal, so Ctrl-C typed while it is not reading a line is
SIGINT from the terminal, as in a shell. Reads are bounded (read until a pattern shows, with a
deadline); the terminal answers cursor-position requests as a real one does. On the way out the
child is killed if it still runs, and reaped.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Final

import pyte

__all__ = ["CTRL_C", "CTRL_D", "UP", "PtySession", "screen_text"]

CTRL_C: Final = "\x03"
CTRL_D: Final = "\x04"
UP: Final = "\x1b[A"

_CONTROLLING_TERMINAL: Final = (
    "import fcntl, os, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); os.execv(sys.argv[1], sys.argv[1:])"
)
"""Run in the child's new session before the command: the terminal on stdin becomes its
controlling terminal (what a shell's terminal is), then the command replaces it."""
_CURSOR_REQUEST: Final = b"\x1b[6n"
_ESCAPES: Final = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]|\r"
)


def screen_text(raw: str) -> str:
    """What a terminal's output says, without its escape sequences and carriage returns."""
    return _ESCAPES.sub("", raw)


class PtySession:
    """``argv`` running in a pseudo-terminal of ``columns`` by ``rows``."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], *, columns: int = 160, rows: int = 40) -> None:
        self._argv = list(argv)
        self._env = {**env, "TERM": "xterm-256color"}
        self._size = struct.pack("HHHH", rows, columns, 0, 0)
        self._raw = b""
        self._screen = pyte.Screen(columns, rows)
        self._emulator = pyte.ByteStream(self._screen)
        self._seen = 0  # where the next expect starts looking, in text
        self._closed = False
        self.main = -1
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> PtySession:
        self.main, terminal = os.openpty()
        try:
            fcntl.ioctl(terminal, termios.TIOCSWINSZ, self._size)
            self.process = subprocess.Popen(
                [sys.executable, "-c", _CONTROLLING_TERMINAL, *self._argv],
                stdin=terminal,
                stdout=terminal,
                stderr=terminal,
                env=self._env,
                start_new_session=True,
            )
        except BaseException:
            os.close(self.main)
            raise
        finally:
            os.close(terminal)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        try:
            if self.process is not None and self.process.poll() is None:
                self.process.kill()
                self.process.wait(30)
        finally:
            os.close(self.main)

    @property
    def text(self) -> str:
        """Everything the terminal showed so far, as :func:`screen_text`."""
        return screen_text(self._raw.decode("utf-8", "replace"))

    @property
    def screen(self) -> list[str]:
        """The lines the terminal displays now (trailing blanks cut), as a terminal emulator shows them."""
        return [line.rstrip() for line in self._screen.display]

    def type(self, keys: str) -> None:
        """Type ``keys`` (a ``\\r`` is Enter)."""
        os.write(self.main, keys.encode())

    def expect(self, pattern: str, timeout: float = 30) -> re.Match[str]:
        """Read until the text after the previous match matches ``pattern``; fail after ``timeout`` s.

        The text is the stream without escape sequences: right for lines printed whole, not for
        the line being edited (see :meth:`expect_input`)."""
        compiled = re.compile(pattern, re.MULTILINE)
        deadline = time.monotonic() + timeout
        while True:
            found = compiled.search(self.text, self._seen)
            if found is not None:
                self._seen = found.end()
                return found
            if not self._read_some(deadline):
                raise AssertionError(f"the terminal never showed {pattern!r}; it showed:\n{self.text[self._seen :]}")

    def expect_input(self, pattern: str, timeout: float = 30) -> re.Match[str]:
        """Read until the line the cursor is on (the line being typed, as drawn) matches
        ``pattern``; fail after ``timeout`` s. What a line editor draws comes in pieces and cursor
        moves, so it is read off the screen, not the stream."""
        compiled = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            line = self._screen.display[self._screen.cursor.y].rstrip()
            found = compiled.search(line)
            if found is not None:
                return found
            if not self._read_some(deadline):
                raise AssertionError(f"the line being typed never matched {pattern!r}; it is {line!r}")

    def wait(self, timeout: float = 60) -> int:
        """Read to the end of the child's output and wait for its exit (bounded); its exit code."""
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while self._read_some(deadline):
            pass
        return self.process.wait(max(0.0, deadline - time.monotonic()))

    def _read_some(self, deadline: float) -> bool:
        """Read what the child wrote; False at the end of its output or past the deadline."""
        if self._closed:
            return False
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        readable, _, _ = select.select([self.main], [], [], remaining)
        if not readable:
            return False
        try:
            chunk = os.read(self.main, 65536)
        except OSError as exc:
            if exc.errno != errno.EIO:  # EIO: every holder of the terminal's other end has closed it
                raise
            chunk = b""
        if not chunk:
            self._closed = True
            return False
        self._raw += chunk
        *before_requests, after = chunk.split(_CURSOR_REQUEST)
        for part in before_requests:  # a terminal answers where its cursor is at each request
            self._emulator.feed(part)
            cursor = self._screen.cursor
            os.write(self.main, f"\x1b[{cursor.y + 1};{cursor.x + 1}R".encode())
        self._emulator.feed(after)
        return True
