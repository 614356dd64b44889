"""The host with real extension processes: joining, calling tools, and every way it goes wrong."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from extension_host import Timeouts, UnknownToolError
from helpers import Project, is_log, run, wait_for_event
from sdk_extension import tool

pytestmark = pytest.mark.subprocess

CALC = """
    from sdk_extension import join_session, tool

    @tool(description="Add two integers")
    def add(a: int, b: int) -> str:
        return str(a + b)

    @tool
    async def divide(a: float, b: float) -> float:
        '''Divide a by b.'''
        return a / b

    session = join_session(tools=[add, divide])
    session.log("calc ready")
"""


def test_an_extension_joins_and_its_tool_answers_through_the_host(project: Project) -> None:
    """A Python extension is running with its tools, and a call returns the handler's text."""
    project.add_extension("calc", CALC)

    async def scenario() -> None:
        async with project.host() as host:
            (info,) = host.extensions
            assert (info.id, info.status, info.tools) == ("project:calc", "running", ("add", "divide"))
            assert info.pid is not None and info.error is None
            result = await host.call_tool("add", {"a": 2, "b": 40})
            assert (result.result_type, result.text_result_for_llm) == ("success", "42")
            assert host.tools["divide"].owner == "project:calc"

    run(scenario())


def test_tool_calls_are_announced_as_start_and_complete_events(project: Project) -> None:
    """Each call emits tool.execution_start and tool.execution_complete with one toolCallId."""
    project.add_extension("calc", CALC)

    async def scenario() -> None:
        async with project.host() as host:
            await wait_for_event(host, is_log("calc ready"))  # so that nothing comes in between
            await host.call_tool("add", {"a": 1, "b": 1}, tool_call_id="call-1")
            start = host.events.history("tool.execution_start")[-1]
            complete = host.events.history("tool.execution_complete")[-1]
            assert start["data"] == {"toolCallId": "call-1", "toolName": "add", "arguments": {"a": 1, "b": 1}}
            assert complete["data"]["toolCallId"] == "call-1"
            assert complete["data"]["success"] is True
            assert complete["data"]["result"]["content"] == "2"
            # Between them, the call to the extension and its answer, persisted as in Copilot CLI.
            requested = host.events.history("external_tool.requested")[-1]
            completed = host.events.history("external_tool.completed")[-1]
            assert requested["data"]["toolCallId"] == "call-1"
            assert requested["data"]["workingDirectory"] == str(project.root)
            assert completed["data"] == {"requestId": requested["data"]["requestId"]}
            assert (requested["parentId"], completed["parentId"]) == (start["id"], requested["id"])
            assert complete["parentId"] == completed["id"]

    run(scenario())


SLOW = """
    import asyncio
    from sdk_extension import join_session, tool

    @tool(description="Wait, then answer")
    async def slow(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "late"

    join_session(tools=[slow])
"""


def test_a_tool_that_outlasts_the_tool_timeout_gives_a_timeout_result_and_the_next_call_works(
    project: Project,
) -> None:
    """No answer within tool_timeout: result type timeout naming the tool, extension and limit;
    the late answer is refused without harm, and the next call is answered."""
    project.add_extension("slow", SLOW)

    async def scenario() -> None:
        async with project.host(timeouts=Timeouts(stop_grace=2.0, tool=0.2)) as host:
            late = await host.call_tool("slow", {"seconds": 0.6})
            assert late.result_type == "timeout"
            assert late.text_result_for_llm == "tool 'slow' of project:slow did not answer within 0.2 s"
            assert late.error == late.text_result_for_llm
            await asyncio.sleep(0.6)  # the late answer arrives and is refused
            quick = await host.call_tool("slow", {"seconds": 0})
            assert (quick.result_type, quick.text_result_for_llm) == ("success", "late")
            assert host.extensions[0].status == "running"

    run(scenario())


def test_session_log_becomes_a_session_info_event(project: Project) -> None:
    """session.log("calc ready") reaches the event log as session.info naming the extension."""
    project.add_extension("calc", CALC)

    async def scenario() -> None:
        async with project.host() as host:
            info = await wait_for_event(host, is_log("calc ready"))
            assert info["data"]["extensionId"] == "project:calc"
            loaded = host.events.history("session.extensions_loaded")
            assert loaded and loaded[0]["data"]["extensions"][0]["status"] == "running"

    run(scenario())


