"""Subagents: the ``task`` tool, and the child session it runs for a custom agent.

The parent's agent delegates with the tool :data:`TASK_TOOL`, whose name and parameters are the
Copilot CLI's (``description``, ``prompt``, ``agent_type``, ``name``; ``model`` and ``mode``
optional). It is offered only while the session has custom agents
(:mod:`~extension_host.session.custom_agents`), with their names as ``agent_type``'s values. A
call runs one child session, inside the call (cancelling the parent's turn cancels it)::

    subagent.started (remoteSessionId, toolCallId, agentName, agentDisplayName)
    → subagent.selected (the tools it is offered)
    → subagent-start hooks (in the starting session; their context goes before the prompt)
    → system.message (the agent's prompt) → the child's run: user.message, its steps and tool
      calls, each through the host's pipeline with every hook point; when it answers without a
      tool call, the agent-stop hooks (inside the child), then the subagent-stop hooks (in the
      starting session): a ``block`` of either keeps it going, a subagent-stop
      ``modified_response`` is what the parent reads
    → subagent.completed (its final answer is the tool's result) or subagent.failed (error),
      with the tool calls it made and the tokens its model calls used

Every event of the child carries ``agentId`` (the child's id), so it reaches the parent's
listeners, the persisted log, clients and the timeline, while each model context keeps to its
own conversation. Inside the child (its :class:`~extension_host.events.AgentScope` is
current): hook inputs carry the child's session id and ``agentId``/``agentType``/
``parentAgentId``; a tool outside the agent's allowlist is refused with
:data:`NOT_SUPPORTED` and never runs; permission and user-input requests go to the session's
resolver as the parent's do; the ``task`` tool is there only if the allowlist allows it, and
nesting stops at :data:`MAX_DEPTH`. This module knows neither extensions nor the wire.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from extension_protocol.results import ToolResult
from extension_protocol.tools import Tool, ToolInvocation

from ..calls.dispatch import ToolOrigin
from ..errors import ExtensionHostError
from ..events import CURRENT_AGENT, AgentScope, EventLog, agent_scope
from ..outcomes import StopDecision, ToolCallResult
from .agents import Agent, OfferedTool, agent_model, agent_with_model
from .custom_agents import CustomAgent, offered_definitions
from .errors import PromptRejectedError, TurnAbortedError
from .turns import CallTool, ReportError, SubmitPrompt, TransformPrompt, TurnRunner

__all__ = ["MAX_DEPTH", "NOT_SUPPORTED", "TASK_TOOL", "ParentPipeline", "Subagents", "task_definition"]

TASK_TOOL: Final = "task"
MAX_DEPTH: Final = 3
"""Child sessions nested at most this deep (a child's child's child)."""
NOT_SUPPORTED: Final = "Tool '{name}' is not supported by this client instance."
"""What a child gets for a tool outside its agent's allowlist (the SDKs' text)."""
_MODES: Final = ("sync", "background")


def task_definition(agents: Mapping[str, CustomAgent]) -> OfferedTool:
    """The ``task`` tool as the model is offered it, listing ``agents``."""
    listed = "\n".join(f"- **{agent.name}**: {agent.description or agent.shown_name}" for agent in agents.values())
    description = (
        "Start a custom agent in a separate context window for a self-contained task. It works with its own "
        "instructions and tools and returns its final answer as this tool's result; give it complete context "
        "in the prompt.\n\nCustom agents:\n" + listed
    )
    parameters = {
        "type": "object",
        "properties": {
            "description": {"type": "string", "description": "3-5 word UI intent."},
            "prompt": {"type": "string", "description": "Task; include complete context."},
            "agent_type": {"type": "string", "enum": list(agents), "description": "Agent type."},
            "name": {"type": "string", "description": "Short agent name."},
            "model": {"type": "string", "description": "Optional model override."},
            "mode": {
                "type": "string",
                "enum": list(_MODES),
                "description": "sync waits; background also waits here: the answer is the result.",
            },
        },
        "required": ["name", "prompt", "agent_type", "description"],
    }
    return OfferedTool(TASK_TOOL, description, parameters)


@dataclass(frozen=True, slots=True)
class ParentPipeline:
    """What a child session runs through: the session's own pipeline, hooks and agent."""

    call_tool: CallTool
    submit_prompt: SubmitPrompt
    report_error: ReportError
    transform_prompt: TransformPrompt | None
    start_subagent: Callable[[AgentScope, CustomAgent], Awaitable[str | None]]
    """The subagent-start hooks: the context they put before the child's prompt."""
    stop_agent: Callable[[bool], Awaitable[StopDecision]]
    """The agent-stop hooks, run inside the child when it answers (``active``: a follow-up a
    stop hook asked for)."""
    stop_subagent: Callable[[AgentScope, CustomAgent, str, bool], Awaitable[StopDecision]]
    """The subagent-stop hooks on the child's answer (``active``: a follow-up they asked for)."""
    tools: Callable[[], Sequence[OfferedTool]]
    """The tools the session's own agent is offered now (without ``task``)."""
    agent: Callable[[], Agent | None]
    session_id: Callable[[], str]


