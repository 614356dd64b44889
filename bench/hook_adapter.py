"""What one Claude Code hook call costs: ``extensions hook claude PreToolUse``, wall time per call.

Three sides, interleaved call by call (A B C, C B A, ...) so that drift of a shared machine
hits all of them: the bare interpreter (``python -P -c pass``: the floor no command can beat), the
interpreter importing what the hook command imports (no call), the
hook command with a host running for the project (an in-process :class:`ExtensionHost` with its
:class:`ControlServer`, one extension whose ``on_pre_tool_use`` denies ``rm -rf``), and the
same command cold (no host, the background host off: it starts the extension for the call and
stops it), and the first call that starts the project's background host (stopped after each
such call with ``extensions hook stop``, and at the end whatever happens). Each call is a
real process fed Claude Code's documented ``PreToolUse`` payload; the answer is checked.
The children may write bytecode (``PYTHONDONTWRITEBYTECODE`` is dropped for them), as an
installed package's modules are compiled once: a hook command that compiles the package's
modules from source on every call pays about twice the imports.
Run: ``python -m bench.hook_adapter [calls] [cold calls]``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from extension_host import ExtensionHost
from extension_host.control.service import ControlServer
from extension_host.launch.interpreter import python_command

__all__ = ["GUARD", "PAYLOAD", "main", "measure"]

GUARD = """
from sdk_extension import join_session

def guard(input, invocation):
    if "rm -rf" in input.tool_args.get("command", ""):
        return {"permission_decision": "deny", "permission_decision_reason": "no rm -rf"}

join_session(hooks={"on_pre_tool_use": guard})
"""

PAYLOAD = json.dumps(
    {
        "session_id": "bench",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": "/tmp",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "rm -rf build"},
        "tool_use_id": "toolu_bench",
    }
).encode()


async def _timed(argv: list[str], cwd: Path, env: dict[str, str], stdin: bytes) -> tuple[float, bytes]:
    start = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, env=env, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await process.communicate(stdin)
    return time.perf_counter() - start, out


async def measure(root: Path, calls: int, cold_calls: int) -> dict[str, list[float]]:
    """Seconds per call of each side."""
    project, home, runtime = root / "project", root / "home", Path(tempfile.mkdtemp(prefix="eh-"))
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    folder = project / ".github" / "extensions" / "guard"
    folder.mkdir(parents=True)
    (folder / "extension.py").write_text(textwrap.dedent(GUARD), encoding="utf-8")
    env = {
        **{name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"},
        "EXTENSION_HOST_HOME": str(home),
        "EXTENSION_HOST_RUNTIME_DIR": str(runtime),
        "EXTENSION_HOST_TRUST_PROJECT": "1",
        "EXTENSION_HOST_HOOK_IDLE": "0",
    }
    background_env = {**env, "EXTENSION_HOST_HOOK_IDLE": "600"}
    os.environ["EXTENSION_HOST_RUNTIME_DIR"] = str(runtime)
    command = [str(Path(sys.executable).parent / "extensions"), "hook", "claude", "PreToolUse"]
    floor = [*python_command("-c", "pass")]
    imports = [*python_command("-c", "import extension_host.frontends.hook_command")]
    stop = [str(Path(sys.executable).parent / "extensions"), "hook", "stop"]
    times: dict[str, list[float]] = {"floor": [], "imports": [], "warm": [], "cold": [], "first": []}

    async def cold() -> None:
        seconds, out = await _timed(command, project, env, PAYLOAD)
        assert b'"deny"' in out, out
        times["cold"].append(seconds)

    async def first() -> None:
        seconds, out = await _timed(command, project, background_env, PAYLOAD)
        assert b'"deny"' in out, out
        times["first"].append(seconds)
        await _timed(stop, project, env, b"")

    try:
        async with ExtensionHost(project, home, trust=True, watch=False) as host:
            assert host.extension("guard").status == "running", host.extension("guard").error
            async with ControlServer(host):
                for index in range(calls):
                    sides = [("floor", floor), ("imports", imports), ("warm", command)]
                    for name, argv in sides if index % 2 == 0 else reversed(sides):
                        seconds, out = await _timed(argv, project, env, PAYLOAD)
                        assert name != "warm" or b'"deny"' in out, out
                        times[name].append(seconds)
        for _ in range(cold_calls):
            await cold()
            await first()
    finally:
        await _timed(stop, project, env, b"")  # a background host a failed call left running
        shutil.rmtree(runtime, ignore_errors=True)
    return times


def main(argv: list[str]) -> None:
    """Print the median (min-max) of each side, in milliseconds."""
    calls = int(argv[0]) if argv else 41
    cold_calls = int(argv[1]) if len(argv) > 1 else 5
    with tempfile.TemporaryDirectory() as temporary:
        times = asyncio.run(measure(Path(temporary), calls, cold_calls))
    labels = {
        "floor": "python -c pass (the floor)",
        "imports": "the hook command's imports alone",
        "warm": "hook claude PreToolUse, host running",
        "cold": "hook claude PreToolUse, no host (cold)",
        "first": "hook claude PreToolUse, background start",
    }
    for name, label in labels.items():
        values = [seconds * 1000 for seconds in times[name]]
        print(
            f"{label:42} {statistics.median(values):7.1f} ms ({min(values):.1f}-{max(values):.1f}, {len(values)} calls)"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