def test_a_failing_handler_gives_a_failure_result_with_its_message(project: Project) -> None:
    """ZeroDivisionError in a tool becomes result type failure carrying the message."""
    project.add_extension("calc", CALC)

    async def scenario() -> None:
        async with project.host() as host:
            result = await host.call_tool("divide", {"a": 1, "b": 0})
            assert result.result_type == "failure"
            assert "division by zero" in result.text_result_for_llm
            assert result.error is not None and "ZeroDivisionError" in result.error
            assert (await host.call_tool("divide", {"a": 1, "b": 4})).text_result_for_llm == "0.25"

    run(scenario())


def test_invalid_arguments_give_a_failure_naming_the_field(project: Project) -> None:
    """A string where an integer belongs, or a missing argument, is a failure naming the field."""
    project.add_extension("calc", CALC)

    async def scenario() -> None:
        async with project.host() as host:
            wrong_type = await host.call_tool("add", {"a": 1, "b": "two"})
            missing = await host.call_tool("add", {"a": 1})
            extra = await host.call_tool("add", {"a": 1, "b": 2, "c": 3})
            for result, field in ((wrong_type, "'b'"), (missing, "'b'"), (extra, "'c'")):
                assert result.result_type == "failure"
                assert field in result.text_result_for_llm

    run(scenario())


def test_an_unknown_tool_raises_an_error_listing_the_available_ones(project: Project) -> None:
    """call_tool of a name nobody offers raises UnknownToolError that lists the tools."""
    project.add_extension("calc", CALC)

    async def scenario() -> None:
        async with project.host() as host:
            with pytest.raises(UnknownToolError) as caught:
                await host.call_tool("multiply", {})
            assert caught.value.tool == "multiply"
            assert "add" in str(caught.value) and "divide" in str(caught.value)

    run(scenario())


def test_built_in_tools_are_called_in_process_and_count_for_collisions(project: Project) -> None:
    """A tool of the embedding application answers; an extension offering its name fails."""

    @tool(description="The host's own clock")
    def add(a: int, b: int) -> str:
        return f"builtin {a + b}"

    project.add_extension("calc", CALC)

    async def scenario() -> None:
        async with project.host(builtin_tools=[add]) as host:
            (info,) = host.extensions
            assert info.status == "failed"
            assert info.error is not None and "'add'" in info.error and "built-in" in info.error
            assert (await host.call_tool("add", {"a": 1, "b": 2})).text_result_for_llm == "builtin 3"
            assert "divide" not in host.tools

    run(scenario())


def test_two_extensions_with_one_tool_name_fail_the_later_one_in_load_order(project: Project) -> None:
    """The first extension (by name) keeps the tool; the second is failed naming tool and owner.

    The first one is made slower to join, so the outcome cannot come from timing.
    """
    project.add_extension(
        "alpha",
        """
        import time
        from sdk_extension import join_session, tool
        time.sleep(0.5)

        @tool(description="Greet")
        def greet() -> str:
            return "alpha"

        join_session(tools=[greet])
        """,
    )
    project.add_extension(
        "beta",
        """
        from sdk_extension import join_session, tool

        @tool(description="Greet")
        def greet() -> str:
            return "beta"

        @tool(description="Only beta has this")
        def wave() -> str:
            return "beta waves"

        join_session(tools=[wave, greet])
        """,
    )

    async def scenario() -> None:
        async with project.host() as host:
            alpha, beta = host.extensions
            assert alpha.status == "running"
            assert beta.status == "failed"
            assert beta.error is not None
            assert "'greet'" in beta.error and "project:alpha" in beta.error
            assert "wave" not in host.tools  # all or nothing
            assert (await host.call_tool("greet")).text_result_for_llm == "alpha"

    run(scenario())


