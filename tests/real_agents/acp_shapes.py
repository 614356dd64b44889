"""One ACP client script run against an agent, and the shapes two agents' runs are compared by.

:func:`run_client` runs ``acp_client.mjs`` (the official TypeScript SDK's client) against an
agent's command line, under the workspace's reaper, and parses what it printed into a
:class:`Transcript`: every message both ways, each step's answer, each client method the agent
called.

:func:`shapes` reduces a transcript to what two agents can share while their values differ:
key sets, ``session/update`` kinds and each kind's field set, content types, ``stopReason``
values, the kinds of a permission request's options. :func:`unexplained` compares two agents'
shapes against :data:`INTENDED`, the reviewed table of differences (each with its reason), and
returns every difference outside it, and every entry of the table that no longer differs.
Values (ids, texts, paths, numbers) are never compared.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from real_agents.programs import ACP_SDK
from real_agents.runner import AgentRun, Workspace

__all__ = [
    "CLIENT",
    "INTENDED",
    "Difference",
    "Shapes",
    "Transcript",
    "run_client",
    "shapes",
    "unexplained",
]

CLIENT: Final = Path(__file__).with_name("acp_client.mjs")

Shapes = dict[str, Any]


@dataclass
class Transcript:
    """What the client printed: messages (``("sent" | "received", message)``), step answers,
    client calls, and whether it finished every step."""

    run: AgentRun
    messages: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    ok: bool = False

    @classmethod
    def parse(cls, run: AgentRun) -> Transcript:
        transcript = cls(run)
        for line in run.json_lines():
            if "sent" in line or "received" in line:
                direction = "sent" if "sent" in line else "received"
                transcript.messages.append((direction, line[direction]))
            elif "step" in line:
                transcript.steps.append(line)
            elif "call" in line:
                transcript.calls.append(line)
            elif line.get("done"):
                transcript.ok = bool(line.get("ok"))
        return transcript

    def describe(self) -> str:
        """The run, for a failing test's message."""
        return self.run.describe()

    def result(self, step: int) -> Any:
        """Step ``step``'s answer (fails, with the run, when the step failed or never ran)."""
        found = [entry for entry in self.steps if entry["step"] == step]
        assert found and "result" in found[0], f"step {step} has no result\n{self.describe()}"
        return found[0]["result"]

    def updates(self, step: int) -> list[dict[str, Any]]:
        """The ``session/update`` payloads received while step ``step`` ran (between the
        request it sent and its answer), in order."""
        first, last = self._span(step)
        return [
            message["params"]["update"]
            for direction, message in self.messages[first:last]
            if direction == "received" and message.get("method") == "session/update"
        ]

    def permission_requests(self) -> list[dict[str, Any]]:
        return [call["params"] for call in self.calls if call["call"] == "session/request_permission"]

    def _span(self, step: int) -> tuple[int, int]:
        """Where step ``step``'s request and its answer are in :attr:`messages`: every step but
        ``restart`` sends one request, in step order (ids restart with each agent process)."""
        requests = [n for n, (d, m) in enumerate(self.messages) if d == "sent" and "method" in m and "id" in m]
        sending = [entry["step"] for entry in self.steps if entry["do"] != "restart"]
        first = requests[sending.index(step)]
        request_id = self.messages[first][1]["id"]
        for n in range(first + 1, len(self.messages)):
            direction, message = self.messages[n]
            if direction == "received" and message.get("id") == request_id and "method" not in message:
                return first, n
        raise AssertionError(f"step {step} has no answer\n{self.describe()}")


def run_client(
    workspace: Workspace,
    sdk: Path,
    command: Sequence[str],
    steps: Sequence[Mapping[str, Any]],
    env: Mapping[str, str],
    timeout: float = 90,
) -> Transcript:
    """Run the client script with ``steps`` against ``command`` (started in the project)."""
    script = {
        "sdk": str(ACP_SDK.entry_path(sdk)),
        "command": list(command),
        "cwd": str(workspace.project),
        "timeout_ms": int(timeout * 1000),
        "request_timeout_ms": int(timeout * 1000 * 0.6),
        "steps": list(steps),
    }
    path = workspace.root / "acp-client.json"
    path.write_text(json.dumps(script))
    node = shutil.which("node")
    assert node is not None
    run = workspace.run([node, str(CLIENT), str(path)], env=env, timeout=timeout + 10)
    return Transcript.parse(run)


# Shapes.


def _keys(value: Any) -> list[str]:
    return sorted(value) if isinstance(value, dict) else []


def _merge(into: dict[str, set[str]], key: str, values: Iterable[str]) -> None:
    into.setdefault(key, set()).update(values)


COMPARED_UPDATES: Final = ("agent_message_chunk", "tool_call", "tool_call_update", "user_message_chunk")
"""The ``session/update`` kinds whose field sets are compared (what both agents send)."""


