"""Conformance: unmodified extensions written against the published Copilot SDK, next to Python ones.

These start real ``extension.mjs`` files that import ``@github/copilot-sdk/extension`` (installed
once per test session by the host itself) and run the same scenarios through the Python SDK,
so both SDKs are held to one behaviour. They need ``node`` and ``npm`` and are skipped otherwise.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from extension_host.project.paths import CACHE_ENV
from extension_host.project.trust import TrustStore
from helpers import (
    Project,
    assert_orphan_exits_when_host_is_killed,
    copilot_sdk_marks,
    is_log,
    run,
    sdk_host,
    wait_for_event,
)

pytestmark = copilot_sdk_marks()

JS_TOOLS = """
import { joinSession } from "@github/copilot-sdk/extension";

console.log("printed before joining");
const session = await joinSession({
  tools: [
    { name: "greet", description: "Greet someone",
      parameters: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
      handler: async (args) => `hello ${args.name}` },
    { name: "structured", description: "A structured result",
      handler: async () => ({ textResultForLlm: "structured text", resultType: "rejected" }) },
    { name: "explode", description: "Always throws",
      handler: async () => { throw new Error("kaboom from the tool"); } },
  ],
});
await session.log("tools ready");
"""

PY_TOOLS = """
from sdk_extension import ToolResult, join_session, tool

@tool(description="Greet someone")
def greet(name: str) -> str:
    return f"hello {name}"

@tool(description="A structured result")
def structured() -> ToolResult:
    return ToolResult("structured text", "rejected")

@tool(description="Always throws")
def explode() -> str:
    raise RuntimeError("kaboom from the tool")

session = join_session(tools=[greet, structured, explode])
session.log("tools ready")
"""

JS_GUARD = """
import { joinSession } from "@github/copilot-sdk/extension";

const session = await joinSession({
  hooks: {
    onPreToolUse: async (input) =>
      input.toolName === "danger"
        ? { permissionDecision: "deny", permissionDecisionReason: "blocked by js" } : undefined,
    onUserPromptSubmitted: async (input) => ({ modifiedPrompt: input.prompt + " [checked]" }),
  },
});
await session.log("guard ready");
"""

PY_GUARD = """
from sdk_extension import join_session

def pre(input, invocation):
    if input.tool_name == "danger":
        return {"permission_decision": "deny", "permission_decision_reason": "blocked by py"}
    return None

def prompt(input, invocation):
    return {"modified_prompt": input.prompt + " [checked]"}

session = join_session(hooks={"on_pre_tool_use": pre, "on_user_prompt_submitted": prompt})
session.log("guard ready")
"""

JS_DANGER = """
import { writeFileSync } from "node:fs";
import { joinSession } from "@github/copilot-sdk/extension";

await joinSession({
  tools: [{ name: "danger", description: "Has a side effect",
            handler: async () => { writeFileSync("side-effect.txt", "ran"); return "ran"; } }],
});
"""

PY_DANGER = """
from pathlib import Path
from sdk_extension import join_session, tool

@tool(description="Has a side effect")
def danger() -> str:
    Path("side-effect.txt").write_text("ran")
    return "ran"

