"""Child sessions of subagents, resolved by a real extension process: a host's end of the
protocol speaks JSON-RPC to an extension on the SDK over its stdio, announces children with
``subagent.*`` events, and sends tool calls, hook calls and permission requests in both wire
forms (the child's id as the session, or the parent's with the child's id beside it). What
each handler ran with is written by the extension to a file, so a handler that never ran is
seen not to have run. The same extension code also runs under this host, whose ``task`` tool
starts a real child; and the resolver's maps are checked against arbitrary events.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import textwrap
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extension_host import AgentReply, ScriptedAgent, ToolCall
from extension_host.session.custom_agents import CustomAgent as HostAgent
from extension_protocol import protocol as p
from extension_protocol.connection import Connection, RpcError
from extension_protocol.results import result_from_wire
from helpers import CHILD_RECORDER, Project, recorded, run, sdk_host
from sdk_extension import CustomAgent, ExtensionError, ToolResult, join_session
from sdk_extension.subagents import SUBAGENT_EVENTS, ChildSessions, not_supported

pytestmark = pytest.mark.subprocess

PARENT = "parent-1"

EXTENSION = """
import json, os, time
from pathlib import Path
from sdk_extension import CustomAgent, join_session, tool

CALLS = Path(os.environ["CALLS_FILE"])

def note(**record):
    with CALLS.open("a") as out:
        out.write(json.dumps(record) + "\\n")

@tool(description="Save a result")
def save(text: str, invocation) -> str:
    note(what="save", session=invocation.session_id, text=text)
    return f"saved by {invocation.session_id}"

@tool(description="Delete everything")
def wipe(invocation) -> str:
    note(what="wipe", session=invocation.session_id)
    return "wiped"

@tool(description="Wait until mark ran")
def wait_for_mark(invocation) -> str:
    marker = CALLS.with_name("marked")
    for _ in range(200):
        if marker.exists():
            return "marked"
        time.sleep(0.05)
    return "never marked"

@tool(description="Mark")
def mark(invocation) -> str:
    CALLS.with_name("marked").write_text("yes")
    return "ok"

def pre_tool(input, invocation):
    note(what="hook", session=invocation.session_id, input_session=input.session_id)
    return None

def subagent_stop(input, invocation):
    note(what="stop", session=invocation.session_id, agent=input.agent_id)
    return None

def permission(request, invocation):
    note(what="permission", session=invocation.session_id)
    return True

