"""``python -m bench``: measure the host against the raw pipe floor, in one run, interleaved.

Each comparison runs its two sides alternately (A B, B A, ...) so that drift of a shared,
noisy machine hits both. Figures are medians with the min-max over runs; ratios are computed
per run and then summarised. Every process started here is stopped before the next run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import textwrap
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from extension_host import ExtensionHost
from sdk_extension.framing import encode_message, read_message

FLOOR_CHILD = textwrap.dedent(
    """
    import asyncio, json, sys

    async def main():
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout.buffer)
        while True:
            try:
                header = await reader.readuntil(b"\\r\\n\\r\\n")
            except asyncio.IncompleteReadError:
                return
            message = json.loads(await reader.readexactly(int(header.split(b":")[1])))
            body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": message["params"]}).encode()
            transport.write(b"Content-Length: %d\\r\\n\\r\\n%s" % (len(body), body))

    asyncio.run(main())
    """
)
"""The floor: a bare asyncio child (no SDK imported) with the same framing, answering at once."""

ECHO_EXTENSION = textwrap.dedent(
    """
    from sdk_extension import join_session, tool

    @tool(description="Echo the text back")
    async def echo{index}(text: str) -> str:
        return text

    join_session(tools=[echo{index}])
    """
)


HOOK_EXTENSION = textwrap.dedent(
    """
    from sdk_extension import join_session

    def pre(input, invocation):
        return None

    def post(input, invocation):
        return None

    join_session(hooks={"on_pre_tool_use": pre, "on_post_tool_use": post})
    """
)
"""A second extension with one pre and one post hook that have no opinion."""


def summary(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


async def floor_calls(count: int) -> list[float]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", FLOOR_CHILD, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    assert process.stdin and process.stdout
    times = []
    try:
        for index in range(count):
            started = time.perf_counter()
            process.stdin.write(encode_message({"jsonrpc": "2.0", "id": index, "method": "echo", "params": {"text": "hi"}}))
            await read_message(process.stdout)
            times.append(time.perf_counter() - started)
    finally:
        process.stdin.close()
        await process.wait()
    return times


async def floor_start() -> float:
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", FLOOR_CHILD, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    assert process.stdin and process.stdout
    process.stdin.write(encode_message({"jsonrpc": "2.0", "id": 0, "method": "echo", "params": {}}))
    await read_message(process.stdout)
    elapsed = time.perf_counter() - started
    process.stdin.close()
    await process.wait()
    return elapsed


def make_project(root: Path, extensions: int, *, hooks: bool = False) -> Path:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for index in range(extensions):
        folder = root / ".github" / "extensions" / f"echo{index:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "extension.py").write_text(ECHO_EXTENSION.format(index=index), encoding="utf-8")
    if hooks:
        folder = root / ".github" / "extensions" / "hooks"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "extension.py").write_text(HOOK_EXTENSION, encoding="utf-8")
    return root


async def empty_hook_point(count: int) -> list[float]:
    """Seconds per run of a hook point nobody implements (what every call pays twice)."""
    from datetime import datetime, timezone

    from extension_host.events import EventLog
    from extension_host.hooks import HookRunner
    from sdk_extension.hooks import PreToolUseInput

    runner = HookRunner(EventLog(), session_id="bench", cwd="/")
    value = PreToolUseInput(timestamp=datetime.now(timezone.utc), cwd="/", tool_name="echo", tool_args={})
    times = []
    for _ in range(count):
        started = time.perf_counter()
        await runner.run("on_pre_tool_use", value)
        times.append(time.perf_counter() - started)
    return times


async def host_calls(project: Path, home: Path, count: int) -> list[float]:
    async with ExtensionHost(project, home) as host:
        times = []
        for _ in range(count):
            started = time.perf_counter()
            await host.call_tool("echo0", {"text": "hi"})
            times.append(time.perf_counter() - started)
    return times


async def host_start(project: Path, home: Path) -> float:
    host = ExtensionHost(project, home)
    started = time.perf_counter()
    await host.start()
    elapsed = time.perf_counter() - started
    running = sum(info.status == "running" for info in host.extensions)
    await host.stop()
    if running != len(host.extensions):
        raise RuntimeError(f"only {running} of {len(host.extensions)} extensions ran")
    return elapsed


def reload_extension_code(version: int) -> str:
    return ECHO_EXTENSION.format(index=0).replace("return text", f"return text + '-{version}'")


async def save_to_answer(project: Path, home: Path, saves: int) -> list[float]:
    """Seconds from writing a new extension.py to the new version answering a call."""
    entry = project / ".github" / "extensions" / "echo00" / "extension.py"
    entry.write_text(reload_extension_code(0), encoding="utf-8")
    times = []
    async with ExtensionHost(project, home, stop_grace=2) as host:
        for version in range(1, saves + 1):
            reloaded = asyncio.Event()

            def listen(event: Any, reloaded: asyncio.Event = reloaded) -> None:
                if event["type"] == "session.extensions_loaded" and any(
                    change["action"] == "reloaded" for change in event["data"].get("changes", [])
                ):
                    reloaded.set()

            stop = host.on_event(listen)
            started = time.perf_counter()
            entry.write_text(reload_extension_code(version), encoding="utf-8")
            async with asyncio.timeout(30):
                await reloaded.wait()
            result = await host.call_tool("echo0", {"text": "v"})
            times.append(time.perf_counter() - started)
            stop()
            if result.text_result_for_llm != f"v-{version}":
                raise RuntimeError(f"version {version} did not answer: {result.text_result_for_llm}")
    return times


async def interleaved(
    runs: int, a: Callable[[], Awaitable[Any]], b: Callable[[], Awaitable[Any]]
) -> tuple[list[Any], list[Any]]:
    first, second = [], []
    for run in range(runs):
        if run % 2:
            second.append(await b())
            first.append(await a())
        else:
            first.append(await a())
            second.append(await b())
    return first, second


def per_call(runs: list[list[float]], warmup: int) -> dict[str, Any]:
    medians = [statistics.median(run[warmup:]) * 1e6 for run in runs]
    tails = [sorted(run[warmup:])[int(len(run[warmup:]) * 0.99)] * 1e6 for run in runs]
    return {"us": summary(medians), "p99_us": statistics.median(tails)}


async def main(quick: bool) -> dict[str, Any]:
    runs = 3 if quick else 7
    calls = 300 if quick else 3000
    warmup = calls // 10
    with tempfile.TemporaryDirectory(prefix="extension-host-bench-") as temp:
        base = Path(temp)
        one = make_project(base / "one", 1)
        many = make_project(base / "many", 20)
        home = base / "home"
        results: dict[str, Any] = {}

        floor_runs, host_runs = await interleaved(runs, lambda: floor_calls(calls), lambda: host_calls(one, home, calls))
        results["round_trip"] = {
            "floor": per_call(floor_runs, warmup),
            "host.call_tool": per_call(host_runs, warmup),
            "ratio": summary(
                [statistics.median(h[warmup:]) / statistics.median(f[warmup:]) for f, h in zip(floor_runs, host_runs)]
            ),
        }
        hooked = make_project(base / "hooked", 1, hooks=True)
        floor_runs, hook_runs = await interleaved(
            runs, lambda: floor_calls(calls), lambda: host_calls(hooked, home, calls)
        )
        results["round_trip_with_hooks"] = {
            "floor": per_call(floor_runs, warmup),
            "host.call_tool": per_call(hook_runs, warmup),
            "ratio": summary(
                [statistics.median(h[warmup:]) / statistics.median(f[warmup:]) for f, h in zip(floor_runs, hook_runs)]
            ),
        }
        results["empty_hook_point"] = per_call([await empty_hook_point(calls * 10) for _ in range(runs)], warmup)
        bare, single = await interleaved(runs * 2, floor_start, lambda: host_start(one, home))
        results["start_one"] = {
            "bare_asyncio_child_ms": summary([x * 1e3 for x in bare]),
            "extension_running_ms": summary([x * 1e3 for x in single]),
            "ratio": summary([s / b for b, s in zip(bare, single)]),
        }
        twenty = [await host_start(many, home) for _ in range(runs)]
        results["start_twenty_ms"] = summary([x * 1e3 for x in twenty])
        reloads = await save_to_answer(make_project(base / "reload", 1), home, runs * 3)
        results["save_to_answer_ms"] = summary([x * 1e3 for x in reloads])
    return results


def report(results: dict[str, Any]) -> str:
    def fmt(s: dict[str, float], unit: str = "") -> str:
        return f"{s['median']:.1f}{unit} ({s['min']:.1f}-{s['max']:.1f})"

    rt = results["round_trip"]
    hk = results["round_trip_with_hooks"]
    st = results["start_one"]
    return "\n".join(
        [
            "what                                   median (min-max over runs)",
            f"raw pipe round trip (floor)            {fmt(rt['floor']['us'], ' us')}  p99 {rt['floor']['p99_us']:.0f} us",
            f"host.call_tool, sequential             {fmt(rt['host.call_tool']['us'], ' us')}  p99 {rt['host.call_tool']['p99_us']:.0f} us",
            f"  ratio to the floor                   {fmt(rt['ratio'], 'x')}",
            f"call_tool with pre+post hooks (2nd ext) {fmt(hk['host.call_tool']['us'], ' us')}  p99 {hk['host.call_tool']['p99_us']:.0f} us",
            f"  ratio to the floor                   {fmt(hk['ratio'], 'x')}",
            f"a hook point nobody implements         {fmt(results['empty_hook_point']['us'], ' us')}",
            f"bare asyncio child: spawn to reply     {fmt(st['bare_asyncio_child_ms'], ' ms')}",
            f"one extension: spawn to running        {fmt(st['extension_running_ms'], ' ms')}",
            f"  ratio to the bare child              {fmt(st['ratio'], 'x')}",
            f"20 extensions: all running             {fmt(results['start_twenty_ms'], ' ms')}",
            f"hot reload: save to new version answers {fmt(results['save_to_answer_ms'], ' ms')}",
        ]
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few runs, for a smoke check")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    options = parser.parse_args()
    figures = asyncio.run(main(options.quick))
    print(report(figures))
    if options.json:
        options.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")
