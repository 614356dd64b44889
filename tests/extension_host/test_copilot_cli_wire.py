"""What extensions receive on the wire, shaped as Copilot CLI 1.0.102 sends it: the answers to
``connect``, ``ping`` and ``session.resume``, ``session.lifecycle`` notifications, the turn's
events (``session.title_changed``, ``assistant.idle``, ``external_tool.*``), the listing of
extensions and commands, and an extension that leaves and joins again from the same process.

A JavaScript extension on the published SDK records every byte the host writes to it (a tap on
its stdin); a Python extension reports what its SDK read. Both are real processes.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

from extension_host.launch.node_sdk import ensure_sdk
from extension_host.session.agents import AgentReply, ScriptedAgent
from extension_host.session.model_context import ToolCall
from extension_protocol.framing import FrameDecoder
from helpers import RAW_PROTOCOL, Project, copilot_sdk_marks, is_log, run, sdk_host, wait_for_event

pytestmark = copilot_sdk_marks()

TAP = """
import { appendFileSync } from "node:fs";
// Every frame the host writes, as received (the SDK's own listener is added when it connects).
process.stdin.on("data", (chunk) => appendFileSync(new URL("./received.bin", import.meta.url), chunk));
"""

JS_PROBE = """
import "./tap.mjs";
import { joinSession } from "@github/copilot-sdk/extension";

const session = await joinSession({
  tools: [{ name: "probe", description: "Report what the host answers",
            parameters: { type: "object", properties: {} },
            handler: async () => JSON.stringify({
              connect: await session.connection.sendRequest("connect", { supportedTaskKinds: ["agent"] }),
              ping: await session.connection.sendRequest("ping", { message: "hi" }),
              capabilities: session.capabilities,
              events: (await session.getEvents()).map((event) => event.type),
              auth: await session.connection.sendRequest("session.auth.getStatus", { sessionId: session.sessionId }),
            }) }],
  commands: [{ name: "probecmd", description: "A probe command", handler: async () => {} }],
});
await session.log("probe ready");
"""

PY_WATCHER = """
import json
from sdk_extension import join_session, tool

seen = []

@tool(description="What this extension was told")
def told() -> str:
    return json.dumps({
        "seen": seen,
        "startTime": session.start_time,
        "modelId": session.model_id,
        "hostVersion": session.host_version,
        "capabilities": session.capabilities,
    })

session = join_session(tools=[told])
for kind in ("external_tool.requested", "external_tool.completed", "session.lifecycle"):
    session.on(kind, lambda message, kind=kind: seen.append([kind, message.get("type"), message.get("data")]))
