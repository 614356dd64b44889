"""Slash commands across the process boundary: declared at join, run in the owning extension,
answered, announced; collisions, crashes, detaching, event interests, and misbehaving raw clients.

Python extensions use the SDK; the raw clients speak the protocol by hand (what a JavaScript or
hostile extension may send). The published JS SDK's side is in test_copilot_sdk.py.
"""

from __future__ import annotations

import json
import os
import signal
import textwrap
from typing import Any

import pytest

from extension_host import AgentReply, ExtensionHost, ScriptedAgent, Timeouts
from helpers import RAW_PROTOCOL, Project, is_log, run, wait_for_event

pytestmark = pytest.mark.subprocess

DEPLOY = """
    import asyncio, os
    from pathlib import Path
    from sdk_extension import Command, command, join_session

    @command
    def deploy(context):
        '''Deploy the project somewhere.'''
        Path("deployed.txt").write_text(f"{context.command_name}|{context.args}|{context.command}")

    async def fail(context):
        raise RuntimeError("no target named " + context.args)

    async def hang(context):
        await asyncio.sleep(3600)

    def die(context):
        os._exit(3)

    session = join_session(commands=[
        deploy,
        Command("fail", "Always fails", fail),
        Command("hang", "Never ends", hang),
        Command("die", "Takes the extension down", die),
    ])
"""

OTHER = """
    from sdk_extension import Command, join_session

    join_session(commands=[Command("deploy", "Another deploy", lambda context: None)])
"""


def test_a_command_runs_in_its_extension_and_its_outcomes_come_back_as_results(project: Project) -> None:
    """ok, the handler's error, an unknown name, and the announcements around a run."""
    project.add_extension("ops", DEPLOY)

    async def scenario() -> None:
        async with project.host() as host:
            (info,) = host.extensions
            assert info.status == "running", info.error
            assert info.commands == ("deploy", "die", "fail", "hang")
            assert host.commands["deploy"].description == "Deploy the project somewhere."
            assert host.commands["deploy"].owner == "project:ops"
            changed = await wait_for_event(host, lambda e: e["type"] == "commands.changed")
            assert {c["name"] for c in changed["data"]["commands"]} == {"deploy", "die", "fail", "hang"}

            done = await host.run_command("/deploy", "production --fast")
            assert (done.status, done.error, done.owner) == ("ok", None, "project:ops")
            written = (project.root / "deployed.txt").read_text()
            assert written == "deploy|production --fast|/deploy production --fast"
            completed = await wait_for_event(
                host, lambda e: e["type"] == "command.completed" and e["data"]["requestId"] == done.request_id
            )
            assert completed.get("ephemeral") is True

            failed = await host.run_command("fail", "staging")
            assert (failed.status, failed.error) == ("error", "no target named staging")

            unknown = await host.run_command("nope")
            assert unknown.status == "unknown"
            assert unknown.error is not None and "/deploy" in unknown.error

    run(scenario())


def test_a_command_that_hangs_times_out_and_one_whose_extension_dies_is_unavailable(project: Project) -> None:
    project.add_extension("ops", DEPLOY)

    async def scenario() -> None:
        async with project.host(watch=False) as host:
            slow = await host.run_command("hang", timeout=0.5)
            assert slow.status == "timeout"
            assert slow.error is not None and "did not finish within 0.5 s" in slow.error
            gone = await host.run_command("die")
            assert gone.status == "unavailable"
            assert gone.error is not None and "project:ops" in gone.error
            assert host.commands == {}
            emptied = await wait_for_event(
                host, lambda e: e["type"] == "commands.changed" and e["data"]["commands"] == []
            )
            assert emptied.get("ephemeral") is True
            after = await host.run_command("deploy")
            assert after.status == "unknown"

    run(scenario())


def test_a_command_name_collision_fails_the_later_extension_in_load_order(project: Project) -> None:
    """Like tools: the error names the command and who holds it; the first keeps serving."""
    project.add_extension("a_ops", DEPLOY)
    project.add_extension("b_other", OTHER)

    async def scenario() -> None:
        async with project.host() as host:
            first, second = host.extensions
            assert first.status == "running"
            assert second.status == "failed"
            assert second.error is not None
            assert "command '/deploy' is already provided by extension project:a_ops" in second.error
            assert host.commands["deploy"].owner == "project:a_ops"

    run(scenario())


def raw(body: str) -> str:
    return RAW_PROTOCOL + textwrap.dedent(body)


RAW_COMMANDS = r"""
    PLAN = json.loads(os.environ["RAW_PLAN"])

    def handle(message):
        if message.get("method") == "session.event" and message["params"]["event"]["type"] == "command.execute":
            data = message["params"]["event"]["data"]
            answer = dict(PLAN["answer"])
            answer.setdefault("requestId", data["requestId"])
            answer["sessionId"] = os.environ["SESSION_ID"]
            reply = request(100, "session.commands.handlePendingCommand", answer)
            log = {"sessionId": os.environ["SESSION_ID"], "message": "reply " + json.dumps(reply)}
            request(101, "session.log", log)

    request(1, "connect", {})
    request(2, "session.resume", {"sessionId": os.environ["SESSION_ID"], "commands": PLAN["commands"]})
    while True:
        handle(read())
"""


