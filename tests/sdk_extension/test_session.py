"""join_session's checks that run before any connection exists, and the client's protocol logic
driven by a fake host over an in-memory connection: the join (connect, resume, granted
variables, refusals), tool calls and their results, hooks and their errors, event
subscriptions, send, log, and the end of the host's stream. Whether the SDK's process really
exits when the host goes is the process tests' subject (tests/faults)."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extension_protocol import protocol as p
from extension_protocol.connection import Connection, RpcError
from extension_protocol.errors import ExtensionError, JoinError
from extension_protocol.results import result_from_wire
from extension_protocol.tools import Tool
from extension_protocol.workers import HOOK_WORKERS, STUCK_CALLS_PER_KEY
from helpers import PipeWriter
from sdk_extension import InvalidHookError, NotUnderHostError, ToolResult, join_session, tool
from sdk_extension.session import Session, _Client


@tool(description="Echo")
def echo(text: str) -> str:
    return text


def test_joining_outside_a_host_says_how_to_run_the_extension(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without SESSION_ID, join_session raises NotUnderHostError pointing at the host's commands."""
    monkeypatch.delenv("SESSION_ID", raising=False)
    with pytest.raises(NotUnderHostError, match=r"started by the extension host.*extensions list"):
        join_session(tools=[echo])