class Subagents:
    """The ``task`` tool over a session's custom agents (see the module).

    Args:
        events: the session's event log (children's events go there too).
        agents: the session's custom agents now, by name.
        pipeline: the session's pipeline the children run through.
    """

    def __init__(
        self,
        events: EventLog,
        agents: Callable[[], Mapping[str, CustomAgent]],
        pipeline: ParentPipeline,
    ) -> None:
        self._events = events
        self._agents = agents
        self._pipeline = pipeline

    def tool(self) -> Tool:
        """The ``task`` tool the host registers (its offered definition is :meth:`offered`'s)."""
        definition = task_definition({})
        return Tool(TASK_TOOL, definition.description, self.run, dict(definition.parameters or {}))

    def offered(self) -> tuple[OfferedTool, ...]:
        """The tools the agent running now is offered: the session's, or, in a child session,
        those its agent allows; ``task`` among them while there are agents to start (and, in a
        child, its allowlist names it and nesting has room)."""
        scope = CURRENT_AGENT.get()
        agents = self._agents()
        tools = [tool for tool in self._pipeline.tools() if tool.name != TASK_TOOL or not agents]
        if scope is None:
            return (*tools, task_definition(agents)) if agents else tuple(tools)
        agent = agents.get(scope.agent_type)
        if agent is None:
            return ()
        offered = list(offered_definitions(agent, tools))
        if agents and agent.allows(TASK_TOOL) and scope.depth < MAX_DEPTH:
            offered.append(task_definition(agents))
        return tuple(offered)

    def refusal(self, name: str) -> str | None:
        """Why the agent running now may not call ``name`` (``None``: it may)."""
        scope = CURRENT_AGENT.get()
        if scope is None:
            return None
        agent = self._agents().get(scope.agent_type)
        if agent is not None and agent.allows(name) and (name != TASK_TOOL or scope.depth < MAX_DEPTH):
            return None
        return NOT_SUPPORTED.format(name=name)

    async def run(self, arguments: Any, invocation: ToolInvocation) -> ToolResult:
        """The ``task`` tool: run the named agent's child session on the prompt; its final
        answer is the result."""
        agents = self._agents()
        problem, agent, prompt = _check(arguments, agents)
        if problem is not None or agent is None:
            return _failure(problem or "no agent")
        try:
            child_agent = self._agent_for(agent, arguments.get("model"))
        except ValueError as exc:
            return _failure(f"Agent {agent.name} cannot start: {exc}")
        parent = CURRENT_AGENT.get()
        scope = AgentScope(
            agent_id=str(uuid.uuid4()),
            agent_type=agent.name,
            parent_id=parent.agent_id if parent is not None else self._pipeline.session_id(),
            tool_call_id=invocation.tool_call_id,
            depth=1 if parent is None else parent.depth + 1,
        )
        with agent_scope(scope):
            return await self._run_child(agent, child_agent, scope, prompt, parent)

    def _agent_for(self, agent: CustomAgent, requested: Any) -> Agent | None:
        """What answers the child: the custom agent's own agent, else the session's, asked for
        the model the call or the custom agent names when it can choose one.

        Raises:
            ValueError: that agent cannot answer with that model.
        """
        if agent.agent is not None:
            return agent.agent
        session_agent = self._pipeline.agent()
        model = requested if isinstance(requested, str) and requested else agent.model
        if model is None:
            return session_agent
        return agent_with_model(session_agent, model) or session_agent

    async def _start_hooks(self, agent: CustomAgent, scope: AgentScope, parent: AgentScope | None) -> str | None:
        """The subagent-start hooks, run in the session that starts the child."""
        with agent_scope(parent):
            return await self._pipeline.start_subagent(scope, agent)

    async def _run_child(
        self,
        agent: CustomAgent,
        child_agent: Agent | None,
        scope: AgentScope,
        prompt: str,
        parent: AgentScope | None,
    ) -> ToolResult:
        model = agent_model(child_agent)
        names = {"toolCallId": scope.tool_call_id, "agentName": agent.name, "agentDisplayName": agent.shown_name}
        started: dict[str, Any] = {
            **names,
            "agentDescription": agent.description,
            "remoteSessionId": scope.agent_id,
            "agentType": agent.name,
            "executionMode": "sync",
        }
        if model:
            started["model"] = model
        self._events.emit("subagent.started", started)
        offered = self.offered()
        selected = None if agent.tools is None else [tool.name for tool in offered]
        self._events.emit(
            "subagent.selected",
            {"agentName": agent.name, "agentDisplayName": agent.shown_name, "tools": selected},
        )
        began = time.monotonic()
        context = await self._start_hooks(agent, scope, parent)
        if context:
            prompt = f"{context}\n\n{prompt}"
        replaced: list[str] = []  # a subagent-stop hook's answer for the parent, if any
        runner = self._child_runner(child_agent, scope, parent, agent, replaced)  # its context hears what follows
        calls = _Counter(self._events, scope.agent_id)

        def ended(extra: Mapping[str, Any]) -> dict[str, Any]:
            data: dict[str, Any] = {**names, **extra}
            if model:
                data["model"] = model
            data["totalToolCalls"] = calls.count
            data["totalTokens"] = calls.tokens
            data["durationMs"] = round((time.monotonic() - began) * 1000, 3)
            return data

        try:
            self._events.emit("system.message", {"role": "system", "content": agent.prompt})
            last = await runner.run_once(prompt, source=f"agent-{scope.parent_id}")
        except asyncio.CancelledError:
            self._events.emit("subagent.completed", ended({"cancelled": True}))
            raise
        except (PromptRejectedError, TurnAbortedError, ExtensionHostError) as exc:
            error = str(exc)
            self._events.emit("subagent.failed", ended({"error": error}))
            return _failure(f"Agent {agent.name} failed: {error}")
        finally:
            calls.stop()
        self._events.emit("subagent.completed", ended({}))
        answer = replaced[-1] if replaced else str(last["data"].get("content") or "") if last is not None else ""
        return ToolResult(answer, "success")

    def _child_runner(
        self,
        agent: Agent | None,
        scope: AgentScope,
        parent: AgentScope | None,
        custom: CustomAgent,
        replaced: list[str],
    ) -> TurnRunner:
        pipeline = self._pipeline

        async def stop(active: bool) -> StopDecision:
            inside = await pipeline.stop_agent(active)
            if inside.blocked:
                return inside
            answers = [m.content for m in runner.model_context.messages if m.role == "assistant"]
            with agent_scope(parent):  # the subagent-stop hooks run in the starting session
                decision = await pipeline.stop_subagent(scope, custom, answers[-1] if answers else "", active)
            if decision.response is not None:
                replaced.append(decision.response)
            return decision

        async def call_tool(name: str, arguments: Any, call_id: str, origin: ToolOrigin) -> ToolCallResult:
            refused = self.refusal(name)
            if refused is not None:
                return ToolCallResult(ToolResult(refused, "failure", error=refused))
            return await pipeline.call_tool(name, arguments, call_id, origin)

        runner = TurnRunner(
            self._events,
            agent=agent,
            call_tool=call_tool,
            submit_prompt=pipeline.submit_prompt,
            report_error=pipeline.report_error,
            transform_prompt=pipeline.transform_prompt,
            stop_agent=stop,
            tools=self.offered,
            roots=tuple,
            agent_id=scope.agent_id,
        )
        return runner


