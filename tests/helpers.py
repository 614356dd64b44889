"""Helpers shared by the tests (import as ``helpers``)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import importlib.util
import json
import os
import pwd
import re
import select
import shutil
import subprocess
import sys
import textwrap
import zipfile
from collections.abc import AsyncIterator, Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Final, TypeVar

import pytest

from extension_host import ExtensionHost, Timeouts
from extension_host.frontends import progress
from extension_host.frontends.cli import main as cli_main
from extension_host.launch.interpreter import python_command
from extension_host.project.trust import TRUST_FILE
from extension_protocol.framing import FrameDecoder

T = TypeVar("T")

REPO_ROOT = Path(__file__).resolve().parent.parent
SAMPLES = REPO_ROOT / "sample_extensions"
DOCS = REPO_ROOT / "docs"
"""The documentation site's pages (Markdown, built with MkDocs)."""


def doc_section(page: str, start: str, end: str | None = None) -> str:
    """The text of ``docs/<page>`` from the first ``start`` up to the next ``end`` after it (to
    the end of the page without one); a marker that is not there fails the test, naming it."""
    text = (DOCS / page).read_text(encoding="utf-8")
    assert start in text, f"docs/{page} has no {start!r}"
    section = text[text.index(start) :]
    if end is None:
        return section
    assert end in section, f"docs/{page} has no {end!r} after {start!r}"
    return section[: section.index(end)]


class PipeWriter:
    """A connection's writer in memory: feeds every byte to the other side's reader (anything
    with ``feed_data``/``feed_eof``); ``close()`` is that side's end of stream. ``chunks`` holds
    what was written, in order."""

    def __init__(self, peer: Any) -> None:
        self._peer = peer
        self._closing = False
        self.chunks: list[bytes] = []

    def write(self, data: bytes) -> None:
        if self._closing:
            raise AssertionError("write after close")  # a Connection must check is_closing first
        self.chunks.append(data)
        self._peer.feed_data(data)

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        if not self._closing:
            self._closing = True
            self._peer.feed_eof()

    def is_closing(self) -> bool:
        return self._closing


