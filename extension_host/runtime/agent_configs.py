"""Custom agents as clients and extensions send them: the published SDK's ``CustomAgentConfig``
(camelCase), checked at the trust boundary (``createSession`` in ``serve``, an extension's
``session.resume``). What a session does with them is
:mod:`~extension_host.session.custom_agents`'s business; this module only checks shapes. Its
models are built when first used (``defer_build``): most sessions are given no custom agents,
and every host imports this module.
"""

from __future__ import annotations

from typing import Annotated, Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = ["AGENT_NAME_PATTERN", "MAX_AGENT_PROMPT", "MAX_CUSTOM_AGENTS", "CustomAgentConfig", "check_agents"]

MAX_CUSTOM_AGENTS: Final = 64
"""Custom agents one giver may give a session."""
MAX_AGENT_PROMPT: Final = 64 * 1024
"""Characters of one agent's prompt."""
AGENT_NAME_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
"""What a custom agent may be named (it is the ``task`` tool's ``agent_type``)."""


class ToolDefinitionConfig(BaseModel):
    """A tool definition forwarded with an agent (name, description, JSON Schema)."""

    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)

    name: Annotated[str, Field(min_length=1, max_length=128)]
    description: Annotated[str, Field(max_length=8192)] = ""
    parameters: dict[str, Any] | None = None


class CustomAgentConfig(BaseModel):
    """One custom agent as a client or an extension sends it (the SDK's ``CustomAgentConfig``)."""

    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)

    name: Annotated[str, Field(pattern=AGENT_NAME_PATTERN)]
    prompt: Annotated[str, Field(max_length=MAX_AGENT_PROMPT)]
    displayName: Annotated[str, Field(max_length=256)] | None = None
    description: Annotated[str, Field(max_length=4096)] | None = None
    tools: Annotated[list[Annotated[str, Field(min_length=1, max_length=128)]], Field(max_length=256)] | None = None
    model: Annotated[str, Field(max_length=256)] | None = None
    toolDefinitions: Annotated[list[ToolDefinitionConfig], Field(max_length=256)] | None = None


def check_agents(value: object) -> tuple[CustomAgentConfig, ...]:
    """The custom agents in a ``customAgents`` value.

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
    agents: list[CustomAgentConfig] = []
    for index, entry in enumerate(value):
        try:
            agents.append(CustomAgentConfig.model_validate(entry))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise ValueError(f"customAgents[{index}].{where}: {first['msg']}") from None
    names = [agent.name for agent in agents]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(f"customAgents names {', '.join(twice)} more than once; give each agent one entry")
    return tuple(agents)
