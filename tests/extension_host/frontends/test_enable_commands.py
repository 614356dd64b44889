"""extensions enable / disable: both scopes as a real ``list`` sees them, a running host told at
once, an unknown name, and Copilot CLI's folder as an opt-in source of ``.mjs`` extensions."""

from __future__ import annotations

import asyncio
import json
import shutil
import textwrap
from pathlib import Path

import pytest

from helpers import Project, running_dev, wait_for_exit

STARTED = """
    import os, pathlib
    from sdk_extension import join_session, tool

    pathlib.Path({marker!r}).write_text(str(os.getpid()))

    @tool(description="Say hello")
    def {tool}() -> str:
        return "hello"

    join_session(tools=[{tool}])
"""
"""An extension that leaves a file behind the moment it starts."""


def _add(project: Project, name: str, tmp_path: Path, *, source: str = "project") -> Path:
    marker = tmp_path / f"{source}-{name}.started"
    project.add_extension(name, STARTED.format(marker=str(marker), tool=f"{name}_hello"), source=source)
    return marker


def _statuses(project: Project) -> dict[str, str]:
    listed = project.run_command("list", "--json")
    assert listed.returncode == 0, listed.stderr
    return {item["id"]: item["status"] for item in json.loads(listed.stdout)["extensions"]}


@pytest.mark.subprocess
@pytest.mark.slow
def test_a_disabled_project_extension_is_listed_as_disabled_and_never_started_until_enabled(
    project: Project, tmp_path: Path
) -> None:
    marker = _add(project, "lint", tmp_path)
    disabled = project.run_command("disable", "lint")
    assert disabled.returncode == 0, disabled.stderr
    assert "disabled project:lint in this project" in disabled.stdout
    assert _statuses(project) == {"project:lint": "disabled"}
    table = project.run_command("list").stdout
    assert "disabled for this project; 'extensions enable lint' runs it again" in table
    assert not marker.exists()  # its process never started
    assert not any(path.name != "extension.py" for path in (project.root / ".github/extensions/lint").iterdir())

    assert project.run_command("enable", "lint").returncode == 0
    assert _statuses(project) == {"project:lint": "running"}
    assert marker.exists()


@pytest.mark.subprocess
@pytest.mark.slow
def test_a_user_wide_decision_holds_in_every_project_and_a_project_decision_outranks_it(
    project: Project, tmp_path: Path
) -> None:
    marker = _add(project, "notes", tmp_path, source="user")
    elsewhere = Project(tmp_path / "elsewhere", project.home)
    (elsewhere.root / ".git").mkdir(parents=True)

    assert project.run_command("disable", "notes").returncode == 0  # a user extension: --user by default
    assert _statuses(project) == {"user:notes": "disabled"}
    assert _statuses(elsewhere) == {"user:notes": "disabled"}
    assert not marker.exists()

    enabled = project.run_command("enable", "notes", "--project", "--json")
    assert json.loads(enabled.stdout) | {"record": None, "host_outcomes": None} == {
        "extension": "user:notes",
        "enabled": True,
        "scope": "project",
        "decided_by": "project",
        "project": str(project.root),
        "record": None,
        "host_outcomes": None,
    }
    assert _statuses(project) == {"user:notes": "running"}
    assert _statuses(elsewhere) == {"user:notes": "disabled"}


@pytest.mark.subprocess
@pytest.mark.slow
def test_a_running_host_stops_a_disabled_extension_at_once_and_starts_it_when_enabled(
    project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = _add(project, "lint", tmp_path)

    async def scenario() -> None:
        async with running_dev(project) as dev:
            await dev.send("call lint_hello")
            await dev.expect("hello")
            pid = int(marker.read_text())
            marker.unlink()
            capsys.readouterr()
            assert await project.cli_in_thread("disable", "lint") == 0
            out = capsys.readouterr().out
            assert "the running host applied it:" in out and "project:lint" in out and "stopped" in out
            assert wait_for_exit(pid)
            await dev.send("list")
            await dev.expect(r"project:lint\s+disabled")

            assert await project.cli_in_thread("enable", "lint") == 0
            assert "started" in capsys.readouterr().out
            assert marker.exists()
            await dev.send("call lint_hello")
            await dev.expect("hello")

    asyncio.run(scenario())


def test_an_unknown_name_is_one_line_with_the_closest_name(
    project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _add(project, "lint", tmp_path)
    assert project.cli("disable", "lnt") == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert "no extension named 'lnt'" in err and "did you mean 'lint'?" in err
    assert not (project.home / "enablement.json").exists()


def test_disable_without_a_name_or_with_both_scopes_is_a_usage_error(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    assert project.cli("disable") == 2
    assert "name the extension to disable" in capsys.readouterr().err
    assert project.cli("disable", "x", "--user", "--project") == 2
    assert "--project: not allowed with argument --user" in capsys.readouterr().err
    assert project.cli("enable", "x", "--copilot-folder") == 2


MJS = """
import { writeFileSync } from "node:fs";
import { joinSession } from "@github/copilot-sdk/extension";

writeFileSync(process.env.MARKER_PATH ?? "/dev/null", "started");
await joinSession({
  tools: [{ name: "weather", description: "The weather", handler: async () => "sunny" }],
});
"""


@pytest.mark.subprocess
@pytest.mark.slow
@pytest.mark.usefixtures("use_sdk_cache")
@pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None, reason="needs node and npm")
def test_copilot_cli_user_extensions_run_here_once_the_folder_is_opted_in(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copilot_home = tmp_path / "copilot"
    monkeypatch.setenv("COPILOT_HOME", str(copilot_home))
    folder = copilot_home / "extensions" / "weather"
    folder.mkdir(parents=True)
    (folder / "extension.mjs").write_text(textwrap.dedent(MJS), encoding="utf-8")
    shadowed = copilot_home / "extensions" / "notes"
    shadowed.mkdir()
    (shadowed / "extension.mjs").write_text(textwrap.dedent(MJS), encoding="utf-8")
    _add(project, "notes", tmp_path, source="user")

    assert "copilot:weather" not in _statuses(project)  # off until asked for

    opted = project.run_command("enable", "--copilot-folder")
    assert opted.returncode == 0, opted.stderr
    assert "copilot:weather" in opted.stdout and "copilot:notes  (shadowed by user:notes" in opted.stdout
    called = project.run_command("call", "weather", "--readiness-timeout", "120", timeout=180)
    assert called.returncode == 0, called.stderr
    assert "sunny" in called.stdout
    listed = project.run_command("list", "--json", "--readiness-timeout", "120", timeout=180)
    statuses = {item["id"]: item["status"] for item in json.loads(listed.stdout)["extensions"]}
    assert statuses == {"user:notes": "running", "copilot:notes": "shadowed", "copilot:weather": "running"}

    assert project.run_command("disable", "--copilot-folder").returncode == 0
    assert "copilot:weather" not in _statuses(project)
