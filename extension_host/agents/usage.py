"""What a model agent counted: one model call's usage, and the session's sum of them.

:class:`UsageMeter` adds up the token counts each model call reports and answers them in the
published SDK's shapes: :meth:`UsageMeter.record` returns one call's ``assistant.usage`` data,
:meth:`UsageMeter.metrics` the ``UsageGetMetricsResult`` that ``session.usage.getMetrics``
answers (``modelMetrics`` per model, ``lastCallInputTokens``...). Costs and premium requests are
zero: a compatible endpoint reports tokens, not prices; code changes are not counted here. This
module knows numbers, not clients or events.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

__all__ = ["CallUsage", "UsageMeter"]


@dataclass(frozen=True, slots=True)
class CallUsage:
    """What one model call used, as the endpoint reported it (``None``: not reported)."""

    model: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    reasoning_tokens: int | None = None
    duration_ms: float = 0.0
    time_to_first_token_ms: float | None = None
    finish_reason: str | None = None
    call_id: str | None = None


@dataclass
class _ModelTotals:
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    reasoning_tokens: int = 0


class UsageMeter:
    """The sum of every model call of one agent (see the module)."""

    def __init__(self) -> None:
        self._started = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        self._models: dict[str, _ModelTotals] = {}
        self._prompts = 0
        self._duration_ms = 0.0
        self._last: CallUsage | None = None
        self.current_model: str | None = None
        """The model the next call uses (``currentModel`` in the metrics)."""

    def prompt(self) -> None:
        """Count a prompt of the user (the first model call of its run)."""
        self._prompts += 1

    def record(self, call: CallUsage) -> dict[str, Any]:
        """Add one call; returns its ``assistant.usage`` data."""
        totals = self._models.setdefault(call.model, _ModelTotals())
        totals.requests += 1
        totals.input_tokens += call.input_tokens or 0
        totals.output_tokens += call.output_tokens or 0
        totals.cache_read_tokens += call.cache_read_tokens or 0
        totals.reasoning_tokens += call.reasoning_tokens or 0
        self._duration_ms += call.duration_ms
        self._last = call
        data: dict[str, Any] = {"model": call.model, "duration": round(call.duration_ms, 3), "isByok": True}
        optional = {
            "inputTokens": call.input_tokens,
            "outputTokens": call.output_tokens,
            "cacheReadTokens": call.cache_read_tokens,
            "reasoningTokens": call.reasoning_tokens,
            "timeToFirstTokenMs": call.time_to_first_token_ms,
            "finishReason": call.finish_reason,
            "apiCallId": call.call_id,
        }
        data.update({key: value for key, value in optional.items() if value is not None})
        return data

    def metrics(self) -> dict[str, Any]:
        """Everything so far, as the published SDK's ``UsageGetMetricsResult``."""
        result: dict[str, Any] = {
            "totalPremiumRequestCost": 0,
            "totalUserRequests": self._prompts,
            "totalApiDurationMs": round(self._duration_ms, 3),
            "sessionStartTime": self._started,
            "codeChanges": {"linesAdded": 0, "linesRemoved": 0, "filesModifiedCount": 0, "filesModified": []},
            "modelMetrics": {
                model: {
                    "requests": {"count": totals.requests, "cost": 0},
                    "usage": {
                        "inputTokens": totals.input_tokens,
                        "outputTokens": totals.output_tokens,
                        "cacheReadTokens": totals.cache_read_tokens,
                        "cacheWriteTokens": 0,
                        "reasoningTokens": totals.reasoning_tokens,
                    },
                }
                for model, totals in self._models.items()
            },
            "lastCallInputTokens": (self._last.input_tokens or 0) if self._last else 0,
            "lastCallOutputTokens": (self._last.output_tokens or 0) if self._last else 0,
        }
        if self.current_model is not None:
            result["currentModel"] = self.current_model
        return result
