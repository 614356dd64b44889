"""Custom agents: what a session may delegate to, and how each is given (the API, a client, an
extension, or a file).

A :class:`CustomAgent` is a name, a prompt, and the parent's tools it may use: ``tools`` unset
means every tool the parent has, ``()`` none, a list only those. It may name its own model or
bring its own :class:`~extension_host.session.agents.Agent`. ``tool_definitions`` are the
definitions of tools its allowlist names that the giver forwarded with it (an SDK does, so the
child can be offered tools the parent does not know by definition).

:class:`CustomAgentConfig` is the wire form (camelCase, as the published SDK's
``CustomAgentConfig``), checked at the trust boundary: ``createSession`` in ``serve`` and an
extension's ``session.resume``. :func:`merge_agents` decides which agent a name means when it is
given twice: earlier sources win (the API, then clients, extensions, project files, user files).
Running a child session is :mod:`~extension_host.session.subagents`'s business.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .agents import Agent, OfferedTool

__all__ = [
    "MAX_AGENT_PROMPT",
    "MAX_CUSTOM_AGENTS",
    "CustomAgent",
    "CustomAgentConfig",
    "agents_from_wire",
    "merge_agents",
    "offered_definitions",
]

MAX_CUSTOM_AGENTS: Final = 64
"""Custom agents one giver may give a session."""
MAX_AGENT_PROMPT: Final = 64 * 1024
"""Characters of one agent's prompt."""
_NAME: Final = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
_NAME_RE: Final = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")


@dataclass(frozen=True, slots=True)
class CustomAgent:
    """An agent a session may start as a subagent (see the module).

    Args:
        name: what the ``task`` tool's ``agent_type`` names it by.
        prompt: the child's instructions (its system message).
        display_name: shown to people; the name when unset.
        description: what the parent's model reads to choose it.
        tools: the allowlist: ``None`` every tool of the parent, ``()`` none.
        model: the model its turns ask for (the parent's when unset).
        agent: what answers its turns (the parent's agent when unset).
        tool_definitions: forwarded definitions of tools its allowlist names.
        source: who gave it: ``api``, ``client``, ``extension:<id>``, ``project``, ``user``.
    """

    name: str
    prompt: str
    display_name: str | None = None
    description: str = ""
    tools: tuple[str, ...] | None = None
    model: str | None = None
    agent: Agent | None = None
    tool_definitions: tuple[OfferedTool, ...] = ()
    source: str = "api"

    def __post_init__(self) -> None:
        if not _NAME_RE.match(self.name):
            raise ValueError(
                f"custom agent name {self.name!r}: use 1-64 letters, digits, '_', '.' or '-', "
                "starting with a letter or digit"
            )
        if self.tools is not None and not isinstance(self.tools, tuple):
            object.__setattr__(self, "tools", tuple(self.tools))

    @property
    def shown_name(self) -> str:
        """The display name, else the name."""
        return self.display_name or self.name

    def allows(self, tool: str) -> bool:
        """Whether its allowlist lets it call ``tool``."""
        return self.tools is None or tool in self.tools


class _ToolDefinition(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    name: Annotated[str, Field(min_length=1, max_length=128)]
    description: Annotated[str, Field(max_length=8192)] = ""
    parameters: dict[str, Any] | None = None


class CustomAgentConfig(BaseModel):
    """One custom agent as a client or an extension sends it (the SDK's ``CustomAgentConfig``)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    name: Annotated[str, Field(pattern=_NAME)]
    prompt: Annotated[str, Field(max_length=MAX_AGENT_PROMPT)]
    displayName: Annotated[str, Field(max_length=256)] | None = None
    description: Annotated[str, Field(max_length=4096)] | None = None
    tools: Annotated[list[Annotated[str, Field(min_length=1, max_length=128)]], Field(max_length=256)] | None = None
    model: Annotated[str, Field(max_length=256)] | None = None
    toolDefinitions: Annotated[list[_ToolDefinition], Field(max_length=256)] | None = None

    def to_agent(self, source: str) -> CustomAgent:
        """The agent this config gives, said to come from ``source``."""
        return CustomAgent(
            name=self.name,
            prompt=self.prompt,
            display_name=self.displayName,
            description=self.description or "",
            tools=None if self.tools is None else tuple(self.tools),
            model=self.model,
            tool_definitions=tuple(
                OfferedTool(d.name, d.description, d.parameters) for d in self.toolDefinitions or ()
            ),
            source=source,
        )


def agents_from_wire(value: object, source: str) -> tuple[CustomAgent, ...]:
    """The custom agents in a ``customAgents`` value from a client or an extension.

    Raises:
        ValueError: one line naming what is wrong (not a list, too many, a bad entry, a name
            given twice).
    """
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ValueError("customAgents must be a list of agents ({name, prompt, ...})")
    if len(value) > MAX_CUSTOM_AGENTS:
        raise ValueError(f"customAgents has {len(value)} agents; at most {MAX_CUSTOM_AGENTS}")
    agents: list[CustomAgent] = []
    for index, entry in enumerate(value):
        try:
            agents.append(CustomAgentConfig.model_validate(entry).to_agent(source))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise ValueError(f"customAgents[{index}].{where}: {first['msg']}") from None
    names = [agent.name for agent in agents]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(f"customAgents names {', '.join(twice)} more than once; give each agent one entry")
    return tuple(agents)


def merge_agents(*sources: Iterable[CustomAgent]) -> dict[str, CustomAgent]:
    """The agents of ``sources`` by name; of two with one name, the earlier source's wins."""
    merged: dict[str, CustomAgent] = {}
    for source in sources:
        for agent in source:
            merged.setdefault(agent.name, agent)
    return merged


def offered_definitions(agent: CustomAgent, parent_tools: Sequence[OfferedTool]) -> tuple[OfferedTool, ...]:
    """The tools a child of ``agent`` is offered: the parent's tools its allowlist allows, in
    the parent's order, then forwarded definitions of allowed tools the parent does not offer."""
    offered = [tool for tool in parent_tools if agent.allows(tool.name)]
    known = {tool.name for tool in offered}
    forwarded = [d for d in agent.tool_definitions if d.name not in known and agent.allows(d.name)]
    return (*offered, *forwarded)
