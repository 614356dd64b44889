"""The MCP bridge's side: ``extensions mcp`` serving a project with one echo extension, called by the
MCP SDK's own stdio client exactly as :mod:`.mcp_sdk` calls a plain MCP SDK server.

A ``tools/call`` here crosses the client, the bridge (the SDK's server in front of
``host.call_tool``), the host's pipeline and the extension's pipe; the plain server answers
in-process. Needs the ``bench`` (or ``mcp``) extra, as :mod:`.mcp_sdk` does.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from extension_host.project.trust import TRUST_ENV

from .mcp_sdk import STEP_TIMEOUT, McpServer
from .stats import timed_calls


def bridge_server(project: Path, home: Path) -> McpServer:
    """``extensions mcp`` for ``project`` (trusted), as an MCP client would start it."""
    args = ["-m", "extension_host", "--root", str(project), "--home", str(home), "mcp"]
    return McpServer(project, module_args=args, env={**os.environ, TRUST_ENV: "1"}, tool="echo0")


async def bridge_calls(project: Path, home: Path, count: int) -> list[float]:
    """Seconds of each of ``count`` sequential MCP ``tools/call`` of ``echo0`` through the bridge."""
    server = bridge_server(project, home)
    try:
        await server.start()
        async with asyncio.timeout(STEP_TIMEOUT):
            return await timed_calls(server.echo, count)
    finally:
        await server.stop()


async def plain_calls(script: Path, count: int) -> list[float]:
    """The same, against the plain MCP SDK server of :mod:`.mcp_sdk` (its ``echo``)."""
    server = McpServer(script)
    try:
        await server.start()
        async with asyncio.timeout(STEP_TIMEOUT):
            return await timed_calls(server.echo, count)
    finally:
        await server.stop()