class _Counter:
    """Counts the tool calls one child session completes and the tokens its model calls used
    (input and output, as its agent reports them in ``assistant.usage``)."""

    def __init__(self, events: EventLog, agent_id: str) -> None:
        self.count = 0
        self.tokens = 0
        self._agent_id = agent_id
        self.stop = events.subscribe(self._see)

    def _see(self, event: Mapping[str, Any]) -> None:
        if event.get("agentId") != self._agent_id:
            return
        kind = event.get("type")
        if kind == "tool.execution_complete":
            self.count += 1
        elif kind == "assistant.usage":
            data = event.get("data") or {}
            for key in ("inputTokens", "outputTokens"):
                value = data.get(key)
                if isinstance(value, int) and not isinstance(value, bool):
                    self.tokens += value


def _check(arguments: Any, agents: Mapping[str, CustomAgent]) -> tuple[str | None, CustomAgent | None, str]:
    """The agent and prompt a ``task`` call names, or what is wrong with it."""
    if not isinstance(arguments, Mapping):
        return "task needs an object of arguments: description, prompt, agent_type, name", None, ""
    prompt, kind = arguments.get("prompt"), arguments.get("agent_type")
    if not isinstance(prompt, str) or not prompt.strip():
        return "task needs a prompt: the task, with complete context", None, ""
    available = ", ".join(agents) or "none"
    if not isinstance(kind, str) or kind not in agents:
        return f"Unknown agent type {kind!r}; available agent types: {available}", None, ""
    mode = arguments.get("mode", "sync")
    if mode not in _MODES:
        return f"Unknown mode {mode!r}; use sync or background", None, ""
    return None, agents[kind], prompt


def _failure(text: str) -> ToolResult:
    return ToolResult(text, "failure", error=text)
