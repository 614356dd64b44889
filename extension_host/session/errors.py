"""What can go wrong with a prompt: refused before it is queued, or its run ended by an error.

Every class is a :class:`~extension_host.errors.ExtensionHostError` whose message is one line
naming the thing at fault and what to do. This module only defines them.
"""

from __future__ import annotations

from ..errors import ExtensionHostError

__all__ = [
    "AttachmentError",
    "NoAgentError",
    "PromptQueueFullError",
    "PromptRejectedError",
    "TurnAbortedError",
    "TurnCancelledError",
    "TurnError",
]


class TurnError(ExtensionHostError):
    """A prompt could not be queued or its run did not complete."""


class NoAgentError(TurnError):
    """A prompt was sent to a host that has no agent to answer it."""

    def __init__(self) -> None:
        super().__init__(
            "this host has no agent, so nothing would answer the prompt; "
            "the application embedding the host passes one with ExtensionHost(..., agent=...)"
        )


class AttachmentError(TurnError):
    """An attachment names a file that does not exist or lies outside the project and workspace."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"attachment {path!r}: {message}")
        self.path = path


class PromptRejectedError(TurnError):
    """A prompt hook rejected the prompt; ``reason`` says why and ``rejected_by`` who."""

    def __init__(self, reason: str | None, rejected_by: str | None) -> None:
        super().__init__(f"the prompt was rejected by {rejected_by or 'a prompt hook'}: {reason or 'no reason given'}")
        self.reason = reason
        self.rejected_by = rejected_by


class PromptQueueFullError(TurnError):
    """Too many prompts are waiting (:data:`MAX_QUEUED_PROMPTS`)."""


class TurnAbortedError(TurnError):
    """The run of the prompt ended with ``session.error`` (an error hook said abort, the agent
    failed, or it took too many steps)."""


class TurnCancelledError(TurnAbortedError):
    """The prompt's run was cancelled (``cancel_turn``), or it was queued behind one that was
    and dropped with it."""