def test_an_unknown_hook_name_is_refused_before_connecting(monkeypatch: pytest.MonkeyPatch) -> None:
    """The error lists the six hook points; the bad name is on the exception."""
    monkeypatch.delenv("SESSION_ID", raising=False)
    with pytest.raises(InvalidHookError) as caught:
        join_session(hooks={"before_tool": lambda i, inv: None})
    assert caught.value.hook == "before_tool"
    for name in (
        "on_user_prompt_submitted",
        "on_pre_tool_use",
        "on_post_tool_use",
        "on_session_start",
        "on_session_end",
        "on_error_occurred",
    ):
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
    """The host's end: answers the join and the extension's requests (recording each in
    ``requests``), sends tool calls, hook calls and events, collects the tool results."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.results: dict[str, asyncio.Future[ToolResult]] = {}
        self.requests: list[tuple[str, Any]] = []
        self.arrived = asyncio.Event()
        """Set at each request from the extension (clear it, then wait for the next one)."""
        self.connect_answer: Any = {"protocolVersion": p.PROTOCOL_VERSION}
        self.resume_answer: Any = {"sessionId": "s", "capabilities": {}}
        """What ``session.resume`` answers: a dict, or an :class:`RpcError` to raise."""
        self.on_send: Callable[[Any], None] = lambda params: None
        """Called after ``session.send`` is answered (a host would start the turn)."""
        self.joining_held = False
        """When set, ``session.resume`` is never answered."""
        connection.on_request(p.METHOD_HANDLE_PENDING_TOOL_CALL, self._on_result)
        connection.on_request(p.METHOD_CONNECT, self._recording(p.METHOD_CONNECT, lambda _: self.connect_answer))
        connection.on_request(p.METHOD_SESSION_RESUME, self._on_resume)
        connection.on_request(p.METHOD_SESSION_LOG, self._recording(p.METHOD_SESSION_LOG, lambda _: {"eventId": "e1"}))
        connection.on_request(p.METHOD_SESSION_SEND, self._on_send)
        connection.on_request(p.METHOD_REGISTER_INTEREST, self._recording(p.METHOD_REGISTER_INTEREST, lambda _: {}))
        self._ids = iter(range(1, 1 << 30))

    def _record(self, method: str, params: Any) -> None:
        self.requests.append((method, params))
        self.arrived.set()

    def _recording(self, method: str, answer: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def handle(params: Any) -> Any:
            self._record(method, params)
            return answer(params)

        return handle

    def _on_result(self, params: Any) -> dict[str, Any]:
        self._record(p.METHOD_HANDLE_PENDING_TOOL_CALL, params)
        self.results[params["requestId"]].set_result(result_from_wire(params.get("result"), params.get("error")))
        return {"success": True}

    async def _on_resume(self, params: Any) -> Any:
        self._record(p.METHOD_SESSION_RESUME, params)
        if self.joining_held:
            await asyncio.Event().wait()
        if isinstance(self.resume_answer, RpcError):
            raise self.resume_answer
        return self.resume_answer

    def _on_send(self, params: Any) -> dict[str, Any]:
        self._record(p.METHOD_SESSION_SEND, params)
        asyncio.get_running_loop().call_soon(self.on_send, params)
        return {"messageId": "m1"}

    def sent(self, method: str) -> list[Any]:
        """The params of every request of ``method`` the extension sent, in order."""
        return [params for name, params in self.requests if name == method]

    async def next_request(self, timeout: float = 5) -> None:
        """Wait (bounded) for the next request from the extension."""
        self.arrived.clear()
        async with asyncio.timeout(timeout):
            await self.arrived.wait()

    def tool_requested(self, tool_name: str, arguments: Any = None, *, tool_call_id: str = "c") -> str:
        """Send a tool call without waiting for its result; return its request id."""
        request_id = f"r{next(self._ids)}"
        self.results[request_id] = asyncio.get_running_loop().create_future()
        data = {
            "requestId": request_id,
            "sessionId": "s",
            "toolCallId": tool_call_id,
            "toolName": tool_name,
            "arguments": arguments or {},
        }
        self.event("external_tool.requested", data)
        return request_id

    async def call(self, tool_name: str, arguments: Any = None) -> ToolResult:
        request_id = self.tool_requested(tool_name, arguments)
        async with asyncio.timeout(10):
            return await self.results[request_id]

    def event(self, event_type: str, data: dict[str, Any] | None = None) -> None:
        """Send a session event, as the host forwards one the extension is interested in."""
        event = {"id": f"e-{event_type}", "type": event_type, "data": data or {}}
        self.connection.notify(p.METHOD_SESSION_EVENT, {"sessionId": "s", "event": event})

    async def hook(self, wire_name: str, timeout: float, wire_input: dict[str, Any] | None = None) -> Any:
        if wire_input is None:
            wire_input = {"timestamp": 0, "cwd": "/", "prompt": "hi"}
        params = {"sessionId": "s", "hookType": wire_name, "input": wire_input}
        return await self.connection.request(p.METHOD_HOOKS_INVOKE, params, timeout=timeout)


@asynccontextmanager
async def joined(
    tools: list[Tool],
    hooks: dict[str, Callable[..., Any]] | None = None,
    *,
    client_kwargs: dict[str, Any] | None = None,
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
    odd = Tool(
        "odd", "Return telemetry JSON cannot carry", lambda a, i: ToolResult("t", tool_telemetry={"x": object()})
    )

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
        and o.message
        == (
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
            hooks = [
                asyncio.ensure_future(host.hook("userPromptSubmitted", timeout=30)) for _ in range(HOOK_WORKERS * 2)
            ]
            try:
                return await host.call("ping")
            finally:
                release.set()
                async with asyncio.timeout(10):
                    await asyncio.gather(*hooks, return_exceptions=True)

    assert asyncio.run(main()).text_result_for_llm == "pong"


# -- the join, and the session after it, against the fake host -------------------------------


@asynccontextmanager
async def linked(
    tools: Sequence[Tool] = (), hooks: dict[str, Callable[..., Any]] | None = None, *, requested: tuple[str, ...] = ()
) -> AsyncIterator[tuple[_Client, FakeHost]]:
    """A _Client not joined yet, and the host's end; the client's side is served from its join."""
    to_client, to_host = asyncio.StreamReader(), asyncio.StreamReader()
    host_connection = Connection(to_host, PipeWriter(to_client))
    host = FakeHost(host_connection)
    client = _Client("s", tools, hooks or {}, Connection(to_client, PipeWriter(to_host)), requested)
    serving = asyncio.ensure_future(host_connection.serve())
    try:
        yield client, host
    finally:
        host_connection.close()
        client.connection.close()
        async with asyncio.timeout(5):
            await asyncio.gather(serving, *client.background, return_exceptions=True)


@asynccontextmanager
async def session_with_host(
    tools: Sequence[Tool] = (), hooks: dict[str, Callable[..., Any]] | None = None
) -> AsyncIterator[tuple[Session, FakeHost]]:
    """A joined session (released, as join_session leaves it) and the host's end."""
    async with linked(tools, hooks) as (client, host):
        session = await client.join(5)
        client.released.set()
        yield session, host


