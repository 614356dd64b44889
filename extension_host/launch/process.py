"""Extension processes: spawn one with the contract's environment, and stop it for sure.

Each extension runs as ``<host python> -P -m sdk_extension <extension.py>`` (one with
requirements: its own environment's python, :mod:`extension_host.launch.python_env`) in its own process
group, with stdin/stdout as pipes for the protocol and stderr appended to its log file; a Python
extension is the same process forked by the host's fork server when there is one
(:mod:`extension_host.launch.forkserver`), which skips the interpreter's start-up. Every one inherits
the host's lifeline (:mod:`extension_host.launch.lifeline`), so that it takes its group down when the
host dies. Stopping one is the stop ladder of :mod:`extension_host.launch.process_groups`, starting by
closing its stdin (the SDK exits on end of stream). This module knows processes and files; it
does not speak the protocol.
"""

from __future__ import annotations

import asyncio
import errno
import os
import re
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from extension_protocol.pipes import PipeReader, open_pipe_writer

from .forkserver import EXIT_CODE_UNKNOWN, ForkedChild, ForkServer, ForkServerUnavailable
from .interpreter import python_args, python_command
from .lifeline import LIFELINE_ENV, lifeline_fd
from .logs import open_log, rotate_log
from .process_groups import STOP_GRACE_SECONDS, GroupLeader, signal_group, stop_group
from .startup_errors import describe_startup_error, last_startup_error

__all__ = [
    "STOP_GRACE_SECONDS",
    "ExtensionProcess",
    "LaunchSpec",
    "describe_exit",
    "failure_line",
    "process_busy",
    "python_argv",
    "spawn",
    "tail_lines",
]

_TAIL_BYTES: Final = 64 * 1024
"""How much of the end of a log is read to find the reason a process failed."""
_EXCEPTION_LINE: Final = re.compile(r"^(?:[A-Za-z_][\w.]*)?(?:Error|Exception|Exit|Interrupt|Warning)\b[^:]*:")
"""A Python exception line or a Node.js error line: ``ValueError: ...``, ``Error [ERR_X]: ...``."""
_CARET: Final = re.compile(r"^\s*\^+\s*$")
"""The caret under a code excerpt; in a Node.js report the error line comes right after it."""
_NOISE: Final = re.compile(r"^(===|Node\.js v\d|extension-host startup error: )")
"""Lines that never explain a failure: the host's start marker, Node's version footer."""
_SAYS_NOTHING: Final = re.compile(r"^([\W_]*|Traceback .*)$")
"""Lines that name no error: the ``}`` closing a Node.js error's properties, a bare caret."""


@dataclass(frozen=True, slots=True)
class LaunchSpec:
    """Everything needed to start one extension process."""

    extension_id: str
    argv: tuple[str, ...]
    cwd: Path
    env: Mapping[str, str]
    log_path: Path
    python_entry: Path | None = None
    """For a Python extension, its entry file: what a fork server runs instead of ``argv``."""
    forkable: bool = True
    """Whether a fork server may start it: not a Python extension with an environment of its
    own (:mod:`.python_env`), which runs that environment's interpreter, not the server's."""


def python_argv(entry: Path, interpreter: Path | None = None) -> tuple[str, ...]:
    """The command line that runs a Python extension file under the SDK launcher (isolated
    from the project it runs in: :mod:`.interpreter`), with this interpreter or ``interpreter``
    (an extension's own environment's)."""
    if interpreter is not None:
        return (str(interpreter), *python_args("-m", "sdk_extension", str(entry)))
    return python_command("-m", "sdk_extension", str(entry))


def process_busy(pid: int) -> bool:
    """Whether a thread of process ``pid`` is running, waiting to run or in uninterruptible I/O
    (Linux's task states ``R`` and ``D``); False where that cannot be read (another system, or
    no such process)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/stat", "rb") as stat:
                state = stat.read().rpartition(b")")[2][1:2]
        except OSError:
            continue
        if state in (b"R", b"D"):
            return True
    return False


class ExtensionProcess:
    """A started extension process: its pipes, its log, and how to stop it."""

    def __init__(
        self, spec: LaunchSpec, process: GroupLeader, stdin: asyncio.StreamWriter, stdout: PipeReader, log_offset: int
    ) -> None:
        self.spec = spec
        self._process = process
        self._stdout = stdout
        self._log_offset = log_offset
        self.stdin: Final = stdin
        self.stdout: Final = stdout
        self.forked: Final = isinstance(process, ForkedChild)
        """Whether a fork server started it (rather than a new interpreter)."""
        self._stopped_with: int | None = None

    @property
    def pid(self) -> int:
        """The process id (also its process group id)."""
        return self._process.pid

    def busy(self) -> bool:
        """Whether it may still be about to write (see :func:`process_busy`)."""
        return self._process.returncode is None and process_busy(self._process.pid)

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` has ended its group: nothing of it runs any more."""
        return self._stopped_with is not None

    @property
    def returncode(self) -> int | None:
        """The exit code once it has exited (negative: killed by that signal), else ``None``."""
        return self._process.returncode

    async def wait(self) -> int:
        """Wait for the process to exit and return its exit code."""
        return await self._process.wait()

    async def stop(self, grace: float = STOP_GRACE_SECONDS) -> int:
        """Stop the process and everything in its group; return its exit code.

        Close stdin, wait ``grace`` seconds, SIGTERM the group, wait ``grace`` more, SIGKILL
        (:func:`~extension_host.launch.process_groups.stop_group`). Once that has ended, stopping
        it again signals nothing: its group id may be another process's by then.
        """
        if self._stopped_with is not None:
            return self._stopped_with
        code = await stop_group(self._process, grace, self._close_stdin)
        # What it wrote before it exited is read, not dropped with the pipe: a request it sent
        # as its stdin closed is still handled (with nobody left to answer it).
        self._stdout.drain()
        self._stdout.close()
        self._stopped_with = code
        return code

    def _close_stdin(self) -> None:
        if not self.stdin.is_closing():
            self.stdin.close()

    def kill(self) -> None:
        """SIGKILL the whole group at once, without waiting (for emergencies and crashes)."""
        signal_group(self._process.pid, signal.SIGKILL)

    def log_tail(self, max_lines: int = 20) -> list[str]:
        """The last lines this process wrote to its log (not earlier runs')."""
        return tail_lines(self.spec.log_path, max_lines, start=self._log_offset)

    def failure_reason(self) -> str | None:
        """What its log says about why it failed, if anything: a Python extension's syntax
        error or missing module as :mod:`.startup_errors` describes it (more than one line),
        else the line that best says it (:func:`failure_line`)."""
        lines = self.log_tail(200)
        entry = self.spec.python_entry
        startup = last_startup_error(lines) if entry is not None else None
        if startup is not None and entry is not None:
            return describe_startup_error(startup, self.spec.cwd, entry, own_environment=not self.spec.forkable)
        return failure_line(lines)


