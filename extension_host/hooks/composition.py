"""How the outputs of several hook implementations combine into one outcome.

Implementations run in the order of :mod:`extension_host.hooks.runner`; each output field merges by
the strategy the hook-point table (:mod:`extension_protocol.hook_points`) names for it:

- ``rewrite``: each implementation sees the prompt, arguments or result left by the ones
  before it (``modified_prompt``, ``modified_args``, ``modified_result``);
- ``decision``: ``deny`` beats ``ask`` beats ``allow`` (the order of the field's ``Literal``);
  the strongest stops the chain; ``reason`` goes with the decision it came with;
- ``context``: joined in order with a blank line, capped at 10 KB (``additional_context``);
- ``paragraphs`` joined like context, ``lines`` with a newline, ``concat`` lists concatenate;
- ``strongest`` takes the strongest value of its ``Literal`` (``abort`` > ``skip`` > ``retry``),
  ``max`` the largest number.

Nothing here names a hook point. Outputs arrive checked (:mod:`extension_protocol.hook_points` reads them);
a malformed one never gets here: the runner fails that implementation instead (a guard denies).
Pure data: no I/O, no processes, no timing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Final

from extension_protocol.hook_points import HOOK_POINTS, HookPoint
from extension_protocol.protocol import camel_case

__all__ = ["CONTEXT_LIMIT_BYTES", "NO_REASON", "Composition", "denial_text", "join_context"]

CONTEXT_LIMIT_BYTES: Final = 10 * 1024
"""The most additional context all hooks of one call may add together."""

_TRUNCATED: Final = "\n[additional context truncated at 10 KB]"
NO_REASON: Final = "No reason provided"
"""What a denial says when the hook that denied gave no reason (the Copilot CLI's words)."""


def denial_text(reason: str | None) -> str:
    """What the model reads when a pre-tool hook denied a call, as the Copilot CLI words it:
    ``Denied by preToolUse hook: <reason>``."""
    return f"Denied by preToolUse hook: {reason or NO_REASON}"


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
    """The running outcome of one hook point while its implementations are called in turn.

    ``value`` is what the hook point rewrites (the prompt, the arguments, the result), seeded
    from the input; ``merged`` holds the other fields as their strategies collect them (read
    them with :meth:`merged_value`).
    """

    hook: str
    value: Any = None
    decision: str | None = None
    reason: str | None = None
    decided_by: str | None = None
    contexts: list[str] = field(default_factory=list)
    merged: dict[str, Any] = field(default_factory=dict)
    stopped: bool = False
    _point: HookPoint = field(init=False, repr=False, compare=False)

    _seed: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._point = HOOK_POINTS[self.hook]
        self._seed = self.value

    @property
    def prompt(self) -> Any:
        """The prompt as rewritten so far (a prompt hook's ``value``)."""
        return self.value

    @property
    def args(self) -> Any:
        """The tool arguments as rewritten so far (a pre-tool hook's ``value``)."""
        return self.value

    @property
    def result(self) -> Any:
        """The tool result as replaced so far (a post-tool hook's ``value``)."""
        return self.value

    def next_input(self, base: Any) -> Any:
        """The input the next implementation sees: ``base`` with the rewrites so far."""
        rewrites = self._point.rewrites
        # Inputs are frozen: until something is rewritten, ``base`` itself is that input.
        if rewrites is None or self.value is getattr(base, rewrites):
            return base
        return dataclasses.replace(base, **{rewrites: self.value})

    def apply(self, output: Any, owner: str) -> str | None:
        """Fold one implementation's output (an output dataclass or ``None``) in.

        Returns the decision it made (its ``decision`` or ``strongest`` value, for reporting).
        """
        if output is None:
            return None
        point = self._point
        made: str | None = None
        decision: str | None = None
        reason: str | None = None
        for name, how in point.merge.items():
            value = getattr(output, name)
            if value is None:
                continue
            if how == "rewrite":
                self.value = value
            elif how in ("context", "paragraphs", "lines"):
                if value:
                    target = self.contexts if how == "context" else self.merged.setdefault(name, [])
                    target.append(value)
            elif how == "concat":
                self.merged.setdefault(name, []).extend(value)
            elif how == "max":
                self.merged[name] = max(self.merged.get(name, value), value)
            elif how == "strongest":
                rank = point.ranks[name]
                current = self.merged.get(name)
                if current is None or rank[value] > rank[current]:
                    self.merged[name] = value
                made = made or value
            elif how == "decision":
                decision = value
            elif how == "reason":
                reason = value
        if decision is not None:
            self.decide(decision, reason, owner)
            return decision
        return made

    def decide(self, decision: str, reason: str | None, owner: str) -> None:
        """Record a permission decision if it is stronger than the current one (on a tie the
        first reason and owner stay); the strongest (``deny``) stops the chain."""
        values = self._point.decision_values
        if self.decision is None or values.index(decision) > values.index(self.decision):
            self.decision, self.reason, self.decided_by = decision, reason, owner
        if decision == values[-1]:
            self.stopped = True

    def merged_value(self, name: str) -> Any:
        """An output field merged across implementations: joined text, a list, a number or a
        value; ``None`` if nobody gave it."""
        how = self._point.merge[name]
        value = self.merged.get(name)
        if how == "context":
            return self.additional_context
        if how == "paragraphs":
            return join_context(value or [])
        if how == "lines":
            return "\n".join(value) if value else None
        if how == "concat":
            return list(value or [])
        if how == "rewrite":
            return self.value
        if how == "decision":
            return self.decision
        if how == "reason":
            return self.reason
        return value  # max, strongest

    def wire_output(self) -> dict[str, Any] | None:
        """The combined output, camelCase as on the wire: the fields someone gave (a rewrite
        only when it changed the input); ``None`` when nobody said anything."""
        output: dict[str, Any] = {}
        for name, how in self._point.merge.items():
            changed = self.value is not self._seed
            value = (self.value if changed else None) if how == "rewrite" else self.merged_value(name)
            if value is None or value == []:
                continue
            to_wire = getattr(value, "to_wire", None)
            output[camel_case(name)] = to_wire() if to_wire is not None else value
        return output or None

    @property
    def additional_context(self) -> str | None:
        """Every context added so far, joined and capped."""
        return join_context(self.contexts)
