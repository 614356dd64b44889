"""The names of the hook points, in every spelling: the one place they are written.

:data:`HOOK_NAMES` lists them by Python name (``on_pre_tool_use``); every other spelling is
derived from it once, here: the Copilot SDK's (``onPreToolUse``, :func:`camel_case`), the wire's
``hookType`` (``preToolUse``, :data:`HOOK_WIRE_NAMES`), and any of them back to the Python name
(:func:`hook_name`). What each hook point is and does is the table of
:mod:`extension_protocol.hook_points`, whose rows follow this order; the decorator's short
names (``pre_tool_use``) are :mod:`sdk_extension.hooks`'; another agent's names for them (Claude
Code's ``PreToolUse``) are its bridge's table, keyed by these.

This module imports nothing, so that joining a session and an agent's hook command (run on every
tool call) can read the names without the hook models or the protocol's shapes;
:mod:`extension_protocol.protocol` re-exports it.
"""

from __future__ import annotations

from typing import Final

__all__ = ["HOOK_NAMES", "HOOK_WIRE_NAMES", "camel_case", "hook_name"]

HOOK_NAMES: Final[tuple[str, ...]] = (
    "on_user_prompt_submitted",
    "on_pre_tool_use",
    "on_post_tool_use",
    "on_session_start",
    "on_session_end",
    "on_error_occurred",
    "on_user_prompt_transformed",
    "on_post_tool_use_failure",
    "on_agent_stop",
    "on_subagent_start",
    "on_subagent_stop",
)
"""The hook points by Python name (the Copilot SDK's first six, then the five Copilot CLI added
since), in the order every list of them follows."""


def camel_case(name: str) -> str:
    """``on_pre_tool_use`` → ``onPreToolUse``: how keys and hook names are spelled on the wire."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _hook_type(name: str) -> str:
    """``on_pre_tool_use`` → ``preToolUse``: a hook point's ``hookType`` on the wire."""
    return camel_case(name.removeprefix("on_"))


HOOK_WIRE_NAMES: Final[dict[str, str]] = {name: _hook_type(name) for name in HOOK_NAMES}
"""The hook points: Python name → ``hookType`` on the wire, derived from :data:`HOOK_NAMES`."""

_HOOK_ALIASES: Final = {
    alias: name for name, wire in HOOK_WIRE_NAMES.items() for alias in (name, camel_case(name), wire)
}


def hook_name(alias: str) -> str | None:
    """The Python name of a hook point given any spelling (``on_pre_tool_use``,
    ``onPreToolUse`` or the wire's ``preToolUse``), or ``None``."""
    return _HOOK_ALIASES.get(alias)
