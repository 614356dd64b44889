"""Unit tests for extension_protocol.tools: the Tool value, the @tool decorator and run_tool."""

from __future__ import annotations

import asyncio
import threading
from typing import Annotated, Any

import pytest

from extension_protocol.errors import InvalidToolError
from extension_protocol.results import ToolResult
from extension_protocol.tools import TOOL_NAME_PATTERN, Tool, ToolInvocation, run_tool, tool

INVOCATION = ToolInvocation(session_id="s1", tool_call_id="call-1", tool_name="t", arguments={})


def run(tool_: Tool, arguments: Any, invocation: ToolInvocation = INVOCATION) -> ToolResult:
    """run_tool in a fresh event loop, bounded."""

    async def main() -> ToolResult:
        async with asyncio.timeout(5):
            return await run_tool(tool_, arguments, invocation)

    return asyncio.run(main())


def explicit_handler(args: Any, invocation: ToolInvocation) -> str:
    return "handled"


# -- @tool -------------------------------------------------------------------------------


def test_bare_decorator_takes_name_from_function_and_description_from_docstring() -> None:
    """@tool without arguments names the tool after the function and describes it by its docstring."""

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    assert isinstance(add, Tool)
    assert add.name == "add"
    assert add.description == "Add two integers."
    assert add.overrides_built_in_tool is False


def test_decorator_with_options_overrides_name_description_and_override_flag() -> None:
    """@tool(name=..., description=..., overrides_built_in_tool=True) uses the given values."""

    @tool(name="grep-files", description="Search files", overrides_built_in_tool=True)
    def search(pattern: str) -> str:
        """Docstring that is not used."""
        return pattern

    assert (search.name, search.description, search.overrides_built_in_tool) == ("grep-files", "Search files", True)


def test_decorator_with_options_but_no_name_uses_the_function_name() -> None:
    """Options without name still default the name to the function's."""

    @tool(description="d")
    def list_things() -> None:
        pass

    assert list_things.name == "list_things"


def test_description_is_the_first_docstring_paragraph_with_whitespace_collapsed() -> None:
    """Only the first paragraph is used, joined onto one line."""

    @tool
    def f() -> None:
        """Read a file
        and return its text.

        Details the model need not see.
        """

    assert f.description == "Read a file and return its text."


def test_missing_description_is_an_invalid_tool_error() -> None:
    """A function without docstring and without description= cannot be a tool."""

    def undocumented(a: int) -> int:
        return a

    with pytest.raises(InvalidToolError, match="description") as info:
        tool(undocumented)
    assert info.value.tool == "undocumented"


def test_empty_description_argument_is_an_invalid_tool_error() -> None:
    """description='' is no description."""
    with pytest.raises(InvalidToolError):

        @tool(description="")
        def f() -> None:
            """Ignored because description was given."""


@pytest.mark.parametrize(
    "bad_name", ["has space", "", "a" * 65, "dot.name", "slash/name", "ünï", "abc\n", "\nabc", "abc\r"]
)
def test_invalid_tool_names_are_rejected(bad_name: str) -> None:
    """Names outside 1-64 of letters, digits, '_' and '-' raise InvalidToolError, a trailing newline
    included."""
    with pytest.raises(InvalidToolError):
        Tool(name=bad_name, description="d", handler=explicit_handler)


@pytest.mark.parametrize("good_name", ["a", "a" * 64, "read_file", "git-diff", "Tool2"])
def test_valid_tool_names_are_accepted(good_name: str) -> None:
    """Letters, digits, '_' and '-' up to 64 characters are fine."""
    assert Tool(name=good_name, description="d", handler=explicit_handler).name == good_name
    assert TOOL_NAME_PATTERN.fullmatch(good_name)


def test_the_tool_name_pattern_refuses_a_trailing_newline_however_it_is_applied() -> None:
    """The pattern is anchored at the very end, so match() and search() refuse "abc\\n" too."""
    assert not TOOL_NAME_PATTERN.match("abc\n")
    assert not TOOL_NAME_PATTERN.search("abc\n")
    assert not TOOL_NAME_PATTERN.fullmatch("abc\n")


def test_invalid_name_given_to_the_decorator_is_rejected() -> None:
    """@tool(name='has space') raises InvalidToolError naming the bad name."""
    with pytest.raises(InvalidToolError) as info:

        @tool(name="has space", description="d")
        def f() -> None:
            pass

    assert info.value.tool == "has space"


def test_decorating_a_function_with_a_positional_only_parameter_is_an_invalid_tool_error() -> None:
    """A signature JSON arguments cannot fill makes the definition invalid."""

    def f(a: int, /) -> None:
        """Positional-only."""

    with pytest.raises(InvalidToolError, match="'a'"):
        tool(f)


