"""The scenarios of ``python -m bench``: each pits the host against the floor or the MCP SDK, in one run.

Each scenario returns figures (median and min-max over runs, after a warm-up) and, for every
comparison, a ratio computed inside each run from sides measured alternately (A B, B A).
Targets are the issue's goals for the medians. The MCP parts need the ``bench`` extra; without
it they are skipped with a note saying so, and the rest of the scenario still runs.
"""

from __future__ import annotations

import statistics
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from . import acp, cli, floor, host, mcp_bridge, mcp_sdk, serve_scale, session_log, subagent
from . import serve as served
from .stats import Figure, Target, figure, interleaved, ratios, rotated, run_medians, run_p99s


@dataclass(frozen=True, slots=True)
class Settings:
    """How much to measure: ``full`` for the README, ``quick`` for a look, ``smoke`` for the tests."""

    runs: int
    """Runs of each call comparison (a fresh child or host per run)."""
    calls: int
    """Sequential calls per run."""
    warmup: int
    """Calls dropped at the start of each run (and made before each in-flight measurement)."""
    in_flight_calls: int
    """Calls per in-flight measurement of the floor and the host."""
    mcp_in_flight_calls: int
    """Calls per in-flight measurement of the MCP server (fewer: each costs several times more)."""
    hook_point_blocks: int
    """Blocks of built-in calls per side and run (with / without hook points)."""
    hook_point_block_calls: int
    """Calls per block."""
    start_pairs: int
    """Bare child vs one extension start pairs."""
    start_counts: tuple[int, ...]
    """How many extensions (and MCP servers) start together."""
    start_runs: int
    """Runs per count."""
    reload_saves: int
    """Timed saves (and MCP restarts), after one warm-up each."""
    memory_rounds: int
    """Rounds of memory readings (one process of each kind per round)."""
    width: int = 8
    """Calls in flight."""
    idle: float = 0.3
    """Seconds a process idles before its memory is read."""
    warm: bool = True
    """Start and reload once, unmeasured, before the measured ones (smoke runs skip it)."""
    session_counts: tuple[int, ...] = (100, 200)
    """Sessions one ``serve`` process hosts, one server per count and run."""
    session_runs: int = 3
    """Runs of each count (each a fresh server: a run of 200 sessions takes ~15 s)."""
    paced_turns: int = 5
    """Paced turns per session, for the delivery latency."""
    cli_rounds: int = 15
    """Rounds of ``extensions`` commands (each round runs every command once, and the floor)."""


MODES = {
    "full": Settings(
        runs=7,
        calls=3000,
        warmup=300,
        in_flight_calls=15000,
        mcp_in_flight_calls=2000,
        hook_point_blocks=40,
        hook_point_block_calls=200,
        start_pairs=14,
        start_counts=(1, 5, 20),
        start_runs=5,
        reload_saves=15,
        memory_rounds=3,
    ),
    "quick": Settings(
        runs=3,
        calls=300,
        warmup=30,
        in_flight_calls=3000,
        mcp_in_flight_calls=300,
        hook_point_blocks=10,
        hook_point_block_calls=100,
        start_pairs=4,
        start_counts=(1, 5, 20),
        start_runs=2,
        reload_saves=4,
        memory_rounds=1,
        cli_rounds=10,
    ),
    "smoke": Settings(
        runs=1,
        calls=8,
        warmup=2,
        in_flight_calls=16,
        mcp_in_flight_calls=16,
        hook_point_blocks=2,
        hook_point_block_calls=5,
        start_pairs=1,
        start_counts=(1, 2),
        start_runs=1,
        reload_saves=1,
        memory_rounds=1,
        idle=0.05,
        warm=False,
        session_counts=(3,),
        session_runs=1,
        paced_turns=2,
        cli_rounds=1,
    ),
}


