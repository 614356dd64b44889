"""The extension host's side: tool calls (sequential, in flight, through hooks, built-in), starts,
hot reloads and the memory of an idle extension.

Each function starts its own :class:`ExtensionHost` on a throwaway project and stops it before
it returns (``async with``: the host's stop ladder ends every extension it started, even on
error). Extensions here are the smallest real ones: one ``echo`` tool, or one pre and one post
hook with no opinion.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import UTC
from pathlib import Path
from typing import Any

from extension_host import ExtensionHost, ReloadBudget, Timeouts
from sdk_extension import tool

from .procs import command_line, memory_mib, parent_pid
from .stats import in_flight, timed_calls

ECHO_EXTENSION = """
from sdk_extension import join_session, tool

@tool(description="Echo the text back")
async def echo{index}(text: str) -> str:
    return text

join_session(tools=[echo{index}])
"""
"""An extension with one trivial tool, ``echo<index>``."""

HOOK_EXTENSION = """
from sdk_extension import join_session

async def pre(input, invocation):
    return None

async def post(input, invocation):
    return None

join_session(hooks={"on_pre_tool_use": pre, "on_post_tool_use": post})
"""
"""A second extension with one pre and one post hook that have no opinion: ``async def``, as the
issue's target says (a plain ``def`` hook adds the SDK's hop to a worker thread and back)."""

CALL_TIMEOUT = 60.0
"""Seconds any one measured step may take before the scenario fails instead of hanging."""


def make_project(root: Path, extensions: int, *, hooks: bool = False) -> Path:
    """A project at ``root`` with ``extensions`` echo extensions (and the hook extension)."""
    (root / ".git").mkdir(parents=True, exist_ok=True)
    (root / ".github" / "extensions").mkdir(parents=True, exist_ok=True)
    for index in range(extensions):
        folder = root / ".github" / "extensions" / f"echo{index:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "extension.py").write_text(ECHO_EXTENSION.format(index=index), encoding="utf-8")
    if hooks:
        folder = root / ".github" / "extensions" / "hooks"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "extension.py").write_text(HOOK_EXTENSION, encoding="utf-8")
    return root


def _check_running(host: ExtensionHost) -> None:
    running = sum(info.status == "running" for info in host.extensions)
    if running != len(host.extensions):
        errors = "; ".join(f"{info.id}: {info.error}" for info in host.extensions if info.error)
        raise RuntimeError(f"only {running} of {len(host.extensions)} extensions ran ({errors})")


async def _echo(host: ExtensionHost) -> None:
    result = await host.call_tool("echo0", {"text": "hi"})
    if result.text_result_for_llm != "hi":
        raise RuntimeError(f"echo0 answered {result.result_type}: {result.text_result_for_llm}")


async def host_calls(project: Path, home: Path, count: int) -> list[float]:
    """Seconds of each of ``count`` sequential ``host.call_tool("echo0")``."""
    async with ExtensionHost(project, home, trust=True) as host:
        _check_running(host)
        async with asyncio.timeout(CALL_TIMEOUT):
            return await timed_calls(lambda: _echo(host), count)


async def host_in_flight(project: Path, home: Path, warmup: int, calls: int, width: int) -> float:
    """Calls per second of ``host.call_tool("echo0")`` with ``width`` calls in flight."""
    async with ExtensionHost(project, home, trust=True) as host:
        _check_running(host)
        async with asyncio.timeout(CALL_TIMEOUT):
            await in_flight(lambda: _echo(host), warmup, width)
            return calls / await in_flight(lambda: _echo(host), calls, width)


async def host_calls_both(
    project: Path, home: Path, count: int, warmup: int, calls: int, width: int
) -> tuple[list[float], float]:
    """One host: sequential call times, then calls per second with ``width`` in flight."""
    async with ExtensionHost(project, home, trust=True) as host:
        _check_running(host)
        async with asyncio.timeout(CALL_TIMEOUT):
            sequential = await timed_calls(lambda: _echo(host), count)
            await in_flight(lambda: _echo(host), warmup, width)
            return sequential, calls / await in_flight(lambda: _echo(host), calls, width)


async def empty_hook_point(count: int) -> list[float]:
    """Seconds per ``HookRunner.run`` of a hook point nobody implements."""
    from datetime import datetime

    from extension_host.events import EventLog
    from extension_host.hooks.runner import HookRunner
    from extension_protocol.hook_models import PreToolUseInput

    runner = HookRunner(EventLog(), session_id="bench", cwd="/")
    value = PreToolUseInput(timestamp=datetime.now(UTC), cwd="/", tool_name="echo", tool_args={})
    return await timed_calls(lambda: runner.run("on_pre_tool_use", value), count)


@tool(description="Echo the text back")
async def builtin_echo(text: str) -> str:
    """A built-in (in-process) tool of the embedding application."""
    return text


def _without_hook_points(host: ExtensionHost) -> None:
    """Make ``host`` pass calls through its hook points without looking for implementations.

    No public API builds a host without hook points, so the bench swaps the runner's ``run``
    and ``chain`` on this one instance for what a pipeline with no hook points would do: hand
    the arguments and the result through. What remains of the two hook points is building
    their inputs.
    """
    from extension_host.hooks.composition import Composition
    from extension_protocol.hook_points import HOOK_POINTS

    hooks = host._hooks  # private on purpose: see the docstring

    async def run(hook: str, base: Any, chain: Any = None, *, tool_call_id: str | None = None) -> Composition:
        rewrites = HOOK_POINTS[hook].rewrites
        return Composition(hook, getattr(base, rewrites) if rewrites else None)

    hooks.run = run  # type: ignore[method-assign]
    hooks.chain = lambda hook: []  # type: ignore[method-assign]
    hooks.chain_for = lambda hook, tool_name: []  # type: ignore[method-assign]


async def builtin_hook_points(project: Path, home: Path, blocks: int, block_calls: int) -> tuple[float, float]:
    """Seconds per ``host.call_tool`` of a built-in tool, no extensions: (with, without) hook points.

    Both hosts run at once; blocks of calls alternate A B / B A, and each side's figure is the
    median of its block means (a block of in-process calls is too short to time one by one).
    """
    async with AsyncExitStack() as stack:
        hosts = []
        for _ in range(2):
            host = ExtensionHost(project, home, trust=True, builtin_tools=[builtin_echo], watch=False)
            await stack.enter_async_context(host)
            hosts.append(host)
        _without_hook_points(hosts[1])
        return await interleaved_builtin_calls(hosts[0], hosts[1], blocks, block_calls)


async def interleaved_builtin_calls(
    a: ExtensionHost, b: ExtensionHost, blocks: int, block_calls: int
) -> tuple[float, float]:
    """Seconds per ``call_tool("builtin_echo")`` on ``a`` and on ``b``: after a warm-up block each,
    blocks alternate A B / B A, and each side's figure is the median of its block means."""

    async def block(host: ExtensionHost) -> float:
        started = time.perf_counter()
        for _ in range(block_calls):
            await host.call_tool("builtin_echo", {"text": "hi"})
        return (time.perf_counter() - started) / block_calls

    hosts = (a, b)
    for host in hosts:  # warm-up
        await block(host)
    sides: tuple[list[float], list[float]] = ([], [])
    for index in range(blocks):
        for side in (0, 1) if index % 2 == 0 else (1, 0):
            sides[side].append(await block(hosts[side]))
    return statistics.median(sides[0]), statistics.median(sides[1])


