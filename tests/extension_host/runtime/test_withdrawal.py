"""What the session takes back from an extension that leaves it, and how the leaving is told."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from extension_host.calls.command_registry import CommandEntry, CommandRegistry, CommandResult
from extension_host.calls.tool_registry import ToolEntry, ToolRegistry
from extension_host.events import EventLog
from extension_host.hooks.runner import HookRunner
from extension_host.runtime.context import SessionContext
from extension_host.runtime.withdrawal import InFlight, announce_departure, withdraw
from extension_protocol.results import ToolResult

SESSION = "00000000-0000-4000-8000-000000000000"
OWNER = "project:lint"


class RecordingInFlight:
    def __init__(self) -> None:
        self.reasons: list[str] = []

    def end_all(self, reason: str) -> None:
        self.reasons.append(reason)


async def _tool(arguments: Any, tool_call_id: str) -> ToolResult:
    return ToolResult("ok")


async def _command(args: str, timeout: float | None = None) -> CommandResult:
    return CommandResult("fix", "ok", None, OWNER)


async def _hook(hook: str, wire_input: Any, timeout: float) -> Any:
    return {}


def _context(tmp_path: Path) -> SessionContext:
    events = EventLog()
    return SessionContext(
        session_id=SESSION,
        project_root=tmp_path,
        logs_dir=tmp_path / "logs",
        registry=ToolRegistry(),
        events=events,
        hooks=HookRunner(events, session_id=SESSION, cwd=str(tmp_path)),
        environment={},
        readiness_timeout=5.0,
        tool_timeout=5.0,
        stop_grace=1.0,
        cache_dir=tmp_path / "cache",
        host_environment={},
        grants=lambda spec: frozenset(),
        commands=CommandRegistry(),
    )


def _join(context: SessionContext, holder: object) -> None:
    context.registry.replace(OWNER, [ToolEntry("lint", "", None, OWNER, _tool, holder=holder)])
    context.commands.replace(OWNER, [CommandEntry("fix", "", OWNER, _command, holder=holder)])
    context.hooks.register_extension(OWNER, 0, ("on_pre_tool_use",), _hook, holder=holder)


def test_withdrawing_takes_back_tools_hooks_and_commands_and_ends_what_is_in_flight(tmp_path: Path) -> None:
    context = _context(tmp_path)
    holder = object()
    _join(context, holder)
    calls, runs = RecordingInFlight(), RecordingInFlight()
    in_flight: list[InFlight] = [calls, runs]

    removed = withdraw(context, OWNER, holder, in_flight, "extension project:lint failed: boom")

    assert removed == ["lint"]
    assert context.registry.get("lint") is None
    assert context.commands.get("fix") is None
    assert context.hooks.implementers("on_pre_tool_use") == []
    assert calls.reasons == runs.reasons == ["extension project:lint failed: boom"]


def test_withdrawing_an_older_generation_leaves_the_newer_ones_registrations(tmp_path: Path) -> None:
    context = _context(tmp_path)
    newer = object()
    _join(context, newer)

    assert withdraw(context, OWNER, object(), [], "the extension is stopping") == []
    assert context.registry.get("lint") is not None
    assert context.commands.get("fix") is not None
    assert context.hooks.implementers("on_pre_tool_use") == [OWNER]


def test_a_departure_is_a_timeline_message_then_the_tools_that_went(tmp_path: Path) -> None:
    context = _context(tmp_path)
    seen: list[dict[str, Any]] = []
    context.events.subscribe(lambda event: seen.append(dict(event)))

    announce_departure(context, OWNER, "warning", "extension project:lint failed: boom", ["lint"])

    assert [event["type"] for event in seen] == ["session.warning", "session.tools_updated"]
    assert seen[0]["data"] == {
        "warningType": "extension",
        "message": "extension project:lint failed: boom",
        "extensionId": OWNER,
    }
    assert seen[1]["data"] == {"removed": ["lint"], "extensionId": OWNER}
    assert seen[1]["ephemeral"] is True


def test_a_departure_without_tools_is_only_the_timeline_message(tmp_path: Path) -> None:
    context = _context(tmp_path)
    seen: list[dict[str, Any]] = []
    context.events.subscribe(lambda event: seen.append(dict(event)))

    announce_departure(context, OWNER, "info", "extension project:lint detached from the session", [])

    assert [(event["type"], event["data"].get("infoType")) for event in seen] == [("session.info", "extension")]
