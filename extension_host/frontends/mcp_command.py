"""``extensions mcp``: serve the project's extensions to an MCP client over stdio, or print how to register it.

``extensions mcp`` runs a host for the project (watching, so a saved extension reaches the
client as a tool-list change) and serves it with :class:`~extension_host.bridges.mcp.server.McpBridge`
until the client closes stdin or sends SIGTERM/SIGINT; then it stops every extension. With
``--http HOST:PORT`` it serves streamable HTTP on a loopback address instead, until a signal
(PORT 0: a free port), to clients that send its token as ``Authorization: Bearer``: from
``--token-file`` or ``$EXTENSION_HOST_TOKEN``, else made for this start (the URL, and such a
token, are said once on stderr). Only MCP goes to stdout; what it has to say for a person goes
to stderr. Without the ``mcp`` extra it says, in one line, what to install. ``--print-config
CLIENT`` prints the JSON that registers the server in that client (and, on stderr, which file it
goes in); with ``--http`` the JSON names the URL and the header. This module parses and prints;
the serving is the bridge's.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import signal
import socket
from typing import Any

from ..bridges.mcp.config import MCP_CLIENTS, client_config, mcp_missing
from ..control.tokens import TOKEN_ENV, ServerToken
from ..errors import TokenError
from ..host import ExtensionHost
from ..project.paths import find_project_root
from ..runtime.options import Timeouts
from .output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, print_json, say
from .token_options import add_token_options, token_from, token_given

__all__ = ["add_mcp_command", "loopback_address", "loopback_socket"]


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
    add_token_options(sub, "--http")
    sub.set_defaults(run=_mcp)


def _mcp(args: argparse.Namespace) -> int:
    if token_given(args) and args.http is None:
        say("error: --token-file goes with --http", err=True)
        return EXIT_USAGE
    if args.print_config:
        return _print_config(args)
    if args.http is not None:  # a wrong address or token is said before the MCP SDK is imported
        try:
            token = token_from(args, "mcp")
            loopback_address(args.http)
        except TokenError as exc:
            say(f"error: {exc}", err=True)
            return EXIT_USAGE
        except ValueError as exc:
            say(f"error: --http {args.http}: {exc}", err=True)
            return EXIT_USAGE
    missing = mcp_missing()
    if missing is not None:
        say(f"error: {missing}", err=True)
        return EXIT_FAILED
    if args.http is None:
        return asyncio.run(_serve(args, None))
    try:
        sock = loopback_socket(args.http)  # its address was found good above
    except OSError as exc:
        say(f"error: cannot listen on {args.http}: {exc.strerror or exc}; pick another port", err=True)
        return EXIT_FAILED
    return asyncio.run(_serve(args, (sock, token)))


def _print_config(args: argparse.Namespace) -> int:
    root = find_project_root(args.root)
    home = args.home.resolve() if args.home is not None else None
    url = None
    if args.http is not None:
        try:
            host, port = loopback_address(args.http)
        except ValueError as exc:
            say(f"error: --http {args.http}: {exc}", err=True)
            return EXIT_USAGE
        if port == 0:
            say(f"error: --http {args.http}: a client's config needs a fixed port, not 0 (new each start)", err=True)
            return EXIT_USAGE
        url = _url(host, port)
    config = client_config(args.print_config, root, home, url=url)
    say(f"add this to {config.path(root)} (merge it with the servers already there):", err=True)
    if url is not None:
        say(
            f"the client sends the token from ${TOKEN_ENV} (VS Code asks for it once): start the server with "
            f"that token in ${TOKEN_ENV} or --token-file, not one made per start",
            err=True,
        )
    print_json(config.snippet)
    return EXIT_OK


def loopback_address(spec: str) -> tuple[str, int]:
    """The host and port of ``HOST:PORT`` (``[::1]:PORT`` for IPv6; ``localhost`` is 127.0.0.1),
    refused unless HOST is loopback.

    Raises:
        ValueError: ``spec`` is not ``HOST:PORT`` with a loopback host and a port number.
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
    return host, int(port_text)


def loopback_socket(spec: str) -> socket.socket:
    """A listening TCP socket for ``HOST:PORT`` (see :func:`loopback_address`).

    Raises:
        ValueError: ``spec`` is not ``HOST:PORT`` with a loopback host and a port number.
        OSError: the address cannot be bound (the port is taken).
    """
    host, port = loopback_address(spec)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


async def _serve(args: argparse.Namespace, http: tuple[socket.socket, ServerToken] | None) -> int:
    from ..bridges.mcp.server import McpBridge

    bridge = McpBridge(
        lambda on_send: ExtensionHost(
            args.root, args.home, timeouts=Timeouts(readiness=args.readiness_timeout), on_send=on_send
        )
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
        where = "stdio" if http is None else _url(*http[0].getsockname()[:2])
        if http is not None:
            token = http[1]
            given = token.value if token.source == "start" else f"<{token.where}>"
            say(f"clients must send the header 'Authorization: Bearer {given}'", err=True)
        say(
            f"serving {len(host.tools)} tools of {len(running)} extensions of {host.project_root} over MCP ({where})",
            err=True,
        )
        if not host.trust.trusted:
            say("this project is not trusted: its own extensions do not run (extensions trust)", err=True)
        if http is None:
            await bridge.serve_stdio()
        else:
            await bridge.serve_http(http[0], http[1].value)
    except asyncio.CancelledError:
        pass  # SIGTERM or SIGINT: stop the extensions and leave quietly
    finally:
        await host.stop()
    return EXIT_OK


def _url(host: str, port: int) -> str:
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/mcp"