def session_resume(hooks: dict[str, Any], hook_matchers: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """The ``session.resume`` params the SDK's client sends for ``hooks`` (by Python name) and
    ``hook_matchers`` (by wire hook type), as a host in memory receives them."""
    from extension_protocol.connection import Connection
    from extension_protocol.protocol import METHOD_CONNECT, METHOD_SESSION_RESUME, PROTOCOL_VERSION
    from sdk_extension.session import _Client

    async def joined() -> dict[str, Any]:
        to_client, to_host = asyncio.StreamReader(), asyncio.StreamReader()
        host = Connection(to_host, PipeWriter(to_client))
        seen: list[dict[str, Any]] = []
        host.on_request(METHOD_CONNECT, lambda params: {"protocolVersion": PROTOCOL_VERSION})

        def on_resume(params: dict[str, Any]) -> dict[str, Any]:
            seen.append(params)
            return {}

        host.on_request(METHOD_SESSION_RESUME, on_resume)
        serving = asyncio.ensure_future(host.serve())
        client = _Client("s", [], hooks, Connection(to_client, PipeWriter(to_host)), (), hook_matchers)
        try:
            await client.join(5)
        finally:
            host.close()
            client.connection.close()
            await asyncio.gather(serving, *client.background, return_exceptions=True)
        return seen[0]

    return run(joined(), timeout=10)


ECHO_AND_RUN_JOB = """
    from sdk_extension import join_session, tool

    @tool(description="Echo the text")
    def echo(text: str) -> str:
        return text

    @tool(description="Pretend to run a command")
    def run_job(text: str) -> str:
        return "ran " + text

    join_session(tools=[echo, run_job])
"""
"""An extension offering two tools for hook matchers to tell apart: ``echo`` and ``run_job``."""


class MessageSink:
    """The far end of an in-memory connection: give :attr:`writer` to a ``Connection``; what it
    sends is decoded, in order, by :meth:`messages`."""

    def __init__(self) -> None:
        self.inbox = asyncio.StreamReader()
        self.writer = PipeWriter(self.inbox)
        self._decoder = FrameDecoder()
        self._seen: list[dict[str, Any]] = []

    async def messages(self, count: int = 1, timeout: float = 5) -> list[dict[str, Any]]:
        """The first ``count`` messages sent here (waits for them, bounded: past ``timeout`` the
        test fails)."""
        async with asyncio.timeout(timeout):
            while len(self._seen) < count:
                self._seen += self._decoder.feed(await self.inbox.read(65536))
        return self._seen[:count]


RAW_PROTOCOL = r"""
import json, os, sys
from sdk_extension._stdio import claim_protocol_stdio

IN, OUT = claim_protocol_stdio()

def read():
    header = b""
    while not header.endswith(b"\r\n\r\n"):
        byte = os.read(IN, 1)
        if not byte:
            sys.exit(0)
        header += byte
    length = int(header.split(b":")[1])
    body = b""
    while len(body) < length:
        body += os.read(IN, length - len(body))
    return json.loads(body)

def send(message):
    body = json.dumps(message).encode()
    os.write(OUT, b"Content-Length: %d\r\n\r\n" % len(body) + body)

def request(id, method, params):
    send({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    while True:
        message = read()
        if message.get("id") == id and "method" not in message:
            return message
        handle(message)
"""
"""The start of a raw protocol client extension, for misbehaviour the SDK would refuse: framing
over the descriptors the launcher hands over, ``read()``, ``send()``, and ``request()``, which
passes what arrives meanwhile to a ``handle(message)`` the extension defines after it."""


CHILD_RECORDER = """
import json
from pathlib import Path
from sdk_extension import CustomAgent, join_session, tool

SEEN = Path(__file__).with_name("seen.jsonl")

def note(**record):
    with SEEN.open("a") as out:
        out.write(json.dumps(record) + "\\n")

@tool(description="Save a result")
def save(text: str, invocation) -> str:
    note(what="save", session=invocation.session_id)
    return "saved"

def pre_tool(input, invocation):
    note(what="hook", tool=input.tool_name, session=invocation.session_id)

def started(event):
    note(what="started", child=event.get("agentId"), agent=event["data"].get("agentName"))

session = join_session(tools=[save], hooks={"on_pre_tool_use": pre_tool}, custom_agents=AGENTS)
session.on("subagent.started", started)
"""
"""A Python extension for subagent scenarios: its tool ``save`` and its pre-tool hook write the
session id they were given to ``seen.jsonl`` beside it (``{what, tool?, session}``), and so does
each ``subagent.started`` it is sent (``{what: "started", child, agent}``). Replace ``AGENTS``
with the Python source of its ``custom_agents`` (``"[]"`` for none); read it with
:func:`recorded`."""


CALC = """
    from sdk_extension import join_session, tool

    @tool(description="Add two integers")
    def add(a: int, b: int) -> str:
        return str(a + b)

    join_session(tools=[add])
"""
"""A Python extension with one tool, ``add`` ("Add two integers"), answering ``a + b`` as text;
the ``join_session(`` line is its last (tests insert lines before it)."""


def recorded(folder: Path) -> list[dict[str, Any]]:
    """What a :data:`CHILD_RECORDER` extension in ``folder`` wrote, in order."""
    return [json.loads(line) for line in (folder / "seen.jsonl").read_text().splitlines()]


TEST_TIMEOUTS: Final = Timeouts(stop_grace=2.0)
"""The timeouts of a test's host: its stop ladder waits 2 s a step, not the default 5 s."""


@dataclass
class Project:
    """A temporary project (with a .git folder) and a temporary user home, with what tests do
    to it: add extensions, open a host on it, run the ``extensions`` command against it (in this
    process, beside a running event loop, or in a process of its own)."""

    root: Path
    home: Path

    def command(self, *args: str) -> list[str]:
        """The ``extensions`` command line for this project and home, followed by ``args``: this
        interpreter running the installed package, as every process the project starts does."""
        return [*python_command("-m", "extension_host", "--root", str(self.root), "--home", str(self.home), *args)]

    def run_command(
        self, *args: str, check: bool = False, timeout: float = 60, status_line: bool = False
    ) -> subprocess.CompletedProcess[str]:
        """Run :meth:`command` ``args`` to its end with nothing on stdin (bounded: past ``timeout`` it
        is killed and the test fails); its exit code and output as text. Its stderr comes without
        the status line a slow start writes there, unless ``status_line`` (a test of that line):
        elsewhere it would make the output depend on the machine's load."""
        done = subprocess.run(
            self.command(*args), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout, check=check
        )
        if not status_line:
            done.stderr = STATUS_LINE.sub("", done.stderr)
        return done

    def host(self, *, timeouts: Timeouts = TEST_TIMEOUTS, **options: Any) -> ExtensionHost:
        """An :class:`ExtensionHost` on this project and home, ``options`` passed on; its stop
        ladder waits 2 s a step (a test ends sooner than the default 5 s would let it)."""
        return ExtensionHost(self.root, self.home, timeouts=timeouts, **options)

    def cli(self, *args: str) -> int:
        """The ``extensions`` command run in this process on this project and home; its exit code.
        The status line a slow start writes to stderr is left out (``tests/.../test_progress.py``
        is about it): here it would make what a command prints depend on the machine's load."""
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(progress, "SHOW_AFTER", 3600.0)
            return cli_main(["--root", str(self.root), "--home", str(self.home), *args])

    async def cli_in_thread(self, *args: str, timeout: float = 30) -> int:
        """:meth:`cli` from a running event loop: the command runs ``asyncio.run`` itself, so it
        runs on a thread beside the loop (bounded: past ``timeout`` the test fails)."""
        async with asyncio.timeout(timeout):
            return await asyncio.to_thread(self.cli, *args)

    def add_extension(self, name: str, code: str, *, source: str = "project", entry: str = "extension.py") -> Path:
        """Write ``code`` (dedented) as the ``entry`` (``extension.py``, or ``extension.mjs``)
        of a new extension; return its folder."""
        base = self.root / ".github" / "extensions" if source == "project" else self.home / "extensions"
        folder = base / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / entry).write_text(textwrap.dedent(code), encoding="utf-8")
        return folder