def test_an_extension_that_raises_at_import_fails_with_the_exception_line(project: Project) -> None:
    """The error is the last line of the traceback; the other extension keeps working."""
    project.add_extension("broken", "raise RuntimeError('missing API key for broken')\n")
    project.add_extension("calc", CALC)

    async def scenario() -> None:
        async with project.host() as host:
            broken = host.extension("broken")
            assert broken.status == "failed"
            assert broken.error is not None
            assert "exited with code 1 before joining" in broken.error
            assert "RuntimeError: missing API key for broken" in broken.error
            assert (await host.call_tool("add", {"a": 1, "b": 2})).success

    run(scenario())


def test_while_an_extension_cannot_run_each_tool_call_and_prompt_warns_naming_it(project: Project) -> None:
    """Its hooks judge nothing meanwhile: every guarded call of the host's own session says so
    (the call itself goes on; the hook command, which answers another agent, blocks instead)."""
    project.add_extension("broken", "raise RuntimeError('missing API key for broken')\n")
    project.add_extension("calc", CALC)

    async def scenario() -> None:
        async with project.host() as host:
            assert (await host.call_tool("add", {"a": 1, "b": 2})).success
            assert (await host.call_tool("add", {"a": 3, "b": 4})).success
            assert not (await host.submit_prompt("hello")).rejected
            warnings = [event["data"] for event in host.events.history() if event["type"] == "session.warning"]
            assert [warning["extensionId"] for warning in warnings] == ["project:broken"] * 3
            assert "RuntimeError: missing API key for broken" in warnings[0]["message"]
            assert "did not judge this call of add" in warnings[0]["message"]
            assert "did not judge this prompt" in warnings[2]["message"]

    run(scenario())


def test_a_logs_folder_that_cannot_be_made_fails_each_extension_saying_so_not_the_host(project: Project) -> None:
    project.add_extension("calc", CALC)
    (project.home / "logs").write_text("a file where the logs folder goes")

    async def scenario() -> None:
        async with project.host(watch=False) as host:
            (info,) = host.extensions
            assert info.status == "failed"
            assert info.error is not None and "Not a directory" in info.error
            assert str(project.home / "logs") in info.error and "control socket" not in info.error

    run(scenario())


def test_an_extension_that_exits_early_fails_with_its_exit_code(project: Project) -> None:
    """sys.exit(3) before joining gives 'exited with code 3'."""
    project.add_extension("quitter", "import sys\nsys.exit(3)\n")

    async def scenario() -> None:
        async with project.host() as host:
            (info,) = host.extensions
            assert info.status == "failed"
            assert info.error is not None and "exited with code 3 before joining" in info.error

    run(scenario())


def test_an_extension_that_never_joins_fails_after_the_readiness_timeout(project: Project) -> None:
    """A script that never calls join_session is failed with 'did not join within N s'."""
    project.add_extension("sleeper", "import threading\nthreading.Event().wait(600)\n")
    project.add_extension("calc", CALC)

    async def scenario() -> None:
        async with project.host(timeouts=Timeouts(stop_grace=2.0, readiness=1.5)) as host:
            sleeper = host.extension("sleeper")
            assert sleeper.status == "failed"
            assert sleeper.error is not None and "did not join within 1.5 s" in sleeper.error
            assert host.extension("calc").status == "running"

    run(scenario())


def test_an_unknown_hook_name_fails_the_extension_with_the_valid_names(project: Project) -> None:
    """join_session(hooks={"on_pre_tool": f}) raises; the error lists the six hook points."""
    project.add_extension(
        "typo",
        """
        from sdk_extension import join_session
        join_session(hooks={"on_pre_tool": lambda i, inv: None})
        """,
    )

    async def scenario() -> None:
        async with project.host() as host:
            (info,) = host.extensions
            assert info.status == "failed"
            assert info.error is not None
            assert "unknown hook 'on_pre_tool'" in info.error
            assert "on_pre_tool_use" in info.error

    run(scenario())


def test_declared_hooks_are_reported_by_their_python_names(project: Project) -> None:
    """Hooks given in either spelling are listed in snake_case on the extension."""
    project.add_extension(
        "hooked",
        """
        from sdk_extension import join_session
        join_session(hooks={"onPreToolUse": lambda i, inv: None, "on_session_end": lambda i, inv: None})
        """,
    )

    async def scenario() -> None:
        async with project.host() as host:
            (info,) = host.extensions
            assert info.status == "running"
            assert set(info.hooks) == {"on_pre_tool_use", "on_session_end"}

    run(scenario())


