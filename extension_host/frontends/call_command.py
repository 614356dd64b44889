"""``extensions call TOOL [ARGUMENTS]``: one tool call, through the running host when there is one.

With a host running for the project (``extensions dev``, a background host, ``serve --socket``),
the call is its ``host.call`` over the control socket, made with the blocking one-request client
(:func:`~extension_host.bridges.agent_hooks.client.ask_running_host`): no event loop and none of
the host is imported, and no extension process is started. With none, a host is started for the
call alone (:func:`.one_shot.with_host`). Either way the answer has the same shape
(:func:`~extension_host.control.service.describe_call`, with the hook trail for ``--verbose``),
printed here.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any, Final

from ..control.methods import METHOD_CALL
from . import render
from .output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, print_json, say

if TYPE_CHECKING:
    from ..host import ExtensionHost

__all__ = ["call_command"]

_TRAIL: Final = frozenset({"hook_ends", "skipped_hooks"})
"""What a call's answer holds for ``--verbose`` only: ``--json`` prints the rest."""
_NO_LIMIT: Final = 7 * 24 * 3600.0
"""Seconds the command waits for a running host's answer: no limit of its own, as the host
bounds the call (the tool's timeout, each hook's)."""


def call_command(args: argparse.Namespace) -> int:
    """Call ``args.tool`` with ``args.arguments`` (a JSON object) and print the result."""
    try:
        arguments = json.loads(args.arguments)
    except json.JSONDecodeError as exc:
        say(f"error: ARGUMENTS is not valid JSON ({exc}); pass an object such as '{{\"a\": 1}}'", err=True)
        return EXIT_USAGE
    if not isinstance(arguments, dict):
        say("error: ARGUMENTS must be a JSON object, such as '{\"a\": 1}'", err=True)
        return EXIT_USAGE
    answer = _ask_running_host(args, arguments)
    if answer is not None:
        say("(from the running host)", err=True)
        return _show(args, answer)
    import asyncio

    from .one_shot import with_host

    async def load(host: ExtensionHost) -> int:
        from ..control.service import describe_call

        result = await host.call_tool(args.tool, arguments)
        denied = result.decision == "deny"  # denied before the tool ran: no post hook was due
        skipped = [pair for pair in host.skipped_hooks(args.tool) if not (denied and pair[0] == "on_post_tool_use")]
        ends = [event["data"] for event in host.events.history("hook.end")]
        return _show(args, describe_call(host, args.tool, result) | {"hook_ends": ends, "skipped_hooks": skipped})

    return asyncio.run(with_host(args, load))


def _ask_running_host(args: argparse.Namespace, arguments: dict[str, Any]) -> dict[str, Any] | None:
    """The running host's answer to the call; ``None`` when no host runs for the project."""
    from ..bridges.agent_hooks.client import ask_running_host
    from ..project.paths import find_project_root

    answer: dict[str, Any] | None = ask_running_host(
        find_project_root(args.root), METHOD_CALL, {"name": args.tool, "arguments": arguments}, _NO_LIMIT
    )
    return answer


class _Answered:
    """The result in a call's answer, as :func:`.render.tool_result` reads it (the result type
    itself, with the dataclass machinery it imports, would cost a call through a running host a
    tenth of its time)."""

    __slots__ = ("result_type", "text_result_for_llm")

    def __init__(self, answer: dict[str, Any]) -> None:
        self.text_result_for_llm: str = answer["text_result_for_llm"]
        self.result_type: str = answer["result_type"]

    @property
    def success(self) -> bool:
        """As :attr:`extension_protocol.results.ToolResult.success`: the type is ``success``."""
        return self.result_type == "success"


def _show(args: argparse.Namespace, answer: dict[str, Any]) -> int:
    result = _Answered(answer)
    if args.json:
        print_json({key: value for key, value in answer.items() if key not in _TRAIL})
    else:
        say(render.tool_result(result))
    if args.verbose:
        for data in answer["hook_ends"]:
            say(render.hook_end(data), err=True)
        for hook, owner in answer["skipped_hooks"]:
            say(render.hook_skipped(hook, owner, args.tool), err=True)
        if answer["decided_by"]:
            say(f"decided {answer['decision']} by {render.safe_cell(answer['decided_by'])}", err=True)
        if answer["additional_context"]:
            say(render.additional_context(answer["additional_context"]), err=True)
    return EXIT_OK if result.success else EXIT_FAILED
