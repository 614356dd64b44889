"""``extensions serve``: run the client protocol server in the foreground.

``--stdio`` (the default) serves one client on stdin/stdout and ends with it; ``--socket``
serves the project's Unix socket and ``--listen HOST:PORT`` a WebSocket, both until SIGINT or
SIGTERM. Where it listens (and the WebSocket's token: from ``--token-file``, ``--token`` or
``$EXTENSION_HOST_TOKEN``, else made for this start) is printed once, on stdout, as its first
line; with ``--listen`` a second line is the web page's URL (the same token:
:mod:`extension_host.serve.web_page`); ``--token`` costs a warning, as other users can read it
with ``ps``. At a terminal,
stderr also says it for a person: the address and where clients find the token, the socket
path, or that stdin/stdout carry the protocol (only when stdin is a terminal too: a client
that started it hears nothing), and which agent answers prompts. ``--agent
NAME[:ARGUMENT]`` is the default agent provider of new sessions (``scripted:FILE``); without
it, ``openai`` when ``OPENAI_BASE_URL`` or ``OPENAI_API_KEY`` is set, else ``unconfigured``:
sessions open, and a prompt fails with one line saying how to configure an agent;
``--max-sessions N`` bounds the sessions served at once (default: derived from memory,
:mod:`extension_host.serve.capacity`). Errors are one line on stderr, exit 1; bad usage exits 2.
This module parses and prints; the server is :mod:`extension_host.serve`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

from ..errors import ExtensionHostError, TokenError
from ..project.paths import find_project_root
from ..serve.capacity import MAX_DERIVED_SESSIONS, MIN_DERIVED_SESSIONS, SESSION_MEMORY_BUDGET, checked_max_sessions
from ..serve.providers import PROVIDERS, default_provider
from ..serve.served_session import HostOptions
from ..serve.server import ProtocolServer, ServerOptions
from ..serve.transports import check_bind, serve_socket, serve_socket_path, serve_stdio, serve_websocket
from ..serve.web_page import page_url
from .output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, is_terminal, say
from .token_options import add_token_options, token_from, token_given

__all__ = ["add_serve_command"]


def add_serve_command(commands: Any) -> None:
    """Add ``serve`` to the ``extensions`` parser's subcommands."""
    text = "serve the client protocol (JSON-RPC) to UIs, editors and scripts: many sessions, one process"
    parser = commands.add_parser("serve", help=text, description=text)
    parser.set_defaults(run=_serve)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--stdio", action="store_true", help="serve one client on stdin/stdout (the default)")
    where.add_argument("--socket", action="store_true", help="serve the project's Unix socket (this user only)")
    where.add_argument("--listen", metavar="HOST:PORT", help="serve a WebSocket (loopback unless --allow-remote)")
    parser.add_argument(
        "--agent",
        metavar="NAME[:ARG]",
        help="the agent provider of new sessions and its argument, e.g. scripted:FILE or openai:BASE_URL "
        f"(have: {', '.join(PROVIDERS)}; default: openai when OPENAI_BASE_URL or OPENAI_API_KEY is set, "
        "else none: prompts fail saying how to configure one)",
    )
    parser.add_argument("--allow-remote", action="store_true", help="with --listen: accept a non-loopback address")
    parser.add_argument(
        "--max-sessions",
        metavar="N",
        help=f"sessions served at once (default: available memory / {SESSION_MEMORY_BUDGET >> 20} MiB, "
        f"within {MIN_DERIVED_SESSIONS}-{MAX_DERIVED_SESSIONS})",
    )
    add_token_options(parser, "--listen", token_option=True)


