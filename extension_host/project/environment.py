"""What of the host's environment reaches an extension, and how an extension asks for more.

Extensions run with the host's environment **minus sensitive variables**: anything whose name
looks like a credential (:data:`SENSITIVE_PATTERNS`: tokens, secrets, passwords, keys, cloud
credentials, password-manager sessions, webhooks, the SSH agent's socket), and anything, whatever
its name, whose value holds a URL with credentials in it (:func:`carries_credentials`: a
password in its userinfo, a user name alone on http(s), where it is a token, or a query
parameter named like a credential). ``PATH``, ``HOME``, the locale, proxies without credentials
and the host's own ``EXTENSION_HOST_*`` variables stay. The fork server starts from the same
stripped environment, so a forked extension cannot inherit a secret through it.

An extension that needs a sensitive variable asks for it by name when it joins
(``session.resume`` with ``requestedEnvironmentVariables``, as the Copilot SDK does); the values
of the names the user granted go back in the answer (``grantedEnvironmentVariables``).
:func:`resolve_request` decides that from the request, the host's environment and the grants.
Names that are unset, or not sensitive, need no grant, as in Copilot CLI. Which of the values it
got came through a grant (:attr:`EnvironmentGrant.withheld`) is what a revocation takes back.

On Linux the host also makes its own process non-dumpable (:func:`protect_host_environment`),
so that its extensions, which run as the same user, cannot read the host's
``/proc/<pid>/environ``. This module knows variables, not processes or where grants are kept.
"""

from __future__ import annotations

import fnmatch
import functools
import importlib.util
import os
import re
import site
import string
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from extension_protocol.lifeline import HOST_PID_ENV

__all__ = [
    "MAX_REQUESTED_VARIABLES",
    "SENSITIVE_PATTERNS",
    "VARIABLE_NAME",
    "EnvironmentGrant",
    "carries_credentials",
    "extension_environment",
    "is_sensitive",
    "protect_host_environment",
    "resolve_request",
    "scrub",
    "sdk_environment",
    "validate_request",
]

SENSITIVE_PATTERNS: Final[tuple[str, ...]] = (
    "*TOKEN*",
    "*SECRET*",
    "*PASSW*",
    "*PASSPHRASE*",
    "*_PASS",
    "*_PWD",
    "SSHPASS",
    "*API_KEY*",
    "*APIKEY*",
    "*_KEY",
    "*PRIVATE_KEY*",
    "*CREDENTIAL*",
    "*_PAT",
    "*_AUTH",
    "*JWT*",
    "*COOKIE*",
    "*WEBHOOK*",
    "*_DSN",
    "*CONNECTION_STRING*",
    "*DATABASE_URL",
    "*_SA_JSON",
    "AWS_*",
    "AZURE_*",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "DOCKER_AUTH_CONFIG",
    "BW_SESSION",
    "OP_SESSION_*",
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
)
"""Shell-style patterns of variable names that are withheld from extensions (matched without
regard to case): ``GITHUB_TOKEN``, ``AWS_SECRET_ACCESS_KEY``, ``OPENAI_API_KEY``,
``NPM_CONFIG__AUTH``, ``SENTRY_DSN``, ``MYSQL_PWD``, ``SLACK_WEBHOOK_URL``, ``GCP_SA_JSON``...
``*_PWD`` needs its underscore: ``PWD`` and ``OLDPWD`` are folders, not passwords."""

_NOT_SENSITIVE: Final = frozenset({"TOKENIZERS_PARALLELISM"})
"""Names that match a pattern but are plain settings (a tokenizer library's switch)."""

VARIABLE_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,255}")
"""What an extension may ask for: a portable environment variable name."""

MAX_REQUESTED_VARIABLES: Final = 64
"""The most variables one extension may ask for; more is a malformed request."""

_PATTERN: Final = re.compile("|".join(fnmatch.translate(pattern) for pattern in SENSITIVE_PATTERNS))


