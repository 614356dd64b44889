"""How the outputs of several hook implementations combine into one outcome.

The rules, per hook point (implementations run in the order of :mod:`extension_host.hooks`):

- rewrites chain: each implementation sees the prompt, arguments or result left by the ones
  before it (``modified_prompt``, ``modified_args``, ``modified_result``);
- permission decisions: ``deny`` beats ``ask`` beats ``allow``; a ``deny`` stops the chain;
- ``additional_context`` values are joined in order with a blank line, capped at 10 KB;
- ``session_summary`` values are joined like context; ``cleanup_actions`` concatenate;
- ``error_handling`` takes the strongest (``abort`` > ``skip`` > ``retry``), ``retry_count``
  the largest, ``user_notification`` values are joined with a newline.

Outputs arrive checked (:mod:`sdk_extension.hooks` reads them); a malformed one never gets
here: the runner fails that implementation instead (a guard denies). Pure data: no I/O, no
processes, no timing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Final

from sdk_extension.results import ToolResult

__all__ = ["CONTEXT_LIMIT_BYTES", "Composition", "join_context"]

CONTEXT_LIMIT_BYTES: Final = 10 * 1024
"""The most additional context all hooks of one call may add together."""

_DECISION_RANK: Final = {"allow": 0, "ask": 1, "deny": 2}
_HANDLING_RANK: Final = {"retry": 0, "skip": 1, "abort": 2}
_TRUNCATED: Final = "\n[additional context truncated at 10 KB]"


def join_context(parts: list[str], limit: int = CONTEXT_LIMIT_BYTES) -> str | None:
    """Join non-empty parts with a blank line, cut to ``limit`` bytes of UTF-8."""
    text = "\n\n".join(part for part in parts if part)
    if not text:
        return None
    encoded = text.encode()
    if len(encoded) <= limit:
        return text
    marker = _TRUNCATED.encode()
    return encoded[: limit - len(marker)].decode("utf-8", "ignore") + _TRUNCATED


@dataclass
class Composition:
    """The running outcome of one hook point while its implementations are called in turn."""

    hook: str
    prompt: str | None = None
    args: Any = None
    result: ToolResult | None = None
    decision: str | None = None
    reason: str | None = None
    decided_by: str | None = None
    contexts: list[str] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)
    cleanup_actions: list[str] = field(default_factory=list)
    error_handling: str | None = None
    retry_count: int | None = None
    notifications: list[str] = field(default_factory=list)
    stopped: bool = False

    def next_input(self, base: Any) -> Any:
        """The input the next implementation sees: ``base`` with the rewrites so far."""
        # Inputs are frozen: until something is rewritten, ``base`` itself is that input.
        if self.hook == "on_user_prompt_submitted":
            return base if self.prompt is base.prompt else dataclasses.replace(base, prompt=self.prompt)
        if self.hook == "on_pre_tool_use":
            return base if self.args is base.tool_args else dataclasses.replace(base, tool_args=self.args)
        if self.hook == "on_post_tool_use":
            return base if self.result is base.tool_result else dataclasses.replace(base, tool_result=self.result)
        return base

    def apply(self, output: Any, owner: str) -> str | None:
        """Fold one implementation's output (an output dataclass or ``None``) in.

        Returns the decision it made (for reporting), if any.
        """
        if output is None:
            return None
        context = getattr(output, "additional_context", None)
        if context:
            self.contexts.append(context)
        if self.hook == "on_user_prompt_submitted" and output.modified_prompt is not None:
            self.prompt = output.modified_prompt
        elif self.hook == "on_pre_tool_use":
            if output.modified_args is not None:
                self.args = output.modified_args
            if output.permission_decision is not None:
                self.decide(output.permission_decision, output.permission_decision_reason, owner)
                return str(output.permission_decision)
        elif self.hook == "on_post_tool_use" and output.modified_result is not None:
            self.result = output.modified_result
        elif self.hook == "on_session_end":
            if output.session_summary:
                self.summaries.append(output.session_summary)
            self.cleanup_actions.extend(output.cleanup_actions or ())
        elif self.hook == "on_error_occurred":
            if output.error_handling is not None and _HANDLING_RANK[output.error_handling] > _HANDLING_RANK.get(
                self.error_handling or "", -1
            ):
                self.error_handling = output.error_handling
            if output.retry_count is not None:
                self.retry_count = max(self.retry_count or 0, output.retry_count)
            if output.user_notification:
                self.notifications.append(output.user_notification)
            return output.error_handling  # type: ignore[no-any-return]
        return None

    def decide(self, decision: str, reason: str | None, owner: str) -> None:
        """Record a permission decision if it is stronger than the current one (on a tie the
        first reason and owner stay); a ``deny`` stops the chain."""
        if _DECISION_RANK[decision] > _DECISION_RANK.get(self.decision or "", -1):
            self.decision, self.reason, self.decided_by = decision, reason, owner
        if decision == "deny":
            self.stopped = True

    @property
    def additional_context(self) -> str | None:
        """Every context added so far, joined and capped."""
        return join_context(self.contexts)