@dataclass(slots=True)
class Context:
    """What every scenario gets: settings, a scratch folder, the host's user home, MCP's state."""

    settings: Settings
    base: Path
    home: Path
    mcp_missing: str | None

    def project(self, name: str, extensions: int, *, hooks: bool = False) -> Path:
        """A fresh project under the scratch folder."""
        return host.make_project(self.base / name, extensions, hooks=hooks)

    def mcp_script(self, name: str) -> Path:
        """A fresh MCP echo server file under the scratch folder."""
        return mcp_sdk.write_server(self.base / f"{name}.py")


@dataclass(slots=True)
class Outcome:
    """A scenario's figures and notes (what was skipped, and why)."""

    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


US, MS, X, RATE, MIB, EVENTS = "µs", "ms", "x", "calls/s", "MiB", "events/s"


async def round_trip(ctx: Context) -> Outcome:
    """Sequential ``host.call_tool`` (no hooks) against the raw round trip of the floor child,
    and against a floor child called in Copilot CLI's shape (what the protocol costs by itself)."""
    s = ctx.settings
    one = ctx.project("round_trip", 1)

    async def floors_of_both_shapes() -> tuple[list[float], list[float]]:
        return await floor.floor_calls(s.calls), await floor.floor_cli_calls(s.calls)

    both, hosts = await interleaved(s.runs, floors_of_both_shapes, lambda: host.host_calls(one, ctx.home, s.calls))
    floors = [plain for plain, _ in both]
    f, h = run_medians(floors, s.warmup, 1e6), run_medians(hosts, s.warmup, 1e6)
    c = run_medians([shaped for _, shaped in both], s.warmup, 1e6)
    floor_p99s, host_p99s = run_p99s(floors, s.warmup, 1e6), run_p99s(hosts, s.warmup, 1e6)
    return Outcome(
        [
            figure("round_trip.floor_us", "raw round trip, bare asyncio child (floor)", US, f),
            figure("round_trip.floor_p99_us", "  p99 of those round trips", US, floor_p99s),
            figure("round_trip.cli_floor_us", "a tool call in Copilot CLI's shape, same child", US, c),
            figure("round_trip.cli_floor_ratio", "  CLI shape / floor", X, ratios(c, f)),
            figure("round_trip.host_us", "host.call_tool, sequential, no hooks", US, h),
            figure("round_trip.host_p99_us", "  p99 of those calls", US, host_p99s, Target("<=", 400)),
            figure("round_trip.ratio", "  host.call_tool / floor", X, ratios(h, f), Target("<=", 1.8)),
            figure(
                "round_trip.p99_ratio", "  p99 / the floor's p99", X, ratios(host_p99s, floor_p99s), Target("<=", 2.5)
            ),
            figure("round_trip.cli_ratio", "  host.call_tool / CLI-shaped floor", X, ratios(h, c)),
        ]
    )


async def in_flight(ctx: Context) -> Outcome:
    """``width`` calls in flight on one extension against the floor child answering concurrently."""
    s = ctx.settings
    one = ctx.project("in_flight", 1)

    async def floors_of_both_shapes() -> tuple[float, float]:
        plain = await floor.floor_in_flight(s.warmup, s.in_flight_calls, s.width)
        return plain, await floor.floor_cli_in_flight(s.warmup, s.in_flight_calls, s.width)

    both, hosts = await interleaved(
        s.runs,
        floors_of_both_shapes,
        lambda: host.host_in_flight(one, ctx.home, s.warmup, s.in_flight_calls, s.width),
    )
    floors, shaped = [plain for plain, _ in both], [cli for _, cli in both]
    return Outcome(
        [
            figure("in_flight.floor_rate", f"floor, {s.width} in flight", RATE, floors),
            figure("in_flight.cli_floor_rate", "  the same in Copilot CLI's call shape", RATE, shaped),
            figure(
                "in_flight.host_rate",
                f"host.call_tool, {s.width} in flight, one extension",
                RATE,
                hosts,
                Target(">=", 20000),
            ),
            figure("in_flight.ratio", "  host / floor calls/s", X, ratios(hosts, floors), Target(">=", 0.5)),
            figure("in_flight.cli_ratio", "  host / CLI-shaped floor calls/s", X, ratios(hosts, shaped)),
        ]
    )


