"""The web page's door: the token on every request, its headers, its files, and the
WebSocket's refusal of a page of another origin; raw HTTP and raw WebSocket clients against a
server on a loopback port in this process (no session, so no extension process)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from serve_client import on_websocket

from extension_host.serve.served_session import HostOptions
from extension_host.serve.server import ProtocolServer, ServerOptions
from extension_host.serve.web_page import ASSETS, origin_allowed, page_url
from helpers import run

websockets = pytest.importorskip("websockets.asyncio.client")

TOKEN = "a token/with+odd&chars"
QUOTED = "a%20token%2Fwith%2Bodd%26chars"


@asynccontextmanager
async def listening(tmp_path: Path) -> AsyncIterator[int]:
    """A server on 127.0.0.1 (its port) that hosts no session; stopped after."""
    server = ProtocolServer(ServerOptions(hosts=HostOptions(tmp_path, fork_server=False), max_sessions=1))
    async with on_websocket(server, TOKEN) as url:
        yield int(url.split(":")[2].split("/")[0])


async def get(port: int, path: str, host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    """A plain HTTP GET: its status, headers (lower-case names) and body."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        request = f"GET {path} HTTP/1.1\r\nHost: {host or f'127.0.0.1:{port}'}\r\nConnection: close\r\n\r\n"
        writer.write(request.encode())
        async with asyncio.timeout(10):
            raw = await reader.read()
    finally:
        writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *lines = head.decode().split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, body


def test_without_the_right_token_neither_the_page_nor_its_files_are_served(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with listening(tmp_path) as port:
            for path in ("/", "/?token=wrong", "/_page/app.js", "/_page/style.css?token=nope"):
                status, headers, body = await get(port, path)
                assert status == 401, path
                assert body == b"a valid token is required (?token=...)\n"
                assert headers["content-type"].startswith("text/plain")
                assert headers["cache-control"] == "no-store"

    run(scenario())


def test_the_page_comes_with_a_strict_policy_and_its_files_urls_carry_the_token(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with listening(tmp_path) as port:
            status, headers, body = await get(port, f"/?token={QUOTED}")
            assert status == 200 and headers["content-type"] == "text/html; charset=utf-8"
            policy = [part.strip() for part in headers["content-security-policy"].split(";")]
            assert policy == [
                "default-src 'none'",
                "script-src 'self'",
                "style-src 'self'",
                "img-src 'self' data:",
                f"connect-src ws://127.0.0.1:{port}",
                "frame-src http://127.0.0.1:* http://localhost:*",
                "base-uri 'none'",
                "form-action 'none'",
                "frame-ancestors 'none'",
            ]
            assert headers["x-content-type-options"] == "nosniff"
            assert headers["referrer-policy"] == "no-referrer"
            assert headers["cache-control"] == "no-store"
            assert f'src="/_page/app.js?token={QUOTED}"'.encode() in body
            assert b"__TOKEN__" not in body and b"<script>" not in body  # no inline script: the policy forbids it
            for name, content_type in ASSETS.items():
                status, headers, asset = await get(port, f"/_page/{name}?token={QUOTED}")
                assert (status, headers["content-type"]) == (200, content_type)
                assert asset and "content-security-policy" in headers

    run(scenario())


@pytest.mark.parametrize(
    "path", ["/_page/../web_page.py", "/_page/index.html", "/_page/%2e%2e/server.py", "/web/app.js", "/favicon.ico"]
)
def test_nothing_but_the_page_and_its_listed_files_is_served(tmp_path: Path, path: str) -> None:
    async def scenario() -> None:
        async with listening(tmp_path) as port:
            status, _headers, body = await get(port, f"{path}?token={QUOTED}")
            assert status == 404
            assert body.startswith(b"nothing here")

    run(scenario())


def test_a_host_header_that_is_no_host_gets_no_page(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with listening(tmp_path) as port:
            status, headers, _body = await get(port, f"/?token={QUOTED}", host="evil; script-src *")
            assert status == 400
            assert headers["content-security-policy"] == "default-src 'none'"

    run(scenario())


def test_a_websocket_from_a_page_of_another_origin_is_refused_and_the_pages_own_is_served(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with listening(tmp_path) as port:
            url = f"ws://127.0.0.1:{port}/?token={QUOTED}"
            for foreign in ("http://evil.example", f"http://127.0.0.1:{port + 1}", "null", f"https://127.0.0.1:{port}"):
                with pytest.raises(Exception, match="403"):
                    await websockets.connect(url, origin=foreign)
            own: list[str | None] = [f"http://127.0.0.1:{port}", f"http://localhost:{port}", None]
            for origin in own:
                async with websockets.connect(url, origin=origin) as socket:
                    await socket.send('{"jsonrpc": "2.0", "id": 1, "method": "listSessions"}')
                    async with asyncio.timeout(10):
                        answer = await socket.recv()
                    assert "send initialize first" in str(answer)
            with pytest.raises(Exception, match="401"):
                await websockets.connect(f"ws://127.0.0.1:{port}/", origin=f"http://127.0.0.1:{port}")

    run(scenario())


def test_only_the_pages_own_origins_may_open_a_websocket() -> None:
    assert origin_allowed(None, 8765, "127.0.0.1", "127.0.0.1:8765")
    assert origin_allowed("http://localhost:8765", 8765, "127.0.0.1", "localhost:8765")
    assert origin_allowed("http://[::1]:8765", 8765, "::1", "[::1]:8765")
    assert not origin_allowed("http://localhost:8766", 8765, "127.0.0.1", "localhost:8765")
    # On a loopback address the Host header does not widen the rule (a rebound name stays foreign).
    assert not origin_allowed("http://evil.example:8765", 8765, "127.0.0.1", "evil.example:8765")
    # On another address (--allow-remote), the origin the browser asked for is the page's own.
    assert origin_allowed("http://devbox:8765", 8765, "0.0.0.0", "devbox:8765")
    assert not origin_allowed("http://evil.example", 8765, "0.0.0.0", "devbox:8765")


def test_the_pages_url_is_the_websockets_with_http() -> None:
    assert page_url("ws://127.0.0.1:8765/?token=abc") == "http://127.0.0.1:8765/?token=abc"
