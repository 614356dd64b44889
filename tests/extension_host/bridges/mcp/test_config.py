"""``extensions mcp --print-config CLIENT`` and the missing-extra error, in process."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from extension_host.bridges.mcp.config import MCP_CLIENTS, client_config
from extension_host.control.tokens import TOKEN_ENV
from extension_host.frontends.cli import main
from helpers import Project


def printed(project: Project, client: str, capsys: pytest.CaptureFixture[str]) -> tuple[dict[str, object], str]:
    code = project.cli("mcp", "--print-config", client)
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


def test_copilot_clis_snippet_is_for_its_own_config_in_the_users_home(
    project: Project, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    snippet, err = printed(project, "copilot", capsys)
    command, *args = expected_command(project)
    assert snippet == {
        "mcpServers": {"extensions": {"type": "local", "tools": ["*"], "command": command, "args": args}}
    }
    assert str(tmp_path / "user-home" / ".copilot" / "mcp-config.json") in err


def test_an_unknown_client_is_a_usage_error(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(project.root), "mcp", "--print-config", "emacs"]) == 2
    assert "unknown client 'emacs' (choose from claude, gemini, vscode, cursor, copilot)" in capsys.readouterr().err
    with pytest.raises(ValueError, match="no MCP client named 'emacs'; known: claude, gemini, vscode, cursor, copilot"):
        client_config("emacs", project.root)
    assert MCP_CLIENTS == ("claude", "gemini", "vscode", "cursor", "copilot")


def test_without_the_default_home_the_command_leaves_home_out(tmp_path: Path) -> None:
    server = client_config("cursor", tmp_path).snippet["mcpServers"]["extensions"]
    assert server["args"] == ["-P", "-m", "extension_host", "--root", str(tmp_path), "mcp"]


def test_without_the_mcp_extra_the_server_says_in_one_line_what_to_install(
    project: Project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # what an interpreter without the package does on import
    code = project.cli("mcp")
    out, err = capsys.readouterr()
    assert (code, out) == (1, "")
    assert err == "error: extensions mcp needs the MCP Python SDK: pip install 'extension-host[mcp]'\n"


def printed_for_http(
    project: Project, client: str, capsys: pytest.CaptureFixture[str], address: str = "127.0.0.1:8765"
) -> tuple[int, dict[str, Any] | None, str]:
    code = main(["--root", str(project.root), "mcp", "--print-config", client, "--http", address])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out else None, err


URL = "http://127.0.0.1:8765/mcp"
HTTP_SNIPPETS: dict[str, dict[str, Any]] = {
    "claude": {
        "mcpServers": {
            "extensions": {
                "type": "http",
                "url": URL,
                "headers": {"Authorization": "Bearer ${EXTENSION_HOST_TOKEN}"},
            }
        }
    },
    "gemini": {
        "mcpServers": {"extensions": {"httpUrl": URL, "headers": {"Authorization": "Bearer ${EXTENSION_HOST_TOKEN}"}}}
    },
    "vscode": {
        "inputs": [
            {
                "type": "promptString",
                "id": "extension-host-token",
                "description": "The token of extensions mcp --http ($EXTENSION_HOST_TOKEN of the server)",
                "password": True,
            }
        ],
        "servers": {
            "extensions": {
                "type": "http",
                "url": URL,
                "headers": {"Authorization": "Bearer ${input:extension-host-token}"},
            }
        },
    },
    "cursor": {
        "mcpServers": {"extensions": {"url": URL, "headers": {"Authorization": "Bearer ${env:EXTENSION_HOST_TOKEN}"}}}
    },
    "copilot": {
        "mcpServers": {
            "extensions": {
                "type": "http",
                "tools": ["*"],
                "url": URL,
                "headers": {"Authorization": "Bearer ${EXTENSION_HOST_TOKEN}"},
            }
        }
    },
}


@pytest.mark.parametrize("client", MCP_CLIENTS)
def test_with_http_the_snippet_names_the_url_and_the_header_but_never_the_token(
    project: Project, client: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN_ENV, "the-real-token-never-printed")
    code, snippet, err = printed_for_http(project, client, capsys)
    assert (code, snippet) == (0, HTTP_SNIPPETS[client])
    assert "the-real-token-never-printed" not in err
    assert err.splitlines()[1] == (
        "the client sends the token from $EXTENSION_HOST_TOKEN (VS Code asks for it once): start the server "
        "with that token in $EXTENSION_HOST_TOKEN or --token-file, not one made per start"
    )


def test_a_snippet_for_http_needs_a_fixed_loopback_port(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    code, snippet, err = printed_for_http(project, "claude", capsys, "127.0.0.1:0")
    assert (code, snippet) == (2, None)
    assert err == "error: --http 127.0.0.1:0: a client's config needs a fixed port, not 0 (new each start)\n"
    code, snippet, err = printed_for_http(project, "claude", capsys, "0.0.0.0:8765")
    assert (code, snippet) == (2, None)
    assert "0.0.0.0 is not a loopback address" in err


def test_a_token_file_goes_with_http_only(project: Project, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(["--root", str(project.root), "mcp", "--token-file", str(tmp_path / "token")])
    assert (code, capsys.readouterr().err) == (2, "error: --token-file goes with --http\n")