async def hooks(ctx: Context) -> Outcome:
    """Sequential calls through one pre and one post hook of a second extension, against the floor."""
    s = ctx.settings
    hooked = ctx.project("hooks", 1, hooks=True)
    floors, hosts = await interleaved(
        s.runs, lambda: floor.floor_calls(s.calls), lambda: host.host_calls(hooked, ctx.home, s.calls)
    )
    f, h = run_medians(floors, s.warmup, 1e6), run_medians(hosts, s.warmup, 1e6)
    return Outcome(
        [
            figure("hooks.floor_us", "raw round trip (floor), same runs", US, f),
            figure("hooks.host_us", "host.call_tool, pre+post hook in a 2nd extension", US, h),
            figure("hooks.host_p99_us", "  p99 of those calls", US, run_p99s(hosts, s.warmup, 1e6)),
            figure("hooks.ratio", "  with hooks / floor", X, ratios(h, f), Target("<=", 4)),
        ]
    )


async def hook_point(ctx: Context) -> Outcome:
    """A hook point nobody implements: ``HookRunner.run`` alone, and inside ``call_tool`` of a built-in."""
    s = ctx.settings
    runner = [await host.empty_hook_point(s.calls * 10) for _ in range(s.runs)]
    empty = ctx.project("hook_point", 0)
    pairs = [
        await host.builtin_hook_points(empty, ctx.home, s.hook_point_blocks, s.hook_point_block_calls)
        for _ in range(s.runs)
    ]
    with_points = [a * 1e6 for a, _ in pairs]
    without_points = [b * 1e6 for _, b in pairs]
    return Outcome(
        [
            figure(
                "hook_point.runner_us",
                "HookRunner.run, hook point nobody implements",
                US,
                run_medians(runner, s.warmup * 10, 1e6),
            ),
            figure("hook_point.builtin_us", "host.call_tool, built-in tool, no extensions", US, with_points),
            figure("hook_point.builtin_bare_us", "  the same, hook points stubbed out", US, without_points),
            figure(
                "hook_point.difference_us",
                "  cost of the 2 unimplemented hook points",
                US,
                [a - b for a, b in zip(with_points, without_points, strict=True)],
                Target("<=", 5),
            ),
        ]
    )


async def mcp_calls(ctx: Context) -> Outcome:
    """``host.call_tool`` against an MCP SDK stdio server, sequential and in flight, same runs."""
    if ctx.mcp_missing:
        return Outcome(notes=[f"skipped: {ctx.mcp_missing}"])
    s = ctx.settings
    one = ctx.project("mcp_calls", 1)
    script = ctx.mcp_script("mcp_calls_server")
    hosts, servers = await interleaved(
        s.runs,
        lambda: host.host_calls_both(one, ctx.home, s.calls, s.warmup, s.in_flight_calls, s.width),
        lambda: mcp_sdk.mcp_calls(script, s.calls, s.warmup, s.mcp_in_flight_calls, s.width),
    )
    h = run_medians([seq for seq, _ in hosts], s.warmup, 1e6)
    m = run_medians([seq for seq, _ in servers], s.warmup, 1e6)
    host_rates, mcp_rates = [rate for _, rate in hosts], [rate for _, rate in servers]
    return Outcome(
        [
            figure("mcp_calls.host_us", "host.call_tool, sequential (same runs as MCP)", US, h),
            figure("mcp_calls.mcp_us", "MCP SDK call_tool, sequential", US, m),
            figure(
                "mcp_calls.mcp_p99_us", "  p99 of MCP calls", US, run_p99s([seq for seq, _ in servers], s.warmup, 1e6)
            ),
            figure("mcp_calls.speedup", "  MCP / host.call_tool (host is N× faster)", X, ratios(m, h), Target(">=", 5)),
            figure("mcp_calls.host_rate", f"host.call_tool, {s.width} in flight (same runs)", RATE, host_rates),
            figure("mcp_calls.mcp_rate", f"MCP SDK, {s.width} in flight", RATE, mcp_rates),
            figure("mcp_calls.rate_ratio", "  host / MCP calls/s", X, ratios(host_rates, mcp_rates)),
        ]
    )