async def host_start(project: Path, home: Path) -> float:
    """Seconds of ``host.start()`` until every extension of ``project`` is running."""
    host = ExtensionHost(project, home, trust=True)
    try:
        started = time.perf_counter()
        async with asyncio.timeout(CALL_TIMEOUT):
            await host.start()
        elapsed = time.perf_counter() - started
        _check_running(host)
        return elapsed
    finally:
        await host.stop()


def reload_extension_code(version: int) -> str:
    """The echo extension, answering ``text-<version>``."""
    return ECHO_EXTENSION.format(index=0).replace("return text", f"return text + '-{version}'")


@asynccontextmanager
async def reloading_host(project: Path, home: Path) -> AsyncIterator[Callable[[int], Awaitable[float]]]:
    """A watching host on ``project``; yields ``save(version)``: seconds from writing version
    ``version`` of ``echo00/extension.py`` to that version answering a call."""
    entry = project / ".github" / "extensions" / "echo00" / "extension.py"
    entry.write_text(reload_extension_code(0), encoding="utf-8")
    # Saves come faster than a person makes them: the guard against an extension that writes
    # into its own folder (5 reloads in 10 s pause its watching) would stop the run.
    unlimited = ReloadBudget(reloads=1_000_000)
    async with ExtensionHost(
        project, home, trust=True, timeouts=Timeouts(stop_grace=2), reload_budget=unlimited
    ) as host:
        _check_running(host)

        async def save(version: int) -> float:
            reloaded = asyncio.Event()

            def listen(event: Any) -> None:
                if event["type"] == "session.extensions_loaded" and any(
                    change["action"] == "reloaded" for change in event["data"].get("changes", [])
                ):
                    reloaded.set()

            unsubscribe = host.on_event(listen)
            try:
                started = time.perf_counter()
                entry.write_text(reload_extension_code(version), encoding="utf-8")
                async with asyncio.timeout(CALL_TIMEOUT):
                    await reloaded.wait()
                    result = await host.call_tool("echo0", {"text": "v"})
                elapsed = time.perf_counter() - started
            finally:
                unsubscribe()
            if result.text_result_for_llm != f"v-{version}":
                raise RuntimeError(f"version {version} did not answer: {result.text_result_for_llm}")
            return elapsed

        yield save


async def extension_memory(project: Path, home: Path, idle: float) -> dict[str, float]:
    """PSS/RSS (MiB) of a joined extension that answered one call and then idled ``idle`` s,
    and (``server_pss``, ``server_rss``) of the fork server it was forked from, if it was."""
    async with ExtensionHost(project, home, trust=True) as host:
        _check_running(host)
        await _echo(host)
        await asyncio.sleep(idle)
        pid = host.extensions[0].pid
        if pid is None:
            raise RuntimeError("the running extension has no pid")
        reading = memory_mib(pid)
        server = parent_pid(pid)
        if "sdk_extension._forkserver" in " ".join(command_line(server)):
            reading.update({f"server_{kind}": value for kind, value in memory_mib(server).items()})
        return reading