def test_non_callable_handler_is_rejected() -> None:
    """Tool(handler=...) must be callable."""
    with pytest.raises(InvalidToolError, match="not callable"):
        Tool(name="t", description="d", handler="nope")  # type: ignore[arg-type]


def test_parameters_that_are_not_a_dict_are_rejected() -> None:
    """An explicit parameters schema must be a dict."""
    with pytest.raises(InvalidToolError, match="parameters"):
        Tool(name="t", description="d", handler=explicit_handler, parameters=["a"])  # type: ignore[arg-type]


def test_decorated_tool_stays_callable_as_the_plain_function() -> None:
    """Calling the Tool calls the decorated function with ordinary Python arguments."""

    @tool
    def add(a: int, b: int = 10) -> int:
        """Add."""
        return a + b

    assert add(1, 2) == 3
    assert add(a=5) == 15
    assert add.function is not None


def test_explicit_tool_without_function_is_not_callable_directly() -> None:
    """A Tool built from a handler only refuses direct calls with a TypeError."""
    t = Tool(name="t", description="d", handler=explicit_handler)
    with pytest.raises(TypeError, match="handler"):
        t()


def test_decorated_tool_parameters_are_the_signature_json_schema() -> None:
    """@tool derives the parameters schema from the annotations."""

    @tool
    def read(path: Annotated[str, "file path"], limit: int = 5) -> str:
        """Read."""
        return path

    assert read.parameters == {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "file path"}, "limit": {"type": "integer"}},
        "required": ["path"],
        "additionalProperties": False,
    }


# -- to_wire -----------------------------------------------------------------------------


def test_to_wire_has_name_description_and_parameters() -> None:
    """The declaration carries name, description and the schema; no override flag by default."""

    @tool
    def echo(text: str) -> str:
        """Echo text."""
        return text

    assert echo.to_wire() == {
        "name": "echo",
        "description": "Echo text.",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": False,
        },
    }


def test_to_wire_without_parameters_omits_them_and_includes_override_flag_when_set() -> None:
    """parameters=None is left out; overridesBuiltInTool appears only when True."""
    t = Tool(name="t", description="d", handler=explicit_handler, overrides_built_in_tool=True)
    assert t.to_wire() == {"name": "t", "description": "d", "overridesBuiltInTool": True}


# -- run_tool ----------------------------------------------------------------------------


def test_sync_handler_runs_on_a_worker_thread_not_the_event_loop_thread() -> None:
    """A plain-function tool is called on a different thread than the loop's."""
    seen: dict[str, int] = {}

    @tool
    def where() -> str:
        """Report the thread."""
        seen["handler"] = threading.get_ident()
        return "ok"

    async def main() -> ToolResult:
        seen["loop"] = threading.get_ident()
        async with asyncio.timeout(5):
            return await run_tool(where, {}, INVOCATION)

    result = asyncio.run(main())
    assert result == ToolResult("ok")
    assert seen["handler"] != seen["loop"]


def test_async_handler_is_awaited_on_the_event_loop() -> None:
    """A coroutine tool runs in the loop (same thread) and its return value is normalised."""
    seen: dict[str, Any] = {}

    @tool
    async def fetch(n: int) -> dict[str, int]:
        """Async tool."""
        seen["thread"] = threading.get_ident()
        seen["loop"] = asyncio.get_running_loop()
        return {"n": n}

    async def main() -> tuple[ToolResult, Any, int]:
        async with asyncio.timeout(5):
            result = await run_tool(fetch, {"n": 3}, INVOCATION)
        return result, asyncio.get_running_loop(), threading.get_ident()

    result, loop, thread = asyncio.run(main())
    assert result == ToolResult('{"n": 3}')
    assert seen["loop"] is loop
    assert seen["thread"] == thread


def test_explicit_handler_receives_raw_arguments_and_the_invocation() -> None:
    """Tool(handler=...) is called as handler(args, invocation) without checking."""
    calls: list[tuple[Any, ToolInvocation]] = []

    def handler(args: Any, invocation: ToolInvocation) -> str:
        calls.append((args, invocation))
        return "fine"

    t = Tool(name="t", description="d", handler=handler)
    assert run(t, {"anything": [1]}) == ToolResult("fine")
    assert calls == [({"anything": [1]}, INVOCATION)]


def test_explicit_async_callable_object_handler_is_awaited() -> None:
    """An object whose __call__ is a coroutine function counts as an async handler."""

    class Handler:
        async def __call__(self, args: Any, invocation: ToolInvocation) -> str:
            return f"async:{args['x']}"

    assert run(Tool(name="t", description="d", handler=Handler()), {"x": 1}) == ToolResult("async:1")