join_session(tools=[danger])
"""

SOURCES = {
    "js": {"tools": JS_TOOLS, "guard": JS_GUARD, "danger": JS_DANGER},
    "py": {"tools": PY_TOOLS, "guard": PY_GUARD, "danger": PY_DANGER},
}
ENTRY = {"js": "extension.mjs", "py": "extension.py"}


def add(project: Project, name: str, language: str, code: str) -> Path:
    return project.add_extension(name, textwrap.dedent(code).lstrip(), entry=ENTRY[language])


@pytest.mark.parametrize("language", ["js", "py"])
def test_tools_round_trip_strings_structured_results_and_errors(project: Project, language: str) -> None:
    """Arguments arrive; a string, a structured result and a thrown error come back the same way."""
    add(project, "tools", language, SOURCES[language]["tools"])

    async def scenario() -> None:
        async with sdk_host(project) as host:
            (info,) = host.extensions
            assert info.status == "running", info.error
            assert set(info.tools) == {"greet", "structured", "explode"}
            greeting = await host.call_tool("greet", {"name": "ada"})
            assert (greeting.result_type, greeting.text_result_for_llm) == ("success", "hello ada")
            structured = await host.call_tool("structured")
            assert (structured.result_type, structured.text_result_for_llm) == ("rejected", "structured text")
            failed = await host.call_tool("explode")
            assert failed.result_type == "failure"
            if language == "js":  # a handler that threw: the model reads what Copilot CLI says, the log has why
                assert failed.text_result_for_llm == (
                    "Failed to execute `explode` tool with arguments: {} due to error: Error: Tool execution failed"
                )
                assert failed.error == "Tool execution failed"
                assert failed.result.session_log is not None and "kaboom from the tool" in failed.result.session_log
            else:  # the Python SDK answers a failure result that says why
                assert "kaboom from the tool" in failed.text_result_for_llm
            await wait_for_event(host, is_log("tools ready"))
        if language == "js":
            log = info.log_path.read_text() if info.log_path else ""
            assert "printed before joining" in log

    run(scenario(), timeout=180)


@pytest.mark.parametrize(("guard", "tool"), [("js", "py"), ("py", "js"), ("js", "js")])
def test_a_pre_tool_deny_blocks_a_tool_of_the_other_sdk(project: Project, guard: str, tool: str) -> None:
    """A guard in one SDK denies a tool of the other: the tool's side effect never happens."""
    add(project, "a_guard", guard, SOURCES[guard]["guard"])
    add(project, "b_danger", tool, SOURCES[tool]["danger"])

    async def scenario() -> None:
        async with sdk_host(project) as host:
            assert [info.status for info in host.extensions] == ["running", "running"]
            result = await host.call_tool("danger")
            assert result.result_type == "denied"
            assert f"blocked by {guard}" in result.text_result_for_llm
            assert not (project.root / "side-effect.txt").exists()
            prompt = await host.submit_prompt("deploy")
            assert prompt.prompt == "deploy [checked]"

    run(scenario(), timeout=180)


@pytest.mark.parametrize(("first", "second"), [("js", "py"), ("py", "js")])
def test_a_tool_name_collision_between_sdks_fails_the_later_extension(
    project: Project, first: str, second: str
) -> None:
    """Load order decides, whatever the language; the error names the tool and the owner."""
    add(project, "a_first", first, SOURCES[first]["tools"])
    add(project, "b_second", second, SOURCES[second]["tools"])

    async def scenario() -> None:
        async with sdk_host(project) as host:
            first_info, second_info = host.extensions
            assert first_info.status == "running"
            assert second_info.status == "failed"
            assert second_info.error is not None and "project:a_first" in second_info.error
            assert host.tools["greet"].owner == "project:a_first"

    run(scenario(), timeout=180)


def test_saving_an_mjs_file_hot_reloads_it(project: Project) -> None:
    """A JavaScript extension is swapped for its new version like a Python one."""
    folder = add(project, "tools", "js", JS_TOOLS)
    (project.root / ".github" / "extensions").mkdir(parents=True, exist_ok=True)

    async def scenario() -> None:
        async with sdk_host(project) as host:
            assert (await host.call_tool("greet", {"name": "x"})).text_result_for_llm == "hello x"
            (folder / "extension.mjs").write_text(JS_TOOLS.replace("`hello ${args.name}`", "`hi ${args.name}`"))
            await wait_for_event(
                host,
                lambda e: (
                    e["type"] == "session.extensions_loaded"
                    and any(c["action"] == "reloaded" for c in e["data"].get("changes", []))
                ),
                timeout=60,
            )
            assert (await host.call_tool("greet", {"name": "x"})).text_result_for_llm == "hi x"

    run(scenario(), timeout=180)