session.log("watcher ready")
"""


def frames(folder: Path) -> list[dict[str, Any]]:
    """Every message the host wrote to the tapped extension, in order."""
    return FrameDecoder().feed((folder / "received.bin").read_bytes())


def test_a_javascript_extension_receives_the_session_as_copilot_cli_describes_it(project: Project) -> None:
    folder = project.add_extension("probe", JS_PROBE, entry="extension.mjs")
    (folder / "tap.mjs").write_text(textwrap.dedent(TAP), encoding="utf-8")
    project.add_extension("watcher", PY_WATCHER)
    steps = [AgentReply(tool_calls=(ToolCall(name, {}, f"call-{name}"),)) for name in ("probe", "told")]
    agent = ScriptedAgent([[*steps, AgentReply("done")]], model="test-model")

    async def scenario() -> None:
        # Not watching: the tap writes into the probe's folder, which would reload it, and a
        # reloaded probe would join again and write a second conversation to the tap.
        async with sdk_host(project, agent=agent, persist=True, watch=False) as host:
            await wait_for_event(host, is_log("probe ready"), timeout=120)
            await wait_for_event(host, is_log("watcher ready"))
            await host.send_and_wait("probe the wire\nsecond line")
            probe_result, told_result = (
                e["data"]["result"]["content"] for e in host.events.history("tool.execution_complete")
            )
            probe, told = json.loads(probe_result), json.loads(told_result)
            session_id, start_time = host.session_id, host.events.history("session.start")[0]["data"]["startTime"]
            workspace = str(host.workspace_path)

        # connect, ping and the capabilities of the join, as Copilot CLI answers them.
        assert probe["connect"] == {"ok": True, "protocolVersion": 3, "version": told["hostVersion"], "taskKinds": []}
        assert probe["ping"]["message"] == "pong: hi" and probe["ping"]["protocolVersion"] == 3
        assert isinstance(probe["ping"]["timestamp"], str)
        capabilities = {"ui": {"elicitation": False, "mcpApps": False, "canvases": False}, "extensions": False}
        assert probe["capabilities"] == told["capabilities"] == capabilities
        assert (told["startTime"], told["modelId"]) == (start_time, "test-model")
        # getEvents() (session.getMessages on the wire) and the old name of the GitHub sign-in status.
        assert probe["events"][0] == "session.start" and "user.message" in probe["events"]
        assert probe["auth"] == {"isAuthenticated": False, "statusMessage": "Not authenticated"}

        received = frames(folder)
        (resume,) = [m["result"] for m in received if m.get("id") == 1 and "result" in m]
        assert resume == {
            "sessionId": session_id,
            "nativeSessionId": session_id,
            "startTime": start_time,
            "isRemote": False,
            "mode": "interactive",
            "workspacePath": workspace,
            "capabilities": capabilities,
            "modelState": {"modelId": "test-model"},
        }
        events = [m["params"]["event"] for m in received if m.get("method") == "session.event"]
        kinds = [event["type"] for event in events]
        # Its own command reached it after it joined; the extensions as the CLI lists them.
        assert {"name": "probecmd", "description": "A probe command"} in events[kinds.index("commands.changed")][
            "data"
        ]["commands"]
        for loaded in (e for e in events if e["type"] == "session.extensions_loaded"):
            assert all(set(item) == {"id", "name", "source", "status"} for item in loaded["data"]["extensions"])
        assert events[kinds.index("session.title_changed")]["data"] == {"title": "probe the wire"}
        assert kinds.index("assistant.idle") < kinds.index("session.idle")
        # Its own tool call, persisted, with the folder to work in; the other's only as completed.
        (requested,) = [e for e in events if e["type"] == "external_tool.requested"]
        assert requested["data"]["workingDirectory"] == str(project.root) and "ephemeral" not in requested
        assert kinds.count("external_tool.completed") == 2
        lifecycle = [m["params"] for m in received if m.get("method") == "session.lifecycle"]
        assert lifecycle and {item["type"] for item in lifecycle} == {"session.updated"}
        assert all(item["metadata"]["startTime"] == start_time for item in lifecycle)
        persisted = {e["timestamp"] for e in events if "ephemeral" not in e}
        assert {item["metadata"]["modifiedTime"] for item in lifecycle} <= persisted

        # The Python SDK: the lifecycle when it asks, the probe's completion (its own call was still
        # running when "told" answered), never the probe's request.
        requests = [data["toolName"] for kind, _, data in told["seen"] if kind == "external_tool.requested"]
        assert requests == ["told"], told["seen"]
        assert sum(kind == "external_tool.completed" for kind, _, _ in told["seen"]) == 1, told["seen"]
        assert any(kind == "session.lifecycle" and what == "session.updated" for kind, what, _ in told["seen"])

    run(scenario(), timeout=240)


def raw_leaver(resume: str = "", before: str = "") -> str:
    """A raw extension that joins (``resume``: more of its params, as Python), runs ``before``,
    then detaches; it writes all it is sent to ``received.jsonl`` beside it, with a ``mark``
    where it starts to detach and another once it has."""
    return (
        RAW_PROTOCOL
        + r"""
import pathlib

