"""The client script against ``copilot --ahp-host`` and against ``extensions serve --listen``: the
messages differ only as ``ahp_conformance.ahp_differences`` allows.

Each side runs once (a module-scoped fixture); the tests read the two runs. On failure the message
names the folder holding both sides' normalised transcripts, one file per step
(``cli-NN-STEP.json``, ``host-NN-STEP.json``), and ``differences.txt``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from conformance.compare import Difference

from ahp_conformance.ahp_differences import INTENDED, classify, stale
from ahp_conformance.ahp_sides import SIDES, Run, record
from ahp_conformance.ahp_transcript import compare, dump, transcript
from real_agents.agents import CopilotCli
from real_agents.programs import skip_without_node

pytestmark = [pytest.mark.real_agent, pytest.mark.subprocess, pytest.mark.timeout(600)]
skip_without_node()


@dataclass(frozen=True)
class Pair:
    """Both sides' runs of the script; ``folder`` holds the dumps."""

    cli: Run
    host: Run
    folder: Path

    def differences(self) -> list[Difference]:
        cli, host = (transcript(run.records, run.replacements) for run in (self.cli, self.host))
        return compare(cli, host)


@pytest.fixture(scope="module")
def pair(copilot_cli: CopilotCli, sdk_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Pair:
    folder = tmp_path_factory.mktemp("ahp-differential")
    cli, host = (record(side, copilot_cli, folder, sdk_cache) for side in SIDES)
    for run in (cli, host):
        dump(run.records, run.replacements, folder, run.side)
        (folder / f"{run.side}-server.txt").write_text(run.server)
    return Pair(cli, host, folder)


def test_the_real_cli_ran_the_whole_script_with_a_model_turn_and_a_tool_call(pair: Pair) -> None:
    notes = [r.message for r in pair.cli.records if r.direction == "client"]
    assert not notes, f"the script did not run to its end against copilot --ahp-host: {notes}\n{pair.cli.server}"
    subjects = {message.subject for message in transcript(pair.cli.records, pair.cli.replacements)}
    ended = (
        "turn: action chat/toolCallComplete",
        "turn: action chat/turnComplete",
        "cancel: action chat/turnCancelled",
    )
    for expected in ended:
        assert expected in subjects, f"copilot --ahp-host never sent {expected}; transcripts in {pair.folder}"
    assert pair.cli.model_requests >= 3, f"the CLI's turns did not reach the scripted model; see {pair.folder}"


def test_the_host_differs_from_the_cli_only_as_the_table_allows(pair: Pair) -> None:
    found = pair.differences()
    allowed = {d: classify(d) for d in found}
    (pair.folder / "differences.txt").write_text(
        "".join(f"{d.line()}  [{'unlisted' if e is None else 'intended'}]\n" for d, e in sorted(allowed.items()))
    )
    unlisted = sorted({d for d, entry in allowed.items() if entry is None})
    lines = "\n".join(f"  - {difference.line()}" for difference in unlisted)
    assert not unlisted, (
        f"{len(unlisted)} difference(s) from copilot --ahp-host not in tests/ahp_conformance/ahp_differences.py:\n"
        f"{lines}\nboth sides' normalised transcripts: {pair.folder}"
    )
    unused = stale(found, INTENDED)
    assert not unused, f"entries of the table that no difference needed (remove them): {[e.what() for e in unused]}"