def shapes(transcript: Transcript, prompts: Sequence[int], load: int, initialize: int = 0, new: int = 1) -> Shapes:
    """The comparable shapes of a run of the shared script: ``prompts`` are the steps that
    prompt, ``load`` the one that loads; see the module's doc."""
    found: Shapes = {}
    init = transcript.result(initialize)
    found["initialize.keys"] = _keys(init)
    found["initialize.protocolVersion"] = init.get("protocolVersion")
    capabilities = init.get("agentCapabilities", {})
    found["initialize.agentCapabilities.keys"] = _keys(capabilities)
    found["initialize.agentCapabilities.loadSession"] = capabilities.get("loadSession")
    found["initialize.agentCapabilities.promptCapabilities.keys"] = _keys(capabilities.get("promptCapabilities"))
    found["initialize.agentInfo.keys"] = _keys(init.get("agentInfo"))
    found["initialize.authMethods.type"] = type(init.get("authMethods")).__name__
    found["new.keys"] = _keys(transcript.result(new))
    fields: dict[str, set[str]] = {}
    for step in prompts:
        updates = transcript.updates(step)
        found[f"prompt{step}.stopReason"] = stop = transcript.result(step).get("stopReason")
        if stop != "cancelled":  # what arrives before a cancel lands is a race, not a shape
            found[f"prompt{step}.kinds"] = sorted({u["sessionUpdate"] for u in updates} & set(COMPARED_UPDATES))
        for update in updates:
            kind = update["sessionUpdate"]
            if kind in COMPARED_UPDATES:
                _merge(fields, f"update.{kind}.fields", update)
                content = update.get("content")
                if isinstance(content, dict):
                    _merge(fields, f"update.{kind}.content.type", [str(content.get("type"))])
                elif isinstance(content, list):
                    _merge(fields, f"update.{kind}.content[].type", [str(item.get("type")) for item in content])
                if kind in ("tool_call", "tool_call_update") and "status" in update:
                    _merge(fields, f"update.{kind}.status", [update["status"]])
    found.update({key: sorted(values) for key, values in fields.items()})
    replayed = transcript.updates(load)
    found["load.kinds"] = sorted({update["sessionUpdate"] for update in replayed} & set(COMPARED_UPDATES))
    found["load.keys"] = _keys(transcript.result(load))
    requests = transcript.permission_requests()
    found["permission.count"] = len(requests)
    if requests:
        found["permission.keys"] = sorted(set().union(*(_keys(r) for r in requests)))
        found["permission.toolCall.keys"] = sorted(set().union(*(_keys(r.get("toolCall")) for r in requests)))
        found["permission.option.keys"] = sorted({key for r in requests for option in r["options"] for key in option})
        found["permission.option.kinds"] = sorted({option["kind"] for r in requests for option in r["options"]})
    return found


@dataclass(frozen=True)
class Difference:
    """An intended difference: at ``path``, Copilot CLI shows ``copilot``, this host ``ours``."""

    path: str
    copilot: Any
    ours: Any
    reason: str


def unexplained(copilot: Shapes, ours: Shapes, intended: Sequence[Difference]) -> list[str]:
    """Every difference between the two agents' shapes that ``intended`` does not name with
    exactly these values, and every entry of ``intended`` that no longer differs so."""
    table = {difference.path: difference for difference in intended}
    problems = []
    for path in sorted(set(copilot) | set(ours)):
        theirs, mine = copilot.get(path), ours.get(path)
        if theirs == mine:
            if path in table:
                problems.append(f"{path}: no longer differs (both {mine!r}); remove it from the table")
            continue
        entry = table.get(path)
        if entry is None:
            problems.append(f"{path}: copilot {theirs!r}, extensions {mine!r}")
        elif (entry.copilot, entry.ours) != (theirs, mine):
            problems.append(
                f"{path}: copilot {theirs!r}, extensions {mine!r}; the table says {entry.copilot!r}, {entry.ours!r}"
            )
    problems += [
        f"{path}: in the table but in neither run" for path in table if path not in copilot and path not in ours
    ]
    return problems


INTENDED: Final[tuple[Difference, ...]] = (
    Difference(
        "initialize.agentCapabilities.keys",
        ["auth", "loadSession", "mcpCapabilities", "promptCapabilities", "sessionCapabilities"],
        ["loadSession", "mcpCapabilities", "promptCapabilities", "sessionCapabilities"],
        "Copilot CLI offers logout (auth.logout) for its GitHub sign-in; the host has no sign-in",
    ),
    Difference(
        "new.keys",
        ["configOptions", "modes", "sessionId"],
        ["sessionId"],
        "Copilot CLI has session modes (agent, plan, autopilot) and an allow-all switch; the host's agent has neither",
    ),
    Difference(
        "load.keys",
        ["configOptions", "modes"],
        [],
        "the same as new.keys: no modes or options to report",
    ),
    Difference(
        "permission.option.kinds",
        ["allow_always", "allow_once", "reject_once"],
        ["allow_once", "reject_once"],
        "a hook's ask is asked for each call: the host remembers no approval, so it offers no allow_always",
    ),
    Difference(
        "permission.toolCall.keys",
        ["kind", "rawInput", "status", "title", "toolCallId"],
        ["content", "kind", "rawInput", "status", "title", "toolCallId"],
        "the host shows the asking hook's reason as the tool call's content; Copilot's own prompt has none",
    ),
    Difference(
        "update.tool_call.fields",
        ["kind", "locations", "rawInput", "sessionUpdate", "status", "title", "toolCallId"],
        ["kind", "rawInput", "sessionUpdate", "status", "title", "toolCallId"],
        "locations come from Copilot's file-reading tool (view); an extension's tool names no file",
    ),
    Difference(
        "update.tool_call_update.status",
        ["completed", "failed"],
        ["completed", "failed", "in_progress"],
        "the host reports a tool as in_progress when it starts; Copilot goes from pending to the result",
    ),
)
"""The reviewed differences between ``copilot --acp`` (1.0.102) and ``extensions acp``, each with
its reason."""