def failure_line(lines: list[str]) -> str | None:
    """The line of a failed process's output that names its error, if any.

    The last of: a Python exception line (``ValueError: ...``), a Node.js error line
    (``Error [ERR_MODULE_NOT_FOUND]: Cannot find package ...``), or what Node.js printed after
    the caret of its code excerpt (``MyError: ...``, a thrown string). Failing those, the last
    line that is not part of a stack, a code excerpt or a closing brace.
    """
    lines = [line for line in lines if not _NOISE.match(line)]
    named: str | None = None
    for index, line in enumerate(lines):
        if _EXCEPTION_LINE.match(line):
            named = line
        elif _CARET.match(line) and index + 1 < len(lines) and not lines[index + 1][:1].isspace():
            named = lines[index + 1]
    if named is not None:
        return named.strip()
    for line in reversed(lines):
        if not line[:1].isspace() and not _SAYS_NOTHING.match(line):
            return line.strip()
    return None


def describe_exit(code: int) -> str:
    """How a process ended, for a failure line: ``exited with code 3`` (negative: killed by
    that signal), or that its code is unknown (:data:`~extension_host.launch.forkserver.EXIT_CODE_UNKNOWN`)."""
    if code == EXIT_CODE_UNKNOWN:
        return "exited with an unknown exit code (the fork server that started it had died)"
    return f"exited with code {code}"


def tail_lines(path: Path, max_lines: int = 20, *, start: int = 0) -> list[str]:
    """The last non-blank lines of a text file from byte ``start`` on; ``[]`` if unreadable."""
    try:
        with open(path, "rb") as log:
            log.seek(max(start, log.seek(0, os.SEEK_END) - _TAIL_BYTES))
            text = log.read().decode("utf-8", "replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if line.strip()][-max_lines:]


async def spawn(spec: LaunchSpec, fork_server: ForkServer | None = None) -> ExtensionProcess:
    """Start an extension process in its own process group.

    A Python extension is forked by ``fork_server`` when one is given and it can (and the
    extension has no environment of its own); otherwise, and for every other runtime, a new
    process runs ``spec.argv``.

    Raises:
        OSError: the interpreter or the working directory cannot be used.
    """
    rotate_log(spec.log_path)  # the child appends directly: only a start can rotate safely
    with open_log(spec.log_path) as log:
        started = datetime.now(UTC).isoformat(timespec="seconds")
        log.write(f"=== {started} starting {spec.extension_id}: {' '.join(spec.argv)}\n".encode())
        log.flush()
        offset = log.tell()
        lifeline = lifeline_fd()
        env = {**spec.env, LIFELINE_ENV: str(lifeline)}
        if fork_server is not None and spec.python_entry is not None and spec.forkable:
            try:
                child, stdin, stdout = await _fork(spec, env, fork_server, log.fileno())
            except ForkServerUnavailable:
                pass  # the server says why in its log; a new interpreter does the same job
            else:
                return ExtensionProcess(spec, child, stdin, stdout, offset)
        # The extension's stdout is a pipe of our own, read by PipeReader rather than by
        # asyncio's pipe transport (see extension_protocol.pipes for why).
        read_fd, write_fd = os.pipe()
        try:
            process = await asyncio.create_subprocess_exec(
                *spec.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=write_fd,
                stderr=log,
                cwd=spec.cwd,
                env=env,
                pass_fds=(lifeline,),
                start_new_session=True,
            )
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
    assert process.stdin is not None
    return ExtensionProcess(spec, process, process.stdin, PipeReader(read_fd), offset)


async def _fork(
    spec: LaunchSpec, env: Mapping[str, str], fork_server: ForkServer, stderr: int
) -> tuple[ForkedChild, asyncio.StreamWriter, PipeReader]:
    assert spec.python_entry is not None
    if not spec.cwd.is_dir():
        raise FileNotFoundError(errno.ENOENT, "No such directory", str(spec.cwd))
    # Pipes of their own: if the server fails, a process it might still fork later holds
    # these, never those of the process started instead.
    stdin_read, stdin_write = os.pipe()
    stdout_read, stdout_write = os.pipe()
    try:
        child = await fork_server.spawn(spec.python_entry, spec.cwd, env, (stdin_read, stdout_write, stderr))
    except BaseException:
        os.close(stdin_write)
        os.close(stdout_read)
        raise
    finally:
        os.close(stdin_read)
        os.close(stdout_write)
    return child, await open_pipe_writer(stdin_write), PipeReader(stdout_read)
