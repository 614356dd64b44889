"""Canvases with real extension processes: a Python canvas extension and a JavaScript one on the
published SDK (``createCanvas``) join and are listed with their actions; with a client that
shows canvases attached, the agent's open_canvas, invoke_canvas_action and a close reach their
handlers; a crash closes the owner's instances; a bad declaration fails only its extension;
without such a client the tools say so; and session.ui.ephemeralQuery asks the agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from extension_host import AgentReply, ScriptedAgent, ToolCall
from extension_protocol.protocol import Event
from helpers import Project, copilot_sdk_marks, run, sdk_host, wait_for_event

pytestmark = pytest.mark.subprocess

PYTHON_BOARD = """
import json, os
from pathlib import Path
from sdk_extension import Canvas, CanvasAction, CanvasError, join_session, tool

LOG = Path(__file__).parent.with_name("board-calls.jsonl")  # outside its folder: no reload

def note(**record):
    with LOG.open("a") as f:
        f.write(json.dumps(record) + "\\n")

def opened(ctx):
    note(kind="open", instance=ctx.instance_id, input=ctx.input, can_show=ctx.can_show)
    return {"title": "Board " + ctx.instance_id, "url": "http://127.0.0.1:9/board"}

def closed(ctx):
    note(kind="close", instance=ctx.instance_id)

async def add_card(ctx):
    note(kind="action", instance=ctx.instance_id, input=ctx.input)
    return {"cards": [ctx.input["text"]]}

def full(ctx):
    raise CanvasError("board_full", "the board is full")

@tool(description="Crash this extension.")
def crash() -> str:
    os._exit(3)

@tool(description="Ask the agent a question aside.")
def aside(question: str) -> str:
    return session.rpc("session.ui.ephemeralQuery", {"question": question})["answer"]

board = Canvas("board", "Task board", "A board of cards.", open=opened, close=closed, actions=[
    CanvasAction("add_card", add_card, description="Add a card", input_schema={"type": "object"}),
    CanvasAction("full", full),
])
session = join_session(tools=[crash, aside], canvases=[board])
"""

BAD = """
from sdk_extension import join_session
from sdk_extension.session import _Client

# Declares on the wire what the SDK would refuse: an action name the protocol reserves.
original = _Client.handshake
async def handshake(self, timeout):
    self.connection.request = _with_bad_canvas(self.connection.request)
    return await original(self, timeout)
def _with_bad_canvas(request):
    async def send(method, params=None, **options):
        if method == "session.resume":
            bad = {"id": "bad", "displayName": "Bad", "description": "", "actions": [{"name": "canvas.open"}]}
            params["canvases"] = [bad]
        return await request(method, params, **options)
    return send
_Client.handshake = handshake
join_session()
"""

LATE = """
import json
from pathlib import Path
from sdk_extension import join_session
from sdk_extension.session import Session

joined = Session._joined
def record(self, result):
    Path(__file__).parent.with_name("late-open.json").write_text(json.dumps(result.get("openCanvases")))
    joined(self, result)
Session._joined = record
join_session()
"""

BOARD_B1 = {"title": "Board b1", "url": "http://127.0.0.1:9/board"}

JS_BOARD = """
import { appendFileSync } from "node:fs";
import { joinSession, createCanvas } from "@github/copilot-sdk/extension";

const log = new URL("../chart-calls.jsonl", import.meta.url);
const note = (record) => appendFileSync(log, JSON.stringify(record) + "\\n");