def in_memory(scenario: Callable[[], Any]) -> Any:
    """Run an async scenario on a fresh loop, bounded so a hang fails the test."""

    async def bounded() -> Any:
        async with asyncio.timeout(10):
            return await scenario()

    return asyncio.run(bounded())


@tool(description="Shout")
def shout(text: str) -> str:
    return text.upper()


def guard(value: Any, invocation: Any) -> None:
    return None


def test_the_join_sends_connect_then_resume_with_the_tools_and_the_hook_types() -> None:
    """Resume carries the session id, each tool's wire form, the hooks by wire name, only the
    event types that start and end child sessions (others come by subscription), and nothing
    about the environment or custom agents when none is given."""

    async def scenario() -> None:
        async with linked([echo, shout], {"on_pre_tool_use": guard, "on_session_end": guard}) as (client, host):
            host.resume_answer = {"sessionId": "s", "workspacePath": "/w", "capabilities": {"x": 1}}
            session = await client.join(5)
            assert [method for method, _ in host.requests] == [p.METHOD_CONNECT, p.METHOD_SESSION_RESUME]
            [resume] = host.sent(p.METHOD_SESSION_RESUME)
            assert resume == {
                "sessionId": "s",
                "tools": [echo.to_wire(), shout.to_wire()],
                "hooks": True,
                "hookTypes": ["preToolUse", "sessionEnd"],
                "eventTypes": ["session.shutdown", "subagent.completed", "subagent.failed", "subagent.started"],
                "disableResume": True,
            }
            assert (session.session_id, session.workspace_path, session.capabilities) == ("s", "/w", {"x": 1})
            assert not session.closed

    in_memory(scenario)


def test_an_extension_without_hooks_says_so_in_its_resume() -> None:
    async def scenario() -> None:
        async with linked([echo]) as (client, host):
            await client.join(5)
            [resume] = host.sent(p.METHOD_SESSION_RESUME)
            assert (resume["hooks"], resume["hookTypes"]) == (False, [])

    in_memory(scenario)


def test_granted_variables_land_in_the_environment_and_only_the_requested_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The host's answer may not plant a variable the extension did not ask for, nor a non-string."""
    for name in ("EH_TEST_TOKEN", "EH_TEST_OTHER", "EH_TEST_PLANTED"):
        monkeypatch.delenv(name, raising=False)

    async def scenario() -> None:
        async with linked(requested=("EH_TEST_TOKEN", "EH_TEST_OTHER")) as (client, host):
            granted = {"EH_TEST_TOKEN": "t0k3n", "EH_TEST_OTHER": 5, "EH_TEST_PLANTED": "x"}
            host.resume_answer = {"sessionId": "s", "grantedEnvironmentVariables": granted}
            await client.join(5)
            [resume] = host.sent(p.METHOD_SESSION_RESUME)
            assert resume["requestedEnvironmentVariables"] == ["EH_TEST_TOKEN", "EH_TEST_OTHER"]

    in_memory(scenario)
    assert os.environ.get("EH_TEST_TOKEN") == "t0k3n"
    assert "EH_TEST_OTHER" not in os.environ and "EH_TEST_PLANTED" not in os.environ


