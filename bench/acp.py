"""``extensions acp``'s side: the same turn as :mod:`bench.serve`'s, through an ACP client on stdio.

:func:`acp_turns` times one-tool-call turns (the scripted agent of :data:`bench.serve.TURN`)
through ``extensions acp --agent scripted:FILE`` in a child, from writing ``session/prompt`` to
reading its answer, with every ``session/update`` before it read and decoded, as an editor
would: whatever arrived is read at once and split into lines, each decoded (a line at a time
through the stream's ``readline`` cost the client more than the decoding). The same turn
through ``host.send_and_wait`` is :func:`bench.serve.api_turns`.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections import deque
from pathlib import Path
from typing import Any

from extension_host.launch.interpreter import python_command

from .host import CALL_TIMEOUT
from .serve import TURN

_READ = 1024 * 1024
"""Bytes asked of the pipe per read: whatever has arrived."""


async def acp_turns(project: Path, home: Path, turns: int) -> list[float]:
    """Seconds of each turn through ``extensions acp``: ``session/prompt`` to its answer."""
    home.mkdir(parents=True, exist_ok=True)
    script = home / "bench-acp-script.json"
    script.write_text(json.dumps([TURN] * turns), encoding="utf-8")
    env = {**os.environ, "EXTENSION_HOST_TRUST_PROJECT": "1"}
    command = python_command("-m", "extension_host", "--home", str(home), "acp", "--agent", f"scripted:{script}")
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=env,
        start_new_session=True,
        limit=64 * 1024 * 1024,
    )
    assert process.stdin is not None and process.stdout is not None
    reader, writer = process.stdout, process.stdin
    lines: deque[bytes] = deque()
    rest = b""

    async def call(request_id: int, method: str, params: dict[str, Any]) -> Any:
        nonlocal rest
        writer.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode())
        writer.write(b"\n")
        while True:
            while not lines:
                chunk = await reader.read(_READ)
                if not chunk:
                    raise RuntimeError(f"{method}: extensions acp closed its output")
                parts = (rest + chunk).split(b"\n")
                rest = parts.pop()  # the start of a line still to come
                lines.extend(parts)
            message = json.loads(lines.popleft())
            if message.get("id") == request_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(f"{method} failed: {message['error']}")
                return message["result"]

    try:
        async with asyncio.timeout(CALL_TIMEOUT * 4):
            await call(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
            session = await call(2, "session/new", {"cwd": str(project), "mcpServers": []})
            times = []
            for number in range(turns):
                prompt = [{"type": "text", "text": "go"}]
                started = time.perf_counter()
                answer = await call(3 + number, "session/prompt", {"sessionId": session["sessionId"], "prompt": prompt})
                times.append(time.perf_counter() - started)
                if answer.get("stopReason") != "end_turn":
                    raise RuntimeError(f"an ACP turn ended with {answer}")
            return times
    finally:
        writer.close()
        async with asyncio.timeout(30):
            await process.wait()
