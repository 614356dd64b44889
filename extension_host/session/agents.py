"""Agents: what the embedding application plugs in to answer prompts, and a scripted one.

An :class:`Agent` is given the session's model context and the tools on offer, and answers one
step: assistant text, tool calls, or both. The host runs the tool calls through its pipeline
and asks again with their results in the context, until a step asks for no tool
(:mod:`extension_host.session.turns`). Agents may also report the models they offer
(``models()``) and the usage they counted (``usage()``); both are optional and read through
:func:`agent_models` and :func:`agent_usage`.

:class:`ScriptedAgent` answers from a fixed script, one list of steps per prompt: the tests and
the demo use it. This module knows no events, hooks or processes.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .model_context import ContextMessage, ToolCall

__all__ = [
    "Agent",
    "AgentReply",
    "AgentRequest",
    "OfferedTool",
    "ScriptExhausted",
    "ScriptedAgent",
    "agent_models",
    "agent_usage",
]


@dataclass(frozen=True, slots=True)
class OfferedTool:
    """A tool the agent may call: its name, description and JSON Schema of its arguments."""

    name: str
    description: str
    parameters: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class AgentRequest:
    """What an agent is asked with: the model context, the tools, and where in the run it is.

    ``turn_id`` names the prompt being answered (its ``messageId``); ``step`` counts the agent's
    answers to it, from 0, so an agent can tell a new prompt from a step after tool results.
    """

    messages: Sequence[ContextMessage]
    tools: Sequence[OfferedTool]
    turn_id: str
    step: int


@dataclass(frozen=True, slots=True)
class AgentReply:
    """One step of an agent: text for the user and tool calls to run (none ends the turn)."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    model: str | None = None
    """The model that produced it, when the agent knows (shown in the turn's events)."""


@runtime_checkable
class Agent(Protocol):
    """What answers prompts. ``respond`` may be a plain or an ``async`` method.

    Optional, read when present: ``models() -> list[dict]`` (the models it offers, each at least
    ``{"id", "name"}``) and ``usage() -> dict`` (what it counted: tokens, requests, ...).
    """

    def respond(self, request: AgentRequest) -> AgentReply | Awaitable[AgentReply]:
        """Answer one step of the turn ``request.turn_id``."""
        ...


async def ask_agent(agent: Agent, request: AgentRequest) -> AgentReply:
    """Call ``agent.respond`` (sync or async) and check that it answered an :class:`AgentReply`.

    Raises:
        TypeError: the agent answered something else.
    """
    reply = agent.respond(request)
    if inspect.isawaitable(reply):
        reply = await reply
    if not isinstance(reply, AgentReply):
        raise TypeError(f"the agent answered {type(reply).__name__}, not an AgentReply")
    return reply


def agent_models(agent: Agent | None) -> list[dict[str, Any]] | None:
    """The models the agent reports (``None``: no agent, or it does not say)."""
    models = getattr(agent, "models", None)
    return [dict(model) for model in models()] if callable(models) else None


def agent_usage(agent: Agent | None) -> dict[str, Any] | None:
    """The usage the agent counted (``None``: no agent, or it does not count)."""
    usage = getattr(agent, "usage", None)
    return dict(usage()) if callable(usage) else None


class ScriptExhausted(Exception):
    """A :class:`ScriptedAgent` was asked for more than its script holds."""


@dataclass
class ScriptedAgent:
    """An agent that answers from a script: one list of :class:`AgentReply` steps per prompt.

    Every step but the last of a prompt must call a tool, and the last must not, so each
    prompt's run ends where its script says. ``requests`` records what it was asked, for
    tests. ``model`` is reported by ``models()`` and in the turn events.

    ::

        ScriptedAgent([
            [AgentReply(tool_calls=(ToolCall("grep", {"pattern": "TODO"}),)), AgentReply("3 TODOs")],
            [AgentReply("hello")],
        ])

    Raises:
        ValueError: a prompt's script is empty, ends with a tool call, or has a step without
            one before its end.
    """

    script: Sequence[Sequence[AgentReply]]
    model: str = "scripted"
    requests: list[AgentRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.script = [list(steps) for steps in self.script]
        for number, steps in enumerate(self.script, 1):
            if not steps:
                raise ValueError(f"prompt {number} of the script has no step")
            if steps[-1].tool_calls:
                raise ValueError(f"prompt {number} of the script ends with a tool call; end it with a reply")
            if any(not step.tool_calls for step in steps[:-1]):
                raise ValueError(f"prompt {number} of the script has a reply without tool calls before its end")
        self._prompt = -1
        self._steps = 0

    def respond(self, request: AgentRequest) -> AgentReply:
        """The next step: a new prompt (``step`` 0) moves to the next list of the script."""
        self.requests.append(request)
        if request.step == 0:
            self._prompt += 1
        if self._prompt >= len(self.script):
            raise ScriptExhausted(f"the scripted agent has a script for {len(self.script)} prompts and no more")
        steps = self.script[self._prompt]
        if request.step >= len(steps):
            raise ScriptExhausted(f"the scripted agent has {len(steps)} steps for prompt {self._prompt + 1}")
        reply = steps[request.step]
        return reply if reply.model else AgentReply(reply.text, reply.tool_calls, self.model)

    def models(self) -> list[dict[str, Any]]:
        """The one model it pretends to be."""
        return [{"id": self.model, "name": self.model}]

    def usage(self) -> dict[str, Any]:
        """What it answered: requests (one per step)."""
        return {"requests": len(self.requests)}

    @classmethod
    def replies(cls, *texts: str) -> ScriptedAgent:
        """A script of plain replies, one per prompt."""
        return cls([[AgentReply(text)] for text in texts])