session = join_session(
    tools=[save, wipe, wait_for_mark, mark],
    hooks={"on_pre_tool_use": pre_tool, "on_subagent_stop": subagent_stop},
    on_permission_request=permission,
    custom_agents=[
        CustomAgent(name="reviewer", prompt="Review.", display_name="Reviewer", description="Reviews",
                    tools=["save", "view"], model="small-model"),
        CustomAgent(name="mute", prompt="Say nothing.", tools=[]),
        CustomAgent(name="free", prompt="Do anything."),
    ],
)
"""


@dataclass
class Host:
    """The host's end of one extension's connection: answers the join, sends events and hook
    calls, and collects what the extension answers."""

    connection: Connection
    calls_file: Path
    resume: asyncio.Future[Any]
    results: dict[str, asyncio.Future[ToolResult]] = field(default_factory=dict)
    answered_on: dict[str, str] = field(default_factory=dict)
    permissions: dict[str, asyncio.Future[Any]] = field(default_factory=dict)
    _ids: int = 0

    def event(
        self, event_type: str, data: dict[str, Any], *, stream: str = PARENT, agent_id: str | None = None
    ) -> None:
        self._ids += 1
        event: dict[str, Any] = {"id": f"e{self._ids}", "timestamp": "2026-01-01T00:00:00+00:00", "parentId": None}
        event.update(type=event_type, data=data)
        if agent_id is not None:
            event["agentId"] = agent_id
        self.connection.notify(p.METHOD_SESSION_EVENT, {"sessionId": stream, "event": event})

    def started(self, child: str, agent: str, tool_call_id: str, *, stream: str = PARENT, wire: str = "seed") -> None:
        """``subagent.started``: the child's id in ``remoteSessionId`` (the seed's form) or only
        in the envelope's ``agentId`` (Copilot CLI's form)."""
        data = {"toolCallId": tool_call_id, "agentName": agent, "agentDisplayName": agent.title()}
        if wire == "seed":
            self.event("subagent.started", {**data, "remoteSessionId": child}, stream=stream)
        else:
            self.event("subagent.started", data, stream=stream, agent_id=child)

    async def call(self, tool: str, session_id: str, *, agent_id: str | None = None, **arguments: Any) -> ToolResult:
        self._ids += 1
        request_id = f"r{self._ids}"
        self.results[request_id] = asyncio.get_running_loop().create_future()
        data = {
            "requestId": request_id,
            "sessionId": session_id,
            "toolCallId": f"c{self._ids}",
            "toolName": tool,
            "arguments": arguments,
        }
        self.event("external_tool.requested", data, agent_id=agent_id)
        async with asyncio.timeout(20):
            return await self.results[request_id]

    async def hook(self, session_id: str, hook_type: str = "preToolUse", **wire_input: Any) -> Any:
        wire_input = {"timestamp": 0, "cwd": "/", "toolName": "save", "toolArgs": {}, **wire_input}
        params = {"sessionId": session_id, "hookType": hook_type, "input": wire_input}
        return await self.connection.request(p.METHOD_HOOKS_INVOKE, params, timeout=20)

    def ask_permission(self, session_id: str, *, agent_id: str | None = None) -> asyncio.Future[Any]:
        self._ids += 1
        request_id = f"q{self._ids}"
        self.permissions[request_id] = asyncio.get_running_loop().create_future()
        data = {"requestId": request_id, "sessionId": session_id, "permissionRequest": {"kind": "shell"}}
        self.event("permission.requested", data, agent_id=agent_id)
        return self.permissions[request_id]

    def ran(self) -> list[dict[str, Any]]:
        """What the extension's handlers recorded, in order."""
        if not self.calls_file.exists():
            return []
        return [json.loads(line) for line in self.calls_file.read_text().splitlines()]

    def _on_result(self, params: Any) -> dict[str, Any]:
        self.answered_on[params["requestId"]] = params["sessionId"]
        self.results[params["requestId"]].set_result(result_from_wire(params.get("result"), params.get("error")))
        return {"success": True}

    def _on_permission(self, params: Any) -> dict[str, Any]:
        self.permissions[params["requestId"]].set_result(params["result"])
        return {"success": True}

    def _on_resume(self, params: Any) -> dict[str, Any]:
        if not self.resume.done():
            self.resume.set_result(params)
        return {"sessionId": PARENT, "capabilities": {}}


@asynccontextmanager
async def extension(folder: Path) -> AsyncIterator[Host]:
    """The extension of :data:`EXTENSION`, running as a process joined to :data:`PARENT`; it is
    ended and reaped when the block ends, however it ends."""
    script = folder / "extension.py"
    script.write_text(textwrap.dedent(EXTENSION), encoding="utf-8")
    env = {**os.environ, "SESSION_ID": PARENT, "CALLS_FILE": str(folder / "calls.jsonl")}
    with (folder / "stderr.txt").open("wb") as stderr:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-P", str(script), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=stderr, env=env, cwd=folder, start_new_session=True,
        )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    connection = Connection(process.stdout, process.stdin)
    host = Host(connection, folder / "calls.jsonl", asyncio.get_running_loop().create_future())
    connection.on_request(p.METHOD_CONNECT, lambda _: {"ok": True, "protocolVersion": p.PROTOCOL_VERSION})
    connection.on_request(p.METHOD_SESSION_RESUME, host._on_resume)
    connection.on_request(p.METHOD_HANDLE_PENDING_TOOL_CALL, host._on_result)
    connection.on_request(p.METHOD_HANDLE_PENDING_PERMISSION, host._on_permission)
    connection.on_request(p.METHOD_REGISTER_INTEREST, lambda _: {"handle": "h"})
    serving = asyncio.ensure_future(connection.serve())
    try:
        async with asyncio.timeout(30):
            await host.resume
        yield host
    finally:
        connection.close()
        try:
            async with asyncio.timeout(15):
                await process.wait()
        except TimeoutError:
            os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
        serving.cancel()
        await asyncio.gather(serving, return_exceptions=True)


def test_the_join_declares_the_custom_agents_with_the_definitions_of_the_tools_they_may_call(tmp_path: Path) -> None:
    """``customAgents`` in camelCase; ``toolDefinitions`` hold this extension's own tools the
    allowlist names (not a tool it does not have), are empty for ``[]``, and absent when unset;
    the join asks for the events that announce children."""

    async def scenario() -> dict[str, Any]:
        async with extension(tmp_path) as host:
            return dict(await host.resume)

    resume = run(scenario())
    (save,) = [definition for definition in resume["tools"] if definition["name"] == "save"]
    assert save["description"] == "Save a result" and save["parameters"]["required"] == ["text"]
    assert resume["customAgents"] == [
        {
            "name": "reviewer",
            "prompt": "Review.",
            "displayName": "Reviewer",
            "description": "Reviews",
            "model": "small-model",
            "tools": ["save", "view"],
            "toolDefinitions": [save],
        },
        {"name": "mute", "prompt": "Say nothing.", "tools": [], "toolDefinitions": []},
        {"name": "free", "prompt": "Do anything."},
    ]
    assert set(SUBAGENT_EVENTS) <= set(resume["eventTypes"])