async def mcp_bridge_calls(ctx: Context) -> Outcome:
    """An MCP ``tools/call`` through ``extensions mcp`` against the same tool in a plain MCP SDK server."""
    if ctx.mcp_missing:
        return Outcome(notes=[f"skipped: {ctx.mcp_missing}"])
    s = ctx.settings
    one = ctx.project("mcp_bridge", 1)
    script = ctx.mcp_script("mcp_bridge_server")
    bridges, plains = await interleaved(
        s.runs,
        lambda: mcp_bridge.bridge_calls(one, ctx.home, s.calls),
        lambda: mcp_bridge.plain_calls(script, s.calls),
    )
    b, p = run_medians(bridges, s.warmup, 1e6), run_medians(plains, s.warmup, 1e6)
    return Outcome(
        [
            figure("mcp_bridge.bridge_us", "MCP tools/call through extensions mcp (hooks, events, log)", US, b),
            figure("mcp_bridge.bridge_p99_us", "  p99 of those calls", US, run_p99s(bridges, s.warmup, 1e6)),
            figure("mcp_bridge.plain_us", "MCP tools/call, the same tool in a plain MCP SDK server", US, p),
            figure("mcp_bridge.plain_p99_us", "  p99 of those calls", US, run_p99s(plains, s.warmup, 1e6)),
            figure("mcp_bridge.ratio", "  bridge / plain server", X, ratios(b, p), Target("<=", 1.0)),
        ]
    )


async def start(ctx: Context) -> Outcome:
    """Cold start: one extension against a bare child; N extensions, and N MCP servers, at once."""
    s = ctx.settings
    outcome = Outcome()
    one = ctx.project("start_one", 1)
    script = ctx.mcp_script("start_server")
    # Warm-up: the first start of each kind pays for cold page caches, not for its design.
    if s.warm:
        await floor.floor_start()
        await host.host_start(one, ctx.home)
        if not ctx.mcp_missing:
            await mcp_sdk.mcp_start_many(script, 1)
    bare, single = await interleaved(s.start_pairs, floor.floor_start, lambda: host.host_start(one, ctx.home))
    bare_ms, single_ms = [x * 1e3 for x in bare], [x * 1e3 for x in single]
    outcome.figures += [
        figure("start.bare_ms", "bare asyncio child: spawn to first reply", MS, bare_ms),
        figure("start.one_ms", "one extension: spawn to running", MS, single_ms),
        figure("start.one_ratio", "  extension / bare child", X, ratios(single_ms, bare_ms), Target("<=", 1.5)),
    ]
    if ctx.mcp_missing:
        outcome.notes.append(f"MCP servers skipped: {ctx.mcp_missing}")
    for count in s.start_counts:
        extensions = partial(host.host_start, ctx.project(f"start_{count}", count), ctx.home)
        mcp_s: list[float] = []
        if ctx.mcp_missing:
            ext_s = [await extensions() for _ in range(s.start_runs)]
        else:
            ext_s, mcp_s = await interleaved(s.start_runs, extensions, partial(mcp_sdk.mcp_start_many, script, count))
        ext_ms, mcp_ms = [x * 1e3 for x in ext_s], [x * 1e3 for x in mcp_s]
        plural = "s" if count > 1 else ""
        outcome.figures.append(
            figure(
                f"start.ext{count}_ms",
                f"{count} extension{plural}: all running",
                MS,
                ext_ms,
                Target("<=", 600) if count == 20 else None,
            )
        )
        if mcp_ms:
            outcome.figures += [
                figure(f"start.mcp{count}_ms", f"{count} MCP server{plural}: all initialized", MS, mcp_ms),
                figure(
                    f"start.mcp{count}_ratio",
                    "  MCP / extensions",
                    X,
                    ratios(mcp_ms, ext_ms),
                    Target(">=", 8) if count == 20 else None,
                ),
            ]
    return outcome


