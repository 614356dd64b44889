"""``extensions mcp --print-config CLIENT`` and the missing-extra error, in process."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from extension_host.bridges.mcp_config import MCP_CLIENTS, client_config
from extension_host.frontends.cli import main
from helpers import Project


def printed(project: Project, client: str, capsys: pytest.CaptureFixture[str]) -> tuple[dict[str, object], str]:
    code = main(["--root", str(project.root), "--home", str(project.home), "mcp", "--print-config", client])
    out, err = capsys.readouterr()
    assert code == 0
    return json.loads(out), err


def expected_command(project: Project) -> list[str]:
    return [
        sys.executable,
        "-P",
        "-m",
        "extension_host",
        "--root",
        str(project.root),
        "--home",
        str(project.home),
        "mcp",
    ]


def test_claude_codes_snippet_is_a_stdio_server_for_the_projects_mcp_json(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    snippet, err = printed(project, "claude", capsys)
    command, *args = expected_command(project)
    assert snippet == {"mcpServers": {"extensions": {"type": "stdio", "command": command, "args": args}}}
    assert err.strip() == f"add this to {project.root / '.mcp.json'} (merge it with the servers already there):"


def test_gemini_clis_snippet_runs_the_server_in_the_project(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    snippet, err = printed(project, "gemini", capsys)
    command, *args = expected_command(project)
    assert snippet == {"mcpServers": {"extensions": {"command": command, "args": args, "cwd": str(project.root)}}}
    assert str(project.root / ".gemini" / "settings.json") in err


def test_vs_codes_snippet_lists_it_under_servers(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    snippet, err = printed(project, "vscode", capsys)
    command, *args = expected_command(project)
    assert snippet == {"servers": {"extensions": {"type": "stdio", "command": command, "args": args}}}
    assert str(project.root / ".vscode" / "mcp.json") in err


def test_cursors_snippet_is_for_its_project_mcp_json(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    snippet, err = printed(project, "cursor", capsys)
    command, *args = expected_command(project)
    assert snippet == {"mcpServers": {"extensions": {"command": command, "args": args}}}
    assert str(project.root / ".cursor" / "mcp.json") in err


def test_an_unknown_client_is_a_usage_error(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--root", str(project.root), "mcp", "--print-config", "emacs"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'emacs'" in capsys.readouterr().err
    with pytest.raises(ValueError, match="no MCP client named 'emacs'; known: claude, gemini, vscode, cursor"):
        client_config("emacs", project.root)
    assert MCP_CLIENTS == ("claude", "gemini", "vscode", "cursor")


def test_without_the_default_home_the_command_leaves_home_out(tmp_path: Path) -> None:
    server = client_config("cursor", tmp_path).snippet["mcpServers"]["extensions"]
    assert server["args"] == ["-P", "-m", "extension_host", "--root", str(tmp_path), "mcp"]


def test_without_the_mcp_extra_the_server_says_in_one_line_what_to_install(
    project: Project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # what an interpreter without the package does on import
    code = main(["--root", str(project.root), "--home", str(project.home), "mcp"])
    out, err = capsys.readouterr()
    assert (code, out) == (1, "")
    assert err == "error: extensions mcp needs the MCP Python SDK: pip install 'extension-host[mcp]'\n"
