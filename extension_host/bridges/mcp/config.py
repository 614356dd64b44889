"""``extensions mcp --print-config CLIENT``: the snippet that registers the MCP server in a client.

Each client keeps its MCP servers in a JSON file of its own shape (from each client's published
reference): Claude Code's project ``.mcp.json`` and Cursor's ``.cursor/mcp.json`` under
``mcpServers``; Gemini CLI's ``.gemini/settings.json`` under ``mcpServers`` (with ``cwd``); VS
Code's ``.vscode/mcp.json`` under ``servers`` with ``"type": "stdio"``; GitHub Copilot CLI's own
``~/.copilot/mcp-config.json`` (in the user's home: a headless run reads no project file) under
``mcpServers``, with ``"type": "local"`` (``"http"``) and ``"tools": ["*"]``, as ``copilot mcp
add`` writes it. The command is this
interpreter running ``-P -m extension_host`` with the project root, so it works whatever the
client's ``PATH`` and working folder, and imports nothing from that folder
(:mod:`extension_host.launch.interpreter`). Where a client starts it does not matter, so only
Gemini CLI's snippet names a ``cwd``: the project root is no safer a place to import from than
any other folder.

With a URL (``extensions mcp --http``) the snippet names the URL (``url``; Gemini CLI's
``httpUrl``) and the ``Authorization: Bearer`` header the server requires. The header holds a
reference, never the token: such files are often committed. Claude Code and Gemini CLI expand
``${EXTENSION_HOST_TOKEN}`` from their environment, Cursor ``${env:EXTENSION_HOST_TOKEN}``, and
VS Code asks the user once for ``${input:extension-host-token}`` (declared under ``inputs``).

:func:`mcp_missing` says whether the optional ``mcp`` extra the server needs is installed. Plain
data; printing is the front end's; it never imports the SDK unless asked whether it is there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ...control.tokens import TOKEN_ENV
from ...launch.interpreter import python_command

__all__ = ["INSTALL_HINT", "MCP_CLIENTS", "ClientConfig", "client_config", "mcp_missing", "server_command"]

INSTALL_HINT: Final = "pip install 'extension-host[mcp]'"
"""What installs the MCP Python SDK the server is built on."""


_VSCODE_TOKEN_INPUT: Final[Mapping[str, Any]] = {
    "type": "promptString",
    "id": "extension-host-token",
    "description": f"The token of extensions mcp --http (${TOKEN_ENV} of the server)",
    "password": True,
}
"""VS Code's way to a secret: it asks the user once and keeps the answer."""


@dataclass(frozen=True)
class _Shape:
    file: str
    key: str
    extra: Mapping[str, Any]
    """Fields of a stdio server besides ``command`` and ``args``."""
    http: Mapping[str, Any]
    """Fields of an HTTP server besides its URL and headers."""
    token: str
    """How the header refers to the token, in the client's variable syntax."""
    cwd: bool = False
    in_home: bool = False
    """``file`` is in the user's home, not the project."""
    url_key: str = "url"
    inputs: tuple[Mapping[str, Any], ...] = ()
    """What the file must declare for ``token`` to mean something."""


_SHAPES: Final[Mapping[str, _Shape]] = {
    "claude": _Shape(".mcp.json", "mcpServers", {"type": "stdio"}, {"type": "http"}, f"${{{TOKEN_ENV}}}"),
    "gemini": _Shape(".gemini/settings.json", "mcpServers", {}, {}, f"${{{TOKEN_ENV}}}", cwd=True, url_key="httpUrl"),
    "vscode": _Shape(
        ".vscode/mcp.json",
        "servers",
        {"type": "stdio"},
        {"type": "http"},
        f"${{input:{_VSCODE_TOKEN_INPUT['id']}}}",
        inputs=(_VSCODE_TOKEN_INPUT,),
    ),
    "cursor": _Shape(".cursor/mcp.json", "mcpServers", {}, {}, f"${{env:{TOKEN_ENV}}}"),
    "copilot": _Shape(
        ".copilot/mcp-config.json",
        "mcpServers",
        {"type": "local", "tools": ["*"]},
        {"type": "http", "tools": ["*"]},
        f"${{{TOKEN_ENV}}}",
        in_home=True,
    ),
}
MCP_CLIENTS: Final = tuple(_SHAPES)
"""The clients ``--print-config`` knows."""


@dataclass(frozen=True)
class ClientConfig:
    """The JSON to merge into ``file`` (relative to the project root, or with ``in_home`` to the
    user's home) to register the server."""

    file: str
    snippet: dict[str, Any]
    in_home: bool = False

    def path(self, root: Path) -> Path:
        """Where the file is, for the project ``root``."""
        return (Path.home() if self.in_home else root) / self.file


def server_command(root: Path, home: Path | None = None) -> list[str]:
    """The command line that runs ``extensions mcp`` for ``root`` (and ``home``, when not the default)."""
    options = ["--root", str(root)] if home is None else ["--root", str(root), "--home", str(home)]
    return [*python_command("-m", "extension_host", *options, "mcp")]


def client_config(
    client: str, root: Path, home: Path | None = None, name: str = "extensions", *, url: str | None = None
) -> ClientConfig:
    """The registration of the server ``name`` for ``client`` (one of :data:`MCP_CLIENTS`): the
    command that serves it over stdio, or with ``url`` the server ``extensions mcp --http``
    serves there, with the header that gives it the token (see the module).

    Raises:
        ValueError: ``client`` is not one of :data:`MCP_CLIENTS`.
    """
    shape = _SHAPES.get(client)
    if shape is None:
        raise ValueError(f"no MCP client named {client!r}; known: {', '.join(MCP_CLIENTS)}")
    if url is not None:
        headers = {"Authorization": f"Bearer {shape.token}"}
        snippet: dict[str, Any] = {"inputs": [dict(i) for i in shape.inputs]} if shape.inputs else {}
        snippet[shape.key] = {name: {**shape.http, shape.url_key: url, "headers": headers}}
        return ClientConfig(shape.file, snippet, shape.in_home)
    executable, *args = server_command(root, home)
    server: dict[str, Any] = {**shape.extra, "command": executable, "args": args}
    if shape.cwd:
        server["cwd"] = str(root)
    return ClientConfig(shape.file, {shape.key: {name: server}}, shape.in_home)


def mcp_missing() -> str | None:
    """Why ``extensions mcp`` cannot serve (the one line to print), or ``None`` when it can."""
    try:
        import mcp  # noqa: F401  (whether it imports is the question)
    except ImportError:
        return f"extensions mcp needs the MCP Python SDK: {INSTALL_HINT}"
    return None
