"""Fault matrix, hooks: a guard that answers garbage, a guard that hangs.

Real extension processes. The garbage answers come from a raw protocol client written here
(Content-Length framing, ``connect``, ``session.resume`` with ``hookTypes``, answering
``hooks.invoke`` itself), since the SDK refuses to send a malformed hook output. Each test
checks the outcome and that every extension process it started is gone afterwards.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from extension_host import ExtensionHost, Timeouts
from helpers import RAW_PROTOCOL, Project, run, wait_for_event, wait_for_exit

pytestmark = pytest.mark.subprocess

TOOLS = """
    from sdk_extension import join_session, tool

    @tool(description="Echo the text")
    def echo(text: str) -> str:
        return text

    join_session(tools=[echo])
"""

# Answers each hooks.invoke with the answer the call itself names: the JSON in the echo tool's
# text ({"pre": ..., "post": ...}) or in the prompt ({"prompt": ...}); no entry means
# {"output": null}. The wire is the extension's claimed protocol descriptors, as the launcher
# hands them over; nothing else of the SDK is used.
RAW_HOOKS = RAW_PROTOCOL + textwrap.dedent(
    r"""
    def answer_for(params):
        data = params["input"]
        if params["hookType"] == "userPromptSubmitted":
            return json.loads(data["prompt"]).get("prompt", {"output": None})
        spec = json.loads(data["toolArgs"]["text"])
        return spec.get("pre" if params["hookType"] == "preToolUse" else "post", {"output": None})

    def handle(message):
        if message.get("method") == "hooks.invoke":
            send({"jsonrpc": "2.0", "id": message["id"], "result": answer_for(message["params"])})
        elif "id" in message and "method" in message:
            send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "not here"}})

    request(1, "connect", {})
    request(2, "session.resume", {
        "sessionId": os.environ["SESSION_ID"],
        "hookTypes": ["preToolUse", "userPromptSubmitted", "postToolUse"],
    })
    while True:
        handle(read())
    """
)

GARBAGE = {
    "output-str": {"output": "garbage"},
    "output-int": {"output": 42},
    "output-list": {"output": [1]},
    "answer-str": "garbage",
    "answer-int": 42,
    "wrong-field-type": {"output": {"additionalContext": 42}},
    "unknown-decision": {"output": {"permissionDecision": "yes"}},
    "both-spellings": {"output": {"permissionDecision": "deny", "permission_decision": "allow"}},
}


def pids_of(host: ExtensionHost) -> list[int]:
    return [info.pid for info in host.extensions if info.pid is not None]


def assert_all_exited(pids: list[int]) -> None:
    for pid in pids:
        assert wait_for_exit(pid, timeout=15), f"extension process {pid} is still running after the host stopped"


def ran(host: ExtensionHost) -> int:
    """How many tool calls ran: the call is announced before its pre-tool hooks (as in the
    Copilot CLI), so a denied one shows as a ``tool.execution_complete`` with the code ``denied``."""
    return sum(
        e["data"].get("error", {}).get("code") != "denied" for e in host.events.history("tool.execution_complete")
    )


def test_a_guard_hook_answering_a_non_object_or_malformed_output_denies_and_an_observer_warns(
    project: Project,
) -> None:
    """Row: a guard answers "garbage", 42, [1] (and other malformed shapes): the tool does not
    run and the prompt is rejected, naming the extension; no opinion still passes; an observer's
    garbage is ignored with a warning naming the extension and the hook."""
    project.add_extension("a_tools", TOOLS)
    project.add_extension("b_raw", RAW_HOOKS)
    pids: list[int] = []

    async def scenario() -> None:
        async with project.host() as host:
            assert host.extension("b_raw").status == "running"
            pids.extend(pids_of(host))
            for name, garbage in GARBAGE.items():
                ran_before = ran(host)
                result = await host.call_tool("echo", {"text": json.dumps({"pre": garbage})})
                assert result.result_type == "denied", name
                assert "hook on_pre_tool_use of project:b_raw failed" in result.text_result_for_llm, name
                assert "guard hooks fail closed" in result.text_result_for_llm, name
                assert ran(host) == ran_before, f"{name}: the tool ran"
                prompt = await host.submit_prompt(json.dumps({"prompt": garbage}))
                assert (prompt.rejected, prompt.rejected_by) == (True, "project:b_raw"), name

            text = json.dumps({"pre": {"output": None}, "post": {}})
            assert (await host.call_tool("echo", {"text": text})).text_result_for_llm == text
            assert not (await host.submit_prompt(json.dumps({"prompt": None}))).rejected

            text = json.dumps({"post": {"output": [1]}})
            result = await host.call_tool("echo", {"text": text})
            assert (result.result_type, result.text_result_for_llm) == ("success", text)
            warning = await wait_for_event(
                host, lambda e: e["type"] == "session.warning" and "on_post_tool_use" in e["data"]["message"]
            )
            assert warning["data"]["extensionId"] == "project:b_raw"
            assert "hook on_post_tool_use of project:b_raw failed" in warning["data"]["message"]
            assert host.extension("b_raw").status == "running"

    run(scenario())
    assert_all_exited(pids)


HANGING_GUARD = """
    import asyncio
    from sdk_extension import join_session

    async def guard(input, invocation):
        session.log(f"guard called for {input.tool_args['text']}")
        if input.tool_args["text"] == "hang":
            await asyncio.Event().wait()
        return None

    session = join_session(hooks={"on_pre_tool_use": guard})
