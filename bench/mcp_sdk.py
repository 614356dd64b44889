"""The anchor: the official MCP Python SDK (mcp 2.x) over stdio, serving the same trivial tool.

Server: ``MCPServer`` (mcp 2.x's name for what 1.x called ``FastMCP``) with one ``async`` tool
``echo(text) -> str``, run with ``server.run()`` (stdio). Client: ``stdio_client`` and
``ClientSession`` from the same package. Measured: calls (sequential and in flight on one
session), start (spawn -> ``initialize`` -> ``tools/list``, which is when a client knows the
tools, as a host knows them when an extension is running), restart for a changed file, and
the memory of an idle initialized server. Needs the ``bench`` extra
(``pip install -e '.[bench]'``); :func:`unavailable` says why it cannot run otherwise.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import os
import time
import uuid
from pathlib import Path
from typing import Any

from extension_host.launch.interpreter import python_command

from .procs import children_of, command_line, kill_group, memory_mib
from .stats import in_flight, timed_calls

MCP_SERVER = """
from mcp.server.mcpserver import MCPServer

server = MCPServer("bench-echo")

@server.tool(description="Echo the text back")
async def echo(text: str) -> str:
    return text{suffix}

server.run()
"""
"""An MCP server with one trivial async tool (sync tools would run on a worker thread)."""

STEP_TIMEOUT = 120.0
"""Seconds a start or stop may take (20 servers at once take several seconds here)."""


def unavailable() -> str | None:
    """Why the MCP scenarios cannot run, or ``None`` when mcp 2.x is installed."""
    try:
        version = importlib.metadata.version("mcp")
    except importlib.metadata.PackageNotFoundError:
        return "mcp is not installed (pip install -e '.[bench]')"
    if int(version.split(".")[0]) < 2:
        return f"mcp {version} is installed; the bench needs mcp>=2 (pip install -e '.[bench]')"
    return None


def mcp_version() -> str | None:
    """The installed mcp version, if any."""
    try:
        return importlib.metadata.version("mcp")
    except importlib.metadata.PackageNotFoundError:
        return None


def write_server(path: Path, version: int | None = None) -> Path:
    """Write the echo server to ``path``; with ``version`` it answers ``text-<version>``."""
    suffix = "" if version is None else f" + '-{version}'"
    path.write_text(MCP_SERVER.format(suffix=suffix), encoding="utf-8")
    return path


class McpServer:
    """One MCP stdio server and its initialized ``ClientSession``.

    The session lives in a task of its own because the SDK's context managers (anyio task
    groups) must be left by the task that entered them; calls may come from any task.
    """

    def __init__(
        self,
        script: Path,
        *,
        list_tools: bool = True,
        module_args: list[str] | None = None,
        env: dict[str, str] | None = None,
        tool: str = "echo",
    ) -> None:
        """``module_args`` run ``python ARGS`` instead of the script (``-m extension_host ... mcp``),
        with ``env`` as its environment; ``tool`` is the echo tool's name there."""
        self.script = script
        self.session: Any = None
        self._module_args = module_args
        self._env = env
        self._tool = tool
        # A unique argument, so this server's pid can be told apart from its siblings'.
        self._marker = f"--bench-{uuid.uuid4().hex}"
        self._list_tools = list_tools
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._error: BaseException | None = None
        self._task: asyncio.Task[None] | None = None

    async def _serve(self) -> None:
        from mcp import ClientSession, StdioServerParameters, stdio_client

        if self._module_args is None:
            command, *args = python_command(str(self.script), self._marker)
        else:  # the marker as an interpreter option, which a command's own parser never sees
            command, *args = python_command(f"-X{self._marker}", *self._module_args)
        params = StdioServerParameters(command=command, args=args, env=self._env)
        try:
            # The server logs a line per request to stderr; the host sends extensions' stderr to
            # a file, so neither side pays a terminal.
            with open(os.devnull, "w") as devnull:
                async with (
                    stdio_client(params, errlog=devnull) as (read, write),
                    ClientSession(read, write) as session,
                ):
                    await session.initialize()
                    if self._list_tools:
                        await session.list_tools()
                    self.session = session
                    self._ready.set()
                    await self._stop.wait()
        except BaseException as exc:
            self._error = exc
            raise
        finally:
            self._ready.set()

    async def start(self) -> float:
        """Spawn and initialize (and list tools); return the seconds it took."""
        started = time.perf_counter()
        self._task = asyncio.ensure_future(self._serve())
        try:
            async with asyncio.timeout(STEP_TIMEOUT):
                await self._ready.wait()
        except TimeoutError:
            await self.stop()
            raise RuntimeError(f"the MCP server did not initialize within {STEP_TIMEOUT:g} s") from None
        if self._error is not None or self.session is None:
            raise RuntimeError(f"the MCP server failed to start: {self._error!r}")
        return time.perf_counter() - started

    async def call(self, text: str = "hi") -> str:
        """Call ``echo`` once and return its text."""
        result = await self.session.call_tool(self._tool, {"text": text})
        answer: str = result.content[0].text
        return answer

    async def echo(self) -> None:
        """Call ``echo`` once and check the answer."""
        if await self.call("hi") != "hi":
            raise RuntimeError("the MCP server answered something else")

    def pid(self) -> int:
        """The server's pid (found in /proc by this server's marker argument)."""
        for pid in children_of(os.getpid()):
            if self._marker in command_line(pid):
                return pid
        raise RuntimeError("the MCP server process is not running")

    async def stop(self) -> None:
        """Leave the session and the stdio client (which stops the server); kill it if that hangs."""
        task, self._task = self._task, None
        if task is None:
            return
        self._stop.set()
        try:
            async with asyncio.timeout(STEP_TIMEOUT):
                await task
        except TimeoutError:
            task.cancel()
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # we are being cancelled, not just the server's task
        except Exception:
            pass  # start() reported it already; all that is left is to make sure the process goes
        finally:
            for pid in children_of(os.getpid()):
                if self._marker in command_line(pid):
                    kill_group(pid)