def test_stdout_writes_never_corrupt_the_protocol_and_land_in_the_log(project: Project) -> None:
    """print, sys.stdout.write and os.write(1) at import and in a handler all go to the log."""
    project.add_extension(
        "noisy",
        """
        import os, sys
        from sdk_extension import join_session, tool
        print("printed at import")
        sys.stdout.write("written at import\\n")
        os.write(1, b"raw fd write at import\\n")

        @tool(description="Talk a lot")
        def chatter(word: str) -> str:
            print("printed in handler", word)
            sys.stdout.write("Content-Length: 9999\\r\\n\\r\\n")
            os.write(1, b"raw fd write in handler\\n")
            return word.upper()

        join_session(tools=[chatter])
        """,
    )

    async def scenario() -> None:
        async with project.host() as host:
            for word in ("one", "two"):
                result = await host.call_tool("chatter", {"word": word})
                assert result.text_result_for_llm == word.upper()
            log_path = host.extension("noisy").log_path
        assert log_path is not None
        log = log_path.read_text()
        for text in (
            "printed at import",
            "written at import",
            "raw fd write at import",
            "printed in handler two",
            "raw fd write in handler",
        ):
            assert text in log

    run(scenario())


def test_session_send_is_recorded_as_a_user_message(project: Project) -> None:
    """session.send returns a message id; the host records user.message from the extension."""
    project.add_extension(
        "sender",
        """
        from sdk_extension import join_session, tool

        @tool(description="Ask the agent something")
        def ask(prompt: str) -> str:
            return session.send(prompt)

        session = join_session(tools=[ask])
        """,
    )
    sent: list[tuple[str, str]] = []

    async def on_send(prompt: str, attachments: list[dict[str, Any]], extension: str) -> None:
        sent.append((prompt, extension))

    async def scenario() -> None:
        async with project.host(on_send=on_send) as host:
            result = await host.call_tool("ask", {"prompt": "run the tests"})
            (message,) = host.events.history("user.message")
            assert result.text_result_for_llm == message["id"]
            assert message["data"]["content"] == "run the tests"
            assert sent == [("run the tests", "project:sender")]

    run(scenario())


def test_session_on_delivers_the_event_types_an_extension_subscribed_to(project: Project) -> None:
    """An extension subscribed to tool.execution_complete hears of calls and can log about them."""
    project.add_extension(
        "watcher",
        """
        from sdk_extension import join_session, tool

        @tool(description="Do nothing")
        def noop() -> None:
            return None

        session = join_session(tools=[noop])
        session.on("tool.execution_complete", lambda e: session.log("saw " + e["data"]["toolName"]))
        session.log("subscribed")
        """,
    )

    async def scenario() -> None:
        async with project.host() as host:
            await wait_for_event(host, is_log("subscribed"))
            result = await host.call_tool("noop")
            assert (result.result_type, result.text_result_for_llm) == ("success", "")
            await wait_for_event(host, is_log("saw noop"))

    run(scenario())


def test_the_asyncio_form_joins_and_serves_until_the_host_closes(project: Project) -> None:
    """join_session_async + wait_closed: async tools answer, and the process exits 0 on stop."""
    project.add_extension(
        "asyncy",
        """
        import asyncio
        from sdk_extension import join_session_async, tool

        @tool(description="Wait a moment, then answer")
        async def later(text: str) -> str:
            await asyncio.sleep(0)
            return text[::-1]

        async def main() -> None:
            session = await join_session_async(tools=[later])
            session.log("async ready")
            await session.wait_closed()

        asyncio.run(main())
        """,
    )

    async def scenario() -> None:
        host = project.host()
        await host.start()
        try:
            assert host.extension("asyncy").status == "running"
            results = await asyncio.gather(*(host.call_tool("later", {"text": f"ab{i}"}) for i in range(8)))
            assert [r.text_result_for_llm for r in results] == [f"{i}ba" for i in range(8)]
            await wait_for_event(host, is_log("async ready"))
            process = next(iter(host._supervisor.current())).process
        finally:
            await host.stop()
        assert process is not None and process.returncode == 0

    run(scenario())


