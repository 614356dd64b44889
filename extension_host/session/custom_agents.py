"""Custom agents: what a session may delegate to, and how each is given (the API, a client, an
extension, or a file).

A :class:`CustomAgent` is a name, a prompt, and the parent's tools it may use: ``tools`` unset
means every tool the parent has, ``()`` none, a list only those. It may name its own model or
bring its own :class:`~extension_host.session.agents.Agent`. ``tool_definitions`` are the
definitions of tools its allowlist names that the giver forwarded with it (an SDK does, so the
child can be offered tools the parent does not know by definition).

The wire form, checked at the trust boundary, is :mod:`~extension_host.runtime.agent_configs`'s;
:func:`agent_from_config` makes an agent of it. :func:`merge_agents` decides which agent a
name means when it is given twice: earlier sources win (the host's caller, whether the API or a
client, then extensions, then files: the user's before the project's, as Copilot CLI reads
them, see :mod:`~extension_host.session.agent_files`).
Running a child session is :mod:`~extension_host.session.subagents`'s business.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from .agents import Agent, OfferedTool

if TYPE_CHECKING:
    from ..runtime.agent_configs import CustomAgentConfig

__all__ = [
    "CustomAgent",
    "agent_from_config",
    "agents_from_wire",
    "merge_agents",
    "offered_definitions",
]

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


def agent_from_config(config: CustomAgentConfig, source: str) -> CustomAgent:
    """The agent a client's or an extension's config gives, said to come from ``source``."""
    return CustomAgent(
        name=config.name,
        prompt=config.prompt,
        display_name=config.displayName,
        description=config.description or "",
        tools=None if config.tools is None else tuple(config.tools),
        model=config.model,
        tool_definitions=tuple(OfferedTool(d.name, d.description, d.parameters) for d in config.toolDefinitions or ()),
        source=source,
    )


def agents_from_wire(value: object, source: str) -> tuple[CustomAgent, ...]:
    """The custom agents in a ``customAgents`` value from ``source`` (see
    :func:`~extension_host.runtime.agent_configs.check_agents`, whose ``ValueError`` it raises)."""
    if value is None:
        return ()
    from ..runtime.agent_configs import check_agents

    return tuple(agent_from_config(config, source) for config in check_agents(value))


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