def test_a_refused_join_raises_join_error_with_the_host_s_reason_and_code() -> None:
    async def scenario() -> None:
        async with linked([echo]) as (client, host):
            reason = "tool 'echo' is already provided by extension project:other; rename the tool"
            host.resume_answer = RpcError(p.TOOL_REGISTRATION_FAILED, reason)
            with pytest.raises(JoinError) as refused:
                await client.join(5)
            assert str(refused.value) == f"the host refused to load this extension: {reason}"
            assert refused.value.code == p.TOOL_REGISTRATION_FAILED
            assert client.connection.closed

    in_memory(scenario)


def test_a_host_of_another_protocol_version_is_refused() -> None:
    async def scenario() -> None:
        async with linked() as (client, host):
            host.connect_answer = {"protocolVersion": 99}
            expected = f"the host speaks protocol version 99; this SDK speaks {p.PROTOCOL_VERSION}"
            with pytest.raises(JoinError, match=expected):
                await client.join(5)
            assert host.sent(p.METHOD_SESSION_RESUME) == []

    in_memory(scenario)


def test_a_host_that_never_answers_the_resume_fails_the_join_after_the_timeout() -> None:
    async def scenario() -> None:
        async with linked() as (client, host):
            host.joining_held = True
            with pytest.raises(JoinError, match=r"^the host did not accept the join within 0.05 s$") as late:
                await client.join(0.05)
            assert late.value.code is None and client.connection.closed

    in_memory(scenario)


def test_a_connection_that_ends_during_the_join_fails_it_saying_so() -> None:
    async def scenario() -> None:
        async with linked() as (client, host):
            host.joining_held = True
            joining = asyncio.ensure_future(client.join(5))
            while not host.sent(p.METHOD_SESSION_RESUME):
                await host.next_request()
            host.connection.close()
            with pytest.raises(JoinError, match=r"^the connection to the host ended while joining"):
                await joining

    in_memory(scenario)


def test_a_tool_call_reaches_its_handler_with_the_invocation_and_the_result_goes_back() -> None:
    """The handler gets the arguments and the call's ids; the answer names the host's request id."""
    seen: list[Any] = []

    def handler(args: Any, invocation: Any) -> str:
        seen.append((args, invocation.tool_call_id, invocation.tool_name, invocation.session_id))
        return "done"

    async def scenario() -> None:
        async with session_with_host([Tool("work", "Work", handler)]) as (_, host):
            request_id = host.tool_requested("work", {"n": 1}, tool_call_id="call-9")
            async with asyncio.timeout(5):
                result = await host.results[request_id]
            assert result == ToolResult("done")
            [answer] = host.sent(p.METHOD_HANDLE_PENDING_TOOL_CALL)
            assert answer == {"sessionId": "s", "requestId": request_id, "result": result.to_wire()}

    in_memory(scenario)
    assert seen == [({"n": 1}, "call-9", "work", "s")]


def test_a_call_for_a_tool_this_extension_does_not_have_is_left_to_its_owner() -> None:
    """Tool requests are broadcast; only the extension with that tool answers."""

    async def scenario() -> None:
        async with session_with_host([echo]) as (_, host):
            other = host.tool_requested("not_mine")
            assert (await host.call("echo", {"text": "hi"})).text_result_for_llm == "hi"
            assert not host.results[other].done()
            assert len(host.sent(p.METHOD_HANDLE_PENDING_TOOL_CALL)) == 1

    in_memory(scenario)


def test_a_tool_that_raises_is_answered_with_a_failure_naming_the_error() -> None:
    def broken(args: Any, invocation: Any) -> str:
        raise KeyError("config")

    async def scenario() -> ToolResult:
        async with session_with_host([Tool("broken", "Fails", broken)]) as (_, host):
            return await host.call("broken")

    result = in_memory(scenario)
    assert (result.result_type, result.error) == ("failure", "KeyError: 'config'")
    assert "config" in result.text_result_for_llm


