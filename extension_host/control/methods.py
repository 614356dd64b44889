"""The control socket's methods: each name once, with its params and what it answers.

The server (:mod:`.service`) dispatches from this table and every client takes the names from
it; a hook command imports this module alone, so it holds names and texts only.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "CONTROL_METHODS",
    "METHOD_CALL",
    "METHOD_HOOK",
    "METHOD_INSPECT",
    "METHOD_LIST",
    "METHOD_REFRESH",
    "METHOD_RELOAD",
    "METHOD_STATUS",
]

METHOD_STATUS: Final = "host.status"
METHOD_LIST: Final = "host.list"
METHOD_INSPECT: Final = "host.inspect"
METHOD_RELOAD: Final = "host.reload"
METHOD_REFRESH: Final = "host.refresh"
METHOD_HOOK: Final = "host.hook"
METHOD_CALL: Final = "host.call"

CONTROL_METHODS: Final[dict[str, tuple[str, str]]] = {
    METHOD_STATUS: ("none", "`{root, pid, sessionId}`"),
    METHOD_LIST: ("none", "`{root, extensions: [ExtensionInfo.to_json()]}`"),
    METHOD_INSPECT: ("`{name}`", "what `extensions inspect --json` prints"),
    METHOD_RELOAD: ("`{name?}`", "`{outcomes: [ReloadOutcome.to_json()]}`"),
    METHOD_REFRESH: (
        "none",
        "`{outcomes}`: extensions now allowed start, ones no longer allowed stop, and whatever holds a "
        "variable no longer granted stops (after a trust or grant decision; the host's peers in the "
        "project apply it too)",
    ),
    METHOD_HOOK: ("`{hook, ...}`", "one hook point run for another agent's hook command (`control.hook_calls`)"),
    METHOD_CALL: (
        "`{name, arguments}`",
        "what `extensions call --json` prints, with `hook_ends` (the `hook.end` data of the hooks run meanwhile) "
        "and `skipped_hooks` (`[hook, owner]` pairs its matcher skipped)",
    ),
}
"""Method name → (params, result), in the order ``docs/cli.md`` lists them."""
