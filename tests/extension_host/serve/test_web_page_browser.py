"""The web page in a real browser: headless Chromium from the system's packages, driven by
Playwright (with that browser: nothing is downloaded). Each test serves a scripted agent and
test extensions on a loopback port in this process, opens the page with the token, and acts as
a person would: turns, hooks, approvals, cancel, completion, escaping, and a canvas of a Python
extension (its own page in a sandboxed frame, an action pressed, closed from the page). A
screenshot of each state is saved under the test's ``tmp_path`` (``web-*.png``; the README's
``docs/images/web-page-canvas.png`` is the canvas test's ``web-canvas-action.png``). Without a
``chromium`` binary the tests are skipped, saying so in one line."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from serve_client import on_websocket, write_script

from extension_host.serve.served_session import HostOptions
from extension_host.serve.server import ProtocolServer, ServerOptions
from extension_host.serve.web_page import page_url
from helpers import Project, run

pytestmark = [pytest.mark.browser, pytest.mark.subprocess]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip(
        "no chromium binary on PATH: apt-get install chromium to run the browser tests", allow_module_level=True
    )
playwright = pytest.importorskip("playwright.async_api", reason="the browser tests need playwright (the test extra)")

TOKEN = "page-test-token"
WAIT_MS = 20_000
"""How long one step waits for the page, at most."""
PAYLOAD = "<img src=x onerror=window.__pwned=1>"
"""HTML that would set a marker on ``window`` if the page ran it."""

TOOLS = """
    import asyncio
    from sdk_extension import command, join_session, tool

    @tool(description="Count the words of a text")
    def count(text: str) -> str:
        return str(len(text.split()))

    @tool(description="Echo a text back")
    def echo(text: str) -> str:
        return text

    @tool(description="Take a long time")
    async def slow() -> str:
        await asyncio.sleep(120)
        return "done"

    @command(description="Deploy the app")
    def deploy(context):
        return None

    join_session(tools=[count, echo, slow], commands=[deploy])
"""

GUARD = """
    from sdk_extension import join_session

    def guard(input, invocation):
        text = str((input.tool_args or {}).get("text", ""))
        if "secret" in text:
            return {"permission_decision": "deny", "permission_decision_reason": "no secrets"}
        if "ask" in text:
            return {"permission_decision": "ask", "permission_decision_reason": "it reads your words"}

    join_session(hooks={"on_pre_tool_use": guard})
