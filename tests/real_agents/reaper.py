"""Run one agent and account for every process it starts: ``python reaper.py SPEC REPORT``.

This process makes itself a child subreaper (Linux ``PR_SET_CHILD_SUBREAPER``), so whatever the
agent starts, even a process that left the agent's process group or session (the background
hook host, an extension that leads a group of its own), becomes this process's child when its
own parent ends, instead of init's. So it can tell, after the agent exited, which of them are
still there.

SPEC (JSON): ``argv``, ``env``, ``cwd``, ``stdout`` and ``stderr`` (files for the agent's
output), ``pid_file`` (the agent's pid is written there once it runs), ``timeout`` (seconds
the agent may run; then its process group is killed), ``after`` (command lines run once the
agent exited, each bounded, e.g. stopping the background hook host), ``linger`` (seconds the
processes left over may take to exit by themselves), ``stdin`` (optional: a file the agent
reads as its standard input; else it has none).

REPORT (JSON): ``exit_code`` (negative: the signal), ``timed_out``, ``leftovers`` (pid and
command line of each process still there after ``linger``; all of them are then killed and
reaped) and ``after`` (each command's exit code and output).

SIGTERM or SIGINT to this process kills the agent's group and everything left, then exits.
It imports the standard library only: it must not depend on the code under test.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

PR_SET_CHILD_SUBREAPER = 36
POLL = 0.02


def descendants(root: int) -> list[int]:
    """Every living process under ``root`` (by the parent links in /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if fields[0] == b"Z":
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    pending = [root]
    while pending:
        for child in children.get(pending.pop(), []):
            found.append(child)
            pending.append(child)
    return found


def command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def reap() -> dict[int, int]:
    """Reap every child that exited; their exit statuses by pid."""
    statuses: dict[int, int] = {}
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return statuses
        if pid == 0:
            return statuses
        statuses[pid] = status


def kill_everything(agent: int | None) -> None:
    if agent is not None:
        try:
            os.killpg(agent, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for _round in range(50):
        left = descendants(os.getpid())
        if not left:
            return
        for pid in left:
            try:
                os.kill(pid, signal.SIGCONT)  # a stopped process dies of SIGKILL too, but says so at once
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(POLL)
        reap()


def main(spec_path: str, report_path: str) -> int:
    spec: dict[str, Any] = json.loads(Path(spec_path).read_text())
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    agent: int | None = None

    def stop(signum: int, _frame: Any) -> None:
        kill_everything(agent)
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    stdin_path = spec.get("stdin")
    with (
        open(spec["stdout"], "wb") as out,
        open(spec["stderr"], "wb") as err,
        open(stdin_path or os.devnull, "rb") as given,
    ):
        process = subprocess.Popen(
            spec["argv"],
            env=spec["env"],
            cwd=spec["cwd"],
            stdin=given,
            stdout=out,
            stderr=err,
            process_group=0,
        )
    agent = process.pid
    Path(spec["pid_file"]).write_text(f"{agent}\n")
    deadline = time.monotonic() + float(spec["timeout"])
    exit_status: int | None = None
    timed_out = False
    while exit_status is None:
        statuses = reap()
        if agent in statuses:
            exit_status = statuses[agent]
            break
        if time.monotonic() > deadline:
            timed_out = True
            try:
                os.killpg(agent, signal.SIGKILL)
            except ProcessLookupError:
                pass
            _pid, exit_status = os.waitpid(agent, 0)
            break
        time.sleep(POLL)
    after: list[dict[str, Any]] = []
    for argv in spec.get("after", []):
        try:
            done = subprocess.run(argv, env=spec["env"], cwd=spec["cwd"], capture_output=True, text=True, timeout=30)
            after.append({"argv": argv, "exit_code": done.returncode, "output": done.stdout + done.stderr})
        except subprocess.TimeoutExpired:
            after.append({"argv": argv, "exit_code": None, "output": "timed out after 30 s"})
    linger_deadline = time.monotonic() + float(spec.get("linger", 5))
    while descendants(os.getpid()) and time.monotonic() < linger_deadline:
        reap()
        time.sleep(POLL)
    reap()
    leftovers = [{"pid": pid, "command": command_line(pid)} for pid in descendants(os.getpid())]
    kill_everything(None)
    code = os.waitstatus_to_exitcode(exit_status)
    Path(report_path).write_text(
        json.dumps({"exit_code": code, "timed_out": timed_out, "leftovers": leftovers, "after": after})
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