def raw_host(project: Project, plan: dict[str, Any]) -> ExtensionHost:
    project.add_extension("raw", raw(RAW_COMMANDS))
    environment = {**os.environ, "RAW_PLAN": json.dumps(plan)}
    return project.host(environment=environment, timeouts=Timeouts(stop_grace=2.0, readiness=10))


@pytest.mark.parametrize(
    ("commands", "expected"),
    [
        ([{"name": "/deploy", "description": ""}], "command name '/deploy' is invalid"),
        ([{"name": "has space"}], "command name 'has space' is invalid"),
        ([{"name": "x" * 65}], "is invalid"),
        ([{"name": "twice"}, {"name": "twice"}], "command 'twice' is declared twice"),
        ([{"name": "big", "description": "d" * 1025}], "over the limit of 1024"),
        ([{"name": f"c{i}"} for i in range(129)], "129 commands declared, over the limit of 128"),
        ([{"description": "no name"}], "session.resume: commands.0.name: Field required"),
        ("deploy", "session.resume: commands: Input should be a valid list"),
    ],
)
def test_a_bad_command_declaration_fails_the_join_with_the_rule(project: Project, commands: Any, expected: str) -> None:
    async def scenario() -> None:
        async with raw_host(project, {"commands": commands, "answer": {}}) as host:
            (info,) = host.extensions
            assert info.status == "failed"
            assert info.error is not None and expected in info.error, info.error
            assert host.commands == {}

    run(scenario())


@pytest.mark.parametrize(
    ("answer", "status", "error", "refusal"),
    [
        ({"requestId": "not-a-run"}, "timeout", "did not finish", "no pending command with requestId 'not-a-run'"),
        ({"error": 42}, "error", "a malformed answer", "error: Input should be a valid string"),
        ({"requestId": 7}, "timeout", "did not finish", "requestId: Input should be a valid string"),
        ({"error": "e" * 9000}, "error", "an error of 9000 characters, over the limit of 8192", "over the limit"),
        ({"error": "boom"}, "error", "boom", None),
    ],
)
def test_a_bad_handle_pending_command_answer_is_refused_naming_the_fault(
    project: Project, answer: dict[str, Any], status: str, error: str, refusal: str | None
) -> None:
    """The extension is told why (a JSON-RPC error); the run ends as the answer allows."""

    async def scenario() -> None:
        async with raw_host(project, {"commands": [{"name": "go"}], "answer": answer}) as host:
            result = await host.run_command("go", "x", timeout=2)
            assert result.status == status
            assert result.error is not None and error in result.error, result.error
            logged = await wait_for_event(
                host, lambda e: e["type"] == "session.info" and e["data"]["message"].startswith("reply ")
            )
            reply = json.loads(logged["data"]["message"].removeprefix("reply "))
            if refusal is None:
                assert reply["result"] == {"success": True}
            else:
                assert reply["error"]["code"] == -32602
                assert refusal in reply["error"]["message"], reply

    run(scenario())


def test_an_extension_that_detaches_leaves_the_session_and_its_exit_is_no_crash(project: Project) -> None:
    """session.detach: tools, commands and hooks withdrawn; status detached; no restart."""
    project.add_extension(
        "leaver",
        """
        import os, signal
        from sdk_extension import Command, join_session, tool

        @tool(description="Echo")
        def echo(text: str) -> str:
            return text

        session = join_session(tools=[echo], commands=[Command("leave", "Never run", lambda context: None)])
        session.detach()
        """,
    )

    async def scenario() -> None:
        async with project.host() as host:
            await wait_for_event(
                host, lambda e: e["type"] == "session.info" and "detached from the session" in e["data"]["message"]
            )
            (info,) = host.extensions
            assert info.status == "detached"
            assert (info.tools, info.commands) == ((), ())
            assert "echo" not in host.tools
            assert (await host.run_command("leave")).status == "unknown"
            (instance,) = host._supervisor.current()
            assert instance.process is not None
            os.kill(instance.process.pid, signal.SIGTERM)
            # The host's exit watcher awaits the same exit and was waiting first: waiters are
            # woken in order, so it has judged the exit by the time this wait returns.
            await instance.process.wait()
            assert host.extension("leaver").status == "detached"
            assert not host.events.history("session.warning")

    run(scenario())


