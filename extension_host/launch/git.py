"""Every git command the host runs, with what a repository's configuration could make git run
switched off.

A repository's configuration (its ``.git/config``, the files that includes, or the ``config`` of a
bare repository lying in a folder) is written by whoever made the repository, and several of its
settings name programs that git starts by itself: ``core.fsmonitor`` runs on ``git ls-files``
and ``git status``, hooks run when git writes the index, a pager or an external diff when there
is output, an ssh command, a credential helper or an askpass program when git fetches (a partial
clone fetches missing objects by itself). :func:`git_command` builds the argv and environment of
every git call so that none of them run: ``--no-pager`` and ``--no-optional-locks`` (no index
write behind the caller's back), every setting of :data:`NEUTRALISED_SETTINGS` given with ``-c``
(the command line outranks every configuration file, whatever it includes, and git hands it on
to the git processes it starts), the inherited ``GIT_*`` variables dropped (they could name
another repository or a program) and :data:`GIT_ENVIRONMENT` set, over the host's environment
without its secrets. :func:`run_git` runs one command bounded in time and in output, and kills
its process group when either runs out.

Fetching is off (``protocol.allow=never``) unless a caller names the transports it needs
(:data:`FETCH_PROTOCOLS`, and ``file`` for a repository on this machine): ``extensions install``
clones with ``--no-checkout`` and reads the files it installs with :func:`run_git_bytes` (``ls-tree``
and ``cat-file --batch``, which hand over what a commit holds as it is stored), so no checkout
ever converts content and no filter runs, whatever a ``.gitattributes`` of the repository asks
for and whatever filters the user's own configuration defines.

What no setting switches off: the programs ``.gitattributes`` assigns to files
(``filter.*.clean``/``smudge``/``process``, ``diff.*.textconv``, ``merge.*.driver``) run when git
converts a file's content; run here only commands that list names (``ls-files`` without
``--modified``) and never convert content. Git itself refuses a repository another user owns
(``safe.directory``). This module knows git's switches, not what a command's output means, nor
whether a folder deserves git at all (callers walk an untrusted folder instead).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ..project.environment import scrub
from .process_groups import signal_group

__all__ = [
    "FETCH_PROTOCOLS",
    "GIT_ENVIRONMENT",
    "GIT_OPTIONS",
    "GIT_TIMEOUT",
    "NEUTRALISED_SETTINGS",
    "GitOutput",
    "GitResult",
    "GitSetting",
    "git_command",
    "run_git",
    "run_git_bytes",
]


@dataclass(frozen=True, slots=True)
class GitSetting:
    """One configuration setting every git command is given, and what that stops."""

    name: str
    value: str
    stops: str


NEUTRALISED_SETTINGS: Final = (
    GitSetting("core.fsmonitor", "false", "a file-system monitor command, run by ls-files and status"),
    GitSetting("core.hooksPath", "/dev/null", "hooks, such as post-index-change when the index is written"),
    GitSetting("safe.bareRepository", "explicit", "a bare repository found inside the folder, with its config"),
    GitSetting("core.pager", "cat", "a pager"),
    GitSetting("diff.external", "", "an external diff program (a diff that wants one fails instead)"),
    GitSetting("protocol.allow", "never", "every transport: no fetch, so no core.sshCommand or remote helper"),
    GitSetting("credential.helper", "", "credential helpers (an empty value clears the list)"),
    GitSetting("core.askPass", "", "an askpass program"),
    GitSetting("core.editor", ":", "an editor"),
    GitSetting("sequence.editor", ":", "a rebase's editor"),
    GitSetting("gpg.program", "false", "a signature program (log.showSignature)"),
)
"""The settings every git command gets with ``-c``, over whatever the repository says."""

GIT_OPTIONS: Final = ("--no-pager", "--no-optional-locks")
"""Options before the subcommand: no pager, and no index written that the command did not ask for."""

GIT_ENVIRONMENT: Final[Mapping[str, str]] = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "",
    "SSH_ASKPASS": "",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_EDITOR": ":",
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_PROTOCOL_FROM_USER": "0",
}
"""Variables every git command gets (no prompt, no askpass, no pager, no editor, no lazy fetch),
after every inherited ``GIT_*`` variable is dropped."""

FETCH_PROTOCOLS: Final = ("https", "ssh")
"""The transports a clone or fetch of a remote repository may use (``file`` is named only for a
repository on this machine); ``git://``, ``http://`` and remote helpers (``ext::``) stay refused."""

GIT_TIMEOUT: Final = 10.0
"""Seconds a git command may take unless its caller gives less; then it is killed."""

_READ_CHUNK: Final = 65536


@dataclass(frozen=True, slots=True)
class GitOutput:
    """What a git command printed (split at NUL, as ``-z`` separates), and how it ended."""

    records: tuple[str, ...]
    """The records, decoded (bytes that are not UTF-8 replaced), at most the caller's limit."""
    failed: bool
    """Git exited with an error by itself (e.g. the folder is not in a repository it accepts);
    ``False`` when it succeeded or was stopped at the time or record limit."""


def git_command(
    folder: Path, *args: str, environ: Mapping[str, str] | None = None, protocols: Sequence[str] = ()
) -> tuple[list[str], dict[str, str]]:
    """The argv and environment of ``git -C folder args...`` (see the module).

    ``environ`` is the environment to start from (default: this process's); its secrets and
    ``GIT_*`` variables are left out. ``protocols`` are the transports this command may fetch
    over (none: it fetches nothing).
    """
    argv = ["git", *GIT_OPTIONS]
    for setting in NEUTRALISED_SETTINGS:
        argv += ["-c", f"{setting.name}={setting.value}"]
    for protocol in protocols:
        argv += ["-c", f"protocol.{protocol}.allow=always"]  # outranks protocol.allow=never
    argv += ["-C", str(folder), *args]
    base = scrub(os.environ if environ is None else environ)
    environment = {name: value for name, value in base.items() if not name.startswith("GIT_")}
    environment.update(GIT_ENVIRONMENT)
    return argv, environment


