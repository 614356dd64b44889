"""Shell completion: the scripts, and what a TAB offers (commands, options, choices, extension,
tool and session names), asked in-process and through a real bash."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from extension_host.control.service import ControlServer
from extension_host.frontends.cli import main
from extension_host.frontends.completion import SCRIPTS, SHELLS, candidates
from helpers import CALC, EXTENSIONS_SCRIPT, Project, run


def test_a_tab_after_the_command_name_offers_the_commands_that_begin_so() -> None:
    assert candidates(["li"]) == ["link", "list"]
    assert candidates(["lis"]) == ["list"]
    assert candidates(["c"]) == ["call", "chat", "command", "completion", "config"]
    assert "--version" in candidates(["--"]) and "--root" in candidates(["--"])


def test_a_tab_offers_a_command_s_sub_commands_options_and_choices() -> None:
    assert candidates(["sessions", ""]) == ["list", "rm", "show"]
    assert candidates(["call", "add", "--v"]) == ["--verbose"]
    assert candidates(["list", "--ro"]) == ["--root"]  # the global options, after the command too
    assert candidates(["schema", ""]) == ["api", "events"]
    assert candidates(["completion", "z"]) == ["zsh"]
    assert candidates(["scaffold", "x", "--template", ""]) == ["basic", "mjs", "tool-only"]
    assert candidates(["hook", "install", "g"]) == ["gemini"]
    assert candidates(["lst", ""]) == []


def test_a_tab_offers_the_extensions_found_in_the_project_and_the_user_folder(project: Project) -> None:
    project.add_extension("calc", CALC)
    project.add_extension("notes", CALC, source="user")
    (project.root / ".github" / "extensions" / "not-an-extension").mkdir()
    root = ["--root", str(project.root), "--home", str(project.home)]
    assert candidates([*root, "inspect", ""]) == ["calc", "notes"]
    assert candidates(["inspect", *root, "n"]) == ["notes"]
    assert candidates([*root, "export", "copilot", "c"]) == ["calc"]
    assert candidates([*root, "grant", "calc", ""]) == []  # variables: nothing to offer
    assert not list(project.home.glob("logs/*"))  # nothing was started


def test_a_tab_offers_the_persisted_session_ids(project: Project) -> None:
    sessions = project.home / "sessions"
    for name in ("2f6c0d1e-aaaa", "7b0e9f00-bbbb"):
        (sessions / name).mkdir(parents=True)
    home = ["--home", str(project.home)]
    assert candidates([*home, "sessions", "show", ""]) == ["2f6c0d1e-aaaa", "7b0e9f00-bbbb"]
    assert candidates([*home, "dev", "--resume", "7"]) == ["7b0e9f00-bbbb"]


def test_a_tab_offers_folders_for_a_folder_option(tmp_path: Path) -> None:
    (tmp_path / "alpha").mkdir()
    (tmp_path / "alps.txt").write_text("", encoding="utf-8")
    assert candidates(["--root", f"{tmp_path}/al"]) == [f"{tmp_path}/alpha/"]


@pytest.mark.subprocess
def test_a_tab_offers_the_tools_of_the_running_host_and_none_without_one(project: Project) -> None:
    project.add_extension("calc", CALC)
    words = ["--root", str(project.root), "call", ""]
    assert candidates(words) == []

    async def scenario() -> list[str]:
        async with project.host() as host, ControlServer(host):
            return await asyncio.to_thread(candidates, words)

    assert run(scenario()) == ["add"]


@pytest.mark.parametrize("shell", SHELLS)
def test_the_completion_command_prints_each_shell_s_script(shell: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", shell]) == 0
    script = capsys.readouterr().out
    assert script == SCRIPTS[shell]
    assert "__complete" in script


@pytest.mark.parametrize("shell", SHELLS)
def test_each_script_is_valid_in_its_shell(shell: str, tmp_path: Path) -> None:
    program = shutil.which(shell)
    if program is None:
        pytest.skip(f"{shell} is not installed: its script is generated but not parsed")
    script = tmp_path / f"extensions.{shell}"
    script.write_text(SCRIPTS[shell], encoding="utf-8")
    checked = subprocess.run([program, "-n", str(script)], capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, checked.stderr


def _bash_completions(project: Project, tmp_path: Path, *words: str) -> list[str]:
    """COMPREPLY of a real bash that sourced the script, for ``extensions WORDS`` (TAB after the last)."""
    script = tmp_path / "extensions.bash"
    script.write_text(SCRIPTS["bash"], encoding="utf-8")
    line = " ".join(f"'{word}'" for word in ("extensions", *words))
    program = (
        f"source {script}\n"
        f"COMP_WORDS=({line}); COMP_CWORD={len(words)}\n"
        "_extensions_complete\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    env = {**os.environ, "PATH": f"{EXTENSIONS_SCRIPT.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", program],
        cwd=project.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line]


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completes_a_command_and_an_extension_name(project: Project, tmp_path: Path) -> None:
    project.add_extension("calc", CALC)
    assert _bash_completions(project, tmp_path, "lis") == ["list"]
    assert _bash_completions(project, tmp_path, "inspect", "ca") == ["calc"]
    assert _bash_completions(project, tmp_path, "sessions", "") == ["list", "rm", "show"]