"""


def step(text: str, *calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"text": text, "toolCalls": [{"name": name, "arguments": arguments} for name, arguments in calls]}


@asynccontextmanager
async def served_page(
    project: Project, prompts: list[list[dict[str, Any]]], viewport: tuple[int, int] = (1024, 720)
) -> AsyncIterator[tuple[Any, str]]:
    """The page of a server with ``prompts`` scripted, open in a fresh headless Chromium (its
    page and URL); the server and the browser are closed after, whatever happened."""
    project.add_extension("tools", TOOLS)
    project.add_extension("guard", GUARD)
    script = write_script(project.home / "script.json", prompts)
    options = ServerOptions(
        provider="scripted",
        provider_argument=str(script),
        hosts=HostOptions(project.home),
        default_directory=project.root,
    )
    async with on_websocket(ProtocolServer(options), TOKEN) as websocket_url:
        url = page_url(websocket_url)
        async with playwright.async_playwright() as driver:
            browser = await driver.chromium.launch(executable_path=CHROMIUM)
            try:
                page = await browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
                page.set_default_timeout(WAIT_MS)
                await page.goto(url)
                await page.locator("#connection.ok").wait_for()
                yield page, url
            finally:
                await browser.close()


async def new_session(page: Any) -> None:
    await page.click("#new-session")
    await page.locator("#session-list li.current").wait_for()
    await page.locator("#extension-list li[data-extension='tools'] .badge.running").wait_for()


async def prompt(page: Any, text: str) -> None:
    await page.fill("#prompt-text", text)
    await page.click("#send")


async def shot(page: Any, folder: Path, name: str) -> Path:
    path = folder / f"web-{name}.png"
    await page.screenshot(path=str(path), full_page=True)
    return path


def test_a_scripted_turn_shows_the_tool_call_with_its_arguments_and_result_and_no_token_gets_no_page(
    project: Project, tmp_path: Path
) -> None:
    prompts = [[step("Let me count.", ("count", {"text": "one two three"})), step("Three words.")]]

    async def scenario() -> None:
        async with served_page(project, prompts) as (page, url):
            await shot(page, tmp_path, "opened")
            await new_session(page)
            await prompt(page, "How many words?")
            turn = page.locator("article.turn").last
            await turn.locator(".foot .badge.complete").wait_for()
            call = turn.locator("details.tool")
            await call.locator("summary").click()
            assert await call.locator(".name").text_content() == "count"
            assert '"text": "one two three"' in (await call.locator("pre.arguments").text_content() or "")
            assert await call.locator("pre.result").text_content() == "3"
            assert await turn.locator(".user").text_content() == "How many words?"
            assert "Three words." in (await turn.locator(".text").all_text_contents())
            await shot(page, tmp_path, "tool-call")
            refused = await page.goto(url.partition("?")[0])  # the page without its token
            assert refused is not None and refused.status == 401
            assert await page.locator("#turns").count() == 0
            await shot(page, tmp_path, "no-token")

    run(scenario(), timeout=90)


def test_a_hooks_deny_is_shown_on_the_call_naming_the_extension_that_denied(project: Project, tmp_path: Path) -> None:
    prompts = [[step("Trying.", ("count", {"text": "the secret plan"})), step("It was denied.")]]

    async def scenario() -> None:
        async with served_page(project, prompts) as (page, _url):
            await new_session(page)
            await prompt(page, "Count the secret")
            turn = page.locator("article.turn").last
            await turn.locator(".foot .badge.complete").wait_for()
            call = turn.locator("details.tool")
            assert await call.locator(".badge").text_content() == "failed"
            assert await call.locator(".hooks li.deny").text_content() == "project:guard decided deny (on_pre_tool_use)"
            assert await call.locator("pre.result").text_content() == "Denied by preToolUse hook: no secrets"
            await shot(page, tmp_path, "hook-deny")

    run(scenario(), timeout=90)


def test_an_ask_is_approved_from_the_page_and_the_turn_completes(project: Project, tmp_path: Path) -> None:
    prompts = [[step("Asking.", ("count", {"text": "ask me"})), step("Done asking.")]]

    async def scenario() -> None:
        async with served_page(project, prompts) as (page, _url):
            await new_session(page)
            await prompt(page, "Count, but ask")
            request = page.locator(".permission")
            await request.locator("button.primary").wait_for()
            assert "it reads your words" in (await request.text_content() or "")
            assert await page.locator("#session-status").text_content() == "input-needed"
            await shot(page, tmp_path, "ask")
            await request.locator("button.primary").click()
            turn = page.locator("article.turn").last
            await turn.locator(".foot .badge.complete").wait_for()
            assert "Approved by you" in (await request.text_content() or "")
            assert await turn.locator("pre.result").text_content() == "2"
            await shot(page, tmp_path, "ask-approved")

    run(scenario(), timeout=90)


def test_a_long_turn_is_cancelled_from_the_page(project: Project, tmp_path: Path) -> None:
    prompts = [[step("Working.", ("slow", {})), step("Never said.")]]

    async def scenario() -> None:
        async with served_page(project, prompts) as (page, _url):
            await new_session(page)
            await prompt(page, "Take your time")
            turn = page.locator("article.turn").last
            await turn.locator("details.tool .badge.running").wait_for()
            await shot(page, tmp_path, "running")
            await page.click("#cancel-turn")
            await turn.locator(".foot .badge.cancelled").wait_for()
            assert await page.locator("#cancel-turn").is_disabled()
            await shot(page, tmp_path, "cancelled")

    run(scenario(), timeout=90)


def test_typing_a_slash_offers_the_extensions_commands(project: Project, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with served_page(project, []) as (page, _url):
            await new_session(page)
            await page.locator("#prompt-text").press_sequentially("/dep")
            option = page.locator("#completions li").first
            await option.wait_for()
            assert await option.locator(".insert").text_content() == "/deploy"
            await shot(page, tmp_path, "completion")
            await page.locator("#prompt-text").press("Tab")
            assert await page.input_value("#prompt-text") == "/deploy "

    run(scenario(), timeout=90)


def test_html_from_the_agent_and_a_tool_is_shown_as_text_and_never_run(project: Project, tmp_path: Path) -> None:
    prompts = [[step(PAYLOAD, ("echo", {"text": PAYLOAD})), step(f"Done: {PAYLOAD}")]]

    async def scenario() -> None:
        async with served_page(project, prompts) as (page, _url):
            await new_session(page)
            await prompt(page, PAYLOAD)
            turn = page.locator("article.turn").last
            await turn.locator(".foot .badge.complete").wait_for()
            await turn.locator("details.tool summary").click()
            assert await turn.locator(".user").text_content() == PAYLOAD
            assert await turn.locator("pre.result").text_content() == PAYLOAD
            assert await turn.locator("img").count() == 0
            assert await page.evaluate("window.__pwned") is None
            await shot(page, tmp_path, "escaped")

    run(scenario(), timeout=90)


PAD = """
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from pathlib import Path
    from sdk_extension import Canvas, CanvasAction, join_session

    LOG = Path(__file__).parent.with_name("pad-calls.jsonl")  # outside its folder
    PAGE = (
        b"<!doctype html><title>Pad</title><body style='font-family:sans-serif'><h1 id=pad>Scratch pad</h1>"
        b"<p>This page is the extension's own, served on 127.0.0.1 and shown in a sandboxed frame.</p>"
    )
    servers = {}

    class Page(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(PAGE)))
            self.end_headers()
            self.wfile.write(PAGE)

        def log_message(self, *args):
            pass

    def note(**record):
        with LOG.open("a") as f:
            f.write(json.dumps(record) + "\\n")

    def opened(ctx):
        server = servers.get(ctx.instance_id)
        if server is None:
            server = servers[ctx.instance_id] = ThreadingHTTPServer(("127.0.0.1", 0), Page)
            threading.Thread(target=server.serve_forever, daemon=True).start()
        note(kind="open", instance=ctx.instance_id)
        return {"title": "Scratch pad", "status": "ready", "url": f"http://127.0.0.1:{server.server_port}/pad"}

    def closed(ctx):
        server = servers.pop(ctx.instance_id, None)
        if server is not None:
            server.shutdown()
            server.server_close()
        note(kind="close", instance=ctx.instance_id)

    def ping(ctx):
        note(kind="ping", instance=ctx.instance_id, input=ctx.input)
        return {"pong": ctx.input}

    schema = {"type": "object", "properties": {"note": {"type": "string"}}}
    pad = Canvas("pad", "Scratch pad", "A pad the agent writes on.", open=opened, close=closed, actions=[
        CanvasAction("ping", ping, description="Ping the pad", input_schema=schema),
    ])
    join_session(canvases=[pad])
