"""``extensions acp``: this host and its agent as an Agent Client Protocol agent on stdio.

An editor (Zed, a JetBrains IDE, Neovim, Emacs) starts it and speaks ACP on its stdin and
stdout; each session the editor opens is a host in the session's folder, with that project's
extensions, and an agent for an OpenAI-compatible endpoint configured as for ``chat``
(``--base-url``, ``--model``, the key from ``OPENAI_API_KEY``), or ``--agent scripted:FILE``
(a scripted agent, as ``serve`` takes it). Only the protocol goes to stdout; what it has to say
for a person goes to stderr. It ends when the editor closes stdin, or at SIGTERM/SIGINT,
stopping every extension. ``--print-config zed|jetbrains`` prints the JSON that registers it in
that editor (and, on stderr, which file it goes in). This module parses and prints; the agent
is :mod:`extension_host.acp`.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from typing import Any

__all__ = ["add_acp_command"]

_EDITORS = ("zed", "jetbrains")
"""The editors of ``--print-config`` (:data:`extension_host.acp.editors.EDITORS`; not imported
for ``--help``)."""


def add_acp_command(commands: Any) -> None:
    """Add ``acp`` to the ``extensions`` command's subcommands."""
    help_text = "be an Agent Client Protocol agent on stdio, for Zed, JetBrains IDEs and other ACP editors"
    sub = commands.add_parser("acp", help=help_text, description=help_text)
    sub.add_argument("--model", help="the model to use (default: $OPENAI_MODEL, or the endpoint's only model)")
    sub.add_argument(
        "--base-url", help="the endpoint, e.g. http://localhost:11434/v1 (default: $OPENAI_BASE_URL, else OpenAI's)"
    )
    sub.add_argument(
        "--agent",
        metavar="NAME[:ARG]",
        default="openai",
        help="openai (the default: --base-url, --model, $OPENAI_API_KEY) or scripted:FILE (a JSON script, as serve's)",
    )
    sub.add_argument(
        "--print-config",
        choices=_EDITORS,
        metavar="EDITOR",
        help=f"print the snippet that registers this agent in EDITOR ({', '.join(_EDITORS)}) and exit",
    )
    sub.set_defaults(run=_acp)


def _acp(args: argparse.Namespace) -> int:
    from .output import EXIT_FAILED, EXIT_USAGE, say

    if args.print_config:
        return _print_config(args)
    name, _, argument = args.agent.partition(":")
    if name not in ("openai", "scripted"):
        say(f"error: --agent {args.agent}: no such agent; use openai or scripted:FILE", err=True)
        return EXIT_USAGE
    if name == "openai" and argument:
        say("error: --agent openai takes no argument; give the endpoint with --base-url", err=True)
        return EXIT_USAGE
    factory = _agent_factory(args, name, argument)
    if factory is None:
        return EXIT_FAILED
    return asyncio.run(_serve(args, factory))


def _agent_factory(args: argparse.Namespace, name: str, argument: str) -> Any:
    """What makes each session's agent; ``None`` after saying why there is none."""
    from ..agents.errors import AgentSetupError
    from .output import say

    if name == "scripted":
        from ..serve.errors import ServeError
        from ..serve.providers import ProviderOptions, make_agent

        options = ProviderOptions(argument or None, args.model)
        try:
            make_agent("scripted", options)  # the script, read and checked now
        except ServeError as exc:
            say(f"error: --agent {args.agent}: {exc.message.split(': ', 1)[-1]}", err=True)
            return None

        async def scripted() -> Any:
            return make_agent("scripted", options)

        return scripted
    from ..agents.openai_chat import OpenAIChatAgent

    try:
        OpenAIChatAgent(args.model, base_url=args.base_url)  # the key and the URL, checked now
    except AgentSetupError as exc:
        say(f"error: {exc}", err=True)
        return None

    async def openai() -> Any:
        agent = OpenAIChatAgent(args.model, base_url=args.base_url)
        try:
            await agent.prepare()
        except BaseException:
            await agent.close()
            raise
        return agent

    return openai


async def _serve(args: argparse.Namespace, factory: Any) -> int:
    from ..acp.server import AcpOptions, AcpServer, serve_stdio
    from .output import EXIT_OK

    server = AcpServer(AcpOptions(factory, args.home, args.readiness_timeout))
    serving = asyncio.ensure_future(serve_stdio(server))
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, serving.cancel)
    try:
        await serving
    except asyncio.CancelledError:
        pass
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await server.close()
    return EXIT_OK


def _print_config(args: argparse.Namespace) -> int:
    from ..acp.editors import editor_config
    from .output import EXIT_OK, print_json, say

    home = args.home.resolve() if args.home is not None else None
    options: list[str] = []
    if args.base_url:
        options += ["--base-url", args.base_url]
    if args.model:
        options += ["--model", args.model]
    if args.agent != "openai":
        options += ["--agent", args.agent]
    config = editor_config(args.print_config, home, tuple(options))
    say(f"add this to {config.file} (merge it with the agents already there);", err=True)
    say("the agent reads OPENAI_API_KEY from the environment the editor starts it in", err=True)
    print_json(config.snippet)
    return EXIT_OK