def test_a_blocking_session_call_inside_async_code_fails_with_advice(project: Project) -> None:
    """session.send() in an async handler would deadlock; it fails naming send_async instead."""
    project.add_extension(
        "misuse",
        """
        from sdk_extension import join_session, tool

        @tool(description="Misuse the blocking API")
        async def misuse() -> str:
            return session.send("hello")

        session = join_session(tools=[misuse])
        """,
    )

    async def scenario() -> None:
        async with project.host() as host:
            result = await host.call_tool("misuse")
            assert result.result_type == "failure"
            assert "await session.send_async" in result.text_result_for_llm

    run(scenario())


def test_calls_made_the_moment_an_extension_joins_can_use_the_returned_session(project: Project) -> None:
    """Calls that arrive while join_session is returning wait for it, so `session` is defined."""
    project.add_extension(
        "eager",
        """
        from sdk_extension import join_session, tool

        @tool(description="Use the session global")
        def whoami() -> str:
            return session.session_id

        session = join_session(tools=[whoami])
        """,
    )

    async def scenario() -> None:
        async with project.host() as host:
            results = await asyncio.gather(*(host.call_tool("whoami") for _ in range(8)))
            assert [r.text_result_for_llm for r in results] == [host.session_id] * 8

    run(scenario())


def test_a_call_waits_until_the_script_has_stored_the_session_even_when_storing_is_slow(project: Project) -> None:
    """The store of join_session's result takes half a second here; a call that arrived meanwhile
    runs only once it is done, so the handler finds the session where the script put it."""
    project.add_extension(
        "slowstore",
        """
        import time
        from sdk_extension import join_session, tool

        class Holder:
            def __setattr__(self, name, value):
                time.sleep(0.5)  # a slow store: a call run before it ends would find nothing
                object.__setattr__(self, name, value)

        holder = Holder()

        @tool(description="Use the stored session")
        async def whoami() -> str:
            return holder.session.session_id

        holder.session = join_session(tools=[whoami])
        """,
    )

    async def scenario() -> None:
        async with project.host() as host:
            result = await host.call_tool("whoami")
            assert (result.result_type, result.text_result_for_llm) == ("success", host.session_id)

    run(scenario())


OVERRIDER = """
    from sdk_extension import join_session, tool

    @tool(description="A better read_file", overrides_built_in_tool=True)
    def read_file(path: str) -> str:
        return "from the extension"

    join_session(tools=[read_file])
"""


@tool(name="read_file", description="Read a file")
def builtin_read_file(path: str) -> str:
    return "built in"


def test_an_extension_that_overrides_a_built_in_tool_is_announced(project: Project) -> None:
    """A session.warning names the extension and the built-in; the listing says which it replaces."""
    project.add_extension("better", OVERRIDER)

    async def scenario() -> None:
        async with project.host(builtin_tools=[builtin_read_file]) as host:
            info = host.extension("better")
            assert (info.status, info.overrides_builtin) == ("running", ("read_file",))
            assert info.to_json()["overrides_builtin"] == ["read_file"]
            warning = await wait_for_event(host, lambda e: e["type"] == "session.warning")
            assert warning["data"]["message"] == "extension project:better overrides the built-in tool 'read_file'"
            assert (await host.call_tool("read_file", {"path": "x"})).text_result_for_llm == "from the extension"

    run(scenario())


def test_an_application_that_refuses_overrides_fails_the_extension_and_keeps_its_built_in(project: Project) -> None:
    """allow_builtin_overrides=False: the extension is failed naming the tool; the built-in answers."""
    project.add_extension("better", OVERRIDER)

    async def scenario() -> None:
        async with project.host(builtin_tools=[builtin_read_file], allow_builtin_overrides=False) as host:
            info = host.extension("better")
            assert info.status == "failed"
            assert info.error is not None and "overrides the built-in tool 'read_file'" in info.error
            assert host.tools["read_file"].owner == "builtin"
            assert (await host.call_tool("read_file", {"path": "x"})).text_result_for_llm == "built in"

    run(scenario())
