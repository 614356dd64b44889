"""Action envelopes: the server's sequence, its replay buffer, and the host events they come from.

Every state change a client can see is an action envelope ``{serverSeq, action, origin}``:
``serverSeq`` counts up by one for each, across all sessions of the server; ``origin`` is
``{clientId, clientSeq}`` for an action a client dispatched, ``None`` for one the server made.
:class:`ActionLog` numbers them and keeps the last :data:`MAX_REPLAY_ACTIONS` for
``reconnect``; :class:`EventMapper` turns one session's host events (see ``docs/sessions.md``, "Turns and
agents") into the protocol's session actions:

==============================  ==================================================
host event                      actions
==============================  ==================================================
``user.message``                ``session/turnComplete`` of the turn before, if one
                                is open, then ``session/turnStarted`` (the client's
                                own turn id when a client started it)
``assistant.message_delta``     ``session/responsePart`` (markdown) once, then
                                ``session/delta``
``assistant.message``           ``session/responsePart`` (markdown) unless streamed;
                                ``session/toolCallStart`` per tool request
``permission.requested``        ``session/permissionRequest`` (not for a hook's own
                                decision)
``permission.completed``        ``session/permissionResolved`` (unless a client
                                resolved it: its action is the envelope)
``tool.execution_start``        ``session/toolCallReady`` (running)
``tool.execution_complete``     ``session/toolCallComplete``; the decisions of the
                                call's pre-tool hooks (``hook.start``/``hook.end``
                                of ``on_pre_tool_use``) ride in its result's
                                ``_meta.hookDecisions``: ``[{extension, hook,
                                decision, outcome, error?}]``, one per hook that
                                decided, failed or timed out
``session.error``               ``session/error`` (ends the turn)
``abort``                       ``session/turnCancelled`` (a cancelled run)
``session.idle``                ``session/turnComplete``
``session.canvas.opened``       ``session/canvasOpened``, in a turn or not (see
/ ``closed``                    :mod:`~extension_host.serve.canvas_routes`)
==============================  ==================================================

A subagent's events (``agentId``) belong to the turn whose ``task`` call runs it: its tool
calls are tool calls of that turn (shown as ``tool (agent)``) and its permission requests are
the turn's; its prompt, its text and its ``subagent.*`` events make no action (its answer is
the ``task`` call's result).

Other events change nothing a client's state shows and make no action. This module knows
events and actions, not clients, transports or the host.
"""

from __future__ import annotations

import itertools
import json
from collections import OrderedDict, deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from .canvas_routes import CANVAS_EVENTS, CanvasDescriber, canvas_action
from .contents import ContentStore

__all__ = [
    "MAX_REPLAY_ACTIONS",
    "MAX_REPLAY_BYTES",
    "MAX_RESULT_CHARS",
    "ActionLog",
    "EventMapper",
]

MAX_REPLAY_ACTIONS: Final = 100_000
"""Action envelopes the server keeps for ``reconnect``; a client further behind gets snapshots."""
MAX_REPLAY_BYTES: Final = 32 * 1024 * 1024
"""Estimated size of the envelopes kept for ``reconnect``: a full replay fits in one message."""
MAX_RESULT_CHARS: Final = 16 * 1024
"""Characters of a tool's result an action carries (cut beyond, saying how much): clients see
the gist, the agent got it whole, and the session's log keeps it. With a content store, a
longer result is also kept there whole and the action carries a ``resource`` part naming its
URI, which ``resourceRead`` answers."""
_ENVELOPE_BYTES: Final = 160
"""What an envelope's keys, ids and numbers take, about."""
_FROM_SUBAGENTS: Final = frozenset(
    {
        "permission.requested",
        "permission.completed",
        "assistant.message",
        "tool.execution_start",
        "tool.execution_complete",
    }
)
"""The events of a subagent's child session that make actions, in the parent's turn: its tool
calls and what a client may have to answer. Its text ends in the ``task`` call's result."""
_MAX_REMEMBERED: Final = 1024
"""Client turn ids and streamed parts remembered per session (older ones fall back to ids
from the events)."""
_PRE_TOOL_HOOK: Final = "on_pre_tool_use"
"""The hook point whose decisions a tool call's result carries (allow, deny, ask, modify)."""
_MAX_INPUT_CHARS: Final = 4096
"""Tool input shown in a tool call's ``toolInput``; the full arguments stay in the session log."""