STATUS_LINE: Final = re.compile(r"^starting .* \.\.\. \d+\.\d s\n", re.MULTILINE)
"""The status line a slow start of extensions writes to stderr, when stderr is not a terminal."""

EXTENSIONS_SCRIPT: Final = Path(sys.executable).parent / "extensions"
"""The ``extensions`` console script of this interpreter: what an agent's hook settings run."""

SHADOWED_MODULES: Final = ("extension_host", "extension_protocol", "sdk_extension", "pydantic", "sitecustomize")
"""What a hostile folder plants where Python might look first: this project's packages, a
dependency of them, and the module ``site`` imports at every start."""

_SHADOW = """
import os, sys
with open({evidence!r}, "a", encoding="utf-8") as evidence:
    evidence.write(f"{name} imported by pid {{os.getpid()}} ({{' '.join(sys.argv)}})\\n")
raise SystemExit("a shadow {name} was imported from " + __file__)
"""


@dataclass(frozen=True)
class Shadows:
    """Shadows of :data:`SHADOWED_MODULES` planted in ``folder``; one that is imported writes a
    line to ``evidence`` and ends its process (see :func:`plant_shadows`)."""

    folder: Path
    evidence: Path

    def imported(self) -> list[str]:
        """One line per shadow some process imported (which one, its pid and argv); ``[]`` when
        none was."""
        try:
            return self.evidence.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []


def plant_shadows(folder: Path, evidence: Path) -> Shadows:
    """Plant in ``folder`` a package or module for each of :data:`SHADOWED_MODULES` that, once
    imported, appends a line to ``evidence`` (outside ``folder``) and exits."""
    for name in SHADOWED_MODULES:
        code = _SHADOW.format(name=name, evidence=str(evidence))
        if name == "sitecustomize":
            (folder / f"{name}.py").write_text(code, encoding="utf-8")
        else:
            (folder / name).mkdir(parents=True, exist_ok=True)
            (folder / name / "__init__.py").write_text(code, encoding="utf-8")
    return Shadows(folder, evidence)