def test_an_mjs_that_throws_at_import_fails_with_its_error_and_python_is_unaffected(project: Project) -> None:
    """The stderr line of the thrown error is the reason; the Python extension serves."""
    add(project, "a_broken", "js", 'throw new Error("no config file for broken");\n')
    add(project, "b_tools", "py", PY_TOOLS)

    async def scenario() -> None:
        async with sdk_host(project) as host:
            broken, tools = host.extensions
            assert broken.status == "failed"
            assert broken.error is not None and "no config file for broken" in broken.error
            assert tools.status == "running"
            assert (await host.call_tool("greet", {"name": "ada"})).success

    run(scenario(), timeout=180)


def test_an_mjs_that_never_joins_fails_after_the_readiness_timeout(project: Project, sdk_cache: Path) -> None:
    """A script that never calls joinSession is failed with the timeout in the reason."""
    add(project, "warm", "js", JS_TOOLS)
    run(_warm(project), timeout=180)  # installs the SDK before the timed start
    add(project, "z_idle", "js", "setInterval(() => {}, 1000);\n")

    async def scenario() -> None:
        async with sdk_host(project, readiness=3) as host:
            idle = host.extension("z_idle")
            assert idle.status == "failed"
            assert idle.error is not None and "did not join within 3 s" in idle.error

    run(scenario(), timeout=240)


def test_without_node_a_javascript_extension_fails_saying_so(project: Project) -> None:
    """No node on PATH: that extension is failed with 'node not found'; Python ones run."""
    add(project, "a_js", "js", JS_TOOLS)
    add(project, "b_py", "py", PY_TOOLS.replace("greet", "hello"))
    environment = {**os.environ, "PATH": str(Path(sys.executable).parent)}

    async def scenario() -> None:
        async with sdk_host(project, environment=environment) as host:
            js, py = host.extensions
            assert js.status == "failed"
            assert js.error is not None and "node not found" in js.error
            assert py.status == "running"

    run(scenario(), timeout=60)


