"""``extensions mcp``: serve the project's extensions to an MCP client over stdio, or print how to register it.

``extensions mcp`` runs a host for the project (watching, so a saved extension reaches the
client as a tool-list change) and serves it with :class:`~extension_host.bridges.mcp_server.McpBridge`
until the client closes stdin or sends SIGTERM/SIGINT; then it stops every extension. Only MCP
goes to stdout; what it has to say for a person goes to stderr. Without the ``mcp`` extra it
says, in one line, what to install. ``--print-config CLIENT`` prints the JSON that registers the
server in that client (and, on stderr, which file it goes in). This module parses and prints;
the serving is the bridge's.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from typing import Any

from ..bridges.mcp_config import MCP_CLIENTS, client_config, mcp_missing
from ..host import ExtensionHost
from ..paths import find_project_root
from .output import EXIT_FAILED, EXIT_OK, print_json, say

__all__ = ["add_mcp_command"]


def add_mcp_command(commands: Any) -> None:
    """Add ``mcp`` to the ``extensions`` command's subcommands."""
    help_text = "serve the project's extensions to an MCP client over stdio (Claude Code, Gemini CLI, VS Code, ...)"
    sub = commands.add_parser("mcp", help=help_text, description=help_text)
    sub.add_argument(
        "--print-config",
        choices=MCP_CLIENTS,
        metavar="CLIENT",
        help=f"print the snippet that registers this server in CLIENT ({', '.join(MCP_CLIENTS)}) and exit",
    )
    sub.set_defaults(run=_mcp)


def _mcp(args: argparse.Namespace) -> int:
    if args.print_config:
        root = find_project_root(args.root)
        home = args.home.resolve() if args.home is not None else None
        config = client_config(args.print_config, root, home)
        say(f"add this to {root / config.file} (merge it with the servers already there):", err=True)
        print_json(config.snippet)
        return EXIT_OK
    missing = mcp_missing()
    if missing is not None:
        say(f"error: {missing}", err=True)
        return EXIT_FAILED
    return asyncio.run(_serve(args))


async def _serve(args: argparse.Namespace) -> int:
    from ..bridges.mcp_server import McpBridge

    bridge = McpBridge(
        lambda on_send: ExtensionHost(args.root, args.home, readiness_timeout=args.readiness_timeout, on_send=on_send)
    )
    host = bridge.host
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        if task is not None:
            loop.add_signal_handler(signum, task.cancel)
    await host.start()
    try:
        running = [info for info in host.extensions if info.status == "running"]
        say(
            f"serving {len(host.tools)} tools of {len(running)} extensions of {host.project_root} over MCP (stdio)",
            err=True,
        )
        if not host.trust.trusted:
            say("this project is not trusted: its own extensions do not run (extensions trust)", err=True)
        await bridge.serve_stdio()
    except asyncio.CancelledError:
        pass  # SIGTERM or SIGINT: stop the extensions and leave quietly
    finally:
        await host.stop()
    return EXIT_OK
