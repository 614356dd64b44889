"""What can go wrong with a model agent: its setup, or the endpoint it talks to.

Both are :class:`~extension_host.errors.ExtensionHostError`\\ s whose message is one line naming
the endpoint, the model or the package at fault and what to do. A turn whose agent raises one
ends with ``session.error`` carrying that line. This module only defines them.
"""

from __future__ import annotations

from ..errors import ExtensionHostError

__all__ = ["AgentError", "AgentSetupError", "ModelEndpointError"]


class AgentError(ExtensionHostError):
    """A model agent cannot answer."""


class AgentSetupError(AgentError):
    """The agent cannot be set up: its client library is missing, no API key, no model chosen."""


class ModelEndpointError(AgentError):
    """The endpoint failed a request: unreachable, refused the key, no such model, no tool
    calling, rate limited or failing after the retries. ``status`` is the HTTP status, if any."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status