def copilot_sdk_marks() -> list[pytest.MarkDecorator]:
    """The marks of a module that starts JavaScript extensions on the published Copilot SDK: real
    processes, the session's shared SDK install, skipped without node and npm."""
    return [
        pytest.mark.subprocess,
        pytest.mark.usefixtures("use_sdk_cache"),
        pytest.mark.skipif(
            shutil.which("node") is None or shutil.which("npm") is None,
            reason="node and npm are needed to run Copilot SDK extensions",
        ),
    ]


def sdk_host(project: Project, readiness: float = 120.0, **options: Any) -> ExtensionHost:
    """An :class:`~extension_host.ExtensionHost` for a project with JavaScript extensions: a
    readiness timeout long enough for the first start, which installs the Copilot SDK."""
    return project.host(timeouts=Timeouts(stop_grace=2.0, readiness=readiness), **options)


def run(coroutine: Coroutine[Any, Any, T], timeout: float = 60) -> T:
    """Run a coroutine on a fresh loop, bounded so a hang fails the test instead of the suite."""

    async def bounded() -> T:
        async with asyncio.timeout(timeout):
            return await coroutine

    return asyncio.run(bounded())


async def finished(*argv: str, timeout: float = 60) -> tuple[int, str, str]:
    """Run ``argv`` with nothing on stdin to its end; its exit code, stdout and stderr as text.
    Bounded: past ``timeout`` it is killed and the test fails."""
    process = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        async with asyncio.timeout(timeout):
            out, err = await process.communicate()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def hook_command(
    project: Project,
    agent: str,
    event: str,
    stdin: bytes,
    *,
    short: bool = True,
    env: Mapping[str, str] | None = None,
    timeout: float = 90,
) -> tuple[int, Any, str]:
    """Run ``extensions hook AGENT EVENT`` in the project as an agent would; its exit code, parsed
    stdout (``None`` when empty) and stderr. Bounded: past ``timeout`` it is killed and the test fails.

    ``short``: the exact command line the agents' settings hold (the launcher's fast path), run in
    the project folder; otherwise with ``--root``/``--home`` first (the full command line parser).
    ``env``: its whole environment (default: this process's).
    """
    argv = (
        [*python_command("-m", "extension_host", "hook", agent, event)]
        if short
        else project.command("hook", agent, event)
    )
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=project.root,
        env=dict(env) if env is not None else None,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        async with asyncio.timeout(timeout):
            out, err = await process.communicate(stdin)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode is not None
    return process.returncode, json.loads(out) if out.strip() else None, err.decode()


SLOW_TO_JOIN: Final = """
import os, time
from pathlib import Path
with open(Path(os.environ["PIDS_FILE"]), "a") as pids:
    pids.write(f"{os.getpid()}\\n")
time.sleep(300)
"""
"""An extension that takes minutes before it joins, recording its pid in ``$PIDS_FILE``."""


def write_trust_record(project: Project) -> Path:
    """The user's trust record, trusting the project, as ``extensions trust`` writes it (mode 0600)."""
    record = project.home / TRUST_FILE
    document = {"version": 1, "projects": {str(project.root.resolve()): {"trusted": True}}}
    record.write_text(json.dumps(document), encoding="utf-8")
    record.chmod(0o600)
    return record


def wait_for_exit(pid: int, timeout: float = 15) -> bool:
    """Wait (bounded) until process ``pid`` no longer exists; True if it is gone.

    Uses a pidfd, so the wait is an event, not a polling loop; works for processes that are
    not our children.
    """
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], timeout)
        return bool(readable)
    finally:
        os.close(fd)


def process_exists(pid: int) -> bool:
    """True if a process with this pid exists (zombies included)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def git(*args: str) -> None:
    """Run the real git with ``args`` (bounded), failing the test if it fails."""
    subprocess.run(["git", *args], check=True, capture_output=True, timeout=30)


def recording_program(path: Path, marker: Path, body: str = "") -> Path:
    """An executable shell script at ``path`` that appends its name and arguments to ``marker``
    each time it runs, then runs ``body``: a program a test can tell was started."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\necho "$0 $*" >> "{marker}"\n{body}\n', encoding="utf-8")
    path.chmod(0o755)
    return path