await joinSession({
  canvases: [
    createCanvas({
      id: "chart",
      displayName: "Chart",
      description: "A chart of numbers.",
      actions: [{
        name: "plot",
        description: "Plot numbers",
        handler: async (ctx) => {
          note({ kind: "action", instance: ctx.instanceId, input: ctx.input });
          return { plotted: ctx.input.values.length };
        },
      }],
      open: async (ctx) => {
        note({ kind: "open", instance: ctx.instanceId, input: ctx.input ?? null });
        return { title: "Chart", url: "http://127.0.0.1:9/chart" };
      },
      onClose: async (ctx) => { note({ kind: "close", instance: ctx.instanceId }); },
    }),
  ],
});
"""


def calls(folder: Path) -> list[dict[str, Any]]:
    log = folder.parent / f"{folder.name}-calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def results(events: list[Event]) -> list[str]:
    return [
        str((event["data"].get("result") or {}).get("content") or event["data"].get("error"))
        for event in events
        if event["type"] == "tool.execution_complete"
    ]


def turn(*calls_: ToolCall) -> list[AgentReply]:
    return [AgentReply(tool_calls=calls_), AgentReply("done")]


def test_a_python_canvas_is_listed_opened_acted_on_and_closed_through_the_agents_tools(project: Project) -> None:
    folder = project.add_extension("board", PYTHON_BOARD)
    agent = ScriptedAgent(
        [
            turn(ToolCall("open_canvas", {"canvasId": "board", "instanceId": "b1"})),
            turn(ToolCall("open_canvas", {"canvasId": "board", "instanceId": "b1", "input": {"cards": 0}})),
            turn(
                ToolCall(
                    "invoke_canvas_action", {"instanceId": "b1", "actionName": "add_card", "input": {"text": "hi"}}
                )
            ),
            turn(ToolCall("invoke_canvas_action", {"instanceId": "b1", "actionName": "full"})),
        ]
    )

    async def scenario() -> tuple[Any, ...]:
        events: list[Event] = []
        async with project.host(agent=agent) as host:
            host.on_event(events.append)
            info = host.extension("board")
            offered = sorted(name for name in host.tools if "canvas" in name)
            await host.send_and_wait("open it")  # no client shows canvases yet
            detach = host.canvases.attach_client()
            for prompt in ("open it", "add a card", "it is full"):
                await host.send_and_wait(prompt)
            await host.canvases.close("b1")
            detach()
            return info, offered, events

    info, offered, events = run(scenario(), 120)
    assert info.status == "running", info.error
    assert [(c.id, c.display_name, c.actions) for c in info.canvases] == [
        ("board", "Task board", (("add_card", "Add a card"), ("full", "")))
    ]
    assert offered == ["invoke_canvas_action", "list_canvas_capabilities", "open_canvas"]
    said = results(events)
    assert said[0].startswith("No canvas can be shown here")
    assert json.loads(said[1])["title"] == "Board b1"
    assert json.loads(said[2]) == {"cards": ["hi"]}
    assert said[3] == "Canvas operation failed: project:board: the board is full"
    assert calls(folder) == [
        {"kind": "open", "instance": "b1", "input": {"cards": 0}, "can_show": True},
        {"kind": "action", "instance": "b1", "input": {"text": "hi"}},
        {"kind": "close", "instance": "b1"},
    ]
    kinds = [event["type"] for event in events if event["type"].startswith("session.canvas.")]
    assert kinds == ["session.canvas.opened", "session.canvas.closed"]


def test_an_open_canvas_is_in_a_later_join_and_closes_when_its_extension_crashes(project: Project) -> None:
    project.add_extension("board", PYTHON_BOARD)
    agent = ScriptedAgent([turn(ToolCall("crash", {}))])

    async def scenario() -> tuple[Any, ...]:
        async with project.host(agent=agent) as host:
            host.canvases.attach_client()
            await host.canvases.open("board", "b1")
            late = project.add_extension("late", LATE)
            await host.apply_changes(set())  # a later join
            joined = json.loads((late.parent / "late-open.json").read_text())
            listed = [instance.instance_id for instance in host.canvases.open_instances]
            closed = wait_for_event(host, lambda event: event["type"] == "session.canvas.closed")
            await host.send_and_wait("crash it")
            return listed, joined, await closed, host.canvases.open_instances, host.canvases.declared

    listed, joined, closed, still_open, declared = run(scenario(), 120)
    assert listed == ["b1"]
    assert joined == [{"instanceId": "b1", "extensionId": "project:board", "canvasId": "board", **BOARD_B1}]
    assert closed["data"] == {"canvasId": "board", "extensionId": "project:board", "instanceId": "b1"}
    assert still_open == [] and declared == []


def test_a_bad_declaration_fails_its_extension_in_one_line_and_not_another(project: Project) -> None:
    project.add_extension("bad", BAD)
    project.add_extension("board", PYTHON_BOARD)

    async def scenario() -> dict[str, Any]:
        async with project.host() as host:
            return {info.name: info for info in host.extensions}

    infos = run(scenario(), 120)
    assert infos["board"].status == "running"
    assert infos["bad"].status == "failed"
    assert infos["bad"].error is not None and "\n" not in infos["bad"].error
    assert "session.resume: canvases: canvas 'bad': action names beginning with 'canvas.' are reserved" in (
        infos["bad"].error
    )


def test_an_extension_asks_the_agent_aside_and_without_an_agent_is_refused_in_one_line(project: Project) -> None:
    project.add_extension("board", PYTHON_BOARD)
    agent = ScriptedAgent([[AgentReply("forty-two")]])

    async def scenario() -> tuple[Any, Any]:
        async with project.host(agent=agent) as host:
            answered = await host.call_tool("aside", {"question": "what is it?"})
        async with project.host() as host:
            refused = await host.call_tool("aside", {"question": "what is it?"})
        return answered, refused

    answered, refused = run(scenario(), 120)
    assert answered.result.text_result_for_llm == "forty-two"
    assert agent.requests[0].messages[-1].content == "what is it?" and agent.requests[0].tools == ()
    refusal = "session.ui.ephemeralQuery is not supported by this host: no agent answers in this session"
    assert refusal in refused.result.text_result_for_llm, refused.result


def published_sdk(test: Any) -> Any:
    """``test`` with the marks of a test of JavaScript extensions on the published SDK."""
    for mark in copilot_sdk_marks():
        test = mark(test)
    return test


@published_sdk
def test_a_javascript_canvas_of_the_published_sdk_opens_acts_and_closes(project: Project) -> None:
    folder = project.add_extension("chart", JS_BOARD, entry="extension.mjs")

    async def scenario() -> tuple[Any, ...]:
        async with sdk_host(project) as host:
            info = host.extension("chart")
            host.canvases.attach_client()
            opened = await host.canvases.open("chart", "c1", {"values": [1, 2]})
            acted = await host.canvases.invoke("c1", "plot", {"values": [1, 2, 3]})
            await host.canvases.close("c1")
            return info, opened, acted

    info, opened, acted = run(scenario(), 240)
    assert info.status == "running", info.error
    assert [(c.id, c.actions) for c in info.canvases] == [("chart", (("plot", "Plot numbers"),))]
    assert opened.to_wire() == {
        "instanceId": "c1",
        "extensionId": "project:chart",
        "canvasId": "chart",
        "title": "Chart",
        "url": "http://127.0.0.1:9/chart",
        "input": {"values": [1, 2]},
    }
    assert acted == {"plotted": 3}
    assert calls(folder) == [
        {"kind": "open", "instance": "c1", "input": {"values": [1, 2]}},
        {"kind": "action", "instance": "c1", "input": {"values": [1, 2, 3]}},
        {"kind": "close", "instance": "c1"},
    ]