Action = dict[str, Any]
Envelope = dict[str, Any]
Origin = dict[str, Any]


class ActionLog:
    """The server's ``serverSeq`` and the last envelopes: at most :data:`MAX_REPLAY_ACTIONS`
    of them, of at most :data:`MAX_REPLAY_BYTES` (estimated) together."""

    def __init__(self, capacity: int = MAX_REPLAY_ACTIONS, max_bytes: int = MAX_REPLAY_BYTES) -> None:
        self._buffer: deque[Envelope] = deque()
        self._sizes: deque[int] = deque()
        self._capacity = capacity
        self._max_bytes = max_bytes
        self._bytes = 0
        self.server_seq = 0
        """The ``serverSeq`` of the last envelope made (0 before any)."""

    def append(self, action: Action, origin: dict[str, Any] | None = None) -> Envelope:
        """Number ``action`` and keep it (forgetting the oldest beyond the bounds); its envelope."""
        self.server_seq += 1
        envelope = {"serverSeq": self.server_seq, "action": action, "origin": origin}
        size = _estimate(action)
        self._buffer.append(envelope)
        self._sizes.append(size)
        self._bytes += size
        while len(self._buffer) > self._capacity or (self._bytes > self._max_bytes and len(self._buffer) > 1):
            self._buffer.popleft()
            self._bytes -= self._sizes.popleft()
        return envelope

    def kept(self) -> Iterator[Envelope]:
        """The envelopes kept, oldest first."""
        return iter(self._buffer)

    def since(self, last_seen: int) -> Iterator[Envelope] | None:
        """The envelopes after ``last_seen``, oldest first; ``None`` when some of them are no
        longer kept (or ``last_seen`` is from the future: another server's)."""
        if last_seen > self.server_seq or last_seen < 0:
            return None
        oldest = self._buffer[0]["serverSeq"] if self._buffer else self.server_seq + 1
        if last_seen + 1 < oldest:
            return None
        # islice walks the deque once; indexing it would cost a walk per envelope.
        return itertools.islice(self._buffer, last_seen + 1 - oldest, None)