async def reload(ctx: Context) -> Outcome:
    """Hot reload (file write -> new version answering) against restarting an MCP server."""
    s = ctx.settings
    project = ctx.project("reload", 1)
    restarting = None if ctx.mcp_missing else mcp_sdk.RestartingServer(ctx.base / "reload_server.py")
    host_ms: list[float] = []
    mcp_ms: list[float] = []
    async with host.reloading_host(project, ctx.home) as save:
        try:
            if restarting is not None:
                await restarting.start()
            sides: list[tuple[list[float], Callable[[int], Awaitable[float]]]] = [(host_ms, save)]
            if restarting is not None:
                sides.append((mcp_ms, restarting.change))
            warmups = 1 if s.warm else 0
            for index in range(warmups + s.reload_saves):
                for samples, change in sides if index % 2 == 0 else reversed(sides):
                    elapsed = await change(index + 1)  # version 0 is what runs at first
                    if index >= warmups:
                        samples.append(elapsed * 1e3)
        finally:
            if restarting is not None:
                await restarting.stop()
    outcome = Outcome(
        [figure("reload.host_ms", "hot reload: save to new version answering", MS, host_ms, Target("<", 100))]
    )
    if restarting is None:
        outcome.notes.append(f"MCP restart skipped: {ctx.mcp_missing}")
    else:
        outcome.figures += [
            figure("reload.mcp_ms", "MCP server: write, stop, start, initialize, call", MS, mcp_ms),
            figure("reload.speedup", "  MCP restart / hot reload", X, ratios(mcp_ms, host_ms), Target(">=", 5)),
        ]
    return outcome


async def memory(ctx: Context) -> Outcome:
    """PSS and RSS of an idle joined extension, a bare asyncio child and an idle MCP server."""
    s = ctx.settings
    one = ctx.project("memory", 1)
    script = ctx.mcp_script("memory_server")
    readers: dict[str, Callable[[], Awaitable[dict[str, float]]]] = {
        "ext": lambda: host.extension_memory(one, ctx.home, s.idle),
        "bare": lambda: floor.floor_memory(s.idle),
    }
    if not ctx.mcp_missing:
        readers["mcp"] = lambda: mcp_sdk.mcp_memory(script, s.idle)
    readings: dict[str, list[dict[str, float]]] = {name: [] for name in readers}
    names = list(readers)
    for round_ in range(s.memory_rounds):
        # Rotate the order, so no kind is always measured first.
        for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
            readings[name].append(await readers[name]())

    def values(name: str, kind: str) -> list[float]:
        return [reading[kind] for reading in readings[name]]

    outcome = Outcome(
        [
            figure("memory.ext_pss", "idle extension, PSS", MIB, values("ext", "pss")),
            figure("memory.ext_rss", "idle extension, RSS", MIB, values("ext", "rss")),
            figure("memory.bare_pss", "bare asyncio child, PSS", MIB, values("bare", "pss")),
            figure("memory.bare_rss", "bare asyncio child, RSS", MIB, values("bare", "rss")),
            figure(
                "memory.ratio",
                "  extension / bare child, PSS",
                X,
                ratios(values("ext", "pss"), values("bare", "pss")),
                Target("<=", 1.3),
            ),
        ]
    )
    if all("server_pss" in reading for reading in readings["ext"]):
        outcome.figures.append(
            figure(
                "memory.server_pss",
                "  the fork server it came from (one per host), PSS",
                MIB,
                values("ext", "server_pss"),
            )
        )
    if ctx.mcp_missing:
        outcome.notes.append(f"MCP server skipped: {ctx.mcp_missing}")
    else:
        outcome.figures += [
            figure("memory.mcp_pss", "idle MCP server, PSS", MIB, values("mcp", "pss")),
            figure("memory.mcp_rss", "idle MCP server, RSS", MIB, values("mcp", "rss")),
            figure(
                "memory.mcp_ratio",
                "  MCP server / extension, PSS",
                X,
                ratios(values("mcp", "pss"), values("ext", "pss")),
            ),
        ]
    return outcome


