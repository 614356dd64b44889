"""Each scenario under the real Copilot CLI and under this host: the extension's wire traffic and
what reached the model differ only as ``conformance.differences`` allows.

One scenario in one language runs once per side (a module-scoped fixture); the tests compare.
Run one with ``-k NAME-LANGUAGE`` (``-k deny-py``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance.compare import Difference, compare, compare_models
from conformance.differences import classify
from conformance.recording import SIDES, Recording, record
from conformance.scenarios import LANGUAGES, SCENARIOS, Scenario
from real_agents.agents import CopilotCli
from real_agents.programs import skip_without_node

pytestmark = pytest.mark.real_agent
skip_without_node()


@dataclass(frozen=True)
class Pair:
    """One scenario in one language, recorded on both sides; ``folder`` holds the dumps."""

    scenario: Scenario
    language: str
    cli: Recording
    host: Recording
    folder: Path

    @property
    def name(self) -> str:
        return f"{self.scenario.name}-{self.language}"

    def differences(self) -> list[Difference]:
        return compare(self.cli.transcript, self.host.transcript) + compare_models(self.cli.model, self.host.model)


CASES = [
    pytest.param((scenario, language), id=f"{scenario.name}-{language}")
    for scenario in SCENARIOS
    for language in LANGUAGES
]


@pytest.fixture(scope="module", params=CASES)
def pair(
    request: pytest.FixtureRequest, copilot_cli: CopilotCli, sdk_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> Pair:
    scenario, language = request.param
    folder = tmp_path_factory.mktemp(f"{scenario.name}-{language}")
    cli, host = (record(scenario, language, side, copilot_cli, folder, sdk_cache) for side in SIDES)
    for recording in (cli, host):
        (folder / f"{recording.side}.txt").write_text(recording.transcript.dump())
        (folder / f"{recording.side}-model.json").write_text(json.dumps(recording.model, indent=2, sort_keys=True))
    return Pair(scenario, language, cli, host, folder)


def test_the_scenario_ran_to_its_end_on_both_sides_with_the_extension_joined(pair: Pair) -> None:
    for recording in (pair.cli, pair.host):
        run = recording.run
        assert run.exit_code == 0 and not run.timed_out, f"{pair.name} on {recording.side}:\n{run.describe()}"
        assert not run.leftovers, f"{pair.name} on {recording.side} left processes: {run.leftovers}"
        subjects = recording.transcript.subjects()
        assert "result of session.resume" in subjects, (
            f"{pair.name}: the extension never joined on {recording.side}; transcripts in {pair.folder}"
        )


def test_the_host_differs_from_the_cli_only_as_the_table_allows(pair: Pair) -> None:
    allowed = {d: classify(d, pair.language, pair.scenario.name) for d in pair.differences()}
    (pair.folder / "differences.txt").write_text(
        "".join(f"{d.line()}  [{'unlisted' if e is None else 'intended'}]\n" for d, e in sorted(allowed.items()))
    )
    unlisted = [d for d, entry in allowed.items() if entry is None]
    lines = "\n".join(f"  - {difference.line()}" for difference in sorted(set(unlisted)))
    assert not unlisted, (
        f"{pair.name}: {len(set(unlisted))} difference(s) from Copilot CLI not in tests/conformance/differences.py:\n"
        f"{lines}\nboth normalised transcripts: {pair.folder}/cli.txt and host.txt"
    )
