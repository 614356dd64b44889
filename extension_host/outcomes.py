"""What the host's pipeline methods return: results of tool calls, prompts, sessions, errors.

Frozen dataclasses built from a hook point's composed outcome. No behaviour beyond reading.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from extension_protocol.protocol import ResultType
from extension_protocol.results import ToolResult

__all__ = [
    "ErrorDecision",
    "PromptResult",
    "ReloadOutcome",
    "SessionEndResult",
    "SessionStartResult",
    "StopDecision",
    "ToolCallResult",
]


@dataclass(frozen=True, slots=True)
class ToolCallResult:
    """A tool call after the whole pipeline: pre-tool hooks, the tool, post-tool hooks.

    ``decision`` is the permission decision of the pre-tool hooks (``None`` if none decided)
    and ``decided_by`` who made it. ``additional_context`` joins what every hook added; what of
    it the model does not read in the result itself (the post-tool hooks' guidance is appended
    to a successful result, as the Copilot CLI does) is ``context_message``: the pre-tool hooks'
    context and, for a failed call, the failure hooks' guidance as the CLI words it.
    """

    result: ToolResult
    additional_context: str | None = None
    decision: str | None = None
    decided_by: str | None = None
    context_message: str | None = None

    @property
    def result_type(self) -> ResultType:
        """``success``, ``failure``, ``rejected``, ``denied`` or ``timeout``."""
        return self.result.result_type

    @property
    def text_result_for_llm(self) -> str:
        """The text the model sees."""
        return self.result.text_result_for_llm

    @property
    def error(self) -> str | None:
        """The technical reason of a failure, if there is one."""
        return self.result.error

    @property
    def success(self) -> bool:
        """True when the tool ran and succeeded."""
        return self.result.success

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (what ``extensions call --json`` prints, with the tool and its owner)."""
        return {
            "result_type": self.result_type,
            "text_result_for_llm": self.text_result_for_llm,
            "error": self.error,
            "decision": self.decision,
            "decided_by": self.decided_by,
            "additional_context": self.additional_context,
        }


@dataclass(frozen=True, slots=True)
class PromptResult:
    """A prompt after the prompt hooks: possibly rewritten, possibly rejected."""

    prompt: str
    additional_context: str | None = None
    rejected: bool = False
    reason: str | None = None
    rejected_by: str | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (what ``extensions prompt --json`` prints)."""
        return {
            "prompt": self.prompt,
            "additional_context": self.additional_context,
            "rejected": self.rejected,
            "reason": self.reason,
            "rejected_by": self.rejected_by,
        }


@dataclass(frozen=True, slots=True)
class SessionStartResult:
    """What the session-start hooks added."""

    additional_context: str | None = None


@dataclass(frozen=True, slots=True)
class SessionEndResult:
    """What the session-end hooks said."""

    session_summary: str | None = None
    cleanup_actions: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ErrorDecision:
    """How the error hooks want an error handled (``None``: nobody said)."""

    error_handling: str | None = None
    retry_count: int | None = None
    user_notification: str | None = None


@dataclass(frozen=True, slots=True)
class StopDecision:
    """Whether the agent-stop hooks keep the agent going (``blocked``), and the follow-up
    message they give it (``reason``); for a subagent, the answer its parent reads instead of
    the child's (``response``, when a subagent-stop hook replaced it)."""

    blocked: bool = False
    reason: str | None = None
    response: str | None = None


@dataclass(frozen=True, slots=True)
class ReloadOutcome:
    """What a start, reload or stop did to one extension.

    ``action`` is ``started``, ``reloaded``, ``restarted`` (after a crash), ``stopped`` (with
    status ``failed`` when it held a variable whose grant was revoked), ``failed`` (it is not
    running),
    ``kept`` (the new version failed and the old one keeps serving; ``error`` says why), or
    ``untrusted`` (it appeared in a project not trusted, so it does not run; ``error`` says how
    to trust it).
    """

    extension: str
    action: str
    status: str
    error: str | None = None
    tools: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """False when the extension, or its new version, failed."""
        return self.action not in ("failed", "kept")

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "extension": self.extension,
            "action": self.action,
            "status": self.status,
            "error": self.error,
            "tools": list(self.tools),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ReloadOutcome:
        """The inverse of :meth:`to_json` (for answers that came over the control socket)."""
        return cls(data["extension"], data["action"], data["status"], data.get("error"), tuple(data.get("tools") or ()))