def test_calls_that_arrive_before_join_session_returns_wait_for_it() -> None:
    """A handler may use the session the moment it runs: nothing runs before the release."""
    ran: list[str] = []

    async def scenario() -> None:
        def work(args: Any, invocation: Any) -> str:
            ran.append("tool")
            return "ok"

        def hook(value: Any, invocation: Any) -> None:
            ran.append("hook")

        async with linked([Tool("work", "Work", work)], {"on_user_prompt_submitted": hook}) as (client, host):
            await client.join(5)
            request_id = host.tool_requested("work")
            hooked = asyncio.ensure_future(host.hook("userPromptSubmitted", timeout=5))
            for _ in range(20):
                await asyncio.sleep(0)
            assert ran == [] and not hooked.done()
            client.released.set()
            async with asyncio.timeout(5):
                await host.results[request_id]
                await hooked
            assert sorted(ran) == ["hook", "tool"]

    in_memory(scenario)


# -- hooks ----------------------------------------------------------------------------------------


PRE_INPUT = {"timestamp": 1700000000000, "cwd": "/p", "toolName": "shell", "toolArgs": {"command": "rm -rf /"}}


def test_an_async_hook_gets_the_typed_input_and_its_output_goes_back_in_camel_case() -> None:
    seen: list[Any] = []

    async def deny(value: Any, invocation: Any) -> dict[str, Any]:
        seen.append((value.tool_name, value.tool_args, value.cwd, invocation.session_id))
        return {"permission_decision": "deny", "permission_decision_reason": "not rm"}

    async def scenario() -> Any:
        async with session_with_host(hooks={"on_pre_tool_use": deny}) as (_, host):
            return await host.hook("preToolUse", 5, PRE_INPUT)

    answer = in_memory(scenario)
    assert answer == {"output": {"permissionDecision": "deny", "permissionDecisionReason": "not rm"}}
    assert seen == [("shell", {"command": "rm -rf /"}, "/p", "s")]


@pytest.mark.parametrize("hook_type", ["postToolUse", "notAHook"])
def test_a_hook_this_extension_does_not_implement_answers_no_opinion(hook_type: str) -> None:
    async def scenario() -> Any:
        async with session_with_host(hooks={"on_pre_tool_use": guard}) as (_, host):
            return await host.hook(hook_type, 5, PRE_INPUT)

    assert in_memory(scenario) == {"output": None}


def test_a_hook_that_raises_answers_hook_failed_naming_the_hook_and_the_exception() -> None:
    def broken(value: Any, invocation: Any) -> None:
        raise ValueError("policy file missing")

    async def scenario() -> None:
        async with session_with_host(hooks={"on_pre_tool_use": broken}) as (_, host):
            with pytest.raises(RpcError) as failed:
                await host.hook("preToolUse", 5, PRE_INPUT)
            assert (failed.value.code, failed.value.message) == (
                p.HOOK_FAILED,
                "hook on_pre_tool_use raised ValueError: policy file missing",
            )
            assert failed.value.data == {"hook": "on_pre_tool_use"}

    in_memory(scenario)


def test_a_hook_output_with_an_unknown_key_answers_hook_failed_naming_the_key() -> None:
    async def sloppy(value: Any, invocation: Any) -> dict[str, Any]:
        return {"decision": "deny"}

    async def scenario() -> None:
        async with session_with_host(hooks={"on_pre_tool_use": sloppy}) as (_, host):
            with pytest.raises(RpcError) as failed:
                await host.hook("preToolUse", 5, PRE_INPUT)
            assert failed.value.code == p.HOOK_FAILED
            assert failed.value.message.startswith("hook on_pre_tool_use: ") and "decision" in failed.value.message
            assert failed.value.data == {"hook": "on_pre_tool_use", "key": "decision"}

    in_memory(scenario)


def test_a_hook_input_that_cannot_be_read_answers_invalid_params() -> None:
    async def scenario() -> None:
        async with session_with_host(hooks={"on_pre_tool_use": guard}) as (_, host):
            with pytest.raises(RpcError) as failed:
                await host.hook("preToolUse", 5, {**PRE_INPUT, "timestamp": "yesterday"})
            assert failed.value.code == p.INVALID_PARAMS

    in_memory(scenario)


# -- events ---------------------------------------------------------------------------------------


