"""join_session's checks that run before any connection exists, and how a joined client
answers tool calls and hooks (driven over an in-memory connection, as the host would)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from helpers import PipeWriter
from hypothesis import given, settings
from hypothesis import strategies as st

from sdk_extension import InvalidHookError, NotUnderHostError, ToolResult, join_session, tool
from sdk_extension import protocol as p
from sdk_extension._workers import HOOK_WORKERS, STUCK_CALLS_PER_KEY
from sdk_extension.connection import Connection, RpcError
from sdk_extension.results import result_from_wire
from sdk_extension.session import _Client
from sdk_extension.tools import Tool


@tool(description="Echo")
def echo(text: str) -> str:
    return text


def test_joining_outside_a_host_says_how_to_run_the_extension(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without SESSION_ID, join_session raises NotUnderHostError pointing at the host's commands."""
    monkeypatch.delenv("SESSION_ID", raising=False)
    with pytest.raises(NotUnderHostError, match="started by the extension host.*extensions list"):
        join_session(tools=[echo])


def test_an_unknown_hook_name_is_refused_before_connecting(monkeypatch: pytest.MonkeyPatch) -> None:
    """The error lists the six hook points; the bad name is on the exception."""
    monkeypatch.delenv("SESSION_ID", raising=False)
    with pytest.raises(InvalidHookError) as caught:
        join_session(hooks={"before_tool": lambda i, inv: None})
    assert caught.value.hook == "before_tool"
    for name in ("on_user_prompt_submitted", "on_pre_tool_use", "on_post_tool_use", "on_session_start",
                 "on_session_end", "on_error_occurred"):
        assert name in str(caught.value)


