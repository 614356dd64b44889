"""The bearer token a network server asks its clients for (``extensions serve --listen``,
``extensions mcp --http``): where it comes from, and how an offered one is checked.

A server's token comes from the first of:

1. ``--token-file PATH``: a regular file of the user's own that nobody else may read or write
   (``chmod 600``); anything else is refused, naming the file and the fix;
2. ``--token TOKEN`` (``serve`` only, kept for scripts): it shows in ``ps`` to every user of the
   machine, so the front end warns;
3. ``$EXTENSION_HOST_TOKEN`` (:data:`TOKEN_ENV`): a process's environment is readable by its
   user only, and the name matches the patterns withheld from extensions;
4. a new random one for this start (:func:`new_token`).

A token is one line of printable ASCII without spaces (:data:`TOKEN_PATTERN`), so it fits a
header and a URL as it is. An offered token is compared in constant time (:func:`token_matches`),
whatever it holds. This module knows files, the environment and strings; not HTTP, nor which
server asks.
"""

from __future__ import annotations

import hmac
import os
import re
import secrets
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from ..errors import TokenError
from ..project.private_files import NotRegularFile, open_regular

__all__ = [
    "MAX_TOKEN_CHARS",
    "TOKEN_ENV",
    "TOKEN_PATTERN",
    "ServerToken",
    "TokenSource",
    "bearer_token",
    "new_token",
    "read_token_file",
    "server_token",
    "token_matches",
]

TOKEN_ENV: Final = "EXTENSION_HOST_TOKEN"
"""The environment variable a server takes its token from when no option gives one."""
MAX_TOKEN_CHARS: Final = 1024
"""The longest token accepted (one a server makes has 43 characters)."""
TOKEN_PATTERN: Final = re.compile(rf"[!-~]{{1,{MAX_TOKEN_CHARS}}}")
"""What a token may be: printable ASCII, no spaces."""
_BEARER: Final = re.compile(r"Bearer +(\S+) *", re.IGNORECASE)
_GROUP_AND_OTHER: Final = 0o077

TokenSource = Literal["file", "option", "environment", "start"]
"""Where a server's token came from (see the module)."""


@dataclass(frozen=True, slots=True)
class ServerToken:
    """The token a server requires, and where it came from."""

    value: str
    source: TokenSource
    file: Path | None = None
    """The token file, when ``source`` is ``"file"``."""

    @property
    def where(self) -> str:
        """Where a client finds the value, for a line on the server's stderr (never the value)."""
        if self.source == "file":
            return f"the token in {self.file}"
        if self.source == "environment":
            return f"${TOKEN_ENV}"
        return "the --token given" if self.source == "option" else "the token made for this start"


def new_token() -> str:
    """A fresh random token (32 bytes, URL-safe base64)."""
    return secrets.token_urlsafe(32)


def server_token(
    *, file: Path | None = None, option: str | None = None, environ: Mapping[str, str] = os.environ
) -> ServerToken:
    """The token a server requires: from ``file``, else ``option``, else ``environ``'s
    :data:`TOKEN_ENV`, else a new one (see the module).

    Raises:
        TokenError: the file or the value given cannot be used (the message says why and what to do).
    """
    if file is not None:
        return ServerToken(read_token_file(file), "file", file)
    if option is not None:
        return ServerToken(_checked(option, "--token"), "option")
    configured = environ.get(TOKEN_ENV)
    if configured:
        return ServerToken(_checked(configured.strip(), f"${TOKEN_ENV}"), "environment")
    return ServerToken(new_token(), "start")


def read_token_file(path: Path) -> str:
    """The token held in ``path``: a regular file owned by the user, with no permission for group
    or others; one line (a final newline and surrounding blanks are dropped).

    Raises:
        TokenError: it cannot be read, is not such a file, or does not hold a token.
    """
    what = f"the token file {path}"
    try:
        with open_regular(path) as (handle, info):  # judged by what was opened, not by its name
            me = os.geteuid()
            if info.st_uid != me:
                raise TokenError(
                    str(path), f"{what} belongs to uid {info.st_uid}, not you (uid {me}); use a file of your own"
                )
            mode = stat.S_IMODE(info.st_mode)
            if mode & _GROUP_AND_OTHER:
                raise TokenError(
                    str(path), f"{what} has mode {mode:04o}, so other users may read it; run `chmod 600 {path}`"
                )
            raw = handle.read(4 * MAX_TOKEN_CHARS)
    except NotRegularFile:
        raise TokenError(str(path), f"{what} is not a regular file; put the token in a file (chmod 600)") from None
    except OSError as exc:
        raise TokenError(str(path), f"{what} cannot be read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        text = ""
    return _checked(text, what)


def _checked(value: str, where: str) -> str:
    if not TOKEN_PATTERN.fullmatch(value):
        raise TokenError(
            where,
            f"{where} must hold one token: 1 to {MAX_TOKEN_CHARS} printable ASCII characters without "
            f"spaces (make one with: python -c 'import secrets; print(secrets.token_urlsafe(32))')",
        )
    return value


def bearer_token(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header value (the scheme in any case);
    ``None`` for any other value or none."""
    if header is None:
        return None
    found = _BEARER.fullmatch(header)
    return found.group(1) if found else None


def token_matches(offered: str | None, token: str) -> bool:
    """Whether ``offered`` is ``token``, in time that does not depend on where they differ."""
    if offered is None:
        return False
    return hmac.compare_digest(offered.encode("utf-8", "surrogateescape"), token.encode())
