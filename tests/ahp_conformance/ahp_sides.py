"""Running the client script against each side: the real ``copilot --ahp-host`` and
``extensions serve --listen``, each in its own :class:`~real_agents.runner.Workspace` with the
same project (one extension, ``probe``, in ``extension.mjs``, with the tool ``probe_echo``) and
the same scripted model.

- ``cli``: ``copilot --ahp-host --listen 127.0.0.1:0`` offline (``CopilotCli.env``) with the
  ``EXTENSIONS`` and ``AHP_CLIENT`` feature flags, its GitHub the fake of :mod:`ahp_fakes` (which
  passes the model requests on to the scripted model); it prints ``AHP 1.0 endpoint: ws://...``.
- ``host``: ``extensions serve --listen 127.0.0.1:0 --agent openai:MODEL/v1`` in the trusted
  project; it prints ``ws://...`` first.

A server is a :class:`Server`: started in a session of its own, its address read from stdout
within :data:`START_TIMEOUT`, and at the end its whole process group terminated, then killed,
and reaped, whatever happened. :func:`record` gives a :class:`Run`: the records, what the server
wrote, the model's requests, and the values normalisation replaces (folders, the port, the token).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ahp_conformance.ahp_client import Gate, Record, run_script
from ahp_conformance.ahp_fakes import MODEL_NAME, FakeGitHub
from extension_host.project.paths import CACHE_ENV
from real_agents.agents import FAKE_KEY, CopilotCli
from real_agents.models import Call, ChatCompletionsModel, Say, Turn
from real_agents.runner import EXTENSIONS_BIN, Workspace

__all__ = ["EXTENSION", "SIDES", "START_TIMEOUT", "Run", "Server", "record", "script"]

SIDES: Final = ("cli", "host")
START_TIMEOUT: Final = 60.0
STOP_TIMEOUT: Final = 15.0
EXTENSION: Final = """\
import { joinSession } from "@github/copilot-sdk/extension";

await joinSession({
  tools: [{
    name: "probe_echo",
    description: "Echo the text back.",
    parameters: {
      type: "object", properties: { text: { type: "string", description: "what to echo" } }, required: ["text"],
    },
    handler: async (args) => `echo ${args.text}`,
  }],
});
"""
"""The project's one extension, the same file on both sides."""
_URL: Final = re.compile(r"ws://127\.0\.0\.1:\d+/\S*")


def script(gate: Gate) -> list[Turn]:
    """The model's script: turn 1 calls ``probe_echo`` and then answers; turn 2's answer waits at
    ``gate`` until the client has cancelled it."""
    return [Call("probe_echo", {"text": "hi"}), Say("done"), Say("too late", before=gate.hold)]


class Server:
    """A server process started in its own session; its ``ws://`` address once it printed it."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], cwd: Path, log: Path) -> None:
        self.log = log
        self._stderr = log.open("wb")
        self.process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            start_new_session=True,
        )
        self.output: list[str] = []
        self._found = threading.Event()
        self.url: str | None = None
        self._reader = threading.Thread(target=self._read, name="server-stdout", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.output.append(line)
            found = _URL.search(line)
            if found and self.url is None:
                self.url = found.group(0)
                self._found.set()
        self._found.set()

    def address(self) -> str:
        """The ``ws://`` URL it printed (waiting up to :data:`START_TIMEOUT`)."""
        self._found.wait(START_TIMEOUT)
        if self.url is None:
            raise AssertionError(f"{self.describe()}\nprinted no ws:// address within {START_TIMEOUT:.0f} s")
        return self.url

    def stop(self) -> None:
        """Terminate the whole process group, kill it if it lingers, and reap the server."""
        for sent in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self.process.pid, sent)
            except ProcessLookupError:
                break
            try:
                self.process.wait(STOP_TIMEOUT)
                break
            except subprocess.TimeoutExpired:
                continue
        self.process.wait(STOP_TIMEOUT)
        with _suppressed():
            os.killpg(self.process.pid, signal.SIGKILL)  # whatever it started and left behind
        self._reader.join(STOP_TIMEOUT)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self._stderr.close()

    def describe(self) -> str:
        stderr = self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""
        return f"exit {self.process.poll()}\n--- stdout\n" + "\n".join(self.output[-40:]) + f"\n--- stderr\n{stderr}"


@contextmanager
def _suppressed() -> Iterator[None]:
    try:
        yield
    except ProcessLookupError:
        pass


@dataclass(frozen=True)
class Run:
    """One side's run of the script."""

    side: str
    records: list[Record]
    replacements: dict[str, str]
    model_requests: int
    server: str
    """What the server printed and its exit, for a failing test's message."""


def _prepare(workspace: Workspace) -> None:
    folder = workspace.project / ".github" / "extensions" / "probe"
    folder.mkdir(parents=True)
    (folder / "extension.mjs").write_text(EXTENSION)


def record(side: str, copilot_cli: CopilotCli, base: Path, cache: Path) -> Run:
    """Run the client script against ``side`` (``cli`` or ``host``) in a new workspace under ``base``."""
    workspace = Workspace.create(base / side)
    gate = Gate()
    try:
        _prepare(workspace)
        with ChatCompletionsModel(script(gate)) as model:
            if side == "cli":
                with FakeGitHub(workspace.root, model.origin) as github:
                    env = {
                        **copilot_cli.env(workspace, model),
                        "COPILOT_CLI_ENABLED_FEATURE_FLAGS": "EXTENSIONS,AHP_CLIENT",
                        **github.env(),
                    }
                    argv = [*copilot_cli.program.command(copilot_cli.prefix), "--ahp-host", "--listen", "127.0.0.1:0"]
                    records, server = _drive(argv, env, workspace, gate)
                    extra = {github.host: "<github>"}
            else:
                workspace.extensions("trust")
                env = workspace.env(**{CACHE_ENV: str(cache)}, OPENAI_API_KEY=FAKE_KEY, OPENAI_MODEL=MODEL_NAME)
                argv = [
                    str(EXTENSIONS_BIN / "extensions"),
                    "serve",
                    "--listen",
                    "127.0.0.1:0",
                    "--agent",
                    f"openai:{model.origin}/v1",
                ]
                records, server = _drive(argv, env, workspace, gate)
                extra = {}
            requests = len(model.conversation_requests())
        replacements = {
            str(workspace.project): "<project>",
            str(workspace.home): "<home>",
            str(workspace.root): "<root>",
            str(workspace.runtime): "<runtime>",
            model.origin: "<model>",
            **extra,
        }
        return Run(side, records, replacements, requests, server)
    finally:
        gate.release()
        workspace.remove()


def _drive(argv: Sequence[str], env: Mapping[str, str], workspace: Workspace, gate: Gate) -> tuple[list[Record], str]:
    server = Server(argv, env, workspace.project, workspace.root / "server.stderr")
    try:
        url = server.address()
        records = asyncio.run(run_script(url, workspace.project.as_uri(), gate))
    finally:
        gate.release()
        server.stop()
    described = server.describe()
    token = re.search(r"[?&](?:tkn|token)=([^&\s]+)", url)
    if token:
        described = described.replace(token.group(1), "<token>")
    return records, described
