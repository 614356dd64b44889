"""Fixtures of the real-agent tier: the installed programs, one workspace per test, and the
parametrization over agents (with the divergences each agent is expected to show)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from real_agents.agents import AGENTS, Agent
from real_agents.programs import (
    ACP_SDK,
    CLAUDE_CODE,
    COPILOT_CLI,
    GEMINI_CLI,
    MCP_INSPECTOR,
    Program,
    install,
    skip_without_node,
)
from real_agents.runner import Workspace


def installed(program: Program) -> Path:
    """The prefix ``program`` is installed in (installed now if needed); the tier is skipped,
    in one line, only where node or npm is missing. A failed install fails the test."""
    skip_without_node()
    return install(program)


@pytest.fixture(scope="session")
def claude_code() -> Agent:
    return AGENTS["claude"](installed(CLAUDE_CODE))


@pytest.fixture(scope="session")
def gemini_cli() -> Agent:
    return AGENTS["gemini"](installed(GEMINI_CLI))


@pytest.fixture(scope="session")
def copilot_cli() -> Agent:
    return AGENTS["copilot"](installed(COPILOT_CLI))


@pytest.fixture(scope="session")
def mcp_inspector() -> list[str]:
    """The MCP Inspector's command line (``--cli`` mode is the test's to add)."""
    return MCP_INSPECTOR.command(installed(MCP_INSPECTOR))


@pytest.fixture(scope="session")
def acp_sdk() -> Path:
    """Where the official TypeScript ACP SDK is installed."""
    return installed(ACP_SDK)


_FIXTURES = {"claude": "claude_code", "gemini": "gemini_cli", "copilot": "copilot_cli"}


@pytest.fixture
def agent(request: pytest.FixtureRequest) -> Agent:
    """The agent a test is parametrized with (by name, see :func:`real_agents.for_agents`)."""
    found: Agent = request.getfixturevalue(_FIXTURES[request.param])
    return found


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Workspace]:
    """A project with a ``.env`` secret, a home for the agent, and a short runtime folder."""
    created = Workspace.create(tmp_path)
    try:
        yield created
    finally:
        created.remove()