def test_an_sdk_install_that_cannot_reach_the_registry_fails_with_npms_reason(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With an empty cache and a registry nobody answers, the extension fails naming npm's error."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "empty-cache"))
    add(project, "a_js", "js", JS_TOOLS)
    add(project, "b_py", "py", PY_TOOLS.replace("greet", "hello"))
    environment = {
        **os.environ,
        "npm_config_registry": "http://127.0.0.1:9/",
        "npm_config_fetch_retries": "0",
        "npm_config_fetch_timeout": "2000",
        "npm_config_cache": str(tmp_path / "npm-cache"),
        "npm_config_offline": "true",
    }

    async def scenario() -> None:
        async with sdk_host(project, environment=environment) as host:
            js, py = host.extensions
            assert js.status == "failed"
            assert js.error is not None and "could not install @github/copilot-sdk@" in js.error
            assert py.status == "running"
        assert not (tmp_path / "empty-cache" / "node-sdk" / "1.0.14").exists()

    run(scenario(), timeout=120)


def test_a_javascript_extension_that_never_joined_exits_when_its_host_dies(project: Project, sdk_cache: Path) -> None:
    """The resolver's lifeline ends an orphaned node process, as the Python launcher does."""
    add(project, "warm", "js", JS_TOOLS)
    run(_warm(project), timeout=180)
    add(project, "z_idle", "js", "setInterval(() => {}, 1000);\n")
    assert_orphan_exits_when_host_is_killed(project, "project:z_idle")


async def _warm(project: Project) -> None:
    async with sdk_host(project) as host:
        await asyncio.sleep(0)
        assert host.extension("warm").status == "running"


def test_the_published_sdk_swallows_a_throwing_hook_so_it_cannot_fail_closed(project: Project) -> None:
    """A documented difference: the JS SDK turns a throwing hook into "no opinion".

    The host never sees the error, so a JavaScript guard that throws lets the call through,
    while the same guard in Python is denied (guard hooks fail closed).
    """
    add(
        project,
        "a_js_guard",
        "js",
        JS_GUARD.replace(
            'input.toolName === "danger"\n'
            '        ? { permissionDecision: "deny", permissionDecisionReason: "blocked by js" } : undefined',
            '(() => { throw new Error("guard bug"); })()',
        ),
    )
    add(project, "b_danger", "py", PY_DANGER)

    async def scenario() -> None:
        async with sdk_host(project) as host:
            result = await host.call_tool("danger")
            assert result.result_type == "success"  # the JS SDK answered with no output
            (record,) = host.recent_hook_calls("project:a_js_guard")[-1:]
            assert record.outcome == "ok"

    run(scenario(), timeout=180)


def test_a_session_api_the_host_lacks_is_refused_at_once_not_left_hanging(project: Project) -> None:
    """session.mode.get is not implemented here: the SDK call rejects with method not found."""
    add(
        project,
        "asker",
        "js",
        """
    import { joinSession } from "@github/copilot-sdk/extension";

    const session = await joinSession({
      tools: [{ name: "history", description: "Read the session history",
                handler: async () => {
                  try { await session.rpc.mode.get(); return "unexpectedly answered"; }
                  catch (error) { return `refused: ${error.message}`; }
                } }],
    });
    """,
    )

    async def scenario() -> None:
        async with sdk_host(project) as host:
            async with asyncio.timeout(20):
                result = await host.call_tool("history")
            assert result.text_result_for_llm.startswith("refused:")
            assert "method not found" in result.text_result_for_llm.lower()

    run(scenario(), timeout=180)


JS_WANTS_TOKEN = """
import { joinSession } from "@github/copilot-sdk/extension";

await joinSession({
  requestedEnvironmentVariables: ["GITHUB_TOKEN"],
  tools: [{ name: "env_report", description: "What this process has of the environment",
            handler: async () => JSON.stringify({
              token: process.env.GITHUB_TOKEN ?? null,
              others: ["AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY", "NPM_TOKEN"].filter((name) => name in process.env),
            }) }],
});
"""


def test_a_javascript_extension_gets_a_granted_variable_through_the_published_sdk(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """joinSession({requestedEnvironmentVariables}) is refused until granted, then has exactly it."""
    secrets = {"GITHUB_TOKEN": "ghp_js", "AWS_SECRET_ACCESS_KEY": "aws", "OPENAI_API_KEY": "sk", "NPM_TOKEN": "npm"}
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    add(project, "wants", "js", JS_WANTS_TOKEN)

    async def scenario() -> None:
        async with sdk_host(project) as host:
            info = host.extension("wants")
            assert info.status == "failed"
            assert info.error is not None and "GITHUB_TOKEN" in info.error and "extensions grant wants" in info.error
        TrustStore(project.home).grant(project.root, "project", "wants", ["GITHUB_TOKEN"])
        async with sdk_host(project) as host:
            info = host.extension("wants")
            assert info.status == "running", info.error
            assert (info.environment_requested, info.environment_granted) == (("GITHUB_TOKEN",), ("GITHUB_TOKEN",))
            report = json.loads((await host.call_tool("env_report")).text_result_for_llm)
            assert report == {"token": "ghp_js", "others": []}

    run(scenario(), timeout=180)


JS_APPROVER = """
import { joinSession } from "@github/copilot-sdk/extension";

await joinSession({
  onPermissionRequest: async (request) =>
    request.kind === "hook" && request.toolArgs?.target === "prod"
      ? { kind: "reject", feedback: `no ${request.toolName} to prod (${request.hookMessage})` }
      : { kind: "approve-once" },
});
"""

PY_APPROVER = """
from sdk_extension import join_session

def approve(request, invocation):
    if request["kind"] == "hook" and request.get("toolArgs", {}).get("target") == "prod":
        return {"kind": "reject", "feedback": f"no {request['toolName']} to prod ({request['hookMessage']})"}
    return True

join_session(on_permission_request=approve)
"""

PY_ASKS = """
from sdk_extension import join_session

def pre(input, invocation):
    if input.tool_name == "deploy":
        return {"permission_decision": "ask", "permission_decision_reason": "it deploys"}

join_session(hooks={"on_pre_tool_use": pre})
"""


@pytest.mark.parametrize("language", ["js", "py"])
def test_an_extensions_permission_handler_answers_an_ask_and_its_feedback_reaches_the_agent(
    project: Project, language: str
) -> None:
    """onPermissionRequest (JS) / on_permission_request (Python) answers permission.requested with
    session.permissions.handlePendingPermissionRequest; a rejection's feedback is in the tool
    result the agent gets, an approval runs the tool."""
    from extension_host import AgentReply, ScriptedAgent, ToolCall
    from sdk_extension import tool

    add(project, "approver", language, JS_APPROVER if language == "js" else PY_APPROVER)
    add(project, "guard", "py", PY_ASKS)
    deployed: list[str] = []

    @tool(description="Deploy the project")
    def deploy(target: str) -> str:
        deployed.append(target)
        return f"deployed to {target}"

    steps = [
        AgentReply(tool_calls=(ToolCall("deploy", {"target": "prod"}, "call-prod"),)),
        AgentReply(tool_calls=(ToolCall("deploy", {"target": "staging"}, "call-staging"),)),
        AgentReply("done"),
    ]
    agent = ScriptedAgent([steps])

    async def scenario() -> None:
        async with sdk_host(project, agent=agent, builtin_tools=[deploy], session_hooks=False) as host:
            assert [info.status for info in host.extensions] == ["running", "running"], host.extensions
            await host.send_and_wait("ship it", timeout=60)
            completed = [e["data"] for e in host.events.history("permission.completed")]
            assert [(c["toolCallId"], c["result"]) for c in completed] == [
                ("call-prod", {"kind": "denied-interactively-by-user", "feedback": "no deploy to prod (it deploys)"}),
                ("call-staging", {"kind": "approved"}),
            ]
            requested = [e["data"] for e in host.events.history("permission.requested")]
            assert [r["requestId"] for r in requested] == [c["requestId"] for c in completed]

    run(scenario(), timeout=180)
    assert deployed == ["staging"]
    denied = agent.requests[1].messages[-1]
    assert (denied.result_type, denied.tool_call_id) == ("denied", "call-prod")
    assert "no deploy to prod (it deploys)" in denied.content


JS_ASKER = """
import { joinSession } from "@github/copilot-sdk/extension";

const session = await joinSession({
  tools: [{ name: "ask", description: "Ask the agent",
            parameters: { type: "object", properties: { prompt: { type: "string" } }, required: ["prompt"] },
            handler: async (args) => {
              try {
                const reply = await session.sendAndWait({ prompt: args.prompt }, 20000);
                return reply ? reply.data.content : "no reply";
              } catch (error) {
                return `error: ${error.message}`;
              }
            } }],
});
"""

PY_ASKER = """
from sdk_extension import join_session, tool

@tool(description="Ask the agent")
def ask(prompt: str) -> str:
    try:
        reply = session.send_and_wait(prompt, timeout=20)
    except Exception as exc:
        return f"error: {exc}"
    return reply["data"]["content"] if reply else "no reply"

session = join_session(tools=[ask])
"""


@pytest.mark.parametrize("language", ["js", "py"])
def test_send_and_wait_of_either_sdk_resolves_with_the_agents_reply_or_fails_without_an_agent(
    project: Project, language: str
) -> None:
    """sendAndWait (JS) / send_and_wait (Python) resolve on session.idle with the last
    assistant.message; with no agent the host refuses the prompt at once, saying why."""
    from extension_host import ScriptedAgent

    add(project, "asker", language, JS_ASKER if language == "js" else PY_ASKER)

    async def scenario() -> None:
        async with sdk_host(project, agent=ScriptedAgent.replies("2 + 2 = 4"), session_hooks=False) as host:
            assert (await host.call_tool("ask", {"prompt": "what is 2 + 2?"})).text_result_for_llm == "2 + 2 = 4"
            (user,) = host.events.history("user.message")
            assert (user["data"]["content"], user["data"]["source"]) == ("what is 2 + 2?", "project:asker")
        async with sdk_host(project, session_hooks=False) as host:
            refused = (await host.call_tool("ask", {"prompt": "anyone?"})).text_result_for_llm
            assert refused.startswith("error: session.send: this host has no agent"), refused

    run(scenario(), timeout=180)


JS_COMMANDS = """
import { writeFileSync } from "node:fs";
import { joinSession } from "@github/copilot-sdk/extension";

const session = await joinSession({
  commands: [
    { name: "deploy", description: "Deploy it",
      handler: async (context) => {
        writeFileSync("deployed.txt", `${context.commandName}|${context.args}|${context.command}`);
      } },
    { name: "fail", description: "Always fails", handler: async () => { throw new Error("no target here"); } },
  ],
});
const extensions = await session.rpc.extensions.list();
const commands = await session.rpc.commands.list({});
let models;
try { await session.rpc.model.list(); models = "answered"; } catch (error) { models = error.message; }
const executed = await session.rpc.commands.execute({ commandName: "fail", args: "" });
writeFileSync("rpc.json", JSON.stringify({ extensions, commands, models, executed }));
await session.log("commands ready");
"""

PY_COMMANDS = """
import json
from pathlib import Path
from sdk_extension import Command, SessionRpcError, join_session

def deploy(context):
    Path("deployed.txt").write_text(f"{context.command_name}|{context.args}|{context.command}")

def fail(context):
    raise RuntimeError("no target here")

session = join_session(commands=[Command("deploy", "Deploy it", deploy), Command("fail", "Always fails", fail)])
extensions = session.rpc("session.extensions.list")
commands = session.rpc("session.commands.list", {})
try:
    session.rpc("session.model.list")
    models = "answered"
except SessionRpcError as error:
    models = str(error)
executed = session.rpc("session.commands.execute", {"commandName": "fail", "args": ""})
Path("rpc.json").write_text(
    json.dumps({"extensions": extensions, "commands": commands, "models": models, "executed": executed})
)
session.log("commands ready")
"""


@pytest.mark.parametrize("language", ["js", "py"])
def test_slash_commands_run_in_either_sdk_and_session_rpc_answers_it(project: Project, language: str) -> None:
    """The JS SDK's commands and session.rpc against this host, and the Python SDK's the same."""
    add(project, "ops", language, JS_COMMANDS if language == "js" else PY_COMMANDS)

    async def scenario() -> None:
        async with sdk_host(project) as host:
            (info,) = host.extensions
            assert info.status == "running", info.error
            assert info.commands == ("deploy", "fail")
            assert host.commands["deploy"].description == "Deploy it"
            done = await host.run_command("deploy", "prod")
            assert (done.status, done.error) == ("ok", None)
            assert (project.root / "deployed.txt").read_text() == "deploy|prod|/deploy prod"
            failed = await host.run_command("fail")
            assert (failed.status, failed.error) == ("error", "no target here")
            await wait_for_event(host, is_log("commands ready"))
            answers = json.loads((project.root / "rpc.json").read_text())
            assert answers["extensions"] == {
                "extensions": [
                    {"id": "project:ops", "name": "ops", "source": "project", "status": "running", "pid": info.pid}
                ]
            }
            listed = {c["name"]: c for c in answers["commands"]["commands"]}
            assert listed["deploy"] == {
                "name": "deploy",
                "description": "Deploy it",
                "kind": "client",
                "allowDuringAgentExecution": False,
            }
            assert "session.model.list is not supported by this host" in answers["models"]
            assert answers["executed"] == {"error": "no target here"}  # its own command, run by the host

    run(scenario(), timeout=180)


JS_DETACH = """
import { joinSession } from "@github/copilot-sdk/extension";

const session = await joinSession({
  tools: [{ name: "greet", description: "Greet", handler: async () => "hi" }],
  commands: [{ name: "wave", description: "Wave", handler: async () => {} }],
});
await session.disconnect();
"""


def test_a_js_extension_that_disconnects_is_detached_not_failed(project: Project) -> None:
    """disconnect() needs session.detach answered {success: true}; its offers are withdrawn."""
    add(project, "leaver", "js", JS_DETACH)

    async def scenario() -> None:
        async with sdk_host(project) as host:
            await wait_for_event(host, lambda e: "detached from the session" in e["data"].get("message", ""))
            (info,) = host.extensions
            assert (info.status, info.error, info.tools, info.commands) == ("detached", None, (), ())
            assert (await host.run_command("wave")).status == "unknown"

    run(scenario(), timeout=180)


JS_EVENT_LOG = """
import { writeFileSync } from "node:fs";
import { joinSession } from "@github/copilot-sdk/extension";

const session = await joinSession({});
for (let i = 0; i < 5; i++) await session.log(`note ${i}`);
const pages = [await session.rpc.eventLog.read({ max: 2 })];
while (pages[pages.length - 1].hasMore) {
  pages.push(await session.rpc.eventLog.read({ cursor: pages[pages.length - 1].cursor, max: 2 }));
}
const newest = await session.rpc.eventLog.read({ direction: "backward", max: 3, types: ["session.info"] });
const { cursor } = await session.rpc.eventLog.tail();
let forged;
try { await session.rpc.eventLog.read({ cursor: "forged" }); } catch (error) { forged = error.message; }
await session.log("waiting");
const waited = await session.rpc.eventLog.read({ cursor, waitMs: 30000, types: ["session.warning"] });
writeFileSync("eventlog.json", JSON.stringify({ pages, newest, waited, forged }));
await session.log("event log read");
"""

PY_EVENT_LOG = """
import json
from pathlib import Path
from sdk_extension import SessionRpcError, join_session

session = join_session()
for i in range(5):
    session.log(f"note {i}")
pages = [session.rpc("session.eventLog.read", {"max": 2})]
while pages[-1]["hasMore"]:
    pages.append(session.rpc("session.eventLog.read", {"cursor": pages[-1]["cursor"], "max": 2}))
newest = session.event_log.read(max=3, types=["session.info"], backward=True)
cursor = session.event_log.tail()
try:
    session.event_log.read("forged")
    forged = "answered"
except SessionRpcError as error:
    forged = str(error)
session.log("waiting")
waited = session.event_log.read(cursor, wait=30, types=["session.warning"])
Path("eventlog.json").write_text(json.dumps({
    "pages": pages,
    "newest": {"events": newest.events, "hasMore": newest.has_more},
    "waited": {"events": waited.events},
    "forged": forged,
}))
session.log("event log read")
"""


@pytest.mark.parametrize("language", ["js", "py"])
def test_either_sdk_pages_the_session_s_events_and_waits_for_new_ones(project: Project, language: str) -> None:
    """session.eventLog.read through the published SDK's session.rpc and the Python SDK: forward
    pages give the persisted log in order, a backward page the newest, a wait the next event."""
    add(project, "reader", language, JS_EVENT_LOG if language == "js" else PY_EVENT_LOG)

    async def scenario() -> None:
        async with sdk_host(project) as host:
            await wait_for_event(host, is_log("waiting"), timeout=120)
            host.events.emit("session.warning", {"warningType": "test", "message": "wake up"})
            await wait_for_event(host, is_log("event log read"), timeout=60)
            answers = json.loads((project.root / "eventlog.json").read_text())
            read = [event for page in answers["pages"] for event in page["events"]]
            assert all(len(page["events"]) <= 2 for page in answers["pages"])
            persisted = list(host.replay())
            assert [event["id"] for event in read] == [event["id"] for event in persisted[: len(read)]]
            notes = [e["data"]["message"] for e in read if e["type"] == "session.info"]
            assert notes == [f"note {n}" for n in range(5)]
            newest = answers["newest"]
            assert [e["data"]["message"] for e in newest["events"]] == ["note 2", "note 3", "note 4"]
            assert newest["hasMore"] is True
            assert [e["data"]["message"] for e in answers["waited"]["events"]] == ["wake up"]
            assert "session.eventLog.read: cursor: not a cursor this host gave" in answers["forged"]

    run(scenario(), timeout=240)


JS_CLI_HOOKS = """
import { appendFileSync } from "node:fs";
import { joinSession } from "@github/copilot-sdk/extension";

const record = (hook, input) => appendFileSync("seen.jsonl", JSON.stringify({ hook, ...input }) + "\\n");
await joinSession({
  tools: [{ name: "explode", description: "Always throws",
            handler: async () => { throw new Error("kaboom from the tool"); } }],
  hooks: {
    onUserPromptTransformed: async (input) => {
      record("transformed", input);
      return { modifiedTransformedPrompt: "TRANSFORMED: " + input.transformedPrompt };
    },
    onPostToolUseFailure: async (input) => {
      record("failure", input);
      return { additionalContext: "guidance for " + input.toolName };
    },
    onAgentStop: async (input) => {
      record("stop", input);
      return input.stopHookActive ? undefined : { decision: "block", reason: "please continue" };
    },
  },
});
"""

PY_CLI_HOOKS = """
import dataclasses
import json
from sdk_extension import join_session, tool

def record(hook, input):
    with open("seen.jsonl", "a") as file:
        file.write(json.dumps({"hook": hook, **dataclasses.asdict(input)}, default=str) + "\\n")

@tool(description="Always throws")
def explode() -> str:
    raise RuntimeError("kaboom from the tool")

def transformed(input, invocation):
    record("transformed", input)
    return {"modified_transformed_prompt": "TRANSFORMED: " + input.transformed_prompt}

def failure(input, invocation):
    record("failure", input)
    return {"additional_context": "guidance for " + input.tool_name}

def stop(input, invocation):
    record("stop", input)
    return None if input.stop_hook_active else {"decision": "block", "reason": "please continue"}

join_session(
    tools=[explode],
    hooks={"on_user_prompt_transformed": transformed, "on_post_tool_use_failure": failure, "on_agent_stop": stop},
)
"""


@pytest.mark.parametrize("language", ["js", "py"])
def test_the_copilot_cli_s_three_later_hook_points_reach_an_extension_of_either_sdk(
    project: Project, language: str
) -> None:
    """userPromptTransformed, postToolUseFailure and agentStop, with the inputs the CLI sends
    (read through the published SDK 1.0.14, which renames ``cwd`` and ``stop_hook_active``),
    and what their answers do: the text the model gets, guidance after a failed tool, a follow-up."""
    from extension_host import AgentReply, ScriptedAgent, ToolCall

    add(project, "cli_hooks", language, JS_CLI_HOOKS if language == "js" else PY_CLI_HOOKS)
    agent = ScriptedAgent(
        [[AgentReply("trying", (ToolCall("explode", {}, "c1"),)), AgentReply("gave up")], [AgentReply("continued")]]
    )

    async def scenario() -> str:
        async with sdk_host(project, agent=agent, session_hooks=False) as host:
            reply = await host.send_and_wait("go", timeout=60)
            assert reply is not None and reply["data"]["content"] == "continued"
            return str(host.session_id)

    session_id = run(scenario(), timeout=180)
    seen = [json.loads(line) for line in (project.root / "seen.jsonl").read_text().splitlines()]
    assert [entry["hook"] for entry in seen] == ["transformed", "failure", "stop", "transformed", "stop"]
    cwd, active = ("workingDirectory", "stopHookActive") if language == "js" else ("cwd", "stop_hook_active")
    session = "sessionId" if language == "js" else "session_id"
    assert all(entry[cwd] == str(project.root) and entry[session] == session_id for entry in seen)
    transformed, failure, stop, again, last = seen
    assert (transformed["prompt"], again["prompt"]) == ("go", "please continue")
    tool_name, error = ("toolName", "error") if language == "js" else ("tool_name", "error")
    assert failure[tool_name] == "explode"
    # As in Copilot CLI, a JavaScript handler that threw is "Tool execution failed" to the hooks.
    assert failure[error] == "Tool execution failed" if language == "js" else "kaboom from the tool" in failure[error]
    assert (stop[active], last[active]) == (False, True)
    path = "transcriptPath" if language == "js" else "transcript_path"
    assert stop[path].endswith(f"{session_id}/events.jsonl")
    first, second, third = (request.messages for request in agent.requests)
    assert first[0].content == "TRANSFORMED: go"
    assert (
        second[-1].content
        == 'Tool "explode" failed. Additional guidance from postToolUseFailure hooks:\nguidance for explode'
    )
    assert third[-1].content == "TRANSFORMED: please continue"
