"""``extensions mcp``: serve the project's extensions to an MCP client over stdio, or print how to register it.

``extensions mcp`` runs a host for the project (watching, so a saved extension reaches the
client as a tool-list change) and serves it with :class:`~extension_host.bridges.mcp_server.McpBridge`
until the client closes stdin or sends SIGTERM/SIGINT; then it stops every extension. With
``--http HOST:PORT`` it serves streamable HTTP on a loopback address instead, until a signal
(PORT 0: a free port; the URL is said on stderr). Only MCP
goes to stdout; what it has to say for a person goes to stderr. Without the ``mcp`` extra it
says, in one line, what to install. ``--print-config CLIENT`` prints the JSON that registers the
server in that client (and, on stderr, which file it goes in). This module parses and prints;
the serving is the bridge's.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import signal
import socket
from typing import Any

from ..bridges.mcp_config import MCP_CLIENTS, client_config, mcp_missing
from ..host import ExtensionHost
from ..paths import find_project_root
from .output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, print_json, say

__all__ = ["add_mcp_command", "loopback_socket"]


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
    sub.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="serve over streamable HTTP at http://HOST:PORT/mcp instead of stdio; HOST must be loopback "
        "(127.0.0.1, ::1, localhost); PORT 0 picks a free one",
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
    sock = None
    if args.http is not None:
        try:
            sock = loopback_socket(args.http)
        except ValueError as exc:
            say(f"error: --http {args.http}: {exc}", err=True)
            return EXIT_USAGE
        except OSError as exc:
            say(f"error: cannot listen on {args.http}: {exc.strerror or exc}; pick another port", err=True)
            return EXIT_FAILED
    return asyncio.run(_serve(args, sock))


def loopback_socket(spec: str) -> socket.socket:
    """A listening TCP socket for ``HOST:PORT`` (``[::1]:PORT`` for IPv6), refused unless HOST is loopback.

    Raises:
        ValueError: ``spec`` is not ``HOST:PORT`` with a loopback host and a port number.
        OSError: the address cannot be bound (the port is taken).
    """
    host, colon, port_text = spec.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not colon or not port_text.isdigit() or int(port_text) > 65535:
        raise ValueError("say HOST:PORT, e.g. 127.0.0.1:8765")
    if host == "localhost":
        host = "127.0.0.1"
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ValueError(f"{host or 'the host'} is not a loopback address; the server only listens on this machine")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, int(port_text)))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


async def _serve(args: argparse.Namespace, sock: socket.socket | None) -> int:
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
        where = "stdio" if sock is None else _url(sock)
        say(
            f"serving {len(host.tools)} tools of {len(running)} extensions of {host.project_root} over MCP ({where})",
            err=True,
        )
        if not host.trust.trusted:
            say("this project is not trusted: its own extensions do not run (extensions trust)", err=True)
        if sock is None:
            await bridge.serve_stdio()
        else:
            await bridge.serve_http(sock)
    except asyncio.CancelledError:
        pass  # SIGTERM or SIGINT: stop the extensions and leave quietly
    finally:
        await host.stop()
    return EXIT_OK


def _url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/mcp"
