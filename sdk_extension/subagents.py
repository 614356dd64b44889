"""Child sessions: which joined session a subagent's requests belong to, and what its agent may call.

A custom agent runs as a child session with an id of its own, which is not a session this
extension joined. The host announces each child with a ``subagent.started`` event on the
parent's stream (the child's id in ``data.remoteSessionId``, else the event's ``agentId``; the
agent in ``data.agentName``) before the child's first request. :class:`ChildSessions` keeps the
three maps (``child_to_parent``, ``child_to_agent``, ``subagent_instances``) and resolves every
incoming request through :meth:`ChildSessions.resolve_session`:

1. a session this extension joined: itself, not a child;
2. a child whose parent is joined: the parent, as a child;
3. a child whose parent is gone: ``parent session {parentId} for child {childId} not found``;
4. anything else: ``unknown session {id}``.

A request may also name the parent and carry the child's id beside it (the ``agentId`` of the
event envelope or of a hook's input, as Copilot CLI sends them); :meth:`ChildSessions.route`
takes both forms. ``subagent.completed``/``failed`` remove the instance only: requests still in
flight keep resolving. Leaving or deleting a parent forgets its children; the end of the
connection forgets everything.

The extension's own :class:`CustomAgent` declarations decide which of its tools a child may call
(:meth:`ChildSessions.allows`; tool calls only). Maps are read and written under one lock, held
for the map operation alone and never while a handler runs. This module knows ids, events and
allowlists; not the connection, nor how handlers run.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Generic, TypeVar

__all__ = [
    "SUBAGENT_EVENTS",
    "ChildSessions",
    "CustomAgent",
    "SubagentInstance",
    "not_supported",
]

SUBAGENT_EVENTS: Final = frozenset({"subagent.started", "subagent.completed", "subagent.failed"})
"""The events that start and end a child session's instance."""

S = TypeVar("S")


def not_supported(tool_name: str) -> str:
    """What a child is told when its agent's allowlist leaves ``tool_name`` out."""
    return f"Tool '{tool_name}' is not supported by this client instance."


@dataclass(frozen=True, slots=True)
class CustomAgent:
    """An agent this extension declares at join (``join_session(custom_agents=[...])``).

    ``tools`` is its allowlist of tools: ``None`` every tool, ``[]`` none, a list only those.
    The definitions of this extension's own tools it names travel with it
    (``toolDefinitions``), so the child's model is offered them.

    Raises:
        TypeError: a field has the wrong type.
        ValueError: the name is empty.
    """

    name: str
    prompt: str
    display_name: str | None = None
    description: str | None = None
    tools: Sequence[str] | None = None
    """Kept as a tuple."""
    model: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a custom agent needs a name, got {self.name!r}")
        if not isinstance(self.prompt, str):
            raise TypeError(f"custom agent {self.name!r}: prompt must be a string")
        for field_name in ("display_name", "description", "model"):
            value = getattr(self, field_name)
            if value is not None and not isinstance(value, str):
                raise TypeError(f"custom agent {self.name!r}: {field_name} must be a string or None")
        if self.tools is not None:
            if isinstance(self.tools, str):
                raise TypeError(f"custom agent {self.name!r}: tools takes a list of names, e.g. ['save']")
            tools = tuple(self.tools)
            if not all(isinstance(name, str) and name for name in tools):
                raise TypeError(f"custom agent {self.name!r}: tools must be tool names")
            object.__setattr__(self, "tools", tools)

    def allows(self, tool_name: str) -> bool:
        """Whether its allowlist lets a child call ``tool_name``."""
        return self.tools is None or tool_name in self.tools

    def to_wire(self, own_tools: Mapping[str, Any]) -> dict[str, Any]:
        """Its ``customAgents`` entry in ``session.resume`` (camelCase; unset fields left out);
        ``own_tools`` (name → ``Tool``) gives the ``toolDefinitions`` of the tools its allowlist
        names (none when it names none)."""
        wire: dict[str, Any] = {"name": self.name, "prompt": self.prompt}
        if self.display_name is not None:
            wire["displayName"] = self.display_name
        if self.description is not None:
            wire["description"] = self.description
        if self.model is not None:
            wire["model"] = self.model
        if self.tools is not None:
            wire["tools"] = list(self.tools)
            wire["toolDefinitions"] = [
                own_tools[name].to_wire() for name in dict.fromkeys(self.tools) if name in own_tools
            ]
        return wire


@dataclass(frozen=True, slots=True)
class SubagentInstance:
    """One running subagent, from its ``subagent.started`` event."""

    agent_name: str
    tool_call_id: str
    child_session_id: str
    started_at: datetime


