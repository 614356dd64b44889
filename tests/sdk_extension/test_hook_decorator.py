"""``@hook``: what it checks when it decorates, that a join sends decorated hooks exactly as the
``hooks={...}`` mapping, that the type checker holds a hook to its hook point's models, and a
decorated guard with a matcher in real extension processes."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import typing
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, get_args

import pytest

from extension_protocol import hook_models
from extension_protocol.errors import InvalidHookError
from extension_protocol.hook_models import (
    AgentStopInput,
    HookInvocation,
    PostToolUseInput,
    PostToolUseOutput,
    PreToolUseInput,
    PreToolUseOutput,
    SessionStartInput,
    SessionStartOutput,
)
from extension_protocol.hook_points import HOOK_POINTS
from extension_protocol.matchers import MAX_MATCHER_PATTERNS
from helpers import ECHO_AND_RUN_JOB, Project, doc_section, run, session_resume
from sdk_extension import hooks as hooks_module
from sdk_extension.hooks import HOOK_POINT_NAMES, Hook, hook
from sdk_extension.join import registered_hooks


@hook("pre_tool_use", tools=["bash", "run_*"])
def guard(input: PreToolUseInput, invocation: HookInvocation) -> PreToolUseOutput | None:
    if input.tool_name == "bash":
        return PreToolUseOutput(permission_decision="deny", permission_decision_reason="no shell")
    return None


@hook("post_tool_use")
async def audit(input: PostToolUseInput, invocation: HookInvocation) -> PostToolUseOutput | None:
    return PostToolUseOutput(additional_context=f"audited {input.tool_name}")


@hook("session_start")
def greet(input: SessionStartInput, invocation: HookInvocation) -> SessionStartOutput:
    return SessionStartOutput(additional_context="hello")


def one_line_error(make: Callable[[], object]) -> InvalidHookError:
    with pytest.raises(InvalidHookError) as caught:
        make()
    assert "\n" not in str(caught.value)
    return caught.value


# -- decorating ------------------------------------------------------------------------------


def test_a_decorated_hook_carries_its_hook_point_and_tools_and_calls_its_function() -> None:
    assert (guard.point, guard.tools) == ("on_pre_tool_use", ("bash", "run_*"))
    assert (audit.point, audit.tools) == ("on_post_tool_use", None)
    bash = PreToolUseInput(timestamp=datetime.now(UTC), cwd="/", tool_name="bash", tool_args={})
    assert guard(bash, HookInvocation("s")) == PreToolUseOutput(
        permission_decision="deny", permission_decision_reason="no shell"
    )
    assert guard(dataclasses.replace(bash, tool_name="run_job"), HookInvocation("s")) is None


def test_tool_patterns_are_kept_once_each_in_their_order_and_a_string_is_one_pattern() -> None:
    assert hook("pre_tool_use", tools=["run_*", "bash", "run_*"])(guard.function).tools == ("run_*", "bash")
    assert hook("post_tool_use_failure", tools="bash")(lambda input, invocation: None).tools == ("bash",)


@pytest.mark.parametrize("spelling", ["on_pre_tool_use", "onPreToolUse", "preToolUse"])
def test_a_hook_point_spelled_another_way_is_refused_with_the_spelling_to_write(spelling: str) -> None:
    error = one_line_error(lambda: hook(spelling))  # type: ignore[call-overload]
    assert error.hook == "on_pre_tool_use"
    assert str(error) == f"@hook({spelling!r}): write @hook('pre_tool_use') (its name without 'on_')"


def test_an_unknown_hook_point_is_refused_with_every_hook_point_s_name() -> None:
    error = one_line_error(lambda: hook("pre_tool"))  # type: ignore[call-overload]
    assert str(error) == f"@hook('pre_tool'): no such hook point; the hook points are: {', '.join(HOOK_POINT_NAMES)}"


@pytest.mark.parametrize("name", [name for name, point in HOOK_POINTS.items() if not point.for_tools])
def test_tools_are_refused_on_a_hook_point_that_is_not_about_a_tool(name: str) -> None:
    short = name.removeprefix("on_")
    error = one_line_error(lambda: hook(short, tools=["bash"]))  # type: ignore[call-overload]
    assert error.hook == name
    assert str(error) == (
        f"@hook({short!r}) is not about a tool: drop tools= (it is for: pre_tool_use, post_tool_use, "
        "post_tool_use_failure)"
    )


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        ([], "@hook('pre_tool_use'): tools= is empty; drop it to call the hook for every tool"),
        (["run job"], "hook pre_tool_use: matcher pattern 'run job' can match no tool"),
        ([""], "hook pre_tool_use: matcher pattern '' is not a non-empty string"),
        (["a"] * (MAX_MATCHER_PATTERNS + 1), f"{MAX_MATCHER_PATTERNS + 1} matcher patterns; at most 32"),
    ],
)
def test_a_bad_tool_pattern_is_refused_when_the_decorator_runs(tools: list[str], message: str) -> None:
    error = one_line_error(lambda: hook("pre_tool_use", tools=tools))
    assert error.hook == "on_pre_tool_use" and message in str(error)


def test_the_decorator_takes_a_function_not_another_hook_or_a_value() -> None:
    error = one_line_error(lambda: hook("pre_tool_use")(guard))
    assert str(error) == "@hook('pre_tool_use') decorates a function (input, invocation), not another @hook"
    one_line_error(lambda: hook("session_start")("greeting"))  # type: ignore[call-overload]


def test_the_type_checker_holds_a_hook_to_its_hook_point_s_models() -> None:
    """Each ``type: ignore`` below is a mistake mypy catches: strict mypy (run on the tests)
    reports an ignore that is not needed, so the type check fails once one goes unnoticed. At
    run time only the hook point and the tools are checked, as for the mapping."""

    def stop_input(input: AgentStopInput, invocation: HookInvocation) -> PreToolUseOutput | None:
        return None

    def dict_output(input: PreToolUseInput, invocation: HookInvocation) -> dict[str, str]:
        return {}

    async def post_output(input: PreToolUseInput, invocation: HookInvocation) -> PostToolUseOutput:
        return PostToolUseOutput()

    wrong: list[Hook[Any, Any]] = [
        hook("pre_tool_use")(stop_input),  # type: ignore[arg-type]
        hook("pre_tool_use")(dict_output),  # type: ignore[arg-type]
        hook("pre_tool_use")(post_output),  # type: ignore[arg-type]
    ]
    assert [item.function for item in wrong] == [stop_input, dict_output, post_output]


def test_every_hook_point_of_the_table_has_an_overload_typed_with_its_models() -> None:
    """In the table's order; ``tools=`` exactly where the hook point is about a tool."""
    namespace = {**vars(hooks_module), "models": hook_models}
    typed: dict[str, tuple[Any, Any, bool]] = {}
    for overload in typing.get_overloads(hook):
        hints = typing.get_type_hints(overload, globalns=namespace)
        (short,) = get_args(hints["point"])
        input_type, output_type = get_args(hints["return"])
        typed[short] = (input_type, output_type, "tools" in hints)
    assert list(typed) == list(HOOK_POINT_NAMES)
    assert typed == {
        short: (HOOK_POINTS[name].input_type, HOOK_POINTS[name].output_type, HOOK_POINTS[name].for_tools)
        for short, name in HOOK_POINT_NAMES.items()
    }