RECEIVED = pathlib.Path(__file__).with_name("received.jsonl")

def handle(message):
    with RECEIVED.open("a") as out:
        out.write(json.dumps(message) + "\n")

session = os.environ["SESSION_ID"]
request(1, "connect", {})
request(2, "session.resume", {"sessionId": session, RESUME})
BEFORE
handle({"mark": "detaching"})
request(4, "session.detach", {"sessionId": session})
handle({"mark": "detached"})
while True:
    handle(read())
""".replace("RESUME", resume).replace("BEFORE", before)
    )


RAW_NARROW_LEAVER = raw_leaver(
    '"eventTypes": ["assistant.message"]',
    'request(3, "session.log", {"sessionId": session, "message": "narrow joined"})',
)


def test_session_lifecycle_goes_to_every_connected_extension_whatever_it_asked_for_and_while_detached(
    project: Project,
) -> None:
    """As Copilot CLI, which sends it on every connection: an extension whose join named only
    ``assistant.message`` is sent it, and so is one that left the session (it may join again)."""
    folder = project.add_extension("narrow", RAW_NARROW_LEAVER)
    agent = ScriptedAgent([[AgentReply("hello")]], model="test-model")

    async def scenario() -> list[dict[str, Any]]:
        async with sdk_host(project, agent=agent, persist=True) as host:
            (info,) = host.extensions
            await wait_for_event(host, is_log(f"extension {info.id} detached from the session"))
            await host.send_and_wait("say hello")
            return [dict(event) for event in host.events.history()]

    history = run(scenario(), timeout=60)
    received = [json.loads(line) for line in (folder / "received.jsonl").read_text().splitlines()]
    marks = [message.get("mark") for message in received]
    joined, detached = received[: marks.index("detaching")], received[marks.index("detached") + 1 :]
    lifecycle = [m["params"] for m in joined if m.get("method") == "session.lifecycle"]
    (logged,) = [e for e in history if e["data"].get("message") == "narrow joined"]
    assert [item["metadata"]["modifiedTime"] for item in lifecycle] == [logged["timestamp"]]
    assert not [m for m in joined if m.get("method") == "session.event"]  # its event types still hold
    # Detached: no events at all, but the session's changes, one per persisted event of the turn.
    assert {m["method"] for m in detached} == {"session.lifecycle"}
    turn = [e["timestamp"] for e in history if e["type"] == "user.message" or e["type"] == "assistant.message"]
    assert set(turn) <= {m["params"]["metadata"]["modifiedTime"] for m in detached}


def test_an_extension_that_leaves_as_soon_as_it_has_joined_was_told_of_its_own_start(project: Project) -> None:
    """As under Copilot CLI, the ``session.extensions_loaded`` that says it runs is part of its join:
    it arrives before the extension can act on the answer, and only once."""
    folder = project.add_extension("quick", raw_leaver())

    async def scenario() -> None:
        async with project.host() as host:
            (info,) = host.extensions
            await wait_for_event(host, is_log(f"extension {info.id} detached from the session"))

    run(scenario(), timeout=60)
    received = [json.loads(line) for line in (folder / "received.jsonl").read_text().splitlines()]
    joined = received[: [message.get("mark") for message in received].index("detaching")]
    loaded = [m["params"]["event"] for m in joined if m.get("method") == "session.event"]
    loaded = [event for event in loaded if event["type"] == "session.extensions_loaded"]
    assert [[(e["name"], e["status"]) for e in event["data"]["extensions"]] for event in loaded] == [
        [("quick", "running")]
    ]
    everything = [m["params"]["event"]["type"] for m in received if m.get("method") == "session.event"]
    assert everything.count("session.extensions_loaded") == 1


JS_REJOIN = """
import { joinSession } from "@github/copilot-sdk/extension";

const seen = [];
const tools = [{ name: "again", description: "Which join answered",
                 parameters: { type: "object", properties: {} },
                 handler: async () => `joined twice in pid ${process.pid}; seen ${seen.join(" ")}` }];