class ChildSessions(Generic[S]):
    """The joined sessions, their children, and this extension's custom agents (see the module)."""

    def __init__(self, agents: Iterable[CustomAgent] = ()) -> None:
        self._lock = threading.Lock()
        self._sessions: dict[str, S] = {}
        self.child_to_parent: dict[str, str] = {}
        self.child_to_agent: dict[str, str] = {}
        self.subagent_instances: dict[str, dict[str, SubagentInstance]] = {}
        self.agents: Final = {agent.name: agent for agent in agents}

    # -- sessions --------------------------------------------------------------------------

    def register(self, session_id: str, session: S) -> None:
        """``session`` is joined under ``session_id``: requests for it and its children resolve."""
        with self._lock:
            self._sessions = {**self._sessions, session_id: session}

    def unregister(self, session_id: str) -> None:
        """The session was left or deleted: it no longer resolves, and its children are forgotten."""
        with self._lock:
            if session_id in self._sessions:
                self._sessions = {k: v for k, v in self._sessions.items() if k != session_id}
            self._forget_children(session_id)

    def forget_children(self, parent_id: str) -> None:
        """The parent ended: forget its children and their instances (it stays joined)."""
        with self._lock:
            self._forget_children(parent_id)

    def clear(self) -> None:
        """The connection ended: forget every session, child and instance."""
        with self._lock:
            self._sessions = {}
            self.child_to_parent.clear()
            self.child_to_agent.clear()
            self.subagent_instances.clear()

    def _forget_children(self, parent_id: str) -> None:
        children = [child for child, parent in self.child_to_parent.items() if parent == parent_id]
        for child in children:
            del self.child_to_parent[child]
            self.child_to_agent.pop(child, None)
        self.subagent_instances.pop(parent_id, None)

    # -- events ----------------------------------------------------------------------------

    def on_event(self, parent_id: str, event: Mapping[str, Any]) -> None:
        """Take in a ``subagent.*`` event that arrived on ``parent_id``'s stream; malformed
        ones (no child id, no tool call id) change nothing."""
        data = event.get("data")
        if not isinstance(data, Mapping):
            return
        tool_call_id = data.get("toolCallId")
        if event.get("type") == "subagent.started":
            child = data.get("remoteSessionId") or event.get("agentId")
            agent = data.get("agentName")
            if not isinstance(child, str) or not child or not isinstance(tool_call_id, str):
                return
            instance = SubagentInstance(
                agent if isinstance(agent, str) else "", tool_call_id, child, _timestamp(event.get("timestamp"))
            )
            with self._lock:
                earlier = self.child_to_parent.get(child)
                if earlier is not None and earlier != parent_id:
                    # The id now names another parent's child: the old parent's instance of it ends.
                    old = self.subagent_instances.get(earlier, {})
                    for key in [k for k, v in old.items() if v.child_session_id == child]:
                        del old[key]
                    if not old:
                        self.subagent_instances.pop(earlier, None)
                self.child_to_parent[child] = parent_id
                self.child_to_agent[child] = instance.agent_name
                self.subagent_instances.setdefault(parent_id, {})[tool_call_id] = instance
        elif isinstance(tool_call_id, str):
            with self._lock:
                instances = self.subagent_instances.get(parent_id)
                if instances is not None:
                    instances.pop(tool_call_id, None)
                    if not instances:
                        del self.subagent_instances[parent_id]

    # -- resolution ------------------------------------------------------------------------

    def resolve_session(self, session_id: str) -> tuple[S | None, bool, str | None]:
        """``(session, is_child, error)`` for a request's ``session_id`` (child sessions resolved to their parent)."""
        session = self._sessions.get(session_id)  # one read of a map replaced whole under the lock
        if session is not None:
            return session, False, None
        with self._lock:
            parent_id = self.child_to_parent.get(session_id)
            parent = self._sessions.get(parent_id) if parent_id is not None else None
        if parent is not None:
            return parent, True, None
        if parent_id is not None:
            return None, False, f"parent session {parent_id} for child {session_id} not found"
        return None, False, f"unknown session {session_id}"

    def route(self, session_id: str, agent_id: Any = None) -> tuple[S | None, str | None, str | None]:
        """``(session, child_id, error)`` for a request naming ``session_id``, and maybe the
        child it comes from as ``agent_id`` (the parent's id with the child's beside it).
        ``child_id`` is ``None`` when the request is the session's own."""
        if isinstance(agent_id, str) and agent_id != session_id and agent_id not in self._sessions:
            with self._lock:
                known = agent_id in self.child_to_parent
            if known:
                session, _, error = self.resolve_session(agent_id)
                return session, (agent_id if error is None else None), error
        session, is_child, error = self.resolve_session(session_id)
        return session, (session_id if is_child else None), error

    def allows(self, child_id: str, tool_name: str) -> bool:
        """Whether the child's agent may call ``tool_name``: agents this extension did not
        declare may (the host keeps their allowlists)."""
        with self._lock:
            agent_name = self.child_to_agent.get(child_id)
        agent = self.agents.get(agent_name) if agent_name is not None else None
        return agent is None or agent.allows(tool_name)


def _timestamp(value: Any) -> datetime:
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            pass
    return datetime.now(UTC)
