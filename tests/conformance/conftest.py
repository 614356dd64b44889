"""Fixtures of the conformance suite: the real Copilot CLI and the host's SDK cache, installed once."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.recording import host_cache
from real_agents.agents import CopilotCli
from real_agents.programs import COPILOT_CLI, install, skip_without_node


@pytest.fixture(scope="session")
def copilot_cli() -> CopilotCli:
    skip_without_node()
    return CopilotCli(install(COPILOT_CLI))


@pytest.fixture(scope="session")
def sdk_cache(copilot_cli: CopilotCli) -> Path:
    """The host's cache folder, holding the SDK it pins for JavaScript extensions."""
    return host_cache(copilot_cli.prefix)
