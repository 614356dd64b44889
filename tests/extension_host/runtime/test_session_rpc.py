"""The session-scoped RPC table in memory: what each method answers, and how the rest are refused."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from extension_host.calls.command_registry import CommandEntry, CommandRegistry, CommandResult
from extension_host.info import ExtensionInfo, ToolInfo
from extension_host.runtime.session_rpc import (
    METHOD_ALIASES,
    SESSION_RPC_METHODS,
    UNSUPPORTED_SESSION_METHODS,
    SessionRpcSources,
    session_rpc_handlers,
)
from extension_protocol import protocol as p
from extension_protocol.connection import RpcError
from helpers import run


async def never(args: str, timeout: float | None) -> CommandResult:
    raise AssertionError("not run")


def info(name: str, status: Any, pid: int | None = None, source: str = "project") -> ExtensionInfo:
    return ExtensionInfo(f"{source}:{name}", name, source, Path("/p") / name, status, pid)


def handlers(**providers: Any) -> Mapping[str, Any]:
    commands = CommandRegistry()
    commands.replace("project:a", [CommandEntry("deploy", "Deploy it", "project:a", never)])
    extensions = [
        info("a", "running", 11),
        info("b", "failed", None),
        info("c", "quarantined"),
        info("d", "shadowed", source="user"),
        info("e", "untrusted"),
        info("f", "starting", 12),
        info("g", "detached", 13),
    ]
    return session_rpc_handlers(SessionRpcSources(lambda: extensions, commands, **providers))


def test_extensions_list_answers_the_sdk_s_shape_and_statuses() -> None:
    answer = handlers()["session.extensions.list"]({"sessionId": "s"})
    assert answer["extensions"][0] == {
        "id": "project:a",
        "name": "a",
        "source": "project",
        "status": "running",
        "pid": 11,
    }
    statuses = [(item["id"], item["status"], "pid" in item) for item in answer["extensions"]]
    assert statuses == [
        ("project:a", "running", True),
        ("project:b", "failed", False),
        ("project:c", "failed", False),
        ("user:d", "disabled", False),
        ("project:e", "disabled", False),
        ("project:f", "starting", False),
        ("project:g", "running", True),
    ]


def test_commands_list_lists_the_extensions_commands_as_client_commands_not_run_during_a_turn() -> None:
    listed = handlers()["session.commands.list"]({"sessionId": "s"})
    assert listed == {  # as Copilot CLI lists an extension's command
        "commands": [
            {"name": "deploy", "description": "Deploy it", "kind": "client", "allowDuringAgentExecution": False}
        ]
    }
    assert handlers()["session.commands.list"]({"includeClientCommands": False}) == {"commands": []}


def test_models_and_usage_come_from_the_providers_and_are_refused_while_nobody_knows_them() -> None:
    unknown = handlers(models=lambda: None)
    for method in ("session.model.list", "session.usage.getMetrics"):
        with pytest.raises(RpcError) as caught:
            unknown[method]({})
        assert caught.value.code == p.NOT_SUPPORTED
        assert caught.value.message.startswith(f"{method} is not supported by this host: no agent")
        assert caught.value.data == {"method": method}
    model = {"id": "m1", "name": "Model one", "capabilities": {}}
    usage = {"totalPremiumRequestCost": 0, "totalUserRequests": 2}
    known = handlers(models=lambda: [model], usage=lambda: usage)
    assert known["session.model.list"]({}) == {"models": [model]}
    assert known["session.usage.getMetrics"]({}) == usage


def test_mcp_is_answered_truthfully_empty_and_the_rest_are_refused_naming_the_method() -> None:
    table = handlers()
    assert table["session.mcp.list"]({}) == {"servers": []}
    assert table["session.mcp.reload"]({}) == {}
    for method in UNSUPPORTED_SESSION_METHODS:
        with pytest.raises(RpcError) as caught:
            table[method]({})
        assert caught.value.code == p.NOT_SUPPORTED
        assert method in caught.value.message
    assert set(table) == set(SESSION_RPC_METHODS) | set(UNSUPPORTED_SESSION_METHODS) | set(METHOD_ALIASES)


class History:
    """An event log source holding two persisted events."""

    def events(self) -> list[Any]:
        return [{"type": "session.start"}, {"type": "user.message"}]

    def tail(self) -> str:
        return "cursor"

    async def read(self, request: Any) -> Any:
        raise AssertionError("not read by page here")


def test_a_renamed_method_is_answered_under_each_of_its_names_by_the_same_handler() -> None:
    table = session_rpc_handlers(SessionRpcSources(lambda: [], CommandRegistry(), event_log=History()))
    for old, new in METHOD_ALIASES.items():
        assert table[old] is table[new]
    assert table["session.getEvents"]({}) == table["session.getMessages"]({}) == {"events": History().events()}
    signed_out = {"isAuthenticated": False, "statusMessage": "Not authenticated"}  # Copilot CLI's answer offline
    assert table["session.auth.getStatus"]({}) == table["auth.getStatus"]({}) == signed_out
    without_log = handlers()
    with pytest.raises(RpcError) as caught:
        without_log["session.getEvents"]({})
    assert caught.value.code == p.NOT_SUPPORTED and caught.value.data == {"method": "session.getMessages"}


def test_tools_metadata_lists_the_offered_tools_with_their_schemas() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    tools = [ToolInfo("add", "Add", schema, "project:a"), ToolInfo("now", "The time", None, "builtin")]
    table = handlers(tools=lambda: tools)
    assert table["session.tools.getCurrentMetadata"]({}) == {
        "tools": [
            {"name": "add", "description": "Add", "input_schema": schema},
            {"name": "now", "description": "The time"},
        ]
    }
    assert handlers()["session.tools.getCurrentMetadata"]({}) == {"tools": None}


def test_commands_execute_runs_a_command_and_answers_its_error_if_any() -> None:
    ran: list[tuple[str, str]] = []

    async def run_command(name: str, args: str) -> CommandResult:
        ran.append((name, args))
        if name == "fail":
            return CommandResult(name, "error", "no target", "project:a")
        if name == "gone":
            return CommandResult(name, "unknown", None)
        return CommandResult(name, "ok", None, "project:a")

    async def scenario() -> None:
        execute = handlers(run_command=run_command)["session.commands.execute"]
        assert await execute({"sessionId": "s", "commandName": "deploy", "args": "prod"}) == {}
        assert await execute({"sessionId": "s", "commandName": "fail"}) == {"error": "no target"}
        assert await execute({"sessionId": "s", "commandName": "gone", "args": ""}) == {"error": "unknown"}
        assert ran == [("deploy", "prod"), ("fail", ""), ("gone", "")]
        with pytest.raises(RpcError, match=r"session\.commands\.execute: commandName: Field required") as caught:
            await execute({"sessionId": "s"})
        assert caught.value.code == p.INVALID_PARAMS
        with pytest.raises(RpcError, match="runs no commands for extensions"):
            await handlers()["session.commands.execute"]({"sessionId": "s", "commandName": "deploy"})

    run(scenario())


class FakeEventLog:
    """Answers reads with the request it got, so the table's validation can be seen."""

    def tail(self) -> str:
        return "tail-cursor"

    async def read(self, request: Any) -> Any:
        return {"events": [], "cursor": "c", "hasMore": False, "cursorStatus": "ok", "asked": dict(request)}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"max": 0}, "max"),
        ({"max": 1001}, "max"),
        ({"waitMs": -1}, "waitMs"),
        ({"types": []}, "types"),
        ({"direction": "sideways"}, "direction"),
        ({"cursor": "c" * 300}, "cursor"),
        ({"agentIds": []}, "agentIds"),
    ],
)
def test_event_log_read_refuses_bad_params_naming_the_field(params: dict[str, Any], field: str) -> None:
    read = handlers(event_log=FakeEventLog())["session.eventLog.read"]
    with pytest.raises(RpcError) as caught:
        run(read({"sessionId": "s", **params}))
    assert caught.value.code == p.INVALID_PARAMS
    assert caught.value.message.startswith(f"session.eventLog.read: {field}")


def test_event_log_read_and_tail_go_to_the_event_log_or_are_refused_without_one() -> None:
    table = handlers(event_log=FakeEventLog())
    answer = run(table["session.eventLog.read"]({"sessionId": "s", "max": 5, "types": ["session.info"]}))
    assert answer["asked"] == {"sessionId": "s", "max": 5, "types": ["session.info"]}
    assert table["session.eventLog.tail"]({"sessionId": "s"}) == {"cursor": "tail-cursor"}
    bare = handlers()
    with pytest.raises(RpcError, match=r"session\.eventLog\.tail is not supported by this host"):
        bare["session.eventLog.tail"]({"sessionId": "s"})
    with pytest.raises(RpcError, match=r"session\.eventLog\.read is not supported by this host"):
        run(bare["session.eventLog.read"]({"sessionId": "s"}))