async def persistence(ctx: Context) -> Outcome:
    """Sequential ``host.call_tool`` with a session log attached against none, in alternating
    blocks on one host (see :mod:`bench.session_log`)."""
    s = ctx.settings
    one = ctx.project("persistence", 1)
    blocks = max(1, s.hook_point_blocks // 2)
    runs = [await session_log.persisted_blocks(one, ctx.home, blocks, s.hook_point_block_calls) for _ in range(s.runs)]
    kept = [statistics.median(times) * 1e6 for times, _ in runs]
    bare = [statistics.median(times) * 1e6 for _, times in runs]
    return Outcome(
        [
            figure("persistence.bare_us", "host.call_tool, no session log", US, bare),
            figure("persistence.kept_us", "  the same host, session log attached", US, kept),
            figure("persistence.ratio", "  persisted / not persisted", X, ratios(kept, bare), Target("<=", 1.05)),
        ]
    )


async def append(ctx: Context) -> Outcome:
    """Small events appended to a session log, against the same events kept in memory only."""
    s = ctx.settings
    count = s.calls * 30
    bare, kept = await interleaved(
        s.runs,
        lambda: session_log.append_rate(count, persist=False),
        lambda: session_log.append_rate(count, persist=True),
    )
    return Outcome(
        [
            figure("append.bare_rate", "EventLog.emit, small events, not persisted", EVENTS, bare),
            figure("append.kept_rate", "  the same, appended to events.jsonl", EVENTS, kept, Target(">=", 50000)),
            figure("append.ratio", "  persisted / not persisted events/s", X, ratios(kept, bare)),
        ]
    )


async def _turns_against_api(
    ctx: Context, name: str, through: Callable[[Path, Path, int], Awaitable[list[float]]], label: str, target: float
) -> Outcome:
    """The same one-tool-call turn through ``through`` (a child process and a client) and through
    ``host.send_and_wait``, interleaved; figures named ``NAME.*``."""
    s = ctx.settings
    one = ctx.project(name, 1)
    turns = max(3, s.calls // 30)
    apis, others = await interleaved(
        s.runs, lambda: served.api_turns(one, ctx.home, turns), lambda: through(one, ctx.home, turns)
    )
    warmup = 1
    a, v = run_medians(apis, warmup, 1e3), run_medians(others, warmup, 1e3)
    short = label.split()[0]
    return Outcome(
        [
            figure(f"{name}.api_ms", "turn with one tool call, host.send_and_wait", MS, a),
            figure(f"{name}.{short}_ms", f"  the same turn through {label}", MS, v),
            figure(f"{name}.ratio", f"  {short} / Python API", X, ratios(v, a), Target("<=", target)),
        ]
    )


async def serve_turn(ctx: Context) -> Outcome:
    """A turn with one tool call through ``extensions serve --stdio`` against ``host.send_and_wait``."""
    return await _turns_against_api(ctx, "serve_turn", served.served_turns, "serve --stdio", 1.5)


async def acp_turn(ctx: Context) -> Outcome:
    """A turn with one tool call through ``extensions acp`` (an ACP client on stdio) against
    ``host.send_and_wait``, and its floor: the same client and lines against a bare echo child
    (:mod:`bench.acp`). The three sides take turns within each run; the first run's ``acp``
    side comes before its echo, which answers with the lines that ``acp`` sent."""
    s = ctx.settings
    one = ctx.project("acp_turn", 1)
    turns = max(3, s.calls // 30)
    updates: list[bytes] = []

    async def echo() -> list[float]:
        return await acp.echo_turns(one, ctx.home / "acp-echo", turns, updates[0])

    apis, acps, echoes = await rotated(
        s.runs,
        [
            lambda: served.api_turns(one, ctx.home, turns),
            lambda: acp.acp_turns(one, ctx.home, turns, updates),
            echo,
        ],
    )
    warmup = 1
    a, v, e = run_medians(apis, warmup, 1e3), run_medians(acps, warmup, 1e3), run_medians(echoes, warmup, 1e3)
    return Outcome(
        [
            figure("acp_turn.api_ms", "turn with one tool call, host.send_and_wait", MS, a),
            figure("acp_turn.acp_ms", "  the same turn through acp (a client on stdio)", MS, v),
            figure("acp_turn.ratio", "  acp / Python API", X, ratios(v, a), Target("<=", 1.3)),
            figure("acp_turn.echo_ms", "  its lines echoed by a bare child on stdio", MS, e),
            figure(
                "acp_turn.floor",
                "  floor: (Python API + echo) / Python API",
                X,
                ratios([*map(sum, zip(a, e, strict=True))], a),
            ),
        ]
    )


async def serve_ahp1(ctx: Context) -> Outcome:
    """The same turn through ``extensions serve --stdio`` by an AHP 1.0 client and a 0.1.0 one."""
    s = ctx.settings
    one = ctx.project("serve_ahp1", 1)
    turns = max(3, s.calls // 30)
    seeds, ahp1s = await interleaved(
        s.runs,
        lambda: served.served_turns(one, ctx.home, turns, served.SEED),
        lambda: served.served_turns(one, ctx.home, turns, served.AHP1),
    )
    warmup = 1
    a, v = run_medians(seeds, warmup, 1e3), run_medians(ahp1s, warmup, 1e3)
    return Outcome(
        [
            figure("serve_ahp1.seed_ms", "turn with one tool call through serve, a 0.1.0 client", MS, a),
            figure("serve_ahp1.ahp1_ms", "  the same turn, an AHP 1.0 client", MS, v),
            figure("serve_ahp1.ratio", "  AHP 1.0 / 0.1.0", X, ratios(v, a), Target("<=", 1.1)),
        ]
    )


async def serve_fanout(ctx: Context) -> Outcome:
    """Events of one session delivered to 10 subscribed clients on the server's socket."""
    s = ctx.settings
    project = ctx.project("serve_fanout", 0)
    events = min(1000, s.calls * 10)
    runs = [await served.fan_out(project, ctx.home, 10, events) for _ in range(s.runs)]
    return Outcome(
        [
            figure(
                "serve_fanout.median_ms",
                f"{events} events to 10 clients: delivery latency",
                MS,
                run_medians(runs, 0, 1e3),
            ),
            figure("serve_fanout.p99_ms", "  p99 of those deliveries", MS, run_p99s(runs, 0, 1e3), Target("<=", 5)),
        ]
    )


async def serve_replay(ctx: Context) -> Outcome:
    """``reconnect`` answered with the replay of the whole buffer."""
    s = ctx.settings
    project = ctx.project("serve_replay", 0)
    count = min(100_000, s.calls * 1000)
    times = [await served.replay(project, ctx.home, count) * 1e3 for _ in range(s.runs)]
    return Outcome([figure("serve_replay.ms", f"reconnect replaying {count:,} actions", MS, times, Target("<=", 1000))])


async def serve_sessions(ctx: Context) -> Outcome:
    """Many sessions in one ``extensions serve``, one extension each (see :mod:`bench.serve_scale`)."""
    s = ctx.settings
    project = serve_scale.make_stamp_project(ctx.base / "serve_sessions")
    runs: dict[int, list[serve_scale.SessionsRun]] = {count: [] for count in s.session_counts}
    for _ in range(s.session_runs):
        for count in s.session_counts:
            runs[count].append(await serve_scale.sessions_run(project, ctx.home, count, count * s.paced_turns, s.idle))
    outcome = Outcome()
    for count, done in runs.items():
        latencies = [run.latencies for run in done]
        outcome.figures += [
            figure(
                f"serve_sessions.create{count}_ms",
                f"{count} sessions in one serve: createSession + subscribe, each",
                MS,
                [statistics.mean(run.create) * 1e3 for run in done],
                Target("<=", 40),
            ),
            figure(
                f"serve_sessions.burst{count}_ms",
                f"  {count} one-tool turns at once, one per session: all complete",
                MS,
                [run.burst * 1e3 for run in done],
                Target("<=", 500) if count <= 100 else None,
            ),
            figure(
                f"serve_sessions.delivery{count}_ms",
                f"  {count} sessions, {s.paced_turns} paced turns each: tool result to the subscriber",
                MS,
                run_medians(latencies, 0, 1e3),
            ),
            figure(
                f"serve_sessions.delivery{count}_p99_ms",
                f"  p99 of those deliveries ({count} sessions)",
                MS,
                run_p99s(latencies, 0, 1e3),
                Target("<=", 10),
            ),
        ]
        pss = [run.pss_mib / count for run in done if run.pss_mib is not None]
        if pss:
            outcome.figures.append(
                figure(
                    f"serve_sessions.pss{count}_mib",
                    f"  PSS per session: serve, its fork server, {count} extensions",
                    MIB,
                    pss,
                    Target("<=", 10),
                )
            )
        else:
            outcome.notes.append("PSS not measured: this kernel has no /proc/<pid>/smaps_rollup")
    return outcome


async def subagents(ctx: Context) -> Outcome:
    """A turn that delegates to a custom agent's child session (one tool call in the child)
    against two one-tool-call turns of the session's own agent (see :mod:`bench.subagent`)."""
    s = ctx.settings
    one = ctx.project("subagent", 1)
    rounds = max(3, s.calls // 30)
    parents, children = await interleaved(
        s.runs,
        lambda: subagent.parent_turns(one, ctx.home, rounds),
        lambda: subagent.subagent_turns(one, ctx.home, rounds),
    )
    warmup = 1
    a, c = run_medians(parents, warmup, 1e3), run_medians(children, warmup, 1e3)
    return Outcome(
        [
            figure("subagent.parent_ms", "two one-tool-call turns of the session's agent", MS, a),
            figure("subagent.child_ms", "  the same work through a subagent (task → child turn)", MS, c),
            figure("subagent.ratio", "  subagent / two turns", X, ratios(c, a), Target("<=", 1.5)),
        ]
    )


def _cli_target(side: str) -> Target | None:
    limit = cli.TARGETS.get(side)
    return None if limit is None else Target("<=", limit)


async def command_start(ctx: Context) -> Outcome:
    """Whole ``extensions`` commands, spawn to exit, against ``python -c pass`` in the same round
    (see :mod:`bench.cli`): the stack a host stands on, ``--help``, ``--version``, a cold ``list``
    and a ``call`` a running host answers."""
    times = await cli.measure(ctx.base, ctx.home, ctx.settings.cli_rounds)
    floor_ms = [x * 1e3 for x in times["floor"]]
    outcome = Outcome([figure("cli.floor_ms", "python -c pass (the floor)", MS, floor_ms)])
    labels = {  # each side: its row, and its ratio's row
        "stack": ("asyncio + pydantic, one model validated", "  the stack / the floor"),
        "help": ("extensions --help", "  / the floor"),
        "version": ("extensions --version", "  / the floor"),
        "list": ("extensions list (one extension, no host)", "  / the floor"),
        "call": ("extensions call (a running host answers)", "  / the floor"),
    }
    for side, (label, ratio_label) in labels.items():
        side_ms = [x * 1e3 for x in times[side]]
        outcome.figures += [
            figure(f"cli.{side}_ms", label, MS, side_ms),
            figure(f"cli.{side}_ratio", ratio_label, X, ratios(side_ms, floor_ms), _cli_target(side)),
        ]
    return outcome


SCENARIOS: dict[str, Callable[[Context], Awaitable[Outcome]]] = {
    "round_trip": round_trip,
    "in_flight": in_flight,
    "hooks": hooks,
    "hook_point": hook_point,
    "mcp_calls": mcp_calls,
    "mcp_bridge": mcp_bridge_calls,
    "start": start,
    "reload": reload,
    "memory": memory,
    "persistence": persistence,
    "append": append,
    "serve_turn": serve_turn,
    "acp_turn": acp_turn,
    "serve_ahp1": serve_ahp1,
    "serve_fanout": serve_fanout,
    "serve_replay": serve_replay,
    "serve_sessions": serve_sessions,
    "subagent": subagents,
    "cli": command_start,
}
"""Every scenario, in the order they run and are reported."""