async def _start(
    argv: list[str], environment: dict[str, str], *, stdin: int, stderr: int
) -> asyncio.subprocess.Process | None:
    """Start git in a process group of its own, its stdout a pipe; ``None`` when git is not installed."""
    try:
        return await asyncio.create_subprocess_exec(
            *argv, stdin=stdin, stdout=asyncio.subprocess.PIPE, stderr=stderr, env=environment, start_new_session=True
        )
    except OSError:
        return None


_DRAIN_SECONDS: Final = 5.0
"""How long what git printed after reading stopped may take to drain once git is killed."""


async def _end(process: asyncio.subprocess.Process) -> bool:
    """Kill git's group if it still runs (True: it was stopped), then read what is left of its
    stdout and reap it: a stream whose reader stopped early pauses its pipe, and the exit is
    reported only once the pipe is closed. Bounded, in case something left the group."""
    stopped = process.returncode is None
    if stopped:
        signal_group(process.pid, signal.SIGKILL)
    assert process.stdout is not None
    with contextlib.suppress(TimeoutError, ProcessLookupError):
        async with asyncio.timeout(_DRAIN_SECONDS):
            while await process.stdout.read(_READ_CHUNK):
                pass
            await process.wait()
    return stopped


async def run_git(folder: Path, *args: str, timeout: float = GIT_TIMEOUT, limit: int = 100_000) -> GitOutput | None:
    """Run ``git -C folder args...`` (see :func:`git_command`); ``None`` when git is not installed.

    Reading stops after ``limit`` records or ``timeout`` seconds; git (its process group) is
    then killed, and what it printed by then is returned. Its stderr is discarded.
    """
    process = await _start(
        *git_command(folder, *args), stdin=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    if process is None:
        return None
    assert process.stdout is not None
    records: list[str] = []
    pending = b""
    stopped = False
    try:
        async with asyncio.timeout(max(0.0, timeout)):
            while len(records) < limit and (chunk := await process.stdout.read(_READ_CHUNK)):
                *whole, pending = (pending + chunk).split(b"\0")
                records.extend(record.decode("utf-8", "replace") for record in whole)
            if len(records) < limit:
                if pending:
                    records.append(pending.decode("utf-8", "replace"))
                await process.wait()
    except TimeoutError:
        pass  # what was printed by then will do
    finally:
        stopped = await _end(process) or stopped
        signal_group(process.pid, signal.SIGKILL)  # whatever it started and left behind
    failed = not stopped and process.returncode != 0
    return GitOutput(tuple(records[:limit]), failed)


@dataclass(frozen=True, slots=True)
class GitResult:
    """What a git command printed, as bytes, and how it ended."""

    returncode: int | None
    """Its exit status; ``None`` when it was stopped (time or output ran out)."""
    stdout: bytes
    error: str
    """Its last line on stderr that says what went wrong (``fatal: ...``), else its last line."""

    @property
    def ok(self) -> bool:
        """Whether git exited 0 by itself."""
        return self.returncode == 0


_STDERR_KEPT: Final = 16384
"""Bytes of stderr kept (the end of it): enough for git's last few lines."""


async def run_git_bytes(
    folder: Path,
    *args: str,
    stdin: bytes = b"",
    timeout: float = GIT_TIMEOUT,
    limit: int = 1 << 20,
    protocols: Sequence[str] = (),
) -> GitResult | None:
    """Run ``git -C folder args...`` (see :func:`git_command`) with ``stdin`` on its input;
    ``None`` when git is not installed.

    Stopped (its process group killed) after ``timeout`` seconds or once it printed more than
    ``limit`` bytes; what it printed by then is returned, with no exit status.
    """
    process = await _start(
        *git_command(folder, *args, protocols=protocols), stdin=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    if process is None:
        return None
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    out = bytearray()
    err = bytearray()

    async def feed() -> None:
        assert process.stdin is not None
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            if stdin:
                process.stdin.write(stdin)
                await process.stdin.drain()
            process.stdin.close()

    async def drain_stderr() -> None:
        assert process.stderr is not None
        while chunk := await process.stderr.read(_READ_CHUNK):
            err.extend(chunk)
            del err[:-_STDERR_KEPT]

    stopped = False
    helpers = [asyncio.ensure_future(feed()), asyncio.ensure_future(drain_stderr())]
    try:
        async with asyncio.timeout(max(0.0, timeout)):
            while chunk := await process.stdout.read(_READ_CHUNK):
                out.extend(chunk)
                if len(out) > limit:
                    stopped = True
                    break
            if not stopped:
                await process.wait()
    except TimeoutError:
        stopped = True
    finally:
        stopped = await _end(process) or stopped
        for helper in helpers:
            helper.cancel()
        await asyncio.gather(*helpers, return_exceptions=True)
        signal_group(process.pid, signal.SIGKILL)
    lines = [line.strip() for line in err.decode("utf-8", "replace").splitlines() if line.strip()]
    said = [line for line in lines if line.startswith(("fatal:", "error:"))]
    return GitResult(None if stopped else process.returncode, bytes(out), (said or lines or [""])[-1])