# -- joining ---------------------------------------------------------------------------------


def _every_point() -> list[Hook[Any, Any]]:
    return [Hook(name, guard.function, ("bash",) if point.for_tools else None) for name, point in HOOK_POINTS.items()]


@pytest.mark.parametrize(
    ("decorated", "mapping", "matchers"),
    [
        pytest.param(
            lambda: [guard, audit],
            lambda: {"on_pre_tool_use": guard.function, "on_post_tool_use": audit.function},
            {"on_pre_tool_use": ["bash", "run_*"]},
            id="a guard with tools and an async observer",
        ),
        pytest.param(
            lambda: [greet], lambda: {"onSessionStart": greet.function}, None, id="no tools, Copilot spelling"
        ),
        pytest.param(
            _every_point,
            lambda: {name: guard.function for name in HOOK_POINTS},
            {name: ["bash"] for name, point in HOOK_POINTS.items() if point.for_tools},
            id="every hook point",
        ),
    ],
)
def test_a_join_sends_decorated_hooks_exactly_as_the_mapping_with_its_matchers(
    decorated: Callable[[], list[Hook[Any, Any]]],
    mapping: Callable[[], dict[str, Callable[..., Any]]],
    matchers: dict[str, list[str]] | None,
) -> None:
    """Same functions under the same names, same ``session.resume``: hook types, matchers, all."""
    from_decorator = registered_hooks(decorated(), None)
    from_mapping = registered_hooks(mapping(), matchers)
    assert from_decorator == from_mapping
    assert session_resume(*from_decorator) == session_resume(*from_mapping)


def test_the_session_is_given_the_decorated_function_itself() -> None:
    """A decorated hook adds no call of its own to an invocation."""
    handlers, matchers = registered_hooks([guard, audit], None)
    assert handlers == {"on_pre_tool_use": guard.function, "on_post_tool_use": audit.function}
    assert matchers == {"preToolUse": ["bash", "run_*"]}


def test_two_decorated_hooks_for_one_hook_point_are_refused_at_the_join() -> None:
    other = hook("pre_tool_use")(guard.function)
    error = one_line_error(lambda: registered_hooks([guard, audit, other], None))
    assert str(error) == (
        "@hook('pre_tool_use') is given twice; an extension has one function per hook point, so call both from one"
    )


def test_hook_matchers_beside_decorated_hooks_are_refused() -> None:
    error = one_line_error(lambda: registered_hooks([audit], {"on_post_tool_use": ["bash"]}))
    assert "give matchers as @hook(..., tools=[...])" in str(error)


