"""``extensions hook install claude|gemini``: merged into the settings, never clobbering, idempotent."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from extension_host.bridges.agent_hooks.install import find_extensions_command
from helpers import OtherUser, Project

EXTENSIONS = find_extensions_command()
"""The console script this environment installed, which the entries name."""


def command(agent: str, event: str) -> str:
    return f"{shlex.quote(str(EXTENSIONS))} hook {agent} {event}"


EXISTING: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm run test:*)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./audit.sh"}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    },
}


def install(project: Project, *args: str) -> int:
    return project.cli("hook", "install", *args)


def settings(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def commands(groups: list[dict[str, Any]]) -> list[str]:
    return [hook["command"] for group in groups for hook in group["hooks"]]


def test_install_writes_every_claude_event_into_a_new_project_settings_file(project: Project) -> None:
    assert install(project, "claude") == 0
    written = settings(project.root / ".claude" / "settings.json")
    assert list(written["hooks"]) == [
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "UserPromptSubmit",
        "SessionStart",
        "SessionEnd",
        "Stop",
        "SubagentStart",
        "SubagentStop",
    ]
    assert written["hooks"]["PreToolUse"] == [
        {"matcher": "*", "hooks": [{"type": "command", "command": command("claude", "PreToolUse"), "timeout": 60}]}
    ]
    assert written["hooks"]["PostToolUseFailure"][0]["matcher"] == "*"
    assert "matcher" not in written["hooks"]["UserPromptSubmit"][0]
    assert written["hooks"]["Stop"] == [
        {"hooks": [{"type": "command", "command": command("claude", "Stop"), "timeout": 60}]}
    ]


def test_install_keeps_every_other_entry(project: Project) -> None:
    path = project.root / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(EXISTING), encoding="utf-8")
    assert install(project, "claude") == 0
    merged = settings(path)
    assert merged["model"] == "opus"
    assert merged["permissions"] == EXISTING["permissions"]
    assert merged["hooks"]["Notification"] == EXISTING["hooks"]["Notification"]
    assert commands(merged["hooks"]["PreToolUse"]) == ["./audit.sh", command("claude", "PreToolUse")]


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
    assert list(hooks) == ["BeforeTool", "AfterTool", "BeforeAgent", "SessionStart", "SessionEnd", "AfterAgent"]
    assert hooks["BeforeTool"] == [
        {
            "matcher": ".*",
            "hooks": [
                {
                    "type": "command",
                    "command": command("gemini", "BeforeTool"),
                    "name": "extension-host BeforeTool",
                    "timeout": 60000,
                }
            ],
        }
    ]


def test_the_command_names_the_console_script_by_its_path_so_it_runs_without_extensions_on_path(
    project: Project,
) -> None:
    assert install(project, "claude") == 0
    written = commands(settings(project.root / ".claude" / "settings.json")["hooks"]["PreToolUse"])
    assert written == [command("claude", "PreToolUse")] and EXTENSIONS.is_absolute()
    # An agent runs it through a shell; with no PATH at all, the command still answers (here:
    # a guard given no payload blocks, which only the hook command itself says).
    done = subprocess.run(
        ["/bin/sh", "-c", written[0]],
        cwd=project.root,
        env={"HOME": str(project.home)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr.startswith("blocked by the project's extensions")) == (2, True), done


def test_a_console_script_whose_path_has_spaces_is_quoted(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "my tools" / "bin" / "extensions"
    script.parent.mkdir(parents=True)
    shutil.copy(EXTENSIONS, script)
    monkeypatch.setattr(sys, "argv", [str(script), "hook", "install", "gemini"])
    assert install(project, "gemini") == 0
    (written,) = commands(settings(project.root / ".gemini" / "settings.json")["hooks"]["BeforeTool"])
    assert shlex.split(written) == [str(script), "hook", "gemini", "BeforeTool"]


def test_installing_again_brings_a_bare_entry_up_to_date_in_place(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    # What older versions wrote: the bare command, which only works with extensions on the agent's PATH.
    path = project.root / ".claude" / "settings.json"
    path.parent.mkdir()
    old = {"matcher": "*", "hooks": [{"type": "command", "command": "extensions hook claude PreToolUse", "timeout": 9}]}
    path.write_text(json.dumps({"hooks": {"PreToolUse": [EXISTING["hooks"]["PreToolUse"][0], old]}}), encoding="utf-8")
    assert install(project, "claude") == 0
    groups = settings(path)["hooks"]["PreToolUse"]
    assert groups == [
        EXISTING["hooks"]["PreToolUse"][0],
        {"matcher": "*", "hooks": [{"type": "command", "command": command("claude", "PreToolUse"), "timeout": 9}]},
    ]
    out = capsys.readouterr().out
    assert "updated the command of PreToolUse" in out and "added hooks for PostToolUse, " in out
    assert install(project, "claude") == 0
    assert "nothing changed" in capsys.readouterr().out


def test_without_an_extensions_command_to_name_nothing_is_installed(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["python"])
    monkeypatch.setattr(sysconfig, "get_path", lambda name, scheme=None: str(tmp_path / "no-scripts"))
    assert install(project, "claude") == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot find the extensions command of this Python" in err, err
    assert "nothing was installed" in err and "pip install extension-host" in err
    assert not (project.root / ".claude").exists()


def test_dry_run_prints_the_diff_and_writes_nothing(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    path = project.root / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(EXISTING, indent=2) + "\n", encoding="utf-8")
    before = path.read_text(encoding="utf-8")
    assert install(project, "claude", "--dry-run") == 0
    out = capsys.readouterr().out
    assert path.read_text(encoding="utf-8") == before
    assert f"+++ {path}" in out
    assert f'+            "command": "{command("claude", "PreToolUse")}",' in out
    assert "would add hooks for PreToolUse, PostToolUse" in out


def test_dry_run_json_says_what_would_change(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    assert install(project, "gemini", "--dry-run", "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["agent"], report["changed"], report["dry_run"]) == ("gemini", True, True)
    assert report["added"] == ["BeforeTool", "AfterTool", "BeforeAgent", "SessionStart", "SessionEnd", "AfterAgent"]
    assert not (project.root / ".gemini" / "settings.json").exists()


def test_user_installs_into_the_users_settings(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "user-home"
    monkeypatch.setenv("HOME", str(user))
    assert install(project, "claude", "--user") == 0
    assert commands(settings(user / ".claude" / "settings.json")["hooks"]["SessionEnd"]) == [
        command("claude", "SessionEnd")
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


@pytest.mark.parametrize(("agent", "folder"), [("claude", ".claude"), ("gemini", ".gemini")])
def test_a_settings_folder_that_is_a_symlink_out_of_the_project_is_refused_naming_its_target(
    project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: str, folder: str
) -> None:
    victim = tmp_path / "users-own-settings"
    victim.mkdir()
    (victim / "settings.json").write_text('{"model": "mine"}', encoding="utf-8")
    (project.root / folder).symlink_to(victim)
    for dry_run in (["--dry-run"], []):
        assert install(project, agent, *dry_run) == 1
        err = capsys.readouterr().err
        assert f"{project.root / folder} is a symlink to {victim}, outside the project" in err
        assert "mine" not in err and err.count("\n") == 1
    assert sorted(p.name for p in victim.iterdir()) == ["settings.json"]
    assert (victim / "settings.json").read_text(encoding="utf-8") == '{"model": "mine"}'


def test_a_settings_file_that_is_a_symlink_out_of_the_project_is_refused_naming_its_target(
    project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text("{}", encoding="utf-8")
    (project.root / ".claude").mkdir()
    (project.root / ".claude" / "settings.json").symlink_to(outside)
    assert install(project, "claude") == 1
    assert f"{project.root / '.claude' / 'settings.json'} is a symlink to {outside}" in capsys.readouterr().err
    assert outside.read_text(encoding="utf-8") == "{}"


def test_a_symlinked_settings_file_is_written_where_it_leads_and_stays_a_link(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project.root / "config" / "claude").mkdir(parents=True)
    (project.root / ".claude").symlink_to(project.root / "config" / "claude")  # inside the project: fine
    assert install(project, "claude") == 0
    assert (project.root / ".claude").is_symlink()
    assert "SessionEnd" in settings(project.root / "config" / "claude" / "settings.json")["hooks"]
    user = tmp_path / "user-home"
    dotfiles = tmp_path / "dotfiles" / "claude.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"model": "opus"}', encoding="utf-8")
    (user / ".claude").mkdir(parents=True)
    (user / ".claude" / "settings.json").symlink_to(dotfiles)  # a dotfiles manager's link
    monkeypatch.setenv("HOME", str(user))
    assert install(project, "claude", "--user") == 0
    assert (user / ".claude" / "settings.json").is_symlink()
    written = settings(dotfiles)
    assert written["model"] == "opus" and "SessionEnd" in written["hooks"]


@pytest.mark.subprocess
def test_a_settings_file_that_is_not_a_regular_file_is_refused_without_reading_it(project: Project) -> None:
    (project.root / ".claude").mkdir()
    fifo = project.root / ".claude" / "settings.json"
    os.mkfifo(fifo)
    done = project.run_command("hook", "install", "claude")
    assert done.returncode == 1
    assert (
        done.stderr == f"error: {fifo} is not a regular file; nothing was installed: move it away, then install again\n"
    )


@pytest.mark.parametrize("scope", ["project", "user"])
def test_a_settings_folder_another_user_owns_is_refused(
    project: Project,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    another_user: OtherUser,
    scope: str,
) -> None:
    base = project.root if scope == "project" else tmp_path / "user-home"
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    folder = base / ".claude"
    folder.mkdir(parents=True)
    os.chown(folder, another_user.uid, another_user.gid)
    assert install(project, "claude", *(["--user"] if scope == "user" else [])) == 1
    err = capsys.readouterr().err
    assert err == f"error: {folder} belongs to uid {another_user.uid}, not you; nothing was installed: " + (
        "check it, then take it over or remove it\n"
    )
    assert list(folder.iterdir()) == []


def check(project: Project, agent: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = project.cli("hook", "check", agent)
    return code, capsys.readouterr().out


def test_check_says_when_nothing_is_installed(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    assert check(project, "claude", capsys) == (
        1,
        "no hooks of this project's extensions in Claude Code's settings: run extensions hook install claude\n",
    )


def test_check_passes_a_fresh_install_and_names_what_an_old_or_broken_one_lacks(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    assert install(project, "claude") == 0
    code, out = check(project, "claude", capsys)
    assert code == 0 and out.endswith(f"Claude Code runs the hooks of {project.root}'s extensions\n"), out
    path = project.root / ".claude" / "settings.json"
    written = settings(path)
    written["hooks"]["PreToolUse"][0]["hooks"][0]["command"] = "extensions hook claude PreToolUse"
    written["hooks"]["PostToolUse"][0]["hooks"][0]["command"] = "/gone/bin/extensions hook claude PostToolUse"
    del written["hooks"]["SessionEnd"]
    path.write_text(json.dumps(written), encoding="utf-8")
    code, out = check(project, "claude", capsys)
    assert code == 1
    problems = [line for line in out.splitlines() if line.startswith("  problem: ")]
    assert len(problems) == 3, out
    assert "no entry for SessionEnd: run extensions hook install claude again" in problems[0]
    assert "runs /gone/bin/extensions, which is not an executable file" in out
    assert "runs a bare 'extensions', which the agent finds only on its own PATH" in out
    assert install(project, "claude") == 0
    assert check(project, "claude", capsys)[0] == 0


@pytest.mark.subprocess
def test_check_says_a_settings_file_that_is_not_a_regular_file_cannot_be_read_without_reading_it(
    project: Project,
) -> None:
    """A repository can ship a fifo as its settings: the check names it instead of waiting on it."""
    (project.root / ".claude").mkdir()
    fifo = project.root / ".claude" / "settings.json"
    os.mkfifo(fifo)
    done = project.run_command("hook", "check", "claude", timeout=30)
    assert done.returncode == 1
    assert done.stdout == (
        f"{fifo}:\n  problem: cannot be read ({fifo} is not a regular file): fix it, then run extensions hook "
        "install claude again\n"
    )


def test_check_of_gemini_project_hooks_needs_a_folder_gemini_cli_trusts(
    project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(project.home))
    monkeypatch.delenv("GEMINI_CLI_TRUST_WORKSPACE", raising=False)
    assert install(project, "gemini") == 0
    said = capsys.readouterr().out
    assert said.count("\n") == 2 and "note: Gemini CLI runs a project's hooks only in a folder it trusts" in said
    code, out = check(project, "gemini", capsys)
    assert code == 1 and f"it does not trust {project.root}" in out, out
    monkeypatch.setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")
    assert check(project, "gemini", capsys)[0] == 0


def test_check_of_user_hooks_does_not_need_the_folder_trusted(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    monkeypatch.setenv("GEMINI_CLI_TRUST_WORKSPACE", "false")
    assert install(project, "gemini", "--user") == 0
    assert "note:" not in capsys.readouterr().out
    code, out = check(project, "gemini", capsys)
    assert code == 0, out
