"""extensions config: showing, setting and unsetting settings at both scopes, secrets from stdin,
and a secret reaching the started extension, never shown, and taken back when unset."""

from __future__ import annotations

import asyncio
import io
import json
import re
import sys
from pathlib import Path

import pytest

from extension_host.frontends import config_command
from helpers import Project, run, running_dev, wait_for_exit

MANIFEST = """
description = "reports what it was given"
[settings.region]
description = "where it deploys"
default = "eu"
[settings.retries]
type = "integer"
[settings.dry_run]
type = "boolean"
[settings.token]
secret = true
env = "SPY_TOKEN"
description = "the deploy token"
"""

REPORTER = """
    import os
    from sdk_extension import join_session, tool

    @tool(description="What of its settings it has (never the token itself)")
    def report() -> str:
        region = os.environ.get("EXTENSION_SETTING_REGION")
        retries = os.environ.get("EXTENSION_SETTING_RETRIES", "<none>")
        return f"region={region} retries={retries} token={'SPY_TOKEN' in os.environ} pid={os.getpid()}"

    join_session(tools=[report], requested_environment_variables=["SPY_TOKEN"])
"""

SECRET = "s3cr3t-value-never-shown"


def _add_spy(project: Project) -> Path:
    folder = project.add_extension("spy", REPORTER)
    (folder / "extension.toml").write_text(MANIFEST)
    return folder


def _set_secret_from_stdin(project: Project, monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "stdin", io.StringIO(SECRET + "\n"))
    return project.cli("config", "spy", "token", *args)


def _spy_with_secret_and(project: Project, monkeypatch: pytest.MonkeyPatch, key: str, value: str) -> None:
    """The spy extension, its secret set from stdin and ``key`` set to ``value``, for this project."""
    _add_spy(project)
    assert _set_secret_from_stdin(project, monkeypatch, "-") == 0
    assert project.cli("config", "spy", key, value) == 0


def test_plain_values_are_set_read_and_unset_at_both_scopes_the_project_s_winning(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    _add_spy(project)
    assert project.cli("config", "spy", "retries", "3", "--user") == 0
    assert "set retries of project:spy for every project (user): 3" in capsys.readouterr().out
    assert project.cli("config", "spy", "retries", "5") == 0  # a project's extension: this project by default
    assert "for this project: 5" in capsys.readouterr().out
    assert project.cli("config", "spy", "retries") == 0
    assert capsys.readouterr().out == "5\n"

    assert project.cli("config", "spy", "--json") == 0
    settings = {item["name"]: item for item in json.loads(capsys.readouterr().out)["settings"]}
    assert (settings["retries"]["value"], settings["retries"]["where"]) == (5, "project")
    assert (settings["region"]["value"], settings["region"]["where"]) == ("eu", "default")
    assert (settings["dry_run"]["set"], settings["dry_run"]["where"]) == (False, None)

    assert project.cli("config", "spy", "retries", "--unset") == 0
    assert "unset retries of project:spy for this project" in capsys.readouterr().out
    assert project.cli("config", "spy", "retries") == 0
    assert capsys.readouterr().out == "3\n"  # the user's value shows through
    assert project.cli("config", "spy", "retries", "--unset") == 0
    assert "was not set for this project (nothing changed; try --user)" in capsys.readouterr().out
    assert project.cli("config", "spy", "retries", "--unset", "--user") == 0
    assert project.cli("config", "spy", "retries") == 1
    assert "retries has no value and no default; to set it: extensions config spy retries VALUE" in (
        capsys.readouterr().err
    )


def test_the_table_shows_type_value_where_and_description_and_a_secret_only_as_set(
    project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _spy_with_secret_and(project, monkeypatch, "dry_run", "yes")
    capsys.readouterr()
    assert project.cli("config", "spy") == 0
    out = capsys.readouterr().out
    assert re.search(r"region\s+string\s+eu\s+default\s+where it deploys", out), out
    assert re.search(r"dry_run\s+boolean\s+true\s+project", out), out
    assert re.search(r"token\s+string \(secret\)\s+set\s+project\s+the deploy token", out), out
    assert SECRET not in out
    assert project.cli("config", "spy", "token") == 0
    assert capsys.readouterr().out == "set\n"
    assert project.cli("config", "spy", "token", "--json") == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["set"] is True and "value" not in shown and SECRET not in json.dumps(shown)


def test_a_secret_given_on_the_command_line_is_stored_with_a_one_line_warning(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    _add_spy(project)
    assert project.cli("config", "spy", "token", SECRET, "--json") == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["value"] is None and SECRET not in out
    (warning,) = err.splitlines()
    assert warning.startswith("warning: the secret token was given on the command line") and "'-'" in warning
    assert SECRET in (project.home / "secrets.json").read_text()


def test_a_secret_left_out_at_a_terminal_is_asked_for_without_echo(
    project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _add_spy(project)
    prompts: list[str] = []

    def getpass(prompt: str) -> str:
        prompts.append(prompt)
        return SECRET

    monkeypatch.setattr(config_command, "_stdin_is_terminal", lambda: True)
    monkeypatch.setattr("getpass.getpass", getpass)
    assert project.cli("config", "spy", "token") == 0
    assert prompts == ["token (not echoed): "]
    assert "set token of project:spy for this project: (secret, not shown)" in capsys.readouterr().out
    assert SECRET in (project.home / "secrets.json").read_text()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("retries", "three"), "error: project:spy: setting retries is of type integer: 'three' is not an integer"),
        (("dry_run", "perhaps"), "is of type boolean: 'perhaps' is not a boolean (true/false, yes/no, 1/0)"),
        (("retry", "3"), "error: project:spy has no setting 'retry'; did you mean 'retries'? its settings:"),
    ],
)
def test_a_wrong_type_or_an_unknown_key_is_one_line_and_changes_nothing(
    project: Project, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], says: str
) -> None:
    _add_spy(project)
    assert project.cli("config", "spy", *args) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert says in line
    assert not (project.home / "settings.json").exists()