def test_a_direct_call_runs_with_the_sessions_own_id(tmp_path: Path) -> None:
    async def scenario() -> ToolResult:
        async with extension(tmp_path) as host:
            result = await host.call("save", PARENT, text="direct")
            assert host.ran() == [{"what": "save", "session": PARENT, "text": "direct"}]
            return result

    assert run(scenario()) == ToolResult(f"saved by {PARENT}")


@pytest.mark.parametrize("wire", ["seed", "copilot"])
def test_a_childs_tool_call_and_hook_reach_the_parents_handlers_with_the_childs_id(tmp_path: Path, wire: str) -> None:
    """In the seed's form the requests name the child; in Copilot CLI's they name the parent,
    with the child in the envelope's ``agentId`` (tools, permissions) or the hook input's
    ``agentId``/``sessionId``. Either way the handler sees the child's id, and the answer goes
    to the parent. A subagent-stop hook, about the child but run by the parent (its input's
    ``sessionId``), is the parent's."""

    async def scenario() -> None:
        async with extension(tmp_path) as host:
            host.started("child-1", "reviewer", "task-1", wire=wire)
            if wire == "seed":
                result = await host.call("save", "child-1", text="from child")
                hooked = await host.hook("child-1")
                approved = host.ask_permission("child-1")
            else:
                result = await host.call("save", PARENT, agent_id="child-1", text="from child")
                hooked = await host.hook(PARENT, sessionId="child-1", agentId="child-1", parentAgentId=PARENT)
                approved = host.ask_permission(PARENT, agent_id="child-1")
            async with asyncio.timeout(20):
                assert await approved == {"kind": "approve-once"}
            stop = {"sessionId": PARENT, "agentId": "child-1", "agentName": "reviewer", "response": "done"}
            await host.hook(PARENT, "subagentStop", **stop)
            assert result == ToolResult("saved by child-1")
            assert set(host.answered_on.values()) == {PARENT}
            assert hooked == {"output": None}
            assert host.ran() == [
                {"what": "save", "session": "child-1", "text": "from child"},
                {"what": "hook", "session": "child-1", "input_session": "child-1" if wire == "copilot" else ""},
                {"what": "permission", "session": "child-1"},
                {"what": "stop", "session": PARENT, "agent": "child-1"},
            ]

    run(scenario())


def test_a_child_whose_parent_is_not_joined_is_refused_naming_both(tmp_path: Path) -> None:
    """A child announced on another session's stream: its parent is not this extension's
    session, so its tool call fails and its hook call is an error, each naming parent and
    child, and no handler runs."""

    async def scenario() -> None:
        async with extension(tmp_path) as host:
            host.started("orphan", "free", "task-9", stream="gone-parent")
            expected = "parent session gone-parent for child orphan not found"
            assert await host.call("save", "orphan", text="x") == ToolResult(expected, "failure", error=expected)
            with pytest.raises(RpcError) as refused:
                await host.hook("orphan")
            assert refused.value.message == expected
            assert host.ran() == []

    run(scenario())


def test_a_request_for_an_unknown_session_is_refused_and_no_handler_runs(tmp_path: Path) -> None:
    """A tool call fails with ``unknown session {id}``, a hook call is that error, and a
    permission request is left unanswered (the extension's log says why); an unknown
    ``agentId`` under the joined session is the session's own request."""

    async def scenario() -> None:
        async with extension(tmp_path) as host:
            expected = "unknown session stranger"
            assert await host.call("wipe", "stranger") == ToolResult(expected, "failure", error=expected)
            with pytest.raises(RpcError) as refused:
                await host.hook("stranger")
            assert refused.value.message == expected
            unanswered = host.ask_permission("stranger")
            async with asyncio.timeout(20):
                await host.ask_permission(PARENT)
            assert not unanswered.done()
            assert await host.call("save", PARENT, agent_id="never-announced", text="own") == ToolResult(
                f"saved by {PARENT}"
            )
            assert host.ran() == [
                {"what": "permission", "session": PARENT},
                {"what": "save", "session": PARENT, "text": "own"},
            ]

    run(scenario())
    assert "not answered: unknown session stranger" in (tmp_path / "stderr.txt").read_text()