"""


def test_a_guard_that_hangs_is_suspended_after_two_timeouts_until_its_extension_reloads(project: Project) -> None:
    """Row: a guard that hangs (hook timeout 1 s). The first two calls wait for the timeout and
    are denied; the third is denied without calling the hook, saying it is suspended and how to
    resume, and one warning announced it; after a reload the hook is called again."""
    project.add_extension("a_tools", TOOLS)
    project.add_extension("b_hang", HANGING_GUARD)
    pids: list[int] = []

    def guard_calls(host: ExtensionHost) -> int:
        return sum(
            1
            for e in host.events.history("session.info")
            if str(e["data"].get("message", "")).startswith("guard called for")
        )

    async def scenario() -> None:
        async with project.host(timeouts=Timeouts(stop_grace=2, hook=1.0)) as host:
            pids.extend(pids_of(host))
            for _ in range(2):
                result = await host.call_tool("echo", {"text": "hang"})
                assert result.result_type == "denied"
                reason = result.text_result_for_llm
                assert "hook on_pre_tool_use of project:b_hang failed: no answer within 1 s" in reason
            warning = await wait_for_event(host, lambda e: "is suspended" in e["data"].get("message", ""))
            assert warning["type"] == "session.warning" and warning["data"]["extensionId"] == "project:b_hang"
            assert "timed out 2 times in a row" in warning["data"]["message"]
            assert guard_calls(host) <= 2

            third = await host.call_tool("echo", {"text": "hang"})
            assert third.result_type == "denied"
            assert third.text_result_for_llm == (
                "Denied by preToolUse hook: hook on_pre_tool_use of project:b_hang is suspended after 2 timeouts "
                "in a row; fix the extension and save or reload it to resume (guard hooks fail closed)"
            )
            assert [r.outcome for r in host.recent_hook_calls("project:b_hang")] == ["timeout", "timeout", "suspended"]
            assert ran(host) == 0

            (outcome,) = await host.reload("b_hang")
            assert outcome.ok
            pids.extend(pids_of(host))
            fourth = await host.call_tool("echo", {"text": "fine"})
            assert (fourth.result_type, fourth.text_result_for_llm) == ("success", "fine")
            assert host.recent_hook_calls("project:b_hang")[-1].outcome == "ok"
            await wait_for_event(host, lambda e: e["data"].get("message") == "guard called for fine")
            assert guard_calls(host) == 3

    run(scenario())
    assert len(set(pids)) == 3  # the tools, the guard, the reloaded guard
    assert_all_exited(pids)
