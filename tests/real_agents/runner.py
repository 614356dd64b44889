"""Running a real agent for a test: its own home, a loopback-only environment, bounded, and no
process left behind.

:class:`Workspace` is one test's world: a project (with a ``.git`` folder and a ``.env`` holding
:data:`SECRET`), a home folder that becomes the agent's ``HOME``, and a short runtime folder for
control sockets. :meth:`Workspace.run` runs one agent through :mod:`reaper` (a child subreaper)
and returns an :class:`AgentRun`: exit code, output, and every process still there after the
agent exited (then killed). The environment is built from nothing (:meth:`Workspace.env`):
no variable of the test process reaches the agent unless listed there, every proxy variable
points at a loopback port nothing listens on and ``NO_PROXY`` covers loopback, so an HTTP
request for anywhere but 127.0.0.1 fails at once. The ``extensions`` command on the agent's
``PATH`` is this virtual environment's.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from extension_host.project.paths import control_socket_path

__all__ = [
    "EXTENSIONS_BIN",
    "SECRET",
    "AgentRun",
    "Workspace",
]

SECRET: Final = "hunter2-correct-horse-battery-staple"
"""The value in the project's ``.env``: a test checks it never reaches the model."""
EXTENSIONS_BIN: Final = Path(sys.executable).parent
"""The folder of this virtual environment's ``extensions`` command (first on the agent's PATH)."""
REAPER: Final = Path(__file__).with_name("reaper.py")
_PROXY_NAMES: Final = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
_LOOPBACK: Final = "127.0.0.1,localhost,::1"
_NOWHERE: Final = "http://127.0.0.1:9"
"""The proxy every HTTP client is pointed at (the discard port: nothing listens): a request that
is not for loopback fails at once instead of leaving the machine."""


@dataclass
class AgentRun:
    """What one run of an agent did."""

    argv: list[str]
    exit_code: int
    timed_out: bool
    stdout: str
    stderr: str
    leftovers: list[dict[str, Any]]
    after: list[dict[str, Any]] = field(default_factory=list)

    def json_lines(self) -> list[Any]:
        """stdout's lines that are JSON (the agents' stream-json or JSONL output)."""
        found = []
        for line in self.stdout.splitlines():
            if line.startswith(("{", "[")):
                try:
                    found.append(json.loads(line))
                except ValueError:
                    pass
        return found

    def describe(self) -> str:
        """Everything a failing test should show about the run."""
        return (
            f"$ {' '.join(self.argv[:3])} ...\nexit {self.exit_code}{' (timed out)' if self.timed_out else ''}\n"
            f"--- stdout (tail)\n{self.stdout[-6000:]}\n--- stderr (tail)\n{self.stderr[-4000:]}\n"
            f"--- left over: {self.leftovers}\n--- after: {self.after}"
        )


@dataclass
class Workspace:
    """One test's project, home and runtime folder (see the module's doc)."""

    root: Path
    project: Path
    home: Path
    runtime: Path
    extra_env: dict[str, str] = field(default_factory=dict)

    @classmethod
    def create(cls, base: Path) -> Workspace:
        project = base / "project"
        (project / ".git").mkdir(parents=True)
        (project / ".env").write_text(f"API_TOKEN={SECRET}\n")
        home = base / "home"
        home.mkdir()
        # A control socket's path must fit in about 107 bytes: pytest's folders can be longer.
        runtime = Path(tempfile.mkdtemp(prefix="eh-ra-"))
        os.chmod(runtime, 0o700)
        return cls(base, project, home, runtime)

    def remove(self) -> None:
        shutil.rmtree(self.runtime, ignore_errors=True)

    def env(self, **extra: str) -> dict[str, str]:
        """The whole environment of a process the test starts here (agent or ``extensions``)."""
        node = shutil.which("node")
        path = [str(EXTENSIONS_BIN)]
        if node is not None:
            path.append(str(Path(node).parent))
        path += ["/usr/local/bin", "/usr/bin", "/bin"]
        env = {
            "PATH": os.pathsep.join(dict.fromkeys(path)),
            "HOME": str(self.home),
            "USER": os.environ.get("USER", "tester"),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "NO_COLOR": "1",
            "TMPDIR": str(self.root),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "EXTENSION_HOST_RUNTIME_DIR": str(self.runtime),
            "NO_PROXY": _LOOPBACK,
            "no_proxy": _LOOPBACK,
            **dict.fromkeys(_PROXY_NAMES, _NOWHERE),
        }
        env.update(self.extra_env)
        env.update(extra)
        return env

    def add_extension(self, name: str, code: str) -> Path:
        """Write ``code`` (dedented) as the project extension ``name``; its folder."""
        folder = self.project / ".github" / "extensions" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "extension.py").write_text(textwrap.dedent(code))
        return folder

    def extensions(self, *args: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run this virtual environment's ``extensions`` in the project with the workspace's environment."""
        done = subprocess.run(
            [str(EXTENSIONS_BIN / "extensions"), *args],
            cwd=self.project,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"extensions {' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
        return done

    def run(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        timeout: float = 90,
        after: Sequence[Sequence[str]] = (),
        linger: float = 5,
        cwd: Path | None = None,
        stdin: Path | None = None,
    ) -> AgentRun:
        """Run ``argv`` under the reaper (see :mod:`reaper`) and wait for its report, bounded;
        ``stdin`` is a file it reads as its standard input (else it has none)."""
        folder = Path(tempfile.mkdtemp(prefix="run-", dir=self.root))
        spec = {
            "argv": list(argv),
            "env": dict(env),
            "cwd": str(cwd or self.project),
            "stdout": str(folder / "stdout"),
            "stderr": str(folder / "stderr"),
            "pid_file": str(folder / "pid"),
            "timeout": timeout,
            "after": [list(command) for command in after],
            "linger": linger,
            "stdin": str(stdin) if stdin is not None else None,
        }
        (folder / "spec.json").write_text(json.dumps(spec))
        report_path = folder / "report.json"
        reaper = subprocess.Popen(
            [sys.executable, "-P", str(REAPER), str(folder / "spec.json"), str(report_path)],
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            reaper.wait(timeout=timeout + 30 * len(after) + linger + 30)
        finally:
            if reaper.poll() is None:
                reaper.send_signal(signal.SIGTERM)  # it kills the agent and everything left
                try:
                    reaper.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    reaper.kill()
                    reaper.wait(timeout=15)
        try:
            report = json.loads(report_path.read_text())
        except (OSError, ValueError) as exc:
            raise AssertionError(f"the reaper of {argv[0]} left no report (exit {reaper.returncode})") from exc
        return AgentRun(
            list(argv),
            report["exit_code"],
            report["timed_out"],
            (folder / "stdout").read_text(errors="replace"),
            (folder / "stderr").read_text(errors="replace"),
            report["leftovers"],
            report["after"],
        )

    def hook_host_pid(self) -> int:
        """The pid of the project's background hook host, from the pid file beside its control
        socket in the workspace's runtime folder."""
        socket_name = control_socket_path(self.project).name  # a hash of the project: any runtime folder's
        return int((self.runtime / socket_name).with_suffix(".hook-host.pid").read_text())

    def agent_pid(self) -> int:
        """The pid of the agent running now (from the newest run's pid file)."""
        runs = sorted(self.root.glob("run-*/pid"), key=lambda path: path.stat().st_mtime)
        assert runs, "no agent has started in this workspace"
        return int(runs[-1].read_text())