def test_a_request_after_the_subagent_completed_still_resolves_until_the_parent_ends(tmp_path: Path) -> None:
    """``subagent.completed``/``failed`` keep the child's mapping (a late request resolves);
    the parent's ``session.shutdown`` forgets its children."""

    async def scenario() -> None:
        async with extension(tmp_path) as host:
            host.started("child-1", "free", "task-1")
            host.started("child-2", "free", "task-2", wire="copilot")
            host.event("subagent.completed", {"toolCallId": "task-1", "agentName": "free"})
            host.event("subagent.failed", {"toolCallId": "task-2", "agentName": "free", "error": "boom"})
            assert await host.call("save", "child-1", text="late") == ToolResult("saved by child-1")
            assert await host.call("save", PARENT, agent_id="child-2", text="late") == ToolResult("saved by child-2")
            host.event("session.shutdown", {"shutdownType": "routine"})
            expected = "unknown session child-1"
            assert await host.call("save", "child-1", text="gone") == ToolResult(expected, "failure", error=expected)
            assert [record.get("text") for record in host.ran()] == ["late", "late"]

    run(scenario())


@pytest.mark.parametrize(
    ("agent", "tool", "allowed"),
    [
        ("reviewer", "save", True),  # named in its list
        ("reviewer", "wipe", False),  # left out of its list
        ("mute", "save", False),  # [] allows nothing
        ("free", "wipe", True),  # unset allows everything
        ("host-agent", "wipe", True),  # an agent this extension did not declare: the host's business
    ],
)
def test_a_childs_tool_call_obeys_its_agents_allowlist(tmp_path: Path, agent: str, tool: str, allowed: bool) -> None:
    """A call outside the allowlist fails with the exact text and its tool never runs; hooks
    are not subject to the allowlist."""

    async def scenario() -> None:
        async with extension(tmp_path) as host:
            host.started("child-1", agent, "task-1")
            result = await host.call(tool, "child-1", **({"text": "t"} if tool == "save" else {}))
            await host.hook("child-1")
            ran = [record["what"] for record in host.ran()]
            if allowed:
                assert result.result_type == "success" and ran == [tool, "hook"]
            else:
                text = not_supported(tool)
                assert result == ToolResult(text, "failure", error=text)
                assert text == f"Tool '{tool}' is not supported by this client instance."
                assert ran == ["hook"]

    run(scenario())


def test_a_childs_handler_that_waits_for_another_childs_call_is_not_blocked_by_resolution(tmp_path: Path) -> None:
    """No lock is held while a handler runs: a child's call that waits for a second one ends."""

    async def scenario() -> None:
        async with extension(tmp_path) as host:
            host.started("child-1", "free", "task-1")
            host.started("child-2", "free", "task-2", wire="copilot")
            waiting = asyncio.ensure_future(host.call("wait_for_mark", "child-1"))
            assert await host.call("mark", PARENT, agent_id="child-2") == ToolResult("ok")
            async with asyncio.timeout(20):
                assert await waiting == ToolResult("marked")

    run(scenario())


def test_under_this_host_a_childs_call_and_hook_reach_the_handlers_with_the_childs_id(project: Project) -> None:
    """The host's ``task`` tool starts a custom agent's child: the extension's tool and hook see
    the child's id (``remoteSessionId`` of ``subagent.started``) for the child's call, the
    session's own id for the parent's."""
    folder = project.add_extension("recorder", CHILD_RECORDER.replace("AGENTS", "[]"))
    task = ToolCall("task", {"name": "r", "description": "review", "prompt": "save it", "agent_type": "reviewer"})
    child = ScriptedAgent([[AgentReply("", (ToolCall("save", {"text": "c"}),)), AgentReply("child done")]])
    parent = ScriptedAgent(
        [[AgentReply("", (ToolCall("save", {"text": "p"}),)), AgentReply("", (task,)), AgentReply("ok")]]
    )
    reviewer = HostAgent("reviewer", "You review.", description="Reviews", tools=("save",), agent=child)

    async def scenario() -> tuple[str, str]:
        async with sdk_host(project, agent=parent, custom_agents=[reviewer], trust=True, watch=False) as host:
            await host.send_and_wait("delegate")
            (started,) = host.events.history("subagent.started")
            return host.session_id, started["data"]["remoteSessionId"]

    parent_id, child_id = run(scenario(), timeout=120)
    seen = [entry for entry in recorded(folder) if entry["what"] != "started"]
    assert [(entry["what"], entry["session"]) for entry in seen] == [
        ("hook", parent_id),
        ("save", parent_id),
        ("hook", parent_id),  # the parent's task call
        ("hook", child_id),
        ("save", child_id),
    ]


