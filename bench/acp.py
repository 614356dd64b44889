"""``extensions acp``'s side: the same turn as :mod:`bench.serve`'s through an ACP client on stdio, and its floor.

:func:`acp_turns` times one-tool-call turns (the scripted agent of :data:`bench.serve.TURN`)
through ``extensions acp --agent scripted:FILE`` in a child, from writing ``session/prompt`` to
holding its decoded answer, with every ``session/update`` before it read and decoded. The same
turn through ``host.send_and_wait`` is :func:`bench.serve.api_turns`.

The client (:class:`_Client`) is as cheap as an editor's, and all of it counts against the
agent: each request goes out in one write; the child's stdout is read in 64 KiB reads handed
over as they arrive (:class:`~extension_protocol.pipes.PipeReader`, as the host reads its
extensions; asyncio's pipe transport asks for 256 KiB per read, which costs a fresh ``mmap``
each time); each line is decoded as it comes (the standard library's ``json``), and only the
task awaiting the answer is woken. An answer that comes with fewer than
:data:`UPDATES_PER_TURN` updates before it fails the run: a turn that lost some must not look
faster.

:func:`echo_turns` is the floor: the same client against a bare asyncio child on stdio
(:data:`ECHO_CHILD`, no SDK and no host) that answers each prompt, after parsing it, with the
lines a turn of ``extensions acp`` sent (kept by :func:`acp_turns`) and the answer, in one
write: what the pipe, the wake-ups of both processes and the client's decoding cost with
nothing behind them.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any, Final

from extension_protocol.pipes import PipeReader

from .host import CALL_TIMEOUT
from .procs import piped_child
from .serve import TURN

__all__ = ["ECHO_CHILD", "UPDATES_PER_TURN", "acp_turns", "echo_turns"]

UPDATES_PER_TURN: Final = 5
"""Updates a turn of :data:`~bench.serve.TURN` sends at least before its answer: the text, the
tool call, its start, its end and the last text."""

ECHO_CHILD: Final = """
import asyncio, json, os, sys

RESULT = {"sessionId": "echo", "stopReason": "end_turn"}

async def main():
    with open(sys.argv[1], "rb") as file:
        updates = file.read()  # a turn's update lines, each ending in a newline
    stdin, stdout = sys.stdin.fileno(), sys.stdout.fileno()
    os.set_blocking(stdin, False)
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    rest = b""

    def readable():
        nonlocal rest
        data = os.read(stdin, 65536)
        if not data:
            loop.remove_reader(stdin)
            done.set_result(None)
            return
        lines = (rest + data).split(b"\\n")
        rest = lines.pop()
        out = []
        for line in lines:
            request = json.loads(line)
            if request.get("method") == "session/prompt":
                out.append(updates)
            out.append(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": RESULT}).encode() + b"\\n")
        if out:
            os.write(stdout, b"".join(out))

    loop.add_reader(stdin, readable)
    await done

asyncio.run(main())
"""
"""The floor's child: answers every request at once, a prompt after a turn's updates."""


class _Client:
    """An ACP client of one child (see the module): requests one at a time, each awaited."""

    def __init__(self, process: asyncio.subprocess.Process, stdout: PipeReader) -> None:
        assert process.stdin is not None
        self._stdin = process.stdin
        self._rest = b""
        self._waiting: tuple[int, asyncio.Future[dict[str, Any]]] | None = None
        self.updates: list[bytes] = []
        """The update lines that came since the last request was sent."""
        stdout.deliver_to(self._data, self._end)

    def _data(self, chunk: bytes) -> None:
        lines = (self._rest + chunk).split(b"\n") if self._rest else chunk.split(b"\n")
        self._rest = lines.pop()  # the start of a line still to come
        for line in lines:
            message = json.loads(line)
            if "method" in message:
                if message["method"] == "session/update":
                    self.updates.append(line)
            elif self._waiting is not None and message.get("id") == self._waiting[0]:
                self._waiting[1].set_result(message)
                self._waiting = None

    def _end(self, error: Exception | None) -> None:
        if self._waiting is not None:
            self._waiting[1].set_exception(RuntimeError(f"the agent closed its output ({error or 'end of file'})"))
            self._waiting = None

    async def call(self, request_id: int, method: str, params: dict[str, Any]) -> Any:
        """Send one request and return its result once its answer is decoded."""
        future = asyncio.get_running_loop().create_future()
        self._waiting = (request_id, future)
        self.updates = []
        request = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        self._stdin.write(json.dumps(request).encode() + b"\n")
        answer = await future
        if "error" in answer:
            raise RuntimeError(f"{method} failed: {answer['error']}")
        return answer["result"]


async def _turns(
    args: tuple[str, ...], env: dict[str, str] | None, project: Path, turns: int
) -> tuple[list[float], bytes]:
    """Seconds of each prompt's turn through the child ``args``, and the update lines of its last."""
    async with piped_child(*args, env=env, wait=30) as (process, stdout):
        client = _Client(process, stdout)
        async with asyncio.timeout(CALL_TIMEOUT * 4):
            await client.call(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
            session = await client.call(2, "session/new", {"cwd": str(project), "mcpServers": []})
            times = []
            for number in range(turns):
                params = {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "go"}]}
                started = time.perf_counter()
                answer = await client.call(3 + number, "session/prompt", params)
                times.append(time.perf_counter() - started)
                if answer.get("stopReason") != "end_turn":
                    raise RuntimeError(f"an ACP turn ended with {answer}")
                if len(client.updates) < UPDATES_PER_TURN:
                    raise RuntimeError(f"an ACP turn's answer came after {len(client.updates)} updates")
            return times, b"".join(line + b"\n" for line in client.updates)


async def acp_turns(project: Path, home: Path, turns: int, keep: list[bytes] | None = None) -> list[float]:
    """Seconds of each turn through ``extensions acp``: ``session/prompt`` to its answer. The
    update lines of its last turn replace what ``keep`` holds (for :func:`echo_turns`)."""
    home.mkdir(parents=True, exist_ok=True)
    script = home / "bench-acp-script.json"
    script.write_text(json.dumps([TURN] * turns), encoding="utf-8")
    env = {**os.environ, "EXTENSION_HOST_TRUST_PROJECT": "1"}
    args = ("-m", "extension_host", "--home", str(home), "acp", "--agent", f"scripted:{script}")
    times, updates = await _turns(args, env, project, turns)
    if keep is not None:
        keep[:] = [updates]
    return times


async def echo_turns(project: Path, home: Path, turns: int, updates: bytes) -> list[float]:
    """Seconds of each turn through :data:`ECHO_CHILD` answering with ``updates`` (see the module)."""
    home.mkdir(parents=True, exist_ok=True)
    lines = home / "bench-acp-echo-updates.jsonl"
    lines.write_bytes(updates)
    times, _ = await _turns(("-c", ECHO_CHILD, str(lines)), None, project, turns)
    return times