def test_tools_must_be_tool_objects_and_names_unique(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plain function, or the same tool twice, is refused with a message saying so."""
    monkeypatch.delenv("SESSION_ID", raising=False)
    with pytest.raises(TypeError, match="use @tool"):
        join_session(tools=[lambda: None])  # type: ignore[list-item]
    with pytest.raises(Exception, match="given twice"):
        join_session(tools=[echo, echo])


def test_requested_environment_variables_must_be_a_list_of_names() -> None:
    """A bare string (a common slip) is refused before anything is sent."""
    with pytest.raises(TypeError, match="takes a list of names"):
        join_session(requested_environment_variables="GITHUB_TOKEN")
    with pytest.raises(TypeError, match="is not a variable name"):
        join_session(requested_environment_variables=["GITHUB_TOKEN", 3])  # type: ignore[list-item]


# -- a joined client, driven by a host-side connection in memory ---------------------------


class FakeHost:
    """The host's end: sends tool calls and hook calls, collects the tool results."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.results: dict[str, asyncio.Future[ToolResult]] = {}
        connection.on_request(p.METHOD_HANDLE_PENDING_TOOL_CALL, self._on_result)
        self._ids = iter(range(1, 1 << 30))

    def _on_result(self, params: Any) -> dict[str, Any]:
        self.results[params["requestId"]].set_result(result_from_wire(params.get("result"), params.get("error")))
        return {"success": True}

    async def call(self, tool_name: str, arguments: Any = None) -> ToolResult:
        request_id = f"r{next(self._ids)}"
        self.results[request_id] = asyncio.get_running_loop().create_future()
        data = {"requestId": request_id, "sessionId": "s", "toolCallId": "c", "toolName": tool_name, "arguments": arguments or {}}
        event = {"type": "external_tool.requested", "data": data}
        self.connection.notify(p.METHOD_SESSION_EVENT, {"sessionId": "s", "event": event})
        async with asyncio.timeout(10):
            return await self.results[request_id]

    async def hook(self, wire_name: str, timeout: float) -> Any:
        params = {"sessionId": "s", "hookType": wire_name, "input": {"timestamp": 0, "cwd": "/", "prompt": "hi"}}
        return await self.connection.request(p.METHOD_HOOKS_INVOKE, params, timeout=timeout)


@asynccontextmanager
async def joined(
    tools: list[Tool], hooks: dict[str, Callable[..., Any]] | None = None, *, client_kwargs: dict[str, Any] | None = None
) -> AsyncIterator[FakeHost]:
    """A _Client serving ``tools`` and ``hooks``, past its join, and the host's end of it."""
    to_client, to_host = asyncio.StreamReader(), asyncio.StreamReader()
    host_connection = Connection(to_host, PipeWriter(to_client))
    client = _Client("s", tools, hooks or {}, Connection(to_client, PipeWriter(to_host), **(client_kwargs or {})))
    client.released.set()
    host = FakeHost(host_connection)
    serving = [asyncio.ensure_future(host_connection.serve()), asyncio.ensure_future(client.connection.serve())]
    try:
        yield host
    finally:
        host_connection.close()
        client.connection.close()
        async with asyncio.timeout(5):
            await asyncio.gather(*serving, return_exceptions=True)


def returning(value: Any) -> Tool:
    return Tool("give", "Return the value", lambda args, invocation: value)


@settings(max_examples=150, deadline=None, database=None)
@given(text=st.text(alphabet=st.characters(categories=["Cs"]) | st.characters()))
def test_any_text_a_tool_returns_reaches_the_host_as_an_answer(text: str) -> None:
    """Lone surrogates included (os.listdir's names that are not UTF-8): the host gets a success
    whose text is the same with each lone surrogate replaced by U+FFFD."""

    async def main() -> ToolResult:
        async with joined([returning(text)]) as host:
            return await host.call("give")

    result = asyncio.run(main())
    assert result.result_type == "success"
    assert result.text_result_for_llm == text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def test_a_result_larger_than_the_host_accepts_is_answered_with_a_failure_saying_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The call does not hang to the host's timeout: a failure names the tool, the size and the
    limit, and says what to do; the extension's log says the same."""
    big = Tool("big", "Return too much", lambda args, invocation: "x" * 5000)

    async def main() -> ToolResult:
        async with joined([big], client_kwargs={"max_outbound_bytes": 4096}) as host:
            return await host.call("big")

    result = asyncio.run(main())
    assert result.result_type == "failure"
    assert result.text_result_for_llm.startswith("the result of tool 'big' is 5")
    assert "bytes, over the limit of 4096 bytes a message to the host may be; return less" in result.text_result_for_llm
    assert result.text_result_for_llm in capsys.readouterr().err


def test_a_result_that_is_not_json_is_answered_with_a_failure_saying_so() -> None:
    """A ToolResult built by hand with a value JSON cannot carry still gets an answer."""
    odd = Tool("odd", "Return telemetry JSON cannot carry", lambda a, i: ToolResult("t", tool_telemetry={"x": object()}))

    async def main() -> ToolResult:
        async with joined([odd]) as host:
            return await host.call("odd")

    result = asyncio.run(main())
    assert result.result_type == "failure"
    assert result.text_result_for_llm.startswith("the result of tool 'odd' could not be sent: Object of type object")


def test_a_stuck_sync_hook_is_not_started_again_and_the_tools_still_answer() -> None:
    """A plain-def hook that blocks forever, called 40 times with a short timeout: two threads
    are stuck, the later calls are refused at once naming the hook, and a tool still answers."""
    release = threading.Event()
    entered: list[int] = []

    def hang(value: Any, invocation: Any) -> None:
        entered.append(1)
        release.wait(30)

    ping = Tool("ping", "Answer", lambda args, invocation: "pong")

    async def main() -> tuple[list[BaseException], ToolResult]:
        async with joined([ping], {"on_user_prompt_submitted": hang}) as host:
            outcomes: list[BaseException] = []
            for _ in range(40):
                try:
                    await host.hook("userPromptSubmitted", timeout=0.2)
                except (TimeoutError, RpcError) as exc:
                    outcomes.append(exc)
            answer = await host.call("ping")
            release.set()
            return outcomes, answer

    outcomes, answer = asyncio.run(main())
    assert answer.text_result_for_llm == "pong"
    assert isinstance(outcomes[0], TimeoutError)
    refusals = [o for o in outcomes if isinstance(o, RpcError)]
    assert len(refusals) >= 30, "a stuck hook kept being started again"
    assert all(
        o.code == p.HOOK_FAILED
        and o.message == (
            f"hook on_user_prompt_submitted is still running {STUCK_CALLS_PER_KEY} calls the host gave up on; "
            "it is not started again until one of them returns"
        )
        for o in refusals
    )
    assert len(entered) <= 10


def test_hooks_blocking_every_hook_thread_leave_the_tool_threads_free() -> None:
    """More concurrent hung sync hooks than there are hook threads: a sync tool still answers."""
    release = threading.Event()

    def hang(value: Any, invocation: Any) -> None:
        release.wait(30)

    ping = Tool("ping", "Answer", lambda args, invocation: "pong")

    async def main() -> ToolResult:
        async with joined([ping], {"on_user_prompt_submitted": hang}) as host:
            hooks = [asyncio.ensure_future(host.hook("userPromptSubmitted", timeout=30)) for _ in range(HOOK_WORKERS * 2)]
            try:
                return await host.call("ping")
            finally:
                release.set()
                async with asyncio.timeout(10):
                    await asyncio.gather(*hooks, return_exceptions=True)

    assert asyncio.run(main()).text_result_for_llm == "pong"
