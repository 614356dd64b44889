"""``extensions hook install claude|gemini``: merged into the settings, never clobbering, idempotent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from extension_host.frontends.launcher import main
from helpers import Project

EXISTING: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm run test:*)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./audit.sh"}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    },
}


def install(project: Project, *args: str) -> int:
    return main(["--root", str(project.root), "--home", str(project.home), "hook", "install", *args])


def settings(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def commands(groups: list[dict[str, Any]]) -> list[str]:
    return [hook["command"] for group in groups for hook in group["hooks"]]


def test_install_writes_every_claude_event_into_a_new_project_settings_file(project: Project) -> None:
    assert install(project, "claude") == 0
    written = settings(project.root / ".claude" / "settings.json")
    assert list(written["hooks"]) == ["PreToolUse", "PostToolUse", "UserPromptSubmit", "SessionStart", "SessionEnd"]
    assert written["hooks"]["PreToolUse"] == [
        {"matcher": "*", "hooks": [{"type": "command", "command": "extensions hook claude PreToolUse", "timeout": 60}]}
    ]
    assert "matcher" not in written["hooks"]["UserPromptSubmit"][0]


def test_install_keeps_every_other_entry(project: Project) -> None:
    path = project.root / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(EXISTING), encoding="utf-8")
    assert install(project, "claude") == 0
    merged = settings(path)
    assert merged["model"] == "opus"
    assert merged["permissions"] == EXISTING["permissions"]
    assert merged["hooks"]["Notification"] == EXISTING["hooks"]["Notification"]
    assert commands(merged["hooks"]["PreToolUse"]) == ["./audit.sh", "extensions hook claude PreToolUse"]


def test_installing_twice_changes_nothing(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    assert install(project, "gemini") == 0
    path = project.root / ".gemini" / "settings.json"
    first = path.read_text(encoding="utf-8")
    capsys.readouterr()
    assert install(project, "gemini") == 0
    assert path.read_text(encoding="utf-8") == first
    assert "nothing changed" in capsys.readouterr().out


def test_gemini_entries_have_a_regex_matcher_a_name_and_a_timeout_in_milliseconds(project: Project) -> None:
    assert install(project, "gemini") == 0
    hooks = settings(project.root / ".gemini" / "settings.json")["hooks"]
    assert list(hooks) == ["BeforeTool", "AfterTool", "BeforeAgent", "SessionStart", "SessionEnd"]
    assert hooks["BeforeTool"] == [
        {
            "matcher": ".*",
            "hooks": [
                {
                    "type": "command",
                    "command": "extensions hook gemini BeforeTool",
                    "name": "extension-host BeforeTool",
                    "timeout": 60000,
                }
            ],
        }
    ]


def test_dry_run_prints_the_diff_and_writes_nothing(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    path = project.root / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(EXISTING, indent=2) + "\n", encoding="utf-8")
    before = path.read_text(encoding="utf-8")
    assert install(project, "claude", "--dry-run") == 0
    out = capsys.readouterr().out
    assert path.read_text(encoding="utf-8") == before
    assert f"+++ {path}" in out
    assert '+            "command": "extensions hook claude PreToolUse",' in out
    assert "would add PreToolUse, PostToolUse" in out


def test_dry_run_json_says_what_would_change(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    assert install(project, "gemini", "--dry-run", "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["agent"], report["changed"], report["dry_run"]) == ("gemini", True, True)
    assert report["added"] == ["BeforeTool", "AfterTool", "BeforeAgent", "SessionStart", "SessionEnd"]
    assert not (project.root / ".gemini" / "settings.json").exists()


def test_user_installs_into_the_users_settings(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "user-home"
    monkeypatch.setenv("HOME", str(user))
    assert install(project, "claude", "--user") == 0
    assert commands(settings(user / ".claude" / "settings.json")["hooks"]["SessionEnd"]) == [
        "extensions hook claude SessionEnd"
    ]
    assert not (project.root / ".claude").exists()


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"hooks": {,}', "is not valid JSON"),
        ('{"hooks": ' + "[" * 3000 + "]" * 3000 + "}", "is not valid JSON (nested deeper than 100 levels)"),
        ("[1, 2]", "is not a JSON object"),
        ('{"hooks": []}', '"hooks" is not an object'),
        ('{"hooks": {"PreToolUse": {"matcher": "*"}}}', '"hooks.PreToolUse" is not a list'),
    ],
)
def test_a_settings_file_that_cannot_be_merged_is_left_alone_with_one_line(
    project: Project, capsys: pytest.CaptureFixture[str], text: str, says: str
) -> None:
    path = project.root / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    assert install(project, "claude") == 1
    assert path.read_text(encoding="utf-8") == text
    err = capsys.readouterr().err
    assert says in err
    assert str(path) in err
    assert err.count("\n") == 1
