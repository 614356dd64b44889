"""Gemini CLI's folder trust as ``extensions hook install|check gemini`` reads it: its variables,
its settings switch and its trusted-folders file (checked against Gemini CLI itself in
``tests/real_agents``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extension_host.bridges.agent_hooks.gemini_trust import gemini_trust, trust_note


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home" / ".gemini").mkdir(parents=True)
    return tmp_path / "home"


def rules(home: Path, text: str) -> None:
    (home / ".gemini" / "trustedFolders.json").write_text(text, encoding="utf-8")


def test_a_folder_no_rule_covers_is_not_trusted_yet(tmp_path: Path, home: Path) -> None:
    trust = gemini_trust(tmp_path / "project", {"GEMINI_CLI_HOME": str(home)})
    assert trust.trusted is None and "no rule of" in trust.why


@pytest.mark.parametrize(
    ("found", "trusted"),
    [
        ({"{p}": "TRUST_FOLDER"}, True),
        ({"{p}/../other": "TRUST_PARENT"}, True),  # a TRUST_PARENT rule trusts the folder its path is in
        ({"{p}/..": "TRUST_FOLDER", "{p}": "DO_NOT_TRUST"}, False),  # the longest rule wins
        ({"{p}/..": "DO_NOT_TRUST", "{p}/./": "TRUST_FOLDER"}, True),
        ({"{p}/sub": "TRUST_FOLDER"}, None),  # a rule for a child folder says nothing of its parent
    ],
)
def test_the_longest_rule_covering_the_folder_decides(
    tmp_path: Path, home: Path, found: dict[str, str], trusted: bool | None
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    rules(home, json.dumps({path.format(p=project): level for path, level in found.items()}))
    assert gemini_trust(project, {"GEMINI_CLI_HOME": str(home)}).trusted is trusted


def test_comments_are_allowed_in_the_file_and_a_path_variable_moves_it(tmp_path: Path, home: Path) -> None:
    elsewhere = tmp_path / "rules.json"
    elsewhere.write_text(f'{{\n  // mine\n  "{tmp_path}": /* yes */ "TRUST_FOLDER"\n}}', encoding="utf-8")
    env = {"GEMINI_CLI_HOME": str(home), "GEMINI_CLI_TRUSTED_FOLDERS_PATH": str(elsewhere)}
    assert gemini_trust(tmp_path / "project", env) == (True, f"{tmp_path}: TRUST_FOLDER in {elsewhere}")


@pytest.mark.parametrize(
    ("env", "trusted"),
    [({"GEMINI_CLI_TRUST_WORKSPACE": "true"}, True), ({"GEMINI_CLI_TRUST_WORKSPACE": "false"}, False)],
)
def test_the_variable_comes_before_the_file(tmp_path: Path, home: Path, env: dict[str, str], trusted: bool) -> None:
    rules(home, json.dumps({str(tmp_path): "DO_NOT_TRUST" if trusted else "TRUST_FOLDER"}))
    trust = gemini_trust(tmp_path, {"GEMINI_CLI_HOME": str(home), **env})
    assert trust.trusted is trusted and "in this environment" in trust.why


def test_folder_trust_turned_off_in_the_users_settings_trusts_every_folder(tmp_path: Path, home: Path) -> None:
    (home / ".gemini" / "settings.json").write_text('{"security": {"folderTrust": {"enabled": false}}}')
    assert gemini_trust(tmp_path, {"GEMINI_CLI_HOME": str(home)}).trusted is True


@pytest.mark.parametrize("text", ["{not json", "[1]", '{"/x": "MAYBE"}'])
def test_a_file_gemini_cli_cannot_read_trusts_nothing(tmp_path: Path, home: Path, text: str) -> None:
    rules(home, text)
    trust = gemini_trust(tmp_path, {"GEMINI_CLI_HOME": str(home)})
    assert trust.trusted is False and "Gemini CLI refuses to start then" in trust.why


def test_the_note_gives_the_headless_ways_whether_or_not_the_folder_is_trusted(tmp_path: Path) -> None:
    for trust in (gemini_trust(tmp_path, {"GEMINI_CLI_TRUST_WORKSPACE": "true"}), gemini_trust(tmp_path, {})):
        note = trust_note(tmp_path, trust)
        assert "\n" not in note and "--skip-trust runs none of them" in note, note
        assert "set GEMINI_CLI_TRUST_WORKSPACE=true where Gemini CLI runs, or install the hooks with --user" in note
