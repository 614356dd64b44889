"""The figures ``python -m bench`` reports, by scenario: what its tests expect of a run."""

from __future__ import annotations

# Figure keys per scenario: (always, only with mcp). The smoke mode starts 1 and 2 at once, and
# serves 3 sessions.
FIGURES: dict[str, tuple[list[str], list[str]]] = {
    "round_trip": (
        [
            "floor_us",
            "floor_p99_us",
            "cli_floor_us",
            "cli_floor_ratio",
            "host_us",
            "host_p99_us",
            "ratio",
            "p99_ratio",
            "cli_ratio",
        ],
        [],
    ),
    "in_flight": (["floor_rate", "cli_floor_rate", "host_rate", "ratio", "cli_ratio"], []),
    "hooks": (["floor_us", "host_us", "host_p99_us", "ratio"], []),
    "hook_point": (["runner_us", "builtin_us", "builtin_bare_us", "difference_us"], []),
    "mcp_calls": ([], ["host_us", "mcp_us", "mcp_p99_us", "speedup", "host_rate", "mcp_rate", "rate_ratio"]),
    "mcp_bridge": ([], ["bridge_us", "bridge_p99_us", "plain_us", "plain_p99_us", "ratio"]),
    "start": (
        ["bare_ms", "one_ms", "one_ratio", "ext1_ms", "ext2_ms"],
        ["mcp1_ms", "mcp1_ratio", "mcp2_ms", "mcp2_ratio"],
    ),
    "reload": (["host_ms"], ["mcp_ms", "speedup"]),
    "memory": (
        ["ext_pss", "ext_rss", "bare_pss", "bare_rss", "ratio", "server_pss"],
        ["mcp_pss", "mcp_rss", "mcp_ratio"],
    ),
    "persistence": (["bare_us", "kept_us", "ratio"], []),
    "append": (["bare_rate", "kept_rate", "ratio"], []),
    "serve_turn": (["api_ms", "serve_ms", "ratio"], []),
    "acp_turn": (["api_ms", "acp_ms", "ratio", "echo_ms", "floor"], []),
    "serve_ahp1": (["seed_ms", "ahp1_ms", "ratio"], []),
    "serve_fanout": (["median_ms", "p99_ms"], []),
    "serve_replay": (["ms"], []),
    "serve_sessions": (["create3_ms", "burst3_ms", "delivery3_ms", "delivery3_p99_ms", "pss3_mib"], []),
    "subagent": (["parent_ms", "child_ms", "ratio"], []),
    "cli": (
        [
            "floor_ms",
            "stack_ms",
            "stack_ratio",
            "help_ms",
            "help_ratio",
            "version_ms",
            "version_ratio",
            "list_ms",
            "list_ratio",
            "call_ms",
            "call_ratio",
        ],
        [],
    ),
}


def figure_keys(scenario: str, *, with_mcp: bool) -> set[str]:
    """The keys of ``scenario``'s figures in a run (``scenario.key``)."""
    always, mcp_only = FIGURES[scenario]
    return {f"{scenario}.{key}" for key in (*always, *(mcp_only if with_mcp else ()))}