async def wait_for_event(host: Any, predicate: Any, timeout: float = 10) -> dict[str, Any]:
    """Return the first event (past or future) of ``host`` matching ``predicate``; bounded."""
    for event in host.events.history():
        if predicate(event):
            return dict(event)
    found: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

    def listen(event: Any) -> None:
        if not found.done() and predicate(event):
            found.set_result(dict(event))

    unsubscribe = host.on_event(listen)
    try:
        async with asyncio.timeout(timeout):
            return await found
    finally:
        unsubscribe()


def hook_callers(events: Any, hook: str | None = None) -> list[str]:
    """Who was called, in order, at every run of a hook point (``hook``: only that one's) that
    an event log's ``hook.end`` events list (their ``calls``)."""
    return [
        call["extensionId"]
        for event in events.history("hook.end")
        if hook is None or event["data"]["hook"] == hook
        for call in event["data"]["calls"]
    ]


def is_log(message: str) -> Any:
    """A predicate matching a session.info event with this message."""
    return lambda event: event["type"] == "session.info" and event["data"].get("message") == message


def load_module(name: str, path: Path) -> ModuleType:
    """Import a file that is not part of a package (the logic modules of the samples)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # dataclasses look their module up in sys.modules while the class is being built.
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_ANNOUNCING_HOST = textwrap.dedent(
    """
    import asyncio, sys
    import extension_host.runtime.instance
    from extension_host import ExtensionHost

    real_spawn = extension_host.runtime.instance.spawn

    async def announcing_spawn(spec, fork_server=None):
        process = await real_spawn(spec, fork_server)
        if spec.extension_id == sys.argv[3]:
            server = fork_server.pid if fork_server is not None and process.forked else ""
            print(process.pid, server, flush=True)
        return process

    extension_host.runtime.instance.spawn = announcing_spawn
    asyncio.run(ExtensionHost(sys.argv[1], sys.argv[2], readiness_timeout=600).start())
    """
)


def assert_orphan_exits_when_host_is_killed(project: Project, extension_id: str) -> None:
    """Start a host in its own process, SIGKILL it once ``extension_id`` is spawned, and check
    that the extension, and the fork server that forked it if one did, exit by themselves
    (bounded)."""
    host = subprocess.Popen(
        [sys.executable, "-c", _ANNOUNCING_HOST, str(project.root), str(project.home), extension_id],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert host.stdout is not None
        pid, _, server = host.stdout.readline().strip().partition(" ")
        host.kill()
        host.wait(timeout=10)
        assert wait_for_exit(int(pid), timeout=15), f"the orphaned extension {extension_id} kept running"
        if server:
            assert wait_for_exit(int(server), timeout=15), "the orphaned fork server kept running"
    finally:
        host.kill()
        host.wait(timeout=10)
        if host.stdout:
            host.stdout.close()


@contextlib.contextmanager
def sample_extension_module(name: str, sibling: str) -> Iterator[ModuleType]:
    """A sample's extension.py loaded as the host would find it (its folder first on sys.path,
    so its sibling logic module ``sibling`` imports), without joining a session."""
    folder = SAMPLES / name
    saved = sys.modules.pop(sibling, None)
    sys.path.insert(0, str(folder))
    try:
        yield load_module(f"sample_{name}_extension", folder / "extension.py")
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop(sibling, None)
        if saved is not None:
            sys.modules[sibling] = saved


VERSIONED: Final = """
    import os
    from sdk_extension import join_session, tool

    @tool(description="Which version answers")
    def version() -> str:
        return "{version}"

    session = join_session(tools=[version])
    session.log("{version} ready, pid " + str(os.getpid()))
"""
"""An extension whose tool ``version`` answers ``{version}`` (format it), which it also logs
when it starts: ``dev``'s tests save a new version over an old one."""