_URL: Final = re.compile(r"://([^/?#\s]*)[^?#\s]*(\?[^#\s]*)?")
"""From a ``://`` on: the authority (userinfo included), the path, the query. Found by its
literal ``://`` and ended by whitespace, so a value holding several URLs is read URL by URL,
in time linear in its length."""
_QUERY_NAME: Final = re.compile(r"[?&;]([^=&;]*)=")
_SCHEME_CHARACTERS: Final = frozenset(string.ascii_letters + string.digits + "+.-")
_MAX_SCHEME: Final = 32
_TOKEN_SCHEMES: Final = frozenset({"http", "https"})
"""Schemes where a user name without a password is itself the credential
(``https://<token>@github.com``); elsewhere (``ssh://git@host``) it is a login name."""


def _matches_a_pattern(name: str) -> bool:
    upper = name.upper()
    return upper not in _NOT_SENSITIVE and _PATTERN.match(upper) is not None


def carries_credentials(value: str) -> bool:
    """Whether ``value`` holds a URL with credentials in it, anywhere in it.

    A URL carries them when its userinfo has a password (``redis://user:pass@host``,
    ``https://x-access-token:TOKEN@github.com``, ``http://user:pass@proxy:3128``), when it is
    an http(s) URL with a user name alone (``https://TOKEN@github.com``), or when its query has
    a parameter named like a credential (``?password=``, ``&access_token=``). A password may
    hold an ``@`` of its own: the userinfo ends at the last one before the path.
    """
    for url in _URL.finditer(value):
        userinfo, at, _host = url[1].rpartition("@")
        if at:
            user, _colon, password = userinfo.partition(":")
            if password or (user and _scheme_before(value, url.start()) in _TOKEN_SCHEMES):
                return True
        query = url[2]
        if query and any(_matches_a_pattern(name) for name in _QUERY_NAME.findall(query)):
            return True
    return False


def _scheme_before(value: str, end: int) -> str:
    """The scheme that ends at ``end``, lower-cased, its last ``+`` part only (``git+https``)."""
    start = end
    while start > 0 and end - start < _MAX_SCHEME and value[start - 1] in _SCHEME_CHARACTERS:
        start -= 1
    return value[start:end].lower().rpartition("+")[2]


def is_sensitive(name: str, value: str | None = None) -> bool:
    """Whether variable ``name`` is withheld from extensions: its name looks like a credential,
    or its ``value`` (when given) :func:`carries_credentials`."""
    return _matches_a_pattern(name) or (value is not None and carries_credentials(value))


def scrub(environment: Mapping[str, str]) -> dict[str, str]:
    """``environment`` without its sensitive variables."""
    return {name: value for name, value in environment.items() if not is_sensitive(name, value)}


@dataclass(frozen=True, slots=True)
class EnvironmentGrant:
    """The answer to one extension's request for variables."""

    requested: tuple[str, ...]
    """What it asked for, in its order, without repeats."""
    values: dict[str, str]
    """What it gets: the value of every requested name that is set on the host and either
    granted or not sensitive."""
    missing: tuple[str, ...]
    """Sensitive names, set on the host, that the user has not granted: the join is refused."""
    withheld: tuple[str, ...] = ()
    """The names among :attr:`values` that are withheld from extensions: it has their values
    only because the user granted them, so taking a grant back must stop it."""

    @property
    def granted(self) -> tuple[str, ...]:
        """The names it gets, in the order it asked for them."""
        return tuple(name for name in self.requested if name in self.values)

    def revoked(self, allowed: Iterable[str]) -> tuple[str, ...]:
        """The withheld names it holds that ``allowed`` (what is granted now) no longer has."""
        still = set(allowed)
        return tuple(name for name in self.withheld if name not in still)

    def taken_back(self, names: tuple[str, ...]) -> EnvironmentGrant:
        """This grant once ``names`` are taken back: no longer given, missing instead."""
        values = {name: value for name, value in self.values.items() if name not in names}
        withheld = tuple(name for name in self.withheld if name not in names)
        return EnvironmentGrant(self.requested, values, (*self.missing, *names), withheld)