def test_handler_exception_becomes_a_failure_result_with_its_message() -> None:
    """An exception is not raised from run_tool; it is a failure saying what went wrong."""

    @tool
    def explode() -> None:
        """Fails."""
        raise RuntimeError("disk on fire")

    result = run(explode, {})
    assert result.result_type == "failure"
    assert result.text_result_for_llm == "disk on fire"
    assert result.error == "RuntimeError: disk on fire"


def test_async_handler_exception_becomes_a_failure_result() -> None:
    """Coroutine tools fail the same way."""

    @tool
    async def explode() -> None:
        """Fails."""
        raise KeyError("k")

    result = run(explode, {})
    assert result.result_type == "failure"
    assert result.error is not None and result.error.startswith("KeyError")


def test_exception_without_message_uses_its_type_name_as_text() -> None:
    """An exception with an empty message still gives a non-empty failure text."""

    @tool
    def explode() -> None:
        """Fails."""
        raise ValueError()

    result = run(explode, {})
    assert result.result_type == "failure"
    assert result.text_result_for_llm == "ValueError"


def test_bad_arguments_become_a_failure_naming_the_field() -> None:
    """Ill-fitting arguments give a failure naming the tool and the field; the function is not called."""
    calls: list[int] = []

    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        calls.append(a)
        return a + b

    result = run(add, {"a": 1, "b": "two"})
    assert result.result_type == "failure"
    assert "'b'" in result.text_result_for_llm
    assert "'add'" in result.text_result_for_llm
    assert result.error == result.text_result_for_llm
    assert calls == []


def test_missing_and_unknown_arguments_become_failures_naming_the_field() -> None:
    """A missing required argument and an unexpected one are both reported by name."""

    @tool
    def greet(name: str) -> str:
        """Greet."""
        return name

    assert "'name'" in run(greet, {}).text_result_for_llm
    unknown = run(greet, {"name": "x", "nickname": "y"})
    assert unknown.result_type == "failure"
    assert "'nickname'" in unknown.text_result_for_llm


def test_good_arguments_are_bound_and_the_result_normalised() -> None:
    """Checked arguments reach the function, and its str return becomes a success."""

    @tool
    def add(a: int, b: float) -> str:
        """Add."""
        return f"{a + b!r}"

    assert run(add, {"a": 1, "b": 2}) == ToolResult("3.0")


def test_invocation_is_injected_when_the_function_has_an_invocation_parameter() -> None:
    """A parameter named invocation receives the call's ToolInvocation, not a JSON argument."""
    got: list[ToolInvocation] = []

    @tool
    def who(query: str, invocation: ToolInvocation) -> str:
        """Who called."""
        got.append(invocation)
        return f"{query}:{invocation.tool_call_id}"

    invocation = ToolInvocation(session_id="s", tool_call_id="c-9", tool_name="who", arguments={"query": "q"})
    assert run(who, {"query": "q"}, invocation) == ToolResult("q:c-9")
    assert got == [invocation]
    assert "invocation" not in (who.parameters or {}).get("properties", {})


def test_invocation_is_injected_into_async_functions_too() -> None:
    """Coroutine tools also receive the invocation."""

    @tool
    async def who(invocation: ToolInvocation) -> str:
        """Who called."""
        return invocation.session_id

    assert run(who, None) == ToolResult("s1")


def test_unusable_return_value_becomes_a_failure() -> None:
    """A return value that cannot be a result (not JSON) is a failure, not an exception."""

    @tool
    def weird() -> object:
        """Returns junk."""
        return object()

    result = run(weird, {})
    assert result.result_type == "failure"
    assert "object" in result.text_result_for_llm
    assert result.error is not None and result.error.startswith("ValueError")


def test_returned_tool_result_is_passed_through() -> None:
    """A handler returning a ToolResult keeps its type and fields."""

    @tool
    def deny() -> ToolResult:
        """Denies."""
        return ToolResult("not allowed", "denied", error="policy")

    assert run(deny, {}) == ToolResult("not allowed", "denied", error="policy")


def test_two_sync_tool_calls_started_together_run_concurrently() -> None:
    """Two sync handlers started in the same loop tick run on two workers at once, not one after the other."""
    both_started = threading.Barrier(2, timeout=3)

    @tool
    def meet(n: int) -> int:
        """Waits for the other call."""
        both_started.wait()
        return n

    async def main() -> list[ToolResult]:
        async with asyncio.timeout(10):
            return list(
                await asyncio.gather(run_tool(meet, {"n": 1}, INVOCATION), run_tool(meet, {"n": 2}, INVOCATION))
            )

    assert asyncio.run(main()) == [ToolResult("1"), ToolResult("2")]