@dataclass
class EventMapper:
    """Turns one session's host events into its protocol actions (see the module's table)."""

    session: str
    """The session's URI, put in every action."""
    contents: ContentStore | None = None
    """Where a tool result longer than :data:`MAX_RESULT_CHARS` is kept whole (none: only cut)."""
    describe_canvas: CanvasDescriber | None = None
    """What an opened canvas's declaration adds to its ``session/canvasOpened``."""
    turn_id: str | None = None
    """The protocol turn open now, if any."""
    _client_turns: OrderedDict[str, tuple[str, Action | None, Origin | None]] = field(default_factory=OrderedDict)
    _client_resolved: set[str] = field(default_factory=set)
    _streamed: OrderedDict[str, None] = field(default_factory=OrderedDict)
    _calls: dict[str, dict[str, Any]] = field(default_factory=dict)
    _agents: OrderedDict[str, str] = field(default_factory=OrderedDict)
    """Subagents' names by their ``agentId``, for their tool calls' display names."""
    _permissions: set[str] = field(default_factory=set)
    _hook_runs: OrderedDict[Any, str] = field(default_factory=OrderedDict)
    """The tool call each running pre-tool hook invocation is about, by ``hookInvocationId``."""

    def claim_turn(
        self, message_id: str, turn_id: str, action: Action | None = None, origin: Origin | None = None
    ) -> None:
        """The prompt ``message_id`` is the turn a client started as ``turn_id``: its
        ``user.message`` opens that turn with the client's ``action`` and ``origin`` (none when
        ``action`` is ``None``)."""
        self._client_turns[message_id] = (turn_id, action, origin)
        while len(self._client_turns) > _MAX_REMEMBERED:
            self._client_turns.popitem(last=False)

    def client_resolved(self, request_id: str) -> None:
        """A client resolved ``request_id``: its action is the envelope, not ``permission.completed``."""
        self._client_resolved.add(request_id)

    def end_turn(self) -> str | None:
        """Close the open turn without an action (a client's cancel was the envelope); its id."""
        turn_id, self.turn_id = self.turn_id, None
        self._calls.clear()
        return turn_id

    def map(self, event: Mapping[str, Any]) -> list[tuple[Action, Origin | None]]:
        """The actions ``event`` makes, in order (often none), each with its origin: the
        client's for the turn a client started, else ``None``."""
        data = event.get("data")
        if not isinstance(data, dict):
            return []
        agent_id = event.get("agentId")
        if agent_id:
            kind = event.get("type")
            if kind == "subagent.started":
                self._agents[str(agent_id)] = str(data.get("agentName", "subagent"))
                while len(self._agents) > _MAX_REMEMBERED:
                    self._agents.popitem(last=False)
            if kind not in _FROM_SUBAGENTS:
                # its prompt and text are the task tool's business; its answer is the call's
                return [(action, None) for action in self._outside_turns(kind, data)]
            if kind == "assistant.message":
                data = {"toolRequests": data.get("toolRequests"), "agent": self._agents.get(str(agent_id))}
        if event.get("type") == "user.message":
            return self._user_message(data)
        return [(action, None) for action in self._map(event.get("type"), data)]

    def _map(self, kind: Any, data: dict[str, Any]) -> list[Action]:
        turn_id = self.turn_id
        if turn_id is None:
            return self._outside_turns(kind, data)  # of a turn's actions, none
        base = {"session": self.session, "turnId": turn_id}
        if kind == "assistant.message_delta":
            part_id = str(data.get("messageId", ""))
            actions: list[Action] = []
            if part_id not in self._streamed:
                self._remember_streamed(part_id)
                actions.append(
                    {"type": "session/responsePart", **base, "part": {"kind": "markdown", "id": part_id, "content": ""}}
                )
            actions.append(
                {"type": "session/delta", **base, "partId": part_id, "content": str(data.get("deltaContent", ""))}
            )
            return actions
        if kind == "assistant.message":
            return self._assistant_message(base, data)
        if kind == "permission.requested":
            return self._permission_requested(base, data)
        if kind == "permission.completed":
            request_id = str(data.get("requestId"))
            if request_id not in self._permissions:
                return []
            self._permissions.discard(request_id)
            if request_id in self._client_resolved:
                self._client_resolved.discard(request_id)
                return []
            result = data.get("result")
            approved = isinstance(result, dict) and result.get("kind") == "approved"
            return [{"type": "session/permissionResolved", **base, "requestId": request_id, "approved": approved}]
        if kind == "tool.execution_start":
            call = self._calls.get(str(data.get("toolCallId")))
            if call is None or call["ready"]:
                return []
            call["ready"] = True
            return [self._ready(base, call, data.get("arguments"))]
        if kind == "tool.execution_complete":
            return self._tool_complete(base, data)
        if kind == "hook.start" or kind == "hook.end":
            self._hook(kind, data)
            return []
        if kind == "session.error":
            self.end_turn()
            error = {"errorType": str(data.get("errorType", "error")), "message": str(data.get("message", ""))}
            return [{"type": "session/error", **base, "error": error}]
        if kind == "abort":
            self.end_turn()  # a cancelled run; its session.idle then finds no turn
            return [{"type": "session/turnCancelled", **base}]
        if kind == "session.idle":
            self.end_turn()
            return [{"type": "session/turnComplete", **base}]
        return self._outside_turns(kind, data)

    def _outside_turns(self, kind: Any, data: dict[str, Any]) -> list[Action]:
        """The actions of an event that belongs to no turn: a canvas's (only events that make
        no turn's action reach here, so the common ones never pay for this)."""
        if kind not in CANVAS_EVENTS:
            return []
        action = canvas_action(self.session, kind, data, self.describe_canvas)
        return [action] if action is not None else []

    def _user_message(self, data: dict[str, Any]) -> list[tuple[Action, Origin | None]]:
        actions: list[tuple[Action, Origin | None]] = []
        if self.turn_id is not None:
            actions.append(({"type": "session/turnComplete", "session": self.session, "turnId": self.end_turn()}, None))
        message_id = str(data.get("messageId", ""))
        claimed = self._client_turns.pop(message_id, None)
        if claimed is not None:
            self.turn_id, action, origin = claimed
            if action is not None:
                actions.append((action, origin))
            return actions
        self.turn_id = message_id
        started = {
            "type": "session/turnStarted",
            "session": self.session,
            "turnId": message_id,
            "userMessage": {"text": str(data.get("content", ""))},
        }
        actions.append((started, None))
        return actions

    def _assistant_message(self, base: dict[str, Any], data: dict[str, Any]) -> list[Action]:
        actions: list[Action] = []
        part_id = str(data.get("messageId", ""))
        content = data.get("content")
        if part_id in self._streamed:
            del self._streamed[part_id]
        elif isinstance(content, str) and content:
            actions.append(
                {
                    "type": "session/responsePart",
                    **base,
                    "part": {"kind": "markdown", "id": part_id, "content": content},
                }
            )
        requests = data.get("toolRequests")
        for request in requests if isinstance(requests, list) else []:
            if not isinstance(request, dict) or not isinstance(request.get("toolCallId"), str):
                continue
            name = str(request.get("name", ""))
            call_id = request["toolCallId"]
            self._calls[call_id] = {"toolCallId": call_id, "toolName": name, "ready": False, "confirmed": "not-needed"}
            shown = f"{name} ({data['agent']})" if data.get("agent") else name  # a subagent's call
            actions.append(
                {"type": "session/toolCallStart", **base, "toolCallId": call_id, "toolName": name, "displayName": shown}
            )
        return actions

    def _permission_requested(self, base: dict[str, Any], data: dict[str, Any]) -> list[Action]:
        if data.get("resolvedByHook"):
            return []  # a hook's own decision: nothing for a client to answer
        request_id = str(data.get("requestId"))
        asked = data.get("permissionRequest")
        asked = asked if isinstance(asked, dict) else {}
        request: dict[str, Any] = {"requestId": request_id, "permissionKind": str(asked.get("kind", "custom"))}
        for source, target in (("toolCallId", "toolCallId"), ("toolName", "toolName"), ("hookMessage", "message")):
            if isinstance(asked.get(source), str):
                request[target] = asked[source]
        if "toolArgs" in asked:
            request["toolInput"] = _input_text(asked["toolArgs"])
        call = self._calls.get(str(asked.get("toolCallId")))
        if call is not None:
            call["confirmed"] = "user-action"
        self._permissions.add(request_id)
        return [{"type": "session/permissionRequest", **base, "request": request}]

    def _tool_complete(self, base: dict[str, Any], data: dict[str, Any]) -> list[Action]:
        call = self._calls.pop(str(data.get("toolCallId")), None)
        if call is None:
            return []  # a second result for the same call, or a call outside the agent's turn
        actions: list[Action] = []
        if not call["ready"]:
            actions.append(self._ready(base, call, None))  # denied before it ran: it never started
        result = data.get("result")
        result = result if isinstance(result, dict) else {}
        text = result.get("content")
        outcome: dict[str, Any] = {
            "success": bool(data.get("success")),
            "pastTenseMessage": f"Ran {call['toolName']}",
            "content": self._result_content(call["toolCallId"], text if isinstance(text, str) else ""),
        }
        error = data.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            outcome["error"] = {"message": error["message"]}
        if call.get("hooks"):
            outcome["_meta"] = {"hookDecisions": call["hooks"]}
        actions.append(
            {"type": "session/toolCallComplete", **base, "toolCallId": call["toolCallId"], "result": outcome}
        )
        return actions

    def _hook(self, kind: str, data: dict[str, Any]) -> None:
        """Remember which call a pre-tool hook run is about (``hook.start``); at its
        ``hook.end``, note on that call who decided what (or failed)."""
        if data.get("hook") != _PRE_TOOL_HOOK:
            return
        invocation = data.get("hookInvocationId")
        if kind == "hook.start":
            given = data.get("input")
            calls = given.get("toolCalls") if isinstance(given, dict) else None
            first = calls[0] if isinstance(calls, list) and calls and isinstance(calls[0], dict) else {}
            if isinstance(first.get("id"), str) and first["id"] in self._calls:
                self._hook_runs[invocation] = first["id"]
                while len(self._hook_runs) > _MAX_REMEMBERED:
                    self._hook_runs.popitem(last=False)
            return
        call = self._calls.get(self._hook_runs.pop(invocation, ""))
        ran = data.get("calls")
        if call is None or not isinstance(ran, list):
            return
        for one in ran:
            if not isinstance(one, dict) or (one.get("decision") is None and one.get("outcome") == "ok"):
                continue  # it ran and had no say
            decided: dict[str, Any] = {
                "extension": str(one.get("extensionId", "")),
                "hook": _PRE_TOOL_HOOK,
                "decision": one.get("decision"),
                "outcome": str(one.get("outcome", "")),
            }
            error = one.get("error")
            if isinstance(error, dict) and isinstance(error.get("message"), str):
                decided["error"] = error["message"]
            call.setdefault("hooks", []).append(decided)

    def _result_content(self, call_id: str, text: str) -> list[dict[str, Any]]:
        content: list[dict[str, Any]] = [{"type": "text", "text": _cut(text, MAX_RESULT_CHARS)}]
        if len(text) <= MAX_RESULT_CHARS or self.contents is None:
            return content
        try:
            # Named by the call, so replaying the same events (fetchTurns) names the same piece.
            uri = self.contents.put(self.session, text, "text/plain", name=f"tool-{call_id}")
        except ValueError:
            return content  # larger than the whole store: the cut text is all a client gets
        size = len(text.encode("utf-8", "surrogatepass"))
        content.append({"type": "resource", "uri": uri, "contentType": "text/plain", "sizeHint": size})
        return content

    def _ready(self, base: dict[str, Any], call: dict[str, Any], arguments: Any) -> Action:
        return {
            "type": "session/toolCallReady",
            **base,
            "toolCallId": call["toolCallId"],
            "invocationMessage": f"Running {call['toolName']}",
            "toolInput": _input_text(arguments) if arguments is not None else None,
            "confirmed": call["confirmed"],
        }

    def _remember_streamed(self, part_id: str) -> None:
        self._streamed[part_id] = None
        while len(self._streamed) > _MAX_REMEMBERED:
            self._streamed.popitem(last=False)


def _estimate(action: Action) -> int:
    """About the bytes of an action's JSON: a fixed cost, plus its strings two levels down (where
    the long ones are: a prompt, a part's text, a tool's result)."""
    size = _ENVELOPE_BYTES
    for value in action.values():
        if isinstance(value, str):
            size += len(value)
        elif isinstance(value, dict):
            for inner in value.values():
                if isinstance(inner, str):
                    size += len(inner)
                elif isinstance(inner, list):
                    size += sum(len(item.get("text", "")) for item in inner if isinstance(item, dict))
    return size


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}…[truncated: {len(text) - limit} characters]"


def _input_text(arguments: Any) -> str:
    text = json.dumps(arguments, ensure_ascii=False, default=str)
    return _cut(text, _MAX_INPUT_CHARS)
