"""The token options of the commands that serve over the network: ``--token-file FILE`` (both
``extensions serve --listen`` and ``extensions mcp --http``) and ``--token TOKEN`` (``serve``
only, with a warning that other users can read it in ``ps``). Where the token comes from, and
what a token file must be, is :mod:`extension_host.control.tokens`'s; this module adds the options and
says the warning.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..control.tokens import TOKEN_ENV, ServerToken, server_token
from .output import say

__all__ = ["add_token_options", "token_from", "token_given"]


def add_token_options(parser: Any, transport: str, *, token_option: bool = False) -> None:
    """Add ``--token-file`` (and with ``token_option`` a ``--token`` exclusive with it) to
    ``parser``, for the network ``transport`` option (``--listen``, ``--http``)."""
    group = parser.add_mutually_exclusive_group() if token_option else parser
    group.add_argument(
        "--token-file",
        type=Path,
        metavar="FILE",
        help=f"with {transport}: the token clients must give, read from FILE (yours, chmod 600); "
        f"default: ${TOKEN_ENV}, else a new one per start",
    )
    if token_option:
        group.add_argument(
            "--token",
            help=f"with {transport}: the token clients must give; other users of this machine can read it "
            f"with ps, so prefer --token-file or ${TOKEN_ENV}",
        )


def token_given(args: argparse.Namespace) -> bool:
    """Whether a token option was given on the command line."""
    return getattr(args, "token_file", None) is not None or getattr(args, "token", None) is not None


def token_from(args: argparse.Namespace, command: str) -> ServerToken:
    """The token ``args`` ask for (see :func:`extension_host.control.tokens.server_token`); a ``--token``
    costs one warning line on stderr.

    Raises:
        TokenError: the token file or value cannot be used.
    """
    option = getattr(args, "token", None)
    if option is not None:
        say(
            f"extensions {command}: warning: --token shows the token to every user of this machine "
            f"(ps, /proc/PID/cmdline); use --token-file FILE or ${TOKEN_ENV} instead",
            err=True,
        )
    return server_token(file=args.token_file, option=option)