let session = await joinSession({ tools });
await session.disconnect();
session = await joinSession({ tools });
session.on((event) => seen.push(event.type));
await session.log("joined again");
"""

PY_REJOIN = """
import os
from sdk_extension import join_session, tool

seen = []

@tool(description="Which join answered")
def again() -> str:
    return f"joined twice in pid {os.getpid()}; seen {' '.join(seen)}"

session = join_session(tools=[again])
session.detach()
session.rejoin()
session.on("*", lambda event: seen.append(event["type"]))
session.log("joined again")
"""


@pytest.mark.parametrize(
    ("entry", "code"), [("extension.mjs", JS_REJOIN), ("extension.py", PY_REJOIN)], ids=["js", "py"]
)
def test_an_extension_that_leaves_and_joins_again_from_the_same_process_is_accepted(
    project: Project, entry: str, code: str
) -> None:
    """Joined again, it has its tool back for the next prompt and is sent that prompt's events."""
    project.add_extension("rejoin", code, entry=entry)
    agent = ScriptedAgent([[AgentReply(tool_calls=(ToolCall("again", {}, "call-again"),)), AgentReply("done")]])

    async def scenario() -> None:
        async with sdk_host(project, agent=agent) as host:
            await wait_for_event(host, is_log("joined again"), timeout=120)
            (info,) = host.extensions
            assert info.status == "running", info.error
            await host.send_and_wait("which join answers?")
            messages = [e["data"].get("message") for e in host.events.history()]
            departed, rejoined = (
                messages.index(f"extension {info.id} detached from the session"),
                messages.index(f"extension {info.id} joined again"),
            )
            assert departed < rejoined
            (result,) = (e["data"]["result"]["content"] for e in host.events.history("tool.execution_complete"))
            assert result.startswith(f"joined twice in pid {info.pid}; seen ")
            assert {"user.message", "assistant.turn_start"} <= set(result.split()[6:])
        assert "again" in {tool.name for tool in agent.requests[0].tools}

    run(scenario(), timeout=180)


JS_ON_GIVEN_BUILD = """
import { joinSession, BUILD } from "@github/copilot-sdk/extension";

await joinSession({
  tools: [{ name: "which_sdk", description: "Which SDK build this runs on",
            parameters: { type: "object", properties: {} },
            handler: async () => `${BUILD} at ${process.env.COPILOT_SDK_PATH}` }],
});
"""


def test_javascript_extensions_run_on_the_sdk_build_the_host_is_given(project: Project, sdk_cache: Path) -> None:
    """As Copilot CLI's --extension-sdk-path: a folder with index.js and extension.js replaces the
    pinned package (here a build that re-exports it and says which it is)."""
    pinned = run(ensure_sdk(sdk_cache, os.environ), timeout=300) / "node_modules" / "@github" / "copilot-sdk" / "dist"
    build = project.root.parent / "sdk-build"
    build.mkdir()
    for name in ("index", "extension"):
        source = f'export * from "{(pinned / f"{name}.js").as_uri()}";\nexport const BUILD = "the given build";\n'
        (build / f"{name}.js").write_text(source, encoding="utf-8")
    project.add_extension("on_build", JS_ON_GIVEN_BUILD, entry="extension.mjs")

    async def scenario() -> None:
        async with sdk_host(project, extension_sdk_path=build) as host:
            result = await host.call_tool("which_sdk")
            assert result.text_result_for_llm == f"the given build at {build}"

        (build / "index.js").unlink()
        async with sdk_host(project, extension_sdk_path=build) as host:
            (info,) = host.extensions
            assert info.status == "failed"
            assert info.error == (
                f"the extension SDK path {build} has no index.js: give a folder with index.js and extension.js "
                "(as Copilot CLI's --extension-sdk-path)"
            )

    run(scenario(), timeout=120)
