"""Agents: what the embedding application plugs in to answer prompts, and a scripted one.

An :class:`Agent` is given the session's model context and the tools on offer, and answers one
step: assistant text, tool calls, or both. The host runs the tool calls through its pipeline
and asks again with their results in the context, until a step asks for no tool
(:mod:`extension_host.session.turns`). Agents may also report the models they offer
(``models()``), the usage they counted (``usage()``), switch models (``select_model()``) and
make a copy answering with another (``with_model()``, for a subagent's model); all are optional
and read through :func:`agent_models`, :func:`agent_usage`, :func:`agent_select_model` and
:func:`agent_with_model`. An agent that streams its text hands it to the request's
``on_delta``. Agents for real models live in :mod:`extension_host.agents`.

:class:`ScriptedAgent` answers from a fixed script, one list of steps per prompt: the tests and
the demo use it. This module knows no events, hooks or processes.
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from .model_context import ContextMessage, ToolCall

__all__ = [
    "Agent",
    "AgentReply",
    "AgentRequest",
    "OfferedTool",
    "ScriptExhausted",
    "ScriptedAgent",
    "agent_model",
    "agent_models",
    "agent_select_model",
    "agent_usage",
    "agent_with_model",
    "ask_once",
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

    ``message_id`` is the id the step's ``assistant.message`` will carry. An agent that streams
    hands each piece of text to ``on_delta`` as it arrives (the host makes it an ephemeral
    ``assistant.message_delta`` of that message); the reply's ``text`` is still the whole text.
    Both are ``None`` when nobody listens (an agent called outside a turn).
    """

    messages: Sequence[ContextMessage]
    tools: Sequence[OfferedTool]
    turn_id: str
    step: int
    message_id: str | None = None
    on_delta: Callable[[str], None] | None = None


@dataclass(frozen=True, slots=True)
class AgentReply:
    """One step of an agent: text for the user and tool calls to run (none ends the turn)."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    model: str | None = None
    """The model that produced it, when the agent knows (shown in the turn's events)."""
    usage: Mapping[str, Any] | None = None
    """What the model call of this step used, as the ``data`` of the published SDK's
    ``assistant.usage`` (``model``, ``inputTokens``, ``outputTokens``, ``duration``...); the host
    emits it (ephemeral) after the step's ``assistant.message``."""


@runtime_checkable
class Agent(Protocol):
    """What answers prompts. ``respond`` may be a plain or an ``async`` method.

    Optional, read when present: ``models() -> list[dict]`` (the models it offers, each at least
    ``{"id", "name"}``), ``usage() -> dict`` (what it counted: tokens, requests, ...; the published
    SDK's ``UsageGetMetricsResult`` is what ``session.usage.getMetrics`` answers with it) and
    ``select_model(model_id) -> None`` (answer later steps with that model; raises ``ValueError``
    naming the model when it cannot; a client's ``session/modelChanged`` calls it through
    :func:`agent_select_model`). Streaming is optional too: see ``AgentRequest.on_delta``.
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


async def ask_once(agent: Agent, messages: Sequence[ContextMessage], question: str) -> str:
    """``agent``'s answer to ``question`` after ``messages``, offered no tool: a model call that
    enters no transcript (its own ``turn_id``, nobody listening to its text).

    Raises:
        TypeError: the agent answered something else than an :class:`AgentReply`.
    """
    request = AgentRequest([*messages, ContextMessage("user", question)], (), f"ephemeral-{uuid.uuid4()}", 0)
    return (await ask_agent(agent, request)).text


def agent_model(agent: Agent | None) -> str | None:
    """The model the agent answers with now (its ``model`` attribute, when it is a string)."""
    model = getattr(agent, "model", None)
    return model if isinstance(model, str) else None


def agent_models(agent: Agent | None) -> list[dict[str, Any]] | None:
    """The models the agent reports (``None``: no agent, or it does not say)."""
    models = getattr(agent, "models", None)
    return [dict(model) for model in models()] if callable(models) else None


def agent_usage(agent: Agent | None) -> dict[str, Any] | None:
    """The usage the agent counted (``None``: no agent, or it does not count)."""
    usage = getattr(agent, "usage", None)
    return dict(usage()) if callable(usage) else None


def agent_select_model(agent: Agent | None, model_id: str) -> bool:
    """Ask the agent to answer with ``model_id`` from now on; False if it cannot choose models.

    Raises:
        ValueError: the agent can choose, but not this model (its message names the model).
    """
    select = getattr(agent, "select_model", None)
    if not callable(select):
        return False
    select(model_id)
    return True


def agent_with_model(agent: Agent | None, model_id: str) -> Agent | None:
    """An agent like ``agent`` answering with ``model_id`` (its optional ``with_model``), or
    ``None`` when it cannot choose models.

    Raises:
        ValueError: the agent can choose, but not this model (its message names the model).
    """
    with_model = getattr(agent, "with_model", None)
    if not callable(with_model):
        return None
    made: Agent = with_model(model_id)
    return made


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
        return reply if reply.model else replace(reply, model=self.model)

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
