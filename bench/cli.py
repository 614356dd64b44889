"""What an ``extensions`` command costs from start to exit, as a ratio to ``python -c pass``.

Six sides, each a whole process timed from spawn to exit, interleaved round by round (the
order rotates each round) so that drift of a shared machine hits all of them:

- the floor: the same interpreter running ``-c pass``, which no command can beat;
- the stack: the same interpreter importing asyncio and pydantic and validating one small
  model (:data:`STACK`), which no command that starts an extension can beat: the host runs on
  asyncio and validates what an extension sends with pydantic;
- ``extensions --help`` and ``extensions --version``: the parser alone;
- ``extensions list`` in a project with one extension and no host: it starts the extension once;
- ``extensions call echo0 '{"text": "hi"}'`` with a host running for the project (an in-process
  :class:`ExtensionHost` with its :class:`ControlServer`): the command asks that host.

Each ratio is computed inside its round (side / floor of the same round). The children may
write bytecode (``PYTHONDONTWRITEBYTECODE`` is dropped for them), as an installed package's
modules are compiled once. Every answer is checked, so a broken command fails the scenario
instead of being timed. Run: ``python -m bench --only cli`` (``--quick``: 10 rounds).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from extension_host import ExtensionHost
from extension_host.control.service import ControlServer

from .host import CALL_TIMEOUT, make_project

__all__ = ["SIDES", "STACK", "TARGETS", "measure"]

SIDES = ("floor", "stack", "help", "version", "list", "call")
"""Every side, in the order of the first round."""
TARGETS = {"help": 3.0, "version": 3.0, "list": 12.0, "call": 6.0}
"""The most each side may take, in floors (``python -c pass`` of the same round)."""
STACK = (
    "import asyncio, pydantic\n"
    "class Joined(pydantic.BaseModel):\n"
    "    name: str\n"
    "    tools: list[str] = []\n"
    "print(Joined.model_validate({'name': 'echo00', 'tools': ['echo0']}).name)\n"
)
"""What the stack side runs: the least a host's process does before it can take a join."""


async def _timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, int, bytes]:
    """Seconds from spawn to exit, the exit code and stdout of one command."""
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        async with asyncio.timeout(CALL_TIMEOUT):
            out, _ = await process.communicate()
    except TimeoutError:
        process.kill()
        await process.wait()
        raise RuntimeError(f"{' '.join(argv)} took more than {CALL_TIMEOUT:g} s") from None
    return time.perf_counter() - started, process.returncode or 0, out


async def measure(base: Path, home: Path, rounds: int) -> dict[str, list[float]]:
    """Seconds per round of each side of :data:`SIDES`."""
    served = make_project(base / "cli_call", 1)
    cold = make_project(base / "cli_list", 1)
    runtime = base / "cli_runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = {
        **{name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"},
        "EXTENSION_HOST_HOME": str(home),
        "EXTENSION_HOST_RUNTIME_DIR": str(runtime),
        "EXTENSION_HOST_TRUST_PROJECT": "1",
    }
    command = str(Path(sys.executable).parent / "extensions")
    sides: dict[str, tuple[list[str], Path, bytes]] = {
        # -P: the floor imports nothing from the folder it runs in, as the console script does not
        "floor": ([sys.executable, "-P", "-c", "pass"], cold, b""),
        "stack": ([sys.executable, "-P", "-c", STACK], cold, b"echo00"),
        "help": ([command, "--help"], cold, b"usage: extensions"),
        "version": ([command, "--version"], cold, b"extensions "),
        "list": ([command, "list"], cold, b"echo00"),
        "call": ([command, "call", "echo0", '{"text": "hi"}'], served, b"hi"),
    }
    times: dict[str, list[float]] = {name: [] for name in SIDES}
    previous = os.environ.get("EXTENSION_HOST_RUNTIME_DIR")
    os.environ["EXTENSION_HOST_RUNTIME_DIR"] = str(runtime)  # where this process's server listens
    try:
        async with ExtensionHost(served, home, trust=True, watch=False) as host:
            if host.extension("echo00").status != "running":
                raise RuntimeError(f"the served extension did not start: {host.extension('echo00').error}")
            async with ControlServer(host):
                for index in range(rounds):
                    order = SIDES[index % len(SIDES) :] + SIDES[: index % len(SIDES)]
                    for name in order:
                        argv, cwd, expected = sides[name]
                        seconds, code, out = await _timed(argv, cwd, env)
                        if code != 0 or expected not in out:
                            raise RuntimeError(f"{' '.join(argv[1:])} exited {code} and printed {out[:200]!r}")
                        times[name].append(seconds)
    finally:
        if previous is None:
            os.environ.pop("EXTENSION_HOST_RUNTIME_DIR", None)
        else:
            os.environ["EXTENSION_HOST_RUNTIME_DIR"] = previous
    return times
