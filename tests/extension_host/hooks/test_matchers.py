"""Hook matchers across real extension processes: a Python extension's ``hook_matchers``, a raw
protocol client sending ``hookMatchers`` as a JS extension does, refused matchers, and what
``inspect`` and ``call --verbose`` show."""

from __future__ import annotations

import json
import textwrap

import pytest

from helpers import ECHO_AND_RUN_JOB, RAW_PROTOCOL, Project, run

pytestmark = pytest.mark.subprocess

GUARD = """
    from sdk_extension import join_session

    def pre(input, invocation):
        return {"permission_decision": "deny", "permission_decision_reason": "guarded " + input.tool_name}

    def post(input, invocation):
        return {"additional_context": "post saw " + input.tool_name}

    join_session(
        hooks={"on_pre_tool_use": pre, "on_post_tool_use": post},
        hook_matchers={"on_pre_tool_use": ["bash", "run_*"], "on_post_tool_use": ["ech?"]},
    )
"""

# What a JS extension does: hookMatchers in session.resume, keyed by wire hook type. Framing
# and answers are written here; nothing of the SDK but the claimed descriptors is used.
RAW = textwrap.dedent(
    r"""
    MATCHERS = json.loads(os.environ.get("RAW_MATCHERS") or %r)

    def handle(message):
        if message.get("method") == "hooks.invoke":
            name = message["params"]["input"]["toolName"]
            output = {"permissionDecision": "deny", "permissionDecisionReason": "raw guarded " + name}
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"output": output}})
        elif "id" in message and "method" in message:
            send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "not here"}})

    request(1, "connect", {})
    answer = request(2, "session.resume", {
        "sessionId": os.environ["SESSION_ID"],
        "hookTypes": ["preToolUse"],
        "hookMatchers": MATCHERS,
    })
    if "error" in answer:
        sys.exit(3)
    while True:
        handle(read())
    """
)


def raw(matchers: object) -> str:
    return RAW_PROTOCOL + RAW % json.dumps(matchers)


def test_a_python_extension_s_hooks_run_only_for_the_tools_their_matchers_name(project: Project) -> None:
    """The pre hook guards run_job (a glob) but not echo; the post hook sees echo only; the
    skipped hook sends nothing and emits no hook event."""
    project.add_extension("a_tools", ECHO_AND_RUN_JOB)
    project.add_extension("b_guard", GUARD)

    async def scenario() -> None:
        async with project.host() as host:
            assert host.extension("b_guard").hook_matchers == (
                ("on_pre_tool_use", ("bash", "run_*")),
                ("on_post_tool_use", ("ech?",)),
            )
            denied = await host.call_tool("run_job", {"text": "x"})
            assert (denied.result_type, denied.decided_by) == ("denied", "project:b_guard")
            assert "guarded run_job" in denied.text_result_for_llm
            starts = len(host.events.history("hook.start"))
            echoed = await host.call_tool("echo", {"text": "hi"})
            assert echoed.result_type == "success"
            assert echoed.text_result_for_llm.startswith('hi\n\nTool "echo" succeeded. Additional guidance')
            assert echoed.additional_context == "post saw echo"
            hooks_called = [e["data"]["hook"] for e in host.events.history("hook.start")[starts:]]
            assert hooks_called == ["on_post_tool_use"]
            assert host.skipped_hooks("echo") == [("on_pre_tool_use", "project:b_guard")]
            assert host.skipped_hooks("run_job") == [("on_post_tool_use", "project:b_guard")]

    run(scenario())


def test_a_raw_protocol_client_s_hook_matchers_are_honoured_as_a_js_extension_s_would_be(
    project: Project,
) -> None:
    """hookMatchers in session.resume, keyed by wire hook type, limit the hook to those tools."""
    project.add_extension("a_tools", ECHO_AND_RUN_JOB)
    project.add_extension("b_raw", raw({"preToolUse": ["run_*"]}))

    async def scenario() -> None:
        async with project.host() as host:
            assert host.extension("b_raw").hook_matchers == (("on_pre_tool_use", ("run_*",)),)
            denied = await host.call_tool("run_job", {"text": "x"})
            assert (denied.result_type, denied.decided_by) == ("denied", "project:b_raw")
            assert "raw guarded run_job" in denied.text_result_for_llm
            assert (await host.call_tool("echo", {"text": "hi"})).text_result_for_llm == "hi"

    run(scenario())


@pytest.mark.parametrize(
    ("matchers", "expected"),
    [
        ({"preToolUse": ["run job"]}, "hook on_pre_tool_use: matcher pattern 'run job' can match no tool"),
        ({"preToolUse": []}, "hook on_pre_tool_use: matcher must be a non-empty list"),
        ({"preToolUse": ["x" * 200]}, "is longer than 128 characters"),
        ({"preToolUse": [f"t{i}" for i in range(40)]}, "hook on_pre_tool_use: 40 matcher patterns; at most 32"),
        ({"postToolUse": ["echo"]}, "hook on_post_tool_use has a matcher but no handler"),
        ({"sessionStart": ["echo"]}, "hook on_session_start is not about a tool and takes no matcher"),
        ({"preToolUse": [3]}, "hook on_pre_tool_use: matcher pattern 3 is not a non-empty string"),
        ("bash", "its join was refused: session.resume: hookMatchers"),
    ],
    ids=["space", "empty", "too-long", "too-many", "no-handler", "not-a-tool-hook", "not-a-string", "not-an-object"],
)
def test_a_bad_matcher_fails_the_join_with_one_line_naming_the_hook_and_pattern(
    project: Project, matchers: object, expected: str
) -> None:
    project.add_extension("b_raw", raw(matchers))

    async def scenario() -> None:
        async with project.host() as host:
            info = host.extension("b_raw")
            assert info.status == "failed"
            assert info.error is not None and expected in info.error and "\n" not in info.error
            assert host.hook_chain("on_pre_tool_use") == []

    run(scenario())


def test_inspect_shows_the_matchers_in_text_and_json(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    project.add_extension("b_guard", GUARD)
    assert project.cli("inspect", "b_guard", "--json") == 0
    detail = json.loads(capsys.readouterr().out)
    assert detail["hook_matchers"] == {"on_pre_tool_use": ["bash", "run_*"], "on_post_tool_use": ["ech?"]}
    assert project.cli("inspect", "b_guard") == 0
    assert "hooks:   on_pre_tool_use [bash, run_*], on_post_tool_use [ech?]" in capsys.readouterr().out


def test_call_verbose_shows_who_was_called_who_decided_and_who_was_skipped(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    project.add_extension("a_tools", ECHO_AND_RUN_JOB)
    project.add_extension("b_guard", GUARD)
    assert project.cli("call", "echo", '{"text": "hi"}', "--verbose") == 0
    err = capsys.readouterr().err
    assert "project:b_guard: on_post_tool_use ok" in err
    assert "project:b_guard: on_pre_tool_use skipped (its matcher does not match echo)" in err
    assert project.cli("call", "run_job", '{"text": "x"}', "--verbose") == 1
    err = capsys.readouterr().err
    assert "project:b_guard: on_pre_tool_use ok, decided deny" in err
    assert "decided deny by project:b_guard" in err
    assert "project:b_guard: on_post_tool_use skipped" not in err  # the call was denied before it