def test_an_extension_without_settings_says_so_in_one_line(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    project.add_extension("plain", REPORTER)
    assert project.cli("config", "plain", "x", "1") == 1
    assert capsys.readouterr().err == "error: project:plain has no settings (it has no extension.toml)\n"
    assert project.cli("config", "plain") == 0
    assert capsys.readouterr().out == "project:plain has no settings\n"


def test_a_damaged_settings_file_is_one_line_naming_it(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    _add_spy(project)
    (project.home / "settings.json").write_text("{not json")
    assert project.cli("config", "spy") == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"error: {project.home / 'settings.json'} is damaged")


def test_an_empty_secret_from_stdin_changes_nothing(
    project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _add_spy(project)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert project.cli("config", "spy", "token", "-") == 1
    assert "no value was given for the secret token; nothing changed" in capsys.readouterr().err


@pytest.mark.subprocess
@pytest.mark.slow
def test_a_secret_set_from_stdin_reaches_the_extension_unseen_and_unsetting_it_stops_the_extension(
    project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _spy_with_secret_and(project, monkeypatch, "retries", "2")
    capsys.readouterr()

    async def scenario() -> None:
        async with running_dev(project) as dev:
            await dev.send("call report")
            pid = (await dev.expect(r"region=eu retries=2 token=True pid=(\d+)"))[1]

            assert await project.cli_in_thread("list", "--json") == 0
            (entry,) = json.loads(capsys.readouterr().out)["extensions"]
            assert entry["environment"]["granted"] == ["SPY_TOKEN"]  # held as a secret
            assert entry["settings"] == {"declared": ["region", "retries", "dry_run", "token"], "unset": ["dry_run"]}
            assert await project.cli_in_thread("inspect", "spy") == 0
            inspected = capsys.readouterr().out
            assert "granted SPY_TOKEN" in inspected and "settings: region, retries, dry_run, token" in inspected
            assert await project.cli_in_thread("config", "spy") == 0
            for shown in (json.dumps(entry), inspected, capsys.readouterr().out, *dev.seen):
                assert SECRET not in shown

            assert await project.cli_in_thread("config", "spy", "token", "--unset") == 0
            out = capsys.readouterr().out
            assert re.search(r"project:spy\s+stopped\s+needs setting: token \(the secret was unset", out), out
            assert "extensions config spy token -" in out
            assert wait_for_exit(int(pid)), "the extension kept running with a secret that was unset"
            await dev.send("call report")
            await dev.expect(r"tool 'report' is unavailable: extension project:spy failed: needs setting: token")
            await dev.send("quit")
            async with asyncio.timeout(30):
                assert await dev.process.wait() == 0

    run(scenario(), timeout=90)
    logs = [path for path in project.home.rglob("*") if path.is_file() and path.name != "secrets.json"]
    assert logs and not [path for path in logs if SECRET.encode() in path.read_bytes()]