def _serve(args: argparse.Namespace) -> int:
    name, _, argument = str(args.agent or default_provider()).partition(":")
    if name not in PROVIDERS:
        print(f"extensions serve: no agent provider {name!r}; have: {', '.join(sorted(PROVIDERS))}", file=sys.stderr)
        return EXIT_USAGE
    try:
        root = find_project_root(args.root)
    except ExtensionHostError as exc:
        print(f"extensions serve: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        max_sessions = None if args.max_sessions is None else checked_max_sessions(args.max_sessions, "--max-sessions")
    except ValueError as exc:
        print(f"extensions serve: {exc}", file=sys.stderr)
        return EXIT_USAGE
    options = ServerOptions(
        provider=name,
        provider_argument=argument or None,
        hosts=HostOptions(args.home, args.readiness_timeout),
        default_directory=root,
        max_sessions=max_sessions,
        freeze_sessions=True,  # this process is the server alone
    )
    if token_given(args) and args.listen is None:
        print("extensions serve: --token and --token-file go with --listen", file=sys.stderr)
        return EXIT_USAGE
    try:
        if args.listen is not None:
            host, _, port_text = str(args.listen).rpartition(":")
            host = host.strip("[]")
            if not host or not port_text.isdigit():
                print(
                    f"extensions serve: --listen wants HOST:PORT, e.g. 127.0.0.1:8765, not {args.listen}",
                    file=sys.stderr,
                )
                return EXIT_USAGE
            try:
                token = token_from(args, "serve")
            except TokenError as exc:
                print(f"extensions serve: {exc}", file=sys.stderr)
                return EXIT_USAGE
            check_bind(host, allow_remote=args.allow_remote, token=token)
            return asyncio.run(
                _listening(
                    options,
                    lambda server, ready, stop: serve_websocket(server, host, int(port_text), token.value, ready, stop),
                    lambda where: (
                        f"{where.partition('?')[0]} (clients give {token.where}; a browser opens the page "
                        f"{page_url(where).partition('?')[0]} with it)"
                    ),
                    lambda where: [where, page_url(where)],
                )
            )
        if args.socket:
            path = serve_socket_path(root)
            return asyncio.run(
                _listening(
                    options,
                    lambda server, ready, stop: serve_socket(server, path, root, ready, stop),
                    lambda where: f"the Unix socket {where} (this user only)",
                )
            )
        if is_terminal(sys.stdin):
            _tell(f"serving the client protocol on stdin/stdout (for a client that starts it); {_agent_note(options)}")
        return asyncio.run(_stdio(options))
    except ExtensionHostError as exc:
        print(f"extensions serve: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return EXIT_OK


async def _stdio(options: ServerOptions) -> int:
    # The protocol gets its own copy of stdout; fd 1 then points at stderr, so that nothing
    # printed by accident (a library, a warning) corrupts the framing.
    protocol_out = os.dup(1)
    os.dup2(2, 1)
    server = ProtocolServer(options)
    serving = asyncio.ensure_future(serve_stdio(server, os.dup(0), protocol_out))
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, serving.cancel)
    try:
        with contextlib.suppress(asyncio.CancelledError):
            await serving
    finally:
        await server.close()
    return EXIT_OK


def _tell(text: str) -> None:
    """Say ``text`` on stderr when a person reads it there (a terminal)."""
    if sys.stderr is not None and is_terminal(sys.stderr):
        say(text, err=True)


def _agent_note(options: ServerOptions) -> str:
    if options.provider == "unconfigured":
        return "no agent configured: prompts fail until it is started with --agent, or with OPENAI_BASE_URL set"
    return f"agent: {options.provider}" + (f" ({options.provider_argument})" if options.provider_argument else "")


async def _listening(
    options: ServerOptions,
    listen: Any,
    shown: Callable[[str], str],
    lines: Callable[[str], list[str]] = lambda where: [where],
) -> int:
    server = ProtocolServer(options)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)

    def ready(where: str) -> None:
        print("\n".join(lines(where)), flush=True)
        _tell(f"serving the client protocol on {shown(where)}; {_agent_note(options)}; Ctrl-C stops")

    try:
        await listen(server, ready, stop)
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(signum)
        await server.close()
    return EXIT_OK