class Dev:
    """A running ``extensions dev`` with line-oriented, bounded reads of its output.

    Its stdin is a pipe, or with ``terminal`` a pseudo-terminal (so dev may ask questions).
    """

    def __init__(self, process: asyncio.subprocess.Process, terminal: int | None = None) -> None:
        self.process = process
        self.terminal = terminal
        self.seen: list[str] = []

    async def send(self, line: str) -> None:
        if self.terminal is not None:
            os.write(self.terminal, (line + "\n").encode())
            return
        assert self.process.stdin is not None
        self.process.stdin.write((line + "\n").encode())
        await self.process.stdin.drain()

    async def expect(self, pattern: str, timeout: float = 20) -> re.Match[str]:
        """Read lines until one matches ``pattern``; fail after ``timeout`` seconds."""
        assert self.process.stdout is not None
        async with asyncio.timeout(timeout):
            while True:
                raw = await self.process.stdout.readline()
                if not raw:
                    raise AssertionError(f"dev exited before printing {pattern!r}; it printed {self.seen}")
                line = raw.decode().rstrip("\n")
                self.seen.append(line)
                found = re.search(pattern, line)
                if found:
                    return found


@contextlib.asynccontextmanager
async def running_dev(
    project: Project, *, terminal: bool = False, ready: str | None = r"^watching ", options: tuple[str, ...] = ()
) -> AsyncIterator[Dev]:
    """``extensions dev`` started (and, unless ``ready`` is None, past the line matching it);
    killed on the way out if a test left it running."""
    main_fd, stdin = os.openpty() if terminal else (None, asyncio.subprocess.PIPE)
    try:
        process = await asyncio.create_subprocess_exec(
            *project.command(),
            "dev",
            *options,
            stdin=stdin,
            stdout=asyncio.subprocess.PIPE,
            env=dict(os.environ),
        )
    finally:
        if terminal:
            os.close(stdin)  # the child has its own copy
    dev = Dev(process, main_fd)
    try:
        if ready is not None:
            await dev.expect(ready)
        yield dev
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        if main_fd is not None:
            os.close(main_fd)


OTHER_USER_NAME = "eh-other"
"""The local account tests act as when an attack comes from another user of the machine."""


