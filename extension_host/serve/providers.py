"""Agent providers: where a served session's agent comes from, by name.

``createSession`` names a ``provider`` (default: the server's, from ``extensions serve
--agent NAME[:ARGUMENT]``); :data:`PROVIDERS` maps each name to a factory that makes a fresh
agent for one session from the server's argument for it and the model the client chose. A
provider of another module plugs in with one line: ``PROVIDERS["name"] = make_agent_of_mine``.

- ``scripted`` reads a JSON script (``--agent scripted:FILE``): one list of steps per prompt,
  each step ``{"text": "...", "toolCalls": [{"name": ..., "arguments": {...}}]}`` as
  :class:`~extension_host.session.agents.ScriptedAgent` takes them. Every session starts at
  the script's beginning.
- ``openai`` talks to an OpenAI-compatible endpoint (:func:`openai_agent`).
- ``unconfigured`` answers every prompt with an error saying how to configure an agent
  (:data:`NO_AGENT`): sessions open, their tools and hooks work, no model is asked.

:func:`default_provider` is ``extensions serve``'s choice when ``--agent`` is not given:
``openai`` when ``OPENAI_BASE_URL`` or ``OPENAI_API_KEY`` is set, else ``unconfigured``.

This module knows agents, not sessions or clients.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ..agents.errors import AgentSetupError
from ..session.agents import Agent, AgentReply, AgentRequest, ScriptedAgent
from ..session.model_context import ToolCall
from .errors import PROVIDER_NOT_FOUND, ServeError

__all__ = [
    "MAX_SCRIPT_BYTES",
    "NO_AGENT",
    "PROVIDERS",
    "AgentFactory",
    "ProviderOptions",
    "UnconfiguredAgent",
    "default_provider",
    "make_agent",
    "openai_agent",
    "scripted_agent",
    "set_model",
]

MAX_SCRIPT_BYTES: Final = 4 * 1024 * 1024
"""Largest agent script file read."""


@dataclass(frozen=True)
class ProviderOptions:
    """What a factory is given: the server's argument for its provider, the client's model."""

    argument: str | None
    model: str | None


AgentFactory = Callable[[ProviderOptions], Agent]
"""Makes one session's agent; raises :class:`ValueError` with a one-line reason when it cannot."""


def scripted_agent(options: ProviderOptions) -> Agent:
    """A :class:`ScriptedAgent` from the JSON script file named by the argument."""
    if not options.argument:
        raise ValueError("the scripted provider needs a script: start the server with --agent scripted:FILE")
    path = Path(options.argument)
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_SCRIPT_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"cannot read the agent script {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_SCRIPT_BYTES:
        raise ValueError(f"the agent script {path} is larger than {MAX_SCRIPT_BYTES} bytes")
    try:
        script = json.loads(raw)
        prompts = [[_step(step) for step in steps] for steps in script]
        agent = ScriptedAgent(prompts, model=options.model or "scripted")
    except (ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"the agent script {path} is not valid: {exc}") from None
    return agent


def _step(step: Any) -> AgentReply:
    if not isinstance(step, dict):
        raise ValueError("each step must be an object with text and toolCalls")
    calls = tuple(
        ToolCall(str(call["name"]), dict(call.get("arguments") or {})) for call in step.get("toolCalls") or ()
    )
    return AgentReply(str(step.get("text", "")), calls)


def openai_agent(options: ProviderOptions) -> Agent:
    """An :class:`~extension_host.agents.openai_chat.OpenAIChatAgent` for an OpenAI-compatible
    endpoint: the argument is its base URL (``--agent openai:http://127.0.0.1:11434/v1``), the
    model is the client's; what is not given comes from the environment, as for ``extensions
    chat``. The ``openai`` package is imported only here, and only then."""
    from ..agents.openai_chat import OpenAIChatAgent

    try:
        return OpenAIChatAgent(options.model, base_url=options.argument or None)
    except AgentSetupError as exc:
        raise ValueError(str(exc)) from None


NO_AGENT: Final = (
    "no agent is configured: start the server with --agent openai[:BASE_URL] (or set OPENAI_BASE_URL "
    "and OPENAI_API_KEY before it starts), or --agent scripted:FILE"
)
"""What a prompt to a session of the ``unconfigured`` provider fails with."""


class UnconfiguredAgent:
    """The agent of a server started without one: every prompt fails with :data:`NO_AGENT`."""

    model = "none"

    def respond(self, request: AgentRequest) -> AgentReply:
        raise AgentSetupError(NO_AGENT)


def default_provider(environ: Mapping[str, str] = os.environ) -> str:
    """The provider of a server started without ``--agent``: ``openai`` when the environment
    names an OpenAI-compatible endpoint or key, else ``unconfigured``."""
    return "openai" if environ.get("OPENAI_BASE_URL") or environ.get("OPENAI_API_KEY") else "unconfigured"


PROVIDERS: Final[dict[str, AgentFactory]] = {
    "scripted": scripted_agent,
    "openai": openai_agent,
    "unconfigured": lambda _options: UnconfiguredAgent(),
}
"""Agent providers by name: the one place a new kind of agent is added."""


def make_agent(name: str, options: ProviderOptions) -> Agent:
    """The agent of provider ``name``.

    Raises:
        ServeError: no provider of that name (``PROVIDER_NOT_FOUND``), or it cannot make an
            agent with these options (``INVALID_PARAMS``-like, the provider's reason).
    """
    factory = PROVIDERS.get(name)
    if factory is None:
        known = ", ".join(sorted(PROVIDERS))
        raise ServeError(PROVIDER_NOT_FOUND, f"no agent provider named {name!r}; this server has: {known}")
    try:
        return factory(options)
    except ValueError as exc:
        raise ServeError(PROVIDER_NOT_FOUND, f"provider {name!r} cannot start an agent: {exc}") from None


def set_model(agent: Agent, model: str) -> bool:
    """Make ``agent`` use ``model`` from its next turn on: its ``set_model(model)`` if it has
    one, else its ``model`` attribute if it has a writable one; False if it has neither."""
    setter = getattr(agent, "set_model", None)
    if callable(setter):
        setter(model)
        return True
    if isinstance(getattr(agent, "model", None), str):
        try:
            agent.model = model  # type: ignore[attr-defined]
        except AttributeError:
            return False
        return True
    return False
