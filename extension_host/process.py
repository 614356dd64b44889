"""Extension processes: spawn one with the contract's environment, and stop it for sure.

Each extension runs as ``<host python> -P -m sdk_extension <extension.py>`` in its own process
group, with stdin/stdout as pipes for the protocol and stderr appended to its log file; a Python
extension is the same process forked by the host's fork server when there is one
(:mod:`extension_host.forkserver`), which skips the interpreter's start-up. The stop ladder is:
close stdin (the SDK exits on end of stream), SIGTERM the group, SIGKILL the group, each step
bounded. This module knows processes and files; it does not speak the protocol.
"""

from __future__ import annotations

import asyncio
import errno
import os
import re
import signal
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Final, Protocol

from sdk_extension.pipes import PipeReader

from .forkserver import ForkedChild, ForkServer, ForkServerUnavailable

__all__ = [
    "STOP_GRACE_SECONDS",
    "ExtensionProcess",
    "LaunchSpec",
    "python_argv",
    "spawn",
    "tail_lines",
]

STOP_GRACE_SECONDS: Final = 5.0
"""How long each step of the stop ladder waits before the next, harsher one (contract §3)."""

_TAIL_BYTES: Final = 64 * 1024
"""How much of the end of a log is read to find the reason a process failed."""
_EXCEPTION_LINE: Final = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)\b[^:]*:")
_NOISE: Final = re.compile(r"^(===|Node\.js v\d)")
"""Lines that never explain a failure: the host's start marker, Node's version footer."""


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


def python_argv(entry: Path) -> tuple[str, ...]:
    """The command line that runs a Python extension file under the SDK launcher."""
    # -P keeps the project root off sys.path while the launcher imports sdk_extension.
    return (sys.executable, "-P", "-m", "sdk_extension", str(entry))


class _Child(Protocol):
    """What the process module needs of a child: a spawned or a forked one."""

    @property
    def pid(self) -> int: ...
    @property
    def returncode(self) -> int | None: ...
    async def wait(self) -> int: ...


class ExtensionProcess:
    """A started extension process: its pipes, its log, and how to stop it."""

    def __init__(
        self, spec: LaunchSpec, process: _Child, stdin: asyncio.StreamWriter, stdout: PipeReader, log_offset: int
    ) -> None:
        self.spec = spec
        self._process = process
        self._stdout = stdout
        self._log_offset = log_offset
        self.stdin: Final = stdin
        self.stdout: Final = stdout
        self.forked: Final = isinstance(process, ForkedChild)
        """Whether a fork server started it (rather than a new interpreter)."""

    @property
    def pid(self) -> int:
        """The process id (also its process group id)."""
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        """The exit code once it has exited (negative: killed by that signal), else ``None``."""
        return self._process.returncode

    async def wait(self) -> int:
        """Wait for the process to exit and return its exit code."""
        return await self._process.wait()

    async def stop(self, grace: float = STOP_GRACE_SECONDS) -> int:
        """Stop the process and everything in its group; return its exit code.

        Close stdin, wait ``grace`` seconds, SIGTERM the group, wait ``grace`` more, SIGKILL.
        """
        if self._process.returncode is None:
            if not self.stdin.is_closing():
                self.stdin.close()
            for next_signal in (signal.SIGTERM, signal.SIGKILL):
                try:
                    async with asyncio.timeout(grace):
                        await self._process.wait()
                    break
                except TimeoutError:
                    self._signal_group(next_signal)
            await self._process.wait()
        # The extension is gone; whatever it started in its group must not outlive it.
        self._signal_group(signal.SIGKILL)
        self._stdout.close()
        return self._process.returncode  # type: ignore[return-value]

    def kill(self) -> None:
        """SIGKILL the whole group at once, without waiting (for emergencies and crashes)."""
        self._signal_group(signal.SIGKILL)

    def _signal_group(self, sig: signal.Signals) -> None:
        try:
            os.killpg(self._process.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def log_tail(self, max_lines: int = 20) -> list[str]:
        """The last lines this process wrote to its log (not earlier runs')."""
        return tail_lines(self.spec.log_path, max_lines, start=self._log_offset)

    def failure_reason(self) -> str | None:
        """The line of its log that best says why it failed, if any.

        The exception line of a Python traceback or a Node.js error report (``ValueError: ...``,
        ``Error: ...``), else the last line that is not part of a stack.
        """
        lines = [line for line in self.log_tail(200) if not _NOISE.match(line)]
        for line in reversed(lines):
            if _EXCEPTION_LINE.match(line):
                return line.strip()
        for line in reversed(lines):
            if not line.startswith((" ", "\t", "Traceback")):
                return line.strip()
        return None


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

    A Python extension is forked by ``fork_server`` when one is given and it can; otherwise,
    and for every other runtime, a new process runs ``spec.argv``.

    Raises:
        OSError: the interpreter or the working directory cannot be used.
    """
    spec.log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(spec.log_path, "ab") as log:
        started = datetime.now(timezone.utc).isoformat(timespec="seconds")
        log.write(f"=== {started} starting {spec.extension_id}: {' '.join(spec.argv)}\n".encode())
        log.flush()
        offset = log.tell()
        if fork_server is not None and spec.python_entry is not None:
            try:
                child, stdin, stdout = await _fork(spec, spec.python_entry, fork_server, log.fileno())
            except ForkServerUnavailable:
                pass  # the server says why in its log; a new interpreter does the same job
            else:
                return ExtensionProcess(spec, child, stdin, stdout, offset)
        # The extension's stdout is a pipe of our own, read by PipeReader rather than by
        # asyncio's pipe transport (see sdk_extension.pipes for why).
        read_fd, write_fd = os.pipe()
        try:
            process = await asyncio.create_subprocess_exec(
                *spec.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=write_fd,
                stderr=log,
                cwd=spec.cwd,
                env=dict(spec.env),
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
    spec: LaunchSpec, entry: Path, fork_server: ForkServer, stderr: int
) -> tuple[ForkedChild, asyncio.StreamWriter, PipeReader]:
    if not spec.cwd.is_dir():
        raise FileNotFoundError(errno.ENOENT, "No such directory", str(spec.cwd))
    # Pipes of their own: if the server fails, a process it might still fork later holds
    # these, never those of the process started instead.
    stdin_read, stdin_write = os.pipe()
    stdout_read, stdout_write = os.pipe()
    try:
        child = await fork_server.spawn(entry, spec.cwd, spec.env, (stdin_read, stdout_write, stderr))
    except BaseException:
        os.close(stdin_write)
        os.close(stdout_read)
        raise
    finally:
        os.close(stdin_read)
        os.close(stdout_write)
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(stdin_write, "wb", buffering=0)
    )
    return child, asyncio.StreamWriter(transport, protocol, None, loop), PipeReader(stdout_read)
