"""The web page in a real browser: headless Chromium from the system's packages, driven by
Playwright (with that browser: nothing is downloaded). Each test serves a scripted agent and
test extensions on a loopback port in this process, opens the page with the token, and acts as
a person would; a screenshot of each state is saved under the test's ``tmp_path``
(``web-*.png``). Without a ``chromium`` binary the tests are skipped, saying so in one line."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
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
async def served_page(project: Project, prompts: list[list[dict[str, Any]]]) -> AsyncIterator[tuple[Any, str]]:
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
                page = await browser.new_page(viewport={"width": 1024, "height": 720})
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