def test_session_on_registers_interest_once_per_type_and_delivers_matching_events() -> None:
    """Two handlers of one type: one registerInterest; each gets the type's events; ``*`` gets
    every event; an unsubscribed handler gets no more."""

    async def scenario() -> None:
        got: list[tuple[str, str]] = []
        idle = asyncio.Event()

        def everything(event: dict[str, Any]) -> None:
            got.append(("all", event["type"]))
            if event["type"] == "session.idle":
                idle.set()

        async def until_idle() -> None:
            idle.clear()
            host.event("session.idle")
            async with asyncio.timeout(5):
                await idle.wait()

        async with session_with_host() as (session, host):
            stop_first = session.on("assistant.message", lambda e: got.append(("first", e["type"])))
            session.on("assistant.message", lambda e: got.append(("second", e["type"])))
            session.on("*", everything)
            while len(host.sent(p.METHOD_REGISTER_INTEREST)) < 2:
                await host.next_request()
            assert host.sent(p.METHOD_REGISTER_INTEREST) == [
                {"sessionId": "s", "eventType": "assistant.message"},
                {"sessionId": "s", "eventType": "*"},
            ]
            host.event("assistant.message", {"content": "hi"})
            await until_idle()
            stop_first()
            host.event("assistant.message", {"content": "again"})
            await until_idle()
            assert got == [
                ("first", "assistant.message"),
                ("second", "assistant.message"),
                ("all", "assistant.message"),
                ("all", "session.idle"),
                ("second", "assistant.message"),
                ("all", "assistant.message"),
                ("all", "session.idle"),
            ]

    in_memory(scenario)


def test_a_failing_event_handler_is_logged_and_the_others_still_run(capsys: pytest.CaptureFixture[str]) -> None:
    async def scenario() -> list[str]:
        got: list[str] = []
        done = asyncio.Event()

        def broken(event: Any) -> None:
            raise RuntimeError("handler bug")

        async def later(event: Any) -> None:
            got.append(event["data"]["content"])
            done.set()

        async def broken_async(event: Any) -> None:
            raise RuntimeError("async handler bug")

        async with session_with_host() as (session, host):
            session.on("assistant.message", broken)
            session.on("assistant.message", broken_async)
            session.on("assistant.message", later)
            host.event("assistant.message", {"content": "hi"})
            async with asyncio.timeout(5):
                await done.wait()
            for _ in range(5):
                await asyncio.sleep(0)  # the async failure is reported from its own task
        return got

    assert in_memory(scenario) == ["hi"]
    err = capsys.readouterr().err
    assert "handler for assistant.message events failed" in err
    assert "handler bug" in err and "async handler bug" in err


# -- send, log, end of stream -------------------------------------------------------------------


def test_send_async_sends_the_prompt_and_returns_the_message_id() -> None:
    async def scenario() -> None:
        async with session_with_host() as (session, host):
            attachments = [{"type": "file", "path": "/p/a.py"}]
            assert await session.send_async("review this", attachments) == "m1"
            assert await session.send_async("and this") == "m1"
            assert host.sent(p.METHOD_SESSION_SEND) == [
                {"sessionId": "s", "prompt": "review this", "attachments": attachments},
                {"sessionId": "s", "prompt": "and this"},
            ]

    in_memory(scenario)


def test_send_and_wait_returns_the_last_assistant_message_before_idle() -> None:
    async def scenario() -> None:
        async with session_with_host() as (session, host):

            def reply(params: Any) -> None:
                host.event("assistant.message", {"content": "first"})
                host.event("assistant.message", {"content": "second"})
                host.event("session.idle")

            host.on_send = reply
            event = await session.send_and_wait_async("go", timeout=5)
            assert event is not None and event["data"] == {"content": "second"}

    in_memory(scenario)