def test_an_earlier_extension_that_joins_later_takes_its_command_back_by_load_order(project: Project) -> None:
    """b joins first and holds /deploy; a (earlier in load order) joins after and takes it: b fails
    with the collision error naming a, as a tool collision would end."""
    project.add_extension(
        "a_ops",
        """
        import time
        from pathlib import Path
        from sdk_extension import Command, join_session

        deadline = time.monotonic() + 20
        while not Path("b-joined").exists() and time.monotonic() < deadline:
            time.sleep(0.02)  # the test's ordering: join only once b has
        join_session(commands=[Command("deploy", "a's deploy", lambda context: None)])
        """,
    )
    project.add_extension(
        "b_other",
        """
        from pathlib import Path
        from sdk_extension import Command, join_session

        join_session(commands=[Command("deploy", "b's deploy", lambda context: None)])
        Path("b-joined").write_text("yes")
        """,
    )

    async def scenario() -> None:
        async with project.host() as host:
            first, second = host.extensions
            assert first.status == "running", first.error
            assert second.status == "failed"
            assert second.error == (
                "command '/deploy' is already provided by extension project:a_ops; rename the command in "
                "project:b_other (command names are unique across all extensions)"
            )
            assert host.commands["deploy"].description == "a's deploy"
            assert (project.root / "b-joined").exists()

    run(scenario())


RAW_INTERESTS = r"""
    import itertools

    SID = os.environ["SESSION_ID"]
    ids = itertools.count(10)
    todo = []

    def handle(message):
        if message.get("method") == "session.event":
            todo.append(message["params"]["event"])

    def call(method, **params):
        return request(next(ids), method, {"sessionId": SID, **params})

    def log(text):
        call("session.log", message=text)

    request(1, "connect", {})
    request(2, "session.resume", {"sessionId": SID, "eventTypes": []})
    register = "session.eventLog.registerInterest"
    h1 = call(register, eventType="session.warning")["result"]["handle"]
    h2 = call(register, eventType="session.warning")["result"]["handle"]
    call(register, eventType="session.error")
    log("registered")
    while True:
        while todo:
            message = todo.pop(0)["data"]["message"]
            log("got " + message)
            if message == "w1":
                call("session.eventLog.releaseInterest", handle=h1)
                log("released one")
            elif message == "w2":
                call("session.eventLog.releaseInterest", handle=h2)
                assert call("session.eventLog.releaseInterest", handle="nobody's")["result"] == {"success": True}
                log("released all")
            elif message == "e1":
                held = 1
                while "result" in (answer := call(register, eventType="session.idle")):
                    held += 1
                log(f"refused at {held}: {answer['error']['message']}")
        handle(read())
"""


def test_event_interests_are_handles_and_a_type_stops_coming_once_its_last_handle_is_released(
    project: Project,
) -> None:
    """registerInterest answers a handle; releaseInterest gives it back; at most 1,024 held."""
    project.add_extension("raw", raw(RAW_INTERESTS))

    async def scenario() -> None:
        async with project.host(timeouts=Timeouts(stop_grace=2.0, readiness=10)) as host:
            await wait_for_event(host, is_log("registered"))
            host.events.emit("session.warning", {"warningType": "test", "message": "w1"})
            await wait_for_event(host, is_log("released one"))
            host.events.emit(
                "session.warning", {"warningType": "test", "message": "w2"}
            )  # the second handle still holds it
            await wait_for_event(host, is_log("released all"))
            host.events.emit("session.warning", {"warningType": "test", "message": "w3"})  # not forwarded any more
            host.events.emit("session.error", {"errorType": "test", "message": "e1"})
            refused = await wait_for_event(host, lambda e: e["data"].get("message", "").startswith("refused at"))
            assert refused["data"]["message"].startswith("refused at 1024: session.eventLog.registerInterest:")
            assert "holds 1024 interests, the most it may" in refused["data"]["message"]
            logged = [
                e["data"]["message"]
                for e in host.events.history("session.info")
                if e["data"].get("extensionId") == "project:raw"
            ]
            assert logged[:6] == ["registered", "got w1", "released one", "got w2", "released all", "got e1"]

    run(scenario())


def test_the_agent_s_models_and_usage_reach_an_extension_through_session_rpc(project: Project) -> None:
    """ExtensionHost(agent=...): session.model.list and session.usage.getMetrics answer from it."""
    project.add_extension(
        "asker",
        """
        import json
        from sdk_extension import join_session

        session = join_session()
        answers = [session.rpc("session.model.list"), session.rpc("session.usage.getMetrics")]
        session.log("answers " + json.dumps(answers))
        """,
    )

    async def scenario() -> None:
        async with project.host(agent=ScriptedAgent([[AgentReply("hi")]], model="m-1")) as host:
            logged = await wait_for_event(
                host, lambda e: e["type"] == "session.info" and e["data"]["message"].startswith("answers ")
            )
            models, usage = json.loads(logged["data"]["message"].removeprefix("answers "))
            assert models == {"models": [{"id": "m-1", "name": "m-1"}]}
            assert usage == {"requests": 0}

    run(scenario())
