"""The web page of ``extensions serve --listen``: what a browser gets on the WebSocket's port.

The same listener answers a plain ``GET`` with the page (``/``) and its static files
(:data:`ASSET_PREFIX` + a name in :data:`ASSETS`), shipped in the package's ``web/`` folder and
served as they are: no build step, nothing fetched from elsewhere. The token the WebSocket wants
is wanted here too (the transport checks it before asking this module); the page is given its
files' URLs with the token in them, and passes the token on to its WebSocket.

Every answer carries :func:`security_headers`: a Content-Security-Policy that lets the page run
only its own script and style, connect only to its own WebSocket, show frames only from loopback
addresses (the canvases, sandboxed by the page itself) and be framed by nobody; ``nosniff``, no
referrer, no caching. :func:`origin_allowed` is the WebSocket's rule for a browser's ``Origin``:
the page's own origin only (a client that sends none is no browser and is let through, as before).

This module knows paths, headers and files; not sockets (:mod:`extension_host.serve.transports`)
or the protocol (:mod:`extension_host.serve.server`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import quote, urlsplit

__all__ = [
    "ASSETS",
    "ASSET_PREFIX",
    "WebReply",
    "content_security_policy",
    "origin_allowed",
    "page_url",
    "refused",
    "security_headers",
    "web_reply",
]

ASSET_PREFIX: Final = "/_page/"
"""Where the page's static files are served."""
ASSETS: Final = {
    "app.js": "text/javascript; charset=utf-8",
    "canvases.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}
"""Every static file the page has, with its content type: nothing else is served."""
_INDEX: Final = "index.html"
_FOLDER: Final = Path(__file__).with_name("web")
_TOKEN_MARK: Final = "__TOKEN__"
"""Stands for the URL-quoted token in ``index.html`` (only letters, digits and ``%_.-~`` replace it)."""
_HOST: Final = re.compile(r"^(?:[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?$")
"""A ``Host`` header this page names in its policy: a name or an address, and a port."""
_LOOPBACK_NAMES: Final = ("127.0.0.1", "localhost", "[::1]")
_FRAMES: Final = "http://127.0.0.1:* http://localhost:*"
"""Where a canvas frame's page may come from: an extension's own server on this machine."""


@dataclass(frozen=True)
class WebReply:
    """An HTTP answer: status, reason, headers and body."""

    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]
    body: bytes


def content_security_policy(host: str) -> str:
    """The page's policy when it was asked for as ``host`` (its ``Host`` header, checked)."""
    return "; ".join(
        (
            "default-src 'none'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self' data:",
            f"connect-src ws://{host}",
            f"frame-src {_FRAMES}",
            "base-uri 'none'",
            "form-action 'none'",
            "frame-ancestors 'none'",
        )
    )


def security_headers(host: str | None) -> tuple[tuple[str, str], ...]:
    """What every answer carries; the policy lets the page connect nowhere when ``host`` is not
    a host name with a port."""
    policy = content_security_policy(host) if host is not None and _HOST.match(host) else "default-src 'none'"
    return (
        ("Content-Security-Policy", policy),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("Cache-Control", "no-store"),
        ("X-Frame-Options", "DENY"),
        ("Cross-Origin-Resource-Policy", "same-origin"),
    )


def refused(status: int, reason: str, text: str, host: str | None = None) -> WebReply:
    """A plain-text refusal (one line), with the same headers as the page."""
    headers = (("Content-Type", "text/plain; charset=utf-8"), *security_headers(host))
    return WebReply(status, reason, headers, f"{text}\n".encode())


def web_reply(path: str, host: str | None, token: str) -> WebReply:
    """The answer to a ``GET path`` that gave the right ``token``: the page, one of its files,
    or 404."""
    target = urlsplit(path).path
    if host is None or not _HOST.match(host):
        return refused(400, "Bad Request", "the request has no usable Host header")
    if target == "/":
        body = _read(_INDEX).replace(_TOKEN_MARK.encode(), quote(token, safe="").encode())
        return _ok("text/html; charset=utf-8", body, host)
    name = target.removeprefix(ASSET_PREFIX) if target.startswith(ASSET_PREFIX) else None
    if name is not None and name in ASSETS:
        return _ok(ASSETS[name], _read(name), host)
    return refused(404, "Not Found", f"nothing here: the page is at /?token=...; not {target[:200]}", host)


def origin_allowed(origin: str | None, port: int, bound_host: str, request_host: str | None) -> bool:
    """Whether a WebSocket whose ``Origin`` is ``origin`` may connect to a server on
    ``bound_host:port``: no ``Origin`` (not a browser), the page's own loopback origins
    (``http://127.0.0.1:PORT``, ``http://localhost:PORT``, ``http://[::1]:PORT``), or, on a
    non-loopback address (``--allow-remote``), the origin of the address the client asked for."""
    if origin is None:
        return True
    own = {f"http://{name}:{port}" for name in _LOOPBACK_NAMES}
    if bound_host not in ("127.0.0.1", "::1", "localhost") and request_host is not None and _HOST.match(request_host):
        own.add(f"http://{request_host}")
    return origin in own


def page_url(websocket_url: str) -> str:
    """The page's URL (with the token) for the WebSocket's ``ws://HOST:PORT/?token=...``."""
    return "http://" + websocket_url.removeprefix("ws://")


def _ok(content_type: str, body: bytes, host: str) -> WebReply:
    return WebReply(200, "OK", (("Content-Type", content_type), *security_headers(host)), body)


@functools.cache
def _read(name: str) -> bytes:
    return (_FOLDER / name).read_bytes()