def test_send_and_wait_raises_when_the_run_ends_with_a_session_error_but_not_for_an_error_log() -> None:
    """As the published SDK's sendAndWait rejects on session.error; an extension's error log
    (no errorType) is not the run's end."""

    async def scenario() -> None:
        async with session_with_host() as (session, host):

            def fail(params: Any) -> None:
                host.event("session.error", {"message": "another extension logged this", "extensionId": "x"})
                host.event("session.error", {"errorType": "tool_execution", "message": "an error hook ended the run"})
                host.event("session.idle")

            host.on_send = fail
            with pytest.raises(ExtensionError, match="an error hook ended the run"):
                await session.send_and_wait_async("go", timeout=5)

    in_memory(scenario)


def test_send_and_wait_raises_timeout_when_the_session_does_not_go_idle() -> None:
    async def scenario() -> None:
        async with session_with_host() as (session, _host):
            with pytest.raises(TimeoutError):
                await session.send_and_wait_async("go", timeout=0.05)

    in_memory(scenario)


def test_the_blocking_forms_refuse_to_run_on_the_protocol_loop_and_work_from_a_thread() -> None:
    """Inside async code the blocking send would deadlock: it raises with the async form to use."""

    async def scenario() -> None:
        async with session_with_host() as (session, host):
            with pytest.raises(ExtensionError, match=r"session\.send\(\) would block the protocol loop.*send_async"):
                session.send("hi")
            assert await asyncio.to_thread(session.send, "from a thread") == "m1"
            assert host.sent(p.METHOD_SESSION_SEND) == [{"sessionId": "s", "prompt": "from a thread"}]

    in_memory(scenario)


def test_log_sends_the_message_with_its_level_and_refuses_an_unknown_level() -> None:
    async def scenario() -> None:
        async with session_with_host() as (session, host):
            session.log("indexing", ephemeral=True)
            session.log("slow disk", "warning")
            while len(host.sent(p.METHOD_SESSION_LOG)) < 2:
                await host.next_request()
            assert host.sent(p.METHOD_SESSION_LOG) == [
                {"sessionId": "s", "message": "indexing", "level": "info", "ephemeral": True},
                {"sessionId": "s", "message": "slow disk", "level": "warning"},
            ]
            with pytest.raises(ValueError, match="log level 'debug' is not one of info, warning, error"):
                session.log("x", "debug")  # type: ignore[arg-type]

    in_memory(scenario)


def test_the_end_of_the_host_s_stream_closes_the_session() -> None:
    async def scenario() -> None:
        async with session_with_host() as (session, host):
            assert not session.closed
            host.connection.close()
            async with asyncio.timeout(5):
                await session.wait_closed()
            assert session.closed

    in_memory(scenario)


# -- permissions --------------------------------------------------------------------------------


def test_a_permission_handler_is_announced_at_join_and_answers_permission_requested() -> None:
    async def scenario() -> None:
        async with linked() as (client, host):
            answered: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

            def on_answer(params: Any) -> dict[str, Any]:
                answered.set_result(params)
                return {"success": True}

            host.connection.on_request(p.METHOD_HANDLE_PENDING_PERMISSION, on_answer)
            client.permission_handler = lambda request, invocation: (
                f"not {request['toolName']} ({invocation.session_id})"
            )
            await client.join(5)
            client.released.set()
            (resume,) = host.sent(p.METHOD_SESSION_RESUME)
            assert resume["requestPermission"] is True
            host.event("permission.requested", {"requestId": "p9", "resolvedByHook": True, "permissionRequest": {}})
            request = {"kind": "hook", "toolName": "deploy"}
            host.event("permission.requested", {"requestId": "p1", "permissionRequest": request})
            assert await answered == {
                "sessionId": "s",
                "requestId": "p1",
                "result": {"kind": "reject", "feedback": "not deploy (s)"},
            }

    in_memory(scenario)


def test_without_a_permission_handler_the_join_does_not_ask_for_permission_requests() -> None:
    async def scenario() -> None:
        async with session_with_host() as (_session, host):
            (resume,) = host.sent(p.METHOD_SESSION_RESUME)
            assert "requestPermission" not in resume

    in_memory(scenario)
