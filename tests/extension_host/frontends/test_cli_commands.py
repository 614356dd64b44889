"""The extensions command and slash commands: `extensions command`, list/inspect showing them, and
`/NAME ARGS` typed into dev."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from extension_host.frontends import render
from extension_host.info import ExtensionInfo
from helpers import Project, run, running_dev

pytestmark = pytest.mark.subprocess

OPS = """
    from pathlib import Path
    from sdk_extension import Command, join_session

    def deploy(context):
        Path("deployed.txt").write_text(context.args)

    def fail(context):
        raise RuntimeError("no target named " + context.args)

    join_session(commands=[Command("deploy", "Deploy the project", deploy), Command("fail", "Always fails", fail)])
"""


def test_command_runs_one_slash_command_and_exits_by_how_it_ended(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    project.add_extension("ops", OPS)
    assert project.cli("command", "/deploy", "production --fast") == 0
    assert capsys.readouterr().out == "/deploy: done in project:ops\n"
    assert (project.root / "deployed.txt").read_text() == "production --fast"

    assert project.cli("command", "fail", "staging") == 1
    assert capsys.readouterr().err == "/fail: error in project:ops: no target named staging\n"

    assert project.cli("command", "nope", "--json") == 1
    result = json.loads(capsys.readouterr().out)
    assert (result["status"], result["ok"], result["owner"]) == ("unknown", False, None)
    assert "no command '/nope' is offered; commands: /deploy, /fail" in result["error"]


def test_list_and_inspect_show_an_extension_s_commands(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    project.add_extension("ops", OPS)
    assert project.cli("list") == 0
    header, row = capsys.readouterr().out.splitlines()[:2]
    assert "COMMANDS" in header
    assert "/deploy, /fail" in row

    assert project.cli("list", "--json") == 0
    (extension,) = json.loads(capsys.readouterr().out)["extensions"]
    assert extension["commands"] == ["deploy", "fail"]

    assert project.cli("inspect", "ops") == 0
    out = capsys.readouterr().out
    assert "  commands:\n    /deploy: Deploy the project\n    /fail: Always fails\n" in out

    assert project.cli("inspect", "ops", "--json") == 0
    detail = json.loads(capsys.readouterr().out)
    assert detail["commands"] == [
        {"name": "deploy", "description": "Deploy the project", "owner": "project:ops"},
        {"name": "fail", "description": "Always fails", "owner": "project:ops"},
    ]


def test_dev_runs_a_slash_command_typed_on_its_input(project: Project) -> None:
    project.add_extension("ops", OPS)

    async def scenario() -> None:
        async with running_dev(project) as dev:
            await dev.send("/deploy canary")
            await dev.expect(r"^/deploy: done in project:ops$")
            await dev.send("/fail prod")
            await dev.expect(r"^/fail: error in project:ops: no target named prod$")
            await dev.send("quit")
            async with asyncio.timeout(30):
                assert await dev.process.wait() == 0
        assert (project.root / "deployed.txt").read_text() == "canary"

    run(scenario())


def test_a_detached_extension_is_listed_with_what_happened_to_it() -> None:
    detached = ExtensionInfo("project:leaver", "leaver", "project", Path("/p/leaver"), "detached", 42)
    assert "left the session (session.detach); a reload brings it back" in render.extensions_table([detached])
