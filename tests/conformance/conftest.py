"""Fixtures of the conformance suite: the real Copilot CLI and the host's SDK cache, installed once."""

from __future__ import annotations

from pathlib import Path
from typing import Final

import pytest

from conformance.differences import PENDING, Entry
from conformance.recording import host_cache
from conformance.scenarios import LANGUAGES, SCENARIOS
from real_agents.agents import AGENTS, Agent
from real_agents.programs import COPILOT_CLI, install, skip_without_node


@pytest.fixture(scope="session")
def copilot_cli() -> Agent:
    skip_without_node()
    return AGENTS["copilot"](install(COPILOT_CLI))


@pytest.fixture(scope="session")
def sdk_cache(copilot_cli: Agent) -> Path:
    """The host's cache folder, holding the SDK it pins for JavaScript extensions."""
    return host_cache(copilot_cli.prefix)


_PENDING_USED: Final[dict[str, set[Entry]]] = {}


@pytest.fixture(scope="session")
def pending_used() -> dict[str, set[Entry]]:
    """Per compared case (``join-py``), the pending entries its differences needed."""
    return _PENDING_USED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """When every case was compared, name the pending entries no case needed any more: the
    difference they allowed is gone, so they are to be deleted."""
    if len(_PENDING_USED) < len(SCENARIOS) * len(LANGUAGES):
        return
    used = set().union(*_PENDING_USED.values())
    stale = [entry for entry in PENDING if entry not in used]
    if stale:
        terminalreporter.write_line("conformance: PENDING entries no scenario needs any more (delete them):")
        for entry in stale:
            terminalreporter.write_line(f"  item {entry.item}: {entry.what()}")