# -- the resolver's maps, against arbitrary events ----------------------------------------

IDS = st.sampled_from(["p1", "p2", "c1", "c2", "c3", ""]) | st.text(max_size=4)
VALUES = st.none() | st.integers() | IDS | st.lists(IDS, max_size=2)
EVENTS = st.fixed_dictionaries(
    {"type": st.sampled_from(sorted(SUBAGENT_EVENTS)) | st.text(max_size=3)},
    optional={
        "agentId": VALUES,
        "timestamp": VALUES,
        "data": VALUES
        | st.fixed_dictionaries(
            {},
            optional={"remoteSessionId": VALUES, "toolCallId": VALUES, "agentName": VALUES, "x": VALUES},
        ),
    },
)
OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("event"), IDS, EVENTS),
        st.tuples(st.sampled_from(["register", "unregister", "forget"]), IDS, st.none()),
        st.tuples(st.just("clear"), st.none(), st.none()),
        st.tuples(st.just("route"), IDS, VALUES),
    ),
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(OPERATIONS)
def test_the_resolver_never_raises_and_its_maps_stay_consistent(operations: list[tuple[str, Any, Any]]) -> None:
    """Whatever events arrive, in any order with sessions joined and left: resolution answers
    as the seed's algorithm says, every child has an agent, every instance's child maps to the
    parent it is kept under, and no parent keeps an empty table."""
    children: ChildSessions[str] = ChildSessions([CustomAgent(name="a", prompt="", tools=[])])
    joined: dict[str, str] = {}
    for operation, first, second in operations:
        if operation == "event":
            children.on_event(first, second)
        elif operation == "register":
            children.register(first, f"session {first}")
            joined[first] = f"session {first}"
        elif operation in ("unregister", "forget"):
            (children.unregister if operation == "unregister" else children.forget_children)(first)
            if operation == "unregister":
                joined.pop(first, None)
        elif operation == "clear":
            children.clear()
            joined.clear()
        else:
            session, child, error = children.route(first, second)
            assert (session is None) == (error is not None) and (child is None or error is None)
        assert set(children.child_to_agent) == set(children.child_to_parent)
        for parent, instances in children.subagent_instances.items():
            assert instances
            for tool_call_id, instance in instances.items():
                assert instance.tool_call_id == tool_call_id
                assert children.child_to_parent[instance.child_session_id] == parent
        for some_id in {*joined, *children.child_to_parent, "nobody"}:
            parent_id = children.child_to_parent.get(some_id)
            expected: tuple[Any, bool, Any]
            if some_id in joined:
                expected = (joined[some_id], False, None)
            elif parent_id in joined:
                expected = (joined[parent_id], True, None)
            elif parent_id is not None:
                expected = (None, False, f"parent session {parent_id} for child {some_id} not found")
            else:
                expected = (None, False, f"unknown session {some_id}")
            assert children.resolve_session(some_id) == expected
        for some_id in children.child_to_parent:
            assert children.allows(some_id, "t") == (children.child_to_agent[some_id] != "a")


def test_deleting_the_parent_refuses_its_requests_and_forgets_its_children(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with extension(tmp_path) as host:
            host.started("child-1", "free", "task-1")
            host.connection.notify(p.METHOD_SESSION_LIFECYCLE, {"type": "session.deleted", "sessionId": PARENT})
            for session_id in (PARENT, "child-1"):
                expected = f"unknown session {session_id}"
                assert await host.call("save", session_id, text="x") == ToolResult(expected, "failure", error=expected)
            assert host.ran() == []

    run(scenario())


def test_custom_agents_are_checked_before_joining(monkeypatch: pytest.MonkeyPatch) -> None:
    """A string for ``tools`` (a common slip), an agent given twice, or something else than a
    ``CustomAgent`` is refused with one line, before anything is connected."""
    monkeypatch.delenv("SESSION_ID", raising=False)
    with pytest.raises(TypeError, match="takes a list of names"):
        CustomAgent(name="a", prompt="p", tools="save")
    with pytest.raises(ExtensionError, match="'a' is given twice"):
        join_session(custom_agents=[CustomAgent(name="a", prompt="p"), CustomAgent(name="a", prompt="q")])
    with pytest.raises(TypeError, match="must be CustomAgent objects, got dict"):
        join_session(custom_agents=[{"name": "a"}])  # type: ignore[list-item]
    assert CustomAgent(name="a", prompt="p", tools=["x"]).tools == ("x",)