async def mcp_calls(script: Path, count: int, warmup: int, calls: int, width: int) -> tuple[list[float], float]:
    """One server: sequential call times, then calls per second with ``width`` in flight."""
    server = McpServer(script)
    try:
        await server.start()
        async with asyncio.timeout(STEP_TIMEOUT):
            sequential = await timed_calls(server.echo, count)
            await in_flight(server.echo, warmup, width)
            return sequential, calls / await in_flight(server.echo, calls, width)
    finally:
        await server.stop()


async def mcp_start_many(script: Path, count: int) -> float:
    """Seconds from spawning ``count`` servers together until every one is initialized and listed."""
    servers = [McpServer(script) for _ in range(count)]
    try:
        started = time.perf_counter()
        await asyncio.gather(*(server.start() for server in servers))
        return time.perf_counter() - started
    finally:
        await asyncio.gather(*(server.stop() for server in servers))


class RestartingServer:
    """A server that is restarted for every change of its file: the MCP way to hot reload."""

    def __init__(self, script: Path) -> None:
        self.script = script
        self.server: McpServer | None = None

    async def start(self) -> None:
        """Write version 0 and start it."""
        write_server(self.script, 0)
        self.server = McpServer(self.script, list_tools=False)
        await self.server.start()

    async def change(self, version: int) -> float:
        """Seconds from writing ``version`` to it answering: stop, start, initialize, call."""
        started = time.perf_counter()
        write_server(self.script, version)
        if self.server is not None:
            await self.server.stop()
        self.server = McpServer(self.script, list_tools=False)
        await self.server.start()
        answer = await self.server.call("v")
        elapsed = time.perf_counter() - started
        if answer != f"v-{version}":
            raise RuntimeError(f"version {version} did not answer: {answer}")
        return elapsed

    async def stop(self) -> None:
        """Stop the running server, if any."""
        if self.server is not None:
            await self.server.stop()
            self.server = None


async def mcp_memory(script: Path, idle: float) -> dict[str, float]:
    """PSS/RSS (MiB) of an initialized server that answered one call and idled ``idle`` s."""
    server = McpServer(script)
    try:
        await server.start()
        await server.echo()
        await asyncio.sleep(idle)
        return memory_mib(server.pid())
    finally:
        await server.stop()