"""

JOINS = """
    import json
    from pathlib import Path
    from sdk_extension import join_session

    session = join_session()
    with Path(__file__).parent.with_name("joins.jsonl").open("a") as f:
        f.write(json.dumps(session.capabilities["ui"]["canvases"]) + "\\n")
"""


def records(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def recorded(path: Path, wanted: Callable[[list[Any]], bool]) -> list[Any]:
    """What an extension wrote to ``path`` once ``wanted`` holds of it (bounded)."""
    async with asyncio.timeout(WAIT_MS / 1000):
        while not wanted(found := records(path)):
            await asyncio.sleep(0.05)
    return found


def test_a_canvas_opens_in_a_sandboxed_pane_its_action_reaches_the_extension_and_the_page_closes_it(
    project: Project, tmp_path: Path
) -> None:
    project.add_extension("pad", PAD)
    project.add_extension("joins", JOINS)
    folder = project.root / ".github" / "extensions"
    prompts = [[step("Opening the pad.", ("open_canvas", {"canvasId": "pad", "instanceId": "p1"})), step("Open.")]]

    async def scenario() -> None:
        async with served_page(project, prompts, viewport=(1280, 760)) as (page, _url):
            await new_session(page)
            assert await recorded(folder / "joins.jsonl", bool) == [False]  # it joined before the page looked
            pad = page.locator("#extension-list li[data-extension='pad']")
            assert "canvases: pad" in await pad.locator(".detail").all_text_contents()
            await prompt(page, "Open the scratch pad")
            await page.locator("article.turn .foot .badge.complete").wait_for()
            pane = page.locator("section.canvas[data-instance='p1']")
            await pane.wait_for()
            assert await pane.locator("h3").text_content() == "Scratch pad"
            assert await pane.locator(".badge").text_content() == "ready"
            frame = pane.locator("iframe")
            assert await frame.get_attribute("sandbox") == "allow-scripts"  # no allow-same-origin
            assert (await frame.get_attribute("src") or "").startswith("http://127.0.0.1:")
            assert await page.frame_locator("section.canvas iframe").locator("#pad").text_content() == "Scratch pad"
            await shot(page, tmp_path, "canvas-open")

            action = pane.locator(".action[data-action='ping']")
            await action.locator("input").fill('{"note": "from the page"}')
            await action.locator("button").click()
            await pane.locator(".outcome:not([hidden])").wait_for()
            assert await pane.locator(".outcome").text_content() == 'ping → {"pong":{"note":"from the page"}}'
            calls = records(folder / "pad-calls.jsonl")
            assert {"kind": "ping", "instance": "p1", "input": {"note": "from the page"}} in calls
            await shot(page, tmp_path, "canvas-action")

            # An extension that joins while the page shows the session is told canvases can be shown.
            await page.locator("#extension-list li[data-extension='joins'] button").click()
            await page.locator("#notice", has_text="reloaded 1").wait_for()
            # it writes once join_session() returns, which may come after the reload is reported
            assert await recorded(folder / "joins.jsonl", lambda joins: len(joins) == 2) == [False, True]

            # A page opened later sees the open canvas in the session's snapshot.
            await page.reload()
            await page.locator("#connection.ok").wait_for()
            await page.locator("#session-list li button.open").click()
            await pane.locator("iframe").wait_for()
            assert await page.frame_locator("section.canvas iframe").locator("#pad").text_content() == "Scratch pad"

            await pane.locator(".heading button").click()
            await pane.wait_for(state="detached")
            assert await page.locator("#canvases > .muted").is_visible()
            await recorded(folder / "pad-calls.jsonl", lambda calls: calls[-1] == {"kind": "close", "instance": "p1"})
            await shot(page, tmp_path, "canvas-closed")

    run(scenario(), timeout=120)