@dataclass(frozen=True)
class OtherUser:
    """Another local user of this machine (see :func:`other_user`)."""

    name: str
    uid: int
    gid: int

    def run(self, *argv: str, timeout: float = 30, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` as this user (``runuser``), bounded, capturing its output as text."""
        return subprocess.run(
            ["runuser", "-u", self.name, "--", *argv], capture_output=True, text=True, timeout=timeout, **kwargs
        )


def other_user() -> OtherUser | str:
    """The account :data:`OTHER_USER_NAME`, created when missing (no home, no password); or, when
    this process cannot act as another user, the one line that says why."""
    if os.geteuid() != 0:
        return "acting as another local user needs root (CI runs the suite as root)"
    for tool in ("useradd", "runuser"):
        if shutil.which(tool) is None:
            return f"acting as another local user needs {tool}, which is not installed"
    try:
        entry = pwd.getpwnam(OTHER_USER_NAME)
    except KeyError:
        made = subprocess.run(
            ["useradd", "--no-create-home", "--shell", "/bin/sh", OTHER_USER_NAME],
            capture_output=True,
            text=True,
            timeout=30,
        )
        try:
            entry = pwd.getpwnam(OTHER_USER_NAME)  # another run may have created it meanwhile
        except KeyError:
            return f"useradd {OTHER_USER_NAME} failed: {made.stderr.strip()}"
    return OtherUser(entry.pw_name, entry.pw_uid, entry.pw_gid)


def chat_env() -> dict[str, str]:
    """This process's environment without the ``OPENAI_*`` variables (``extensions chat`` reads them)."""
    return {key: value for key, value in os.environ.items() if not key.startswith("OPENAI_")}


def chat(project: Project, conversation: str, *options: str) -> subprocess.CompletedProcess[str]:
    """Run ``extensions chat`` in ``project`` with ``conversation`` on stdin, to its end (bounded)."""
    return subprocess.run(
        project.command("chat", *options),
        input=conversation,
        capture_output=True,
        text=True,
        env=chat_env(),
        timeout=90,
    )


NPM_MISSING: Final = "node and npm are needed to install npm dependencies"


needs_npm: Final = pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None, reason=NPM_MISSING)
"""A test that runs npm (offline, on local packages) is skipped without node and npm."""


def offline_npm(monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
    """npm, in this process's environment and what it starts, never reaches a registry and keeps
    its cache in ``cache`` (not the user's): a package that is not local fails ``ENOTCACHED``."""
    monkeypatch.setenv("npm_config_offline", "true")
    monkeypatch.setenv("npm_config_cache", str(cache))
    monkeypatch.setenv("npm_config_update_notifier", "false")


def npm_tarball(folder: Path, name: str, index_js: str, *, install_script: bool = False, **fields: Any) -> Path:
    """``npm pack`` a package ``name`` (version 1.0.0, ``fields`` added to its ``package.json``)
    whose ``index.js`` is ``index_js`` into ``folder``; with ``install_script`` its ``install``
    script creates ``ran-install-script`` in the installed package's folder. Returns the
    tarball (offline: no registry is asked)."""
    source = folder / f"{name.replace('/', '-').lstrip('@')}-src"
    source.mkdir(parents=True)
    manifest: dict[str, Any] = {"name": name, "version": "1.0.0", "main": "index.js", **fields}
    if install_script:
        manifest["scripts"] = {"install": "node -e \"require('fs').writeFileSync('ran-install-script', '')\""}
    (source / "package.json").write_text(json.dumps(manifest), encoding="utf-8")
    (source / "index.js").write_text(textwrap.dedent(index_js), encoding="utf-8")
    packed = subprocess.run(
        ["npm", "pack", "--offline", "--silent", "--pack-destination", str(folder)],
        cwd=source,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return folder / packed.stdout.strip().splitlines()[-1]


def npm_package_json(folder: Path, dependencies: Mapping[str, str], **fields: Any) -> None:
    """Write ``folder/package.json`` (an ES module package) declaring ``dependencies``."""
    manifest = {"name": folder.name, "version": "1.0.0", "type": "module", "dependencies": dict(dependencies), **fields}
    (folder / "package.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def write_wheel(
    folder: Path,
    name: str,
    version: str,
    modules: Mapping[str, str],
    *,
    requires: Sequence[str] = (),
    entry_points: str = "",
) -> Path:
    """A pure-Python wheel of the distribution ``name`` ``version`` in ``folder``, written by
    hand (no build tool, no network): ``modules`` maps each file's path in the wheel
    (``tinygreet/__init__.py``) to its code (dedented); ``requires`` become its ``Requires-Dist``
    and ``entry_points`` its ``entry_points.txt``. What pip or uv installs from a wheel folder."""
    info = f"{name.replace('-', '_')}-{version}.dist-info"
    files = {path: textwrap.dedent(code).encode() for path, code in modules.items()}
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    files[f"{info}/METADATA"] = (metadata + "".join(f"Requires-Dist: {r}\n" for r in requires)).encode()
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    if entry_points:
        files[f"{info}/entry_points.txt"] = entry_points.encode()

    def record(path: str, data: bytes) -> str:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        return f"{path},sha256={digest},{len(data)}"

    lines = [record(path, data) for path, data in files.items()] + [f"{info}/RECORD,,"]
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
        archive.writestr(f"{info}/RECORD", "\n".join(lines) + "\n")
    return wheel


def build_wheel(folder: Path, distribution: str, version: str, extensions: dict[str, str], requires: str = "") -> Path:
    """A wheel of ``distribution`` ``version`` in ``folder`` (:func:`write_wheel`): each of
    ``extensions`` (name -> the code of its ``extension.py``) is a package ``<name>_ext`` exposed
    through the ``extension_host.extensions`` entry point group."""
    modules = {
        f"{name}_ext/{file}": text
        for name, code in extensions.items()
        for file, text in (("__init__.py", ""), ("extension.py", code))
    }
    group = "[extension_host.extensions]\n" + "".join(f"{name} = {name}_ext\n" for name in extensions)
    return write_wheel(folder, distribution, version, modules, requires=requires.split(), entry_points=group)