def validate_request(requested: list[str]) -> None:
    """Check an extension's request before anything is looked up.

    Raises:
        ValueError: too many names, or one that is not a variable name (the message says which).
    """
    if len(requested) > MAX_REQUESTED_VARIABLES:
        raise ValueError(f"{len(requested)} names were requested; at most {MAX_REQUESTED_VARIABLES}")
    for name in requested:
        if not VARIABLE_NAME.fullmatch(name):
            raise ValueError(f"{name[:80]!r} is not an environment variable name")


def resolve_request(
    requested: Iterable[str], host_environment: Mapping[str, str], granted: Iterable[str]
) -> EnvironmentGrant:
    """Decide a request for variables: which values go back, which names lack a grant.

    A name the host does not have is skipped (there is nothing to give, and nothing to ask);
    a name that is not sensitive is given, since the extension has it anyway.
    """
    allowed = set(granted)
    names = tuple(dict.fromkeys(requested))
    values: dict[str, str] = {}
    missing: list[str] = []
    withheld: list[str] = []
    for name in names:
        if name not in host_environment:
            continue
        value = host_environment[name]
        if not is_sensitive(name, value):
            values[name] = value
        elif name in allowed:
            values[name] = value
            withheld.append(name)
        else:
            missing.append(name)
    return EnvironmentGrant(names, values, tuple(missing), tuple(withheld))


@functools.cache
def sdk_folder() -> Path:
    """The ``sdk_extension`` package's folder, found without importing it: the host never loads
    the author-facing SDK, it only starts processes that do. Looked up once per process."""
    spec = importlib.util.find_spec("sdk_extension")
    if spec is None or spec.origin is None:
        raise RuntimeError("the sdk_extension package is not installed beside extension_host")
    return Path(spec.origin).resolve().parent


@functools.cache
def _sdk_search_path() -> str | None:
    """The folder that makes ``sdk_extension`` importable, if the interpreter would not find it
    (once per process: every extension start asks)."""
    root = sdk_folder().parent
    known = {Path(p).resolve() for p in (*site.getsitepackages(), site.getusersitepackages())}
    return None if root in known else str(root)


def sdk_environment(base: Mapping[str, str]) -> dict[str, str]:
    """``base`` plus what makes ``sdk_extension`` importable without installing it."""
    env = dict(base)
    sdk_path = _sdk_search_path()
    if sdk_path is not None:
        existing = env.get("PYTHONPATH")
        env["PYTHONPATH"] = sdk_path + (os.pathsep + existing if existing else "")
    return env


def extension_environment(
    base: Mapping[str, str], *, session_id: str, extension_id: str, parent_pid: int
) -> dict[str, str]:
    """The environment of an extension process: ``base`` (already stripped) plus what the
    protocol needs."""
    env = sdk_environment(base)
    env["SESSION_ID"] = session_id
    env["EXTENSION_ID"] = extension_id
    env[HOST_PID_ENV] = str(parent_pid)
    env["COPILOT_EXTENSION_PARENT_PID"] = str(parent_pid)
    return env


_PR_SET_DUMPABLE: Final = 4
_PR_GET_DUMPABLE: Final = 3


def protect_host_environment() -> bool:
    """Make this process non-dumpable (Linux), as ssh-agent does; ``True`` if it now is.

    A non-dumpable process's ``/proc/<pid>/environ`` (and memory, and ptrace) is closed to other
    processes of the same user that lack ``CAP_SYS_PTRACE``, extensions included: the host's
    environment still holds the variables it withholds from them. Processes it starts with
    ``exec`` are dumpable again; that is what we want for them. Elsewhere this does nothing.
    """
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # only here: a few milliseconds of import no other path needs

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
        return bool(libc.prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False