def test_a_function_not_decorated_in_the_hook_list_is_refused_naming_it() -> None:
    error = one_line_error(lambda: registered_hooks([guard, greet.function], None))  # type: ignore[list-item]
    assert error.hook == "greet"
    assert str(error).startswith("hooks=[...] takes @hook functions; decorate greet with @hook('<hook point>')")


def test_a_decorated_hook_in_the_mapping_is_refused_rather_than_losing_its_tools() -> None:
    error = one_line_error(lambda: registered_hooks({"on_pre_tool_use": guard}, None))
    assert error.hook == "on_pre_tool_use"
    assert str(error) == "hook 'on_pre_tool_use' maps to an @hook function; pass @hook functions as a list: hooks=[...]"


def test_the_hooks_page_s_decorated_guard_denies_rm_rf_for_the_tools_it_names() -> None:
    """The Hooks page's first example, run up to its ``join_session``."""
    section = doc_section("writing-extensions/hooks.md", "# Hooks")
    start = section.index("```python\n") + len("```python\n")
    example = section[start : section.index("\n```", start)]
    before_join, join_line = example.rsplit("\n\n", 1)
    assert join_line == "join_session(hooks=[shell_guard])"
    namespace: dict[str, Any] = {}
    exec(before_join, namespace)
    shell_guard = namespace["shell_guard"]
    assert (shell_guard.point, shell_guard.tools) == ("on_pre_tool_use", ("bash", "run_*"))
    command = PreToolUseInput(timestamp=datetime.now(UTC), cwd="/", tool_name="bash", tool_args={"command": "rm -rf /"})
    assert shell_guard(command, HookInvocation("s")).permission_decision == "deny"
    assert shell_guard(dataclasses.replace(command, tool_args={"command": "ls"}), HookInvocation("s")) is None


def test_a_hook_without_tools_does_not_load_the_hook_point_table_before_it_runs() -> None:
    """The models cost start-up time; the mapping form loads them on a hook's first call, and
    so does a decorated hook that names no tools (``tools=`` loads them to check the patterns)."""
    code = """if True:
        import json, sys
        from sdk_extension import hook
        from sdk_extension.join import registered_hooks

        @hook("pre_tool_use")
        def guard(input, invocation):
            return None

        registered_hooks([guard], None)
        before = "extension_protocol.hook_models" in sys.modules
        hook("pre_tool_use", tools=["bash"])(guard.function)
        print(json.dumps([before, "extension_protocol.hook_models" in sys.modules]))
    """
    done = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, check=True, timeout=60)
    assert json.loads(done.stdout) == [False, True]


# -- in real extension processes -------------------------------------------------------------

DECORATED = """
    from sdk_extension import PreToolUseOutput, hook, join_session

    @hook("pre_tool_use", tools=["bash", "run_*"])
    def guard(input, invocation):
        return PreToolUseOutput(permission_decision="deny", permission_decision_reason="decorated " + input.tool_name)

    join_session(hooks=[guard])
"""

MAPPED = """
    from sdk_extension import join_session

    def guard(input, invocation):
        return {"permission_decision": "deny", "permission_decision_reason": "mapped " + input.tool_name}

    join_session(hooks={"on_pre_tool_use": guard}, hook_matchers={"on_pre_tool_use": ["bash", "run_*"]})
"""


@pytest.mark.subprocess
def test_a_decorated_guard_denies_the_tools_it_names_and_is_not_called_for_others(project: Project) -> None:
    """Beside the same guard in the mapping form: the host sees both alike; ``run_job`` is
    denied by the first in load order, ``echo`` reaches neither."""
    project.add_extension("a_tools", ECHO_AND_RUN_JOB)
    project.add_extension("b_decorated", DECORATED)
    project.add_extension("c_mapped", MAPPED)

    async def scenario() -> None:
        async with project.host() as host:
            decorated, mapped = host.extension("b_decorated"), host.extension("c_mapped")
            assert decorated.error is None and mapped.error is None
            assert (decorated.hooks, decorated.hook_matchers) == (mapped.hooks, mapped.hook_matchers)
            assert decorated.hook_matchers == (("on_pre_tool_use", ("bash", "run_*")),)
            denied = await host.call_tool("run_job", {"text": "x"})
            assert (denied.result_type, denied.decided_by) == ("denied", "project:b_decorated")
            assert "decorated run_job" in denied.text_result_for_llm
            starts = len(host.events.history("hook.start"))
            echoed = await host.call_tool("echo", {"text": "hi"})
            assert (echoed.result_type, echoed.text_result_for_llm) == ("success", "hi")
            assert len(host.events.history("hook.start")) == starts
            assert host.skipped_hooks("echo") == [
                ("on_pre_tool_use", "project:b_decorated"),
                ("on_pre_tool_use", "project:c_mapped"),
            ]

    run(scenario())
