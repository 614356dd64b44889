"""Turns: a prompt, the agent's steps and their tool calls, until the session is idle again.

:meth:`TurnRunner.submit` runs the prompt hooks (a rejected prompt goes no further), checks the
attachments, and queues the prompt (``pending_messages.modified``, ephemeral). One prompt runs
at a time, in order; each run is::

    [prompt-transformed hooks: the text the model gets]
    [session.title_changed: the session's first prompt, ephemeral]
    → user.message → [system.notification: the prompt hooks' additional context]
    → assistant.turn_start → [assistant.message_delta: streamed text, ephemeral]
    → assistant.message (text, toolRequests) → [assistant.usage: the agent's count, ephemeral]
      → per tool call: the host's pipeline (tool.execution_start, pre hooks, the tool, post or
        failure hooks, tool.execution_complete with the result the agent gets)
        [→ system.notification: the pre hooks' context, the failure hooks' guidance]
    → assistant.turn_end → (the next step of the agent, while it calls tools)
    → agent-stop hooks, once it answers without a tool call: a ``block`` sends its reason as
      the next user message (through the prompt hooks) and the run goes on, at most
      :data:`MAX_STOP_BLOCKS` times in a row
    → assistant.idle and session.idle (ephemeral) once no prompt is queued

As in the published SDK, ``assistant.turn_start``/``turn_end`` frame one step of the agent (one
model call), ``turnId`` is its number in the session. As in the Copilot CLI, a failed tool call
reaches the agent as it is and the error hooks are not called for it; they are called when the
agent itself (the model call) fails, with ``model_call``. Their decision is this host's
addition: ``retry`` asks the agent again (up to ``retry_count`` times, at most
:data:`MAX_MODEL_RETRIES`); otherwise the run ends with ``session.error``; a
``user_notification`` becomes a ``session.warning``.

:meth:`TurnRunner.cancel` stops the running prompt (see
:mod:`~extension_host.session.cancellation`): the tool call in flight is withdrawn, it and the
calls not reached get a ``rejected`` result, the step ends with ``abort`` and
``assistant.turn_end``, the queued prompts are dropped, and ``session.idle`` carries
``aborted``.

The agent is asked with the model context projected from the session's events
(:class:`~extension_host.session.model_context.ModelContext`), never with live objects. This
module does not know extensions, processes or the wire: the host hands it the pipeline as
callables.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from extension_protocol.protocol import Event
from extension_protocol.results import ToolResult

from ..calls.dispatch import ToolOrigin
from ..errors import ExtensionHostError, UnknownToolError
from ..events import SESSION_MODE, EventLog, unique_ids
from ..outcomes import ErrorDecision, PromptResult, StopDecision, ToolCallResult
from .agents import Agent, AgentReply, AgentRequest, OfferedTool, ask_agent
from .attachments import check_attachments
from .cancellation import Cancellation, RunCancelled
from .errors import NoAgentError, PromptQueueFullError, PromptRejectedError, TurnAbortedError, TurnCancelledError
from .model_context import ModelContext, ToolCall

__all__ = [
    "DEFAULT_SEND_TIMEOUT",
    "MAX_AGENT_STEPS",
    "MAX_MODEL_RETRIES",
    "MAX_QUEUED_PROMPTS",
    "MAX_STOP_BLOCKS",
    "TITLE_CHARS",
    "TurnRunner",
]

DEFAULT_SEND_TIMEOUT: Final = 60.0
"""Seconds ``send_and_wait`` waits for the session to go idle (as the SDK's ``sendAndWait``)."""
MAX_AGENT_STEPS: Final = 50
"""Steps (agent answers) one prompt's run may take; past it the run ends with ``session.error``."""
MAX_QUEUED_PROMPTS: Final = 100
"""Prompts waiting behind the running one; one more is refused."""
TITLE_CHARS: Final = 100
"""The longest ``session.title_changed`` title (the first line of the session's first prompt)."""
MAX_MODEL_RETRIES: Final = 5
"""Times one failed agent step is asked again, whatever ``retry_count`` an error hook asks for
(the Copilot CLI retries a failed model call five times)."""
MAX_STOP_BLOCKS: Final = 8
"""Agent-stop blocks in a row that keep the agent going; the next one is ignored and the run
ends (the Copilot CLI's cap)."""

CallTool = Callable[[str, Any, str, ToolOrigin], Awaitable[ToolCallResult]]
"""Runs one tool call through the host's pipeline: ``(name, arguments, tool_call_id, origin)``."""
SubmitPrompt = Callable[[str], Awaitable[PromptResult]]
TransformPrompt = Callable[[str, str], Awaitable[str]]
"""The prompt-transformed hooks: ``(prompt, transformed) -> the text the model gets``."""
StopAgent = Callable[[bool], Awaitable[StopDecision]]
"""The agent-stop hooks: ``(stop_hook_active) -> whether to keep going, and why``."""
ReportError = Callable[[str, str, bool], Awaitable[ErrorDecision]]
SendObserver = Callable[[str, list[dict[str, Any]], str], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class _Queued:
    message_id: str
    prompt: str
    transformed: str | None
    additional_context: str | None
    attachments: tuple[dict[str, Any], ...]
    source: str | None


class _Abort(Exception):
    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message


class TurnRunner:
    """Queues prompts and runs them one at a time through the agent (see the module).

    Args:
        events: the session's event log (the model context follows it).
        agent: what answers; ``None`` refuses prompts with :class:`NoAgentError`.
        call_tool: the host's tool pipeline.
        submit_prompt: the prompt hooks.
        report_error: the error hooks.
        transform_prompt: the prompt-transformed hooks (none: the text stays).
        stop_agent: the agent-stop hooks (none: the agent stops).
        tools: the tools on offer now.
        roots: the folders attachments may lie in (the project, the session workspace).
        on_send: told of each prompt an extension sends, after its checks; with no agent it
            stands in for one (see :meth:`submit_from_extension`).
        agent_id: the sub-agent whose child session this runs (its model context holds only
            that agent's events); ``None`` for a session's own turns.
    """

    def __init__(
        self,
        events: EventLog,
        *,
        agent: Agent | None,
        call_tool: CallTool,
        submit_prompt: SubmitPrompt,
        report_error: ReportError,
        tools: Callable[[], Sequence[OfferedTool]],
        roots: Callable[[], Sequence[Path]],
        on_send: SendObserver | None = None,
        transform_prompt: TransformPrompt | None = None,
        stop_agent: StopAgent | None = None,
        agent_id: str | None = None,
    ) -> None:
        self.agent = agent
        self._transform_prompt = transform_prompt
        self._stop_agent = stop_agent
        self._events = events
        self._call_tool = call_tool
        self._submit_prompt = submit_prompt
        self._report_error = report_error
        self._tools = tools
        self._roots = roots
        self._on_send = on_send
        self.model_context = ModelContext(agent_id)
        """The model context, kept up to date with every event of the session."""
        self._queue: deque[_Queued] = deque()
        self._runner: asyncio.Task[None] | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self._message_ids = unique_ids()
        self._call_ids = unique_ids()
        self._steps = itertools.count(1)
        self._titled = False
        """The session has had its title (its first prompt ran, or a resumed log holds one)."""
        self._results: dict[str, Event | TurnAbortedError | None] = {}
        self._cancellation = Cancellation()
        self._waiting: dict[str, asyncio.Future[Event | None]] = {}
        self._unsubscribe = events.subscribe(self.model_context.apply)

    # -- queueing -----------------------------------------------------------------------

    @property
    def pending(self) -> list[str]:
        """The message ids of the prompts waiting (not the running one)."""
        return [queued.message_id for queued in self._queue]

    @property
    def idle(self) -> bool:
        """True when no prompt is running or waiting."""
        return self._idle.is_set()

    async def submit(
        self, prompt: str, attachments: Sequence[Mapping[str, Any]] = (), *, source: str | None = None
    ) -> str:
        """Check the attachments, run the prompt hooks and queue the prompt; returns its message id.

        Raises:
            NoAgentError: there is no agent.
            AttachmentError: an attachment is missing or outside the project and workspace.
            PromptRejectedError: a prompt hook rejected it.
            PromptQueueFullError: :data:`MAX_QUEUED_PROMPTS` prompts are waiting already.
        """
        if self.agent is None:
            raise NoAgentError()
        checked = self.check_attachments(attachments)
        if len(self._queue) >= MAX_QUEUED_PROMPTS:
            raise PromptQueueFullError(
                f"{len(self._queue)} prompts are waiting already (at most {MAX_QUEUED_PROMPTS}); "
                "wait for the session to go idle"
            )
        hooked = await self._submit_prompt(prompt)
        if hooked.rejected:
            raise PromptRejectedError(hooked.reason, hooked.rejected_by)
        message_id = next(self._message_ids)
        transformed = hooked.prompt if hooked.prompt != prompt else None
        self._queue.append(_Queued(message_id, prompt, transformed, hooked.additional_context, checked, source))
        self._events.emit("pending_messages.modified", {}, ephemeral=True)
        self._idle.clear()
        if self._runner is None or self._runner.done():
            self._runner = asyncio.ensure_future(self._drain())
        return message_id

    async def submit_from_extension(
        self, prompt: str, attachments: Sequence[Mapping[str, Any]], extension_id: str
    ) -> str:
        """:meth:`submit` for an extension's ``session.send`` (its ``source``), then ``on_send``.

        With no agent but an ``on_send``, that stands in for the agent, as before turns
        existed: ``user.message``, ``on_send``, ``session.idle``; the message id is the event's.
        """
        if self.agent is None and self._on_send is not None:
            checked = list(self.check_attachments(attachments))
            data = {"content": prompt, "attachments": checked, "source": extension_id}
            event = self._events.emit("user.message", data)
            await self._on_send(prompt, checked, extension_id)
            self._events.emit("session.idle", {"mode": SESSION_MODE}, ephemeral=True)
            return event["id"]
        message_id = await self.submit(prompt, attachments, source=extension_id)
        if self._on_send is not None:
            await self._on_send(prompt, [dict(a) for a in attachments], extension_id)
        return message_id

    async def send_and_wait(
        self,
        prompt: str,
        attachments: Sequence[Mapping[str, Any]] = (),
        *,
        timeout: float = DEFAULT_SEND_TIMEOUT,
        source: str | None = None,
    ) -> Event | None:
        """Submit a prompt and wait for the session to go idle; returns the last
        ``assistant.message`` of this prompt's run (``None`` if it said nothing).

        Raises:
            TimeoutError: the session was not idle within ``timeout`` seconds.
            TurnAbortedError: the run ended with ``session.error``.
            TurnError: as :meth:`submit`.
        """
        message_id = await self.submit(prompt, attachments, source=source)
        future: asyncio.Future[Event | None] = asyncio.get_running_loop().create_future()
        self._waiting[message_id] = future
        try:
            async with asyncio.timeout(timeout):
                return await future
        finally:
            self._waiting.pop(message_id, None)

    async def wait_idle(self, timeout: float | None = None) -> None:
        """Wait until no prompt is running or waiting.

        Raises:
            TimeoutError: still busy after ``timeout`` seconds.
        """
        async with asyncio.timeout(timeout):
            await self._idle.wait()

    async def run_once(self, prompt: str, *, source: str | None = None) -> Event | None:
        """Run one prompt now, in the caller's task, outside the queue: a sub-agent's child
        session, which a parent's tool call awaits (cancelling that call cancels it). Returns
        the run's last ``assistant.message``. No title and no idle events: the child's end is
        the caller's to announce. The runner stops following the session's events after it.

        Raises:
            NoAgentError: there is no agent.
            PromptRejectedError: a prompt hook rejected it.
            TurnAbortedError: the run failed (the agent failed, or took too many steps).
        """
        try:
            if self.agent is None:
                raise NoAgentError()
            hooked = await self._submit_prompt(prompt)
            if hooked.rejected:
                raise PromptRejectedError(hooked.reason, hooked.rejected_by)
            transformed = hooked.prompt if hooked.prompt != prompt else None
            queued = _Queued(next(self._message_ids), prompt, transformed, hooked.additional_context, (), source)
            self._titled = True
            self._cancellation.reset()
            return await self._run(queued)
        except _Abort as abort:
            raise TurnAbortedError(abort.message) from None
        except RunCancelled:
            raise TurnCancelledError("the turn was cancelled") from None
        finally:
            self._unsubscribe()  # it runs once

    def cancel(self) -> bool:
        """Cancel the running prompt and drop the queued ones; True if a prompt was running
        or waiting (see :mod:`~extension_host.session.cancellation` for what is stopped).

        The run ends as the SDK ends an aborted turn: the tool call in flight gets a
        ``tool.execution_complete`` of result type ``rejected`` (the error hooks run for it,
        ``tool_execution``, not recoverable), the calls it had not reached get one too, so every
        tool request has its result; then ``abort`` (``user_initiated``), ``assistant.turn_end``
        and ``session.idle`` with ``aborted``. Whoever waits for the cancelled or dropped
        prompts gets :class:`TurnCancelledError`.
        """
        if self.idle:
            return False
        dropped = list(self._queue)
        if dropped:
            self._queue.clear()
            self._events.emit("pending_messages.modified", {}, ephemeral=True)
        for queued in dropped:
            future = self._waiting.get(queued.message_id)
            if future is not None and not future.done():
                future.set_exception(TurnCancelledError("the prompt was dropped: the turn before it was cancelled"))
        self._cancellation.request()
        return True

    async def close(self) -> None:
        """Stop running prompts (the one running is cancelled); the queue is dropped."""
        self._unsubscribe()
        await self.abandon("the host stopped before the prompt's run ended")

    async def abandon(self, reason: str) -> None:
        """Cancel the running prompt and drop the queued ones; whoever waits for them gets
        :class:`TurnAbortedError` saying ``reason``."""
        if self._queue:
            self._queue.clear()
            self._events.emit("pending_messages.modified", {}, ephemeral=True)
        if self._runner is not None and not self._runner.done():
            self._runner.cancel()
            await asyncio.gather(self._runner, return_exceptions=True)
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(TurnAbortedError(reason))
        self._idle.set()

    def begin(self, events: Iterable[Event] = ()) -> None:
        """Start over on a session whose persisted events are ``events`` (none for a new one):
        the model context is rebuilt from them and turn numbers go on after theirs."""
        turns = 0
        self._titled = False

        def counted() -> Iterator[Event]:
            nonlocal turns
            for event in events:
                if event.get("agentId"):
                    pass  # a sub-agent's turns are its child session's
                elif event.get("type") == "assistant.turn_start":
                    turns += 1
                elif event.get("type") == "user.message":
                    self._titled = True
                yield event

        self.model_context.reset(counted())
        self._steps = itertools.count(turns + 1)

    def check_attachments(self, attachments: Sequence[Mapping[str, Any]]) -> tuple[dict[str, Any], ...]:
        """The attachments checked against the project and the session workspace (see
        :func:`~extension_host.session.attachments.check_attachments`)."""
        return check_attachments(attachments, self._roots())

    # -- running ------------------------------------------------------------------------

    async def _drain(self) -> None:
        try:
            while self._queue:
                queued = self._queue.popleft()
                self._events.emit("pending_messages.modified", {}, ephemeral=True)
                self._cancellation.reset()
                try:
                    self._results[queued.message_id] = await self._run(queued)
                except RunCancelled:
                    self._results[queued.message_id] = TurnCancelledError("the turn was cancelled")
                except _Abort as abort:
                    self._events.emit("session.error", {"errorType": abort.error_type, "message": abort.message})
                    self._results[queued.message_id] = TurnAbortedError(abort.message)
        finally:
            self._cancellation.reset()
            aborted = any(isinstance(result, TurnAbortedError) for result in self._results.values())
            idle = {"aborted": True} if aborted else {}
            self._events.emit("assistant.idle", idle, ephemeral=True)  # the agent's loop is over, as in Copilot CLI
            self._events.emit("session.idle", {**idle, "mode": SESSION_MODE}, ephemeral=True)
            results, self._results = self._results, {}
            self._idle.set()
            for message_id, result in results.items():
                future = self._waiting.get(message_id)
                if future is None or future.done():
                    continue
                if isinstance(result, TurnAbortedError):
                    future.set_exception(result)
                else:
                    future.set_result(result)

    async def _run(self, queued: _Queued) -> Event | None:
        assert self.agent is not None
        await self._say_user(queued.prompt, queued.transformed, queued.additional_context, queued)
        last: Event | None = None
        stop_blocks = step = 0
        message_id_of_prompt = queued.message_id
        while True:
            if step >= MAX_AGENT_STEPS:
                raise _Abort(
                    "agent", f"the agent took {MAX_AGENT_STEPS} steps without finishing its answer; the run was ended"
                )
            turn_id = str(next(self._steps))
            self._events.emit("assistant.turn_start", {"turnId": turn_id})
            try:
                message_id = next(_assistant_ids)
                request = AgentRequest(
                    self.model_context.messages,
                    tuple(self._tools()),
                    message_id_of_prompt,
                    step,
                    message_id,
                    self._delta_emitter(message_id),
                )
                reply = await self._cancellation.guard(self._ask(request))
                calls = [
                    call if call.id else ToolCall(call.name, call.arguments, next(self._call_ids))
                    for call in reply.tool_calls
                ]
                last = self._events.emit("assistant.message", _assistant_data(reply, calls, turn_id, message_id))
                if reply.usage is not None:
                    self._events.emit("assistant.usage", {"model": reply.model or "unknown", **reply.usage})
                for index, call in enumerate(calls):
                    try:
                        await self._run_tool(call, turn_id, reply.model)
                    except RunCancelled:
                        self._settle_cancelled(calls[index], calls[index + 1 :])
                        raise
            except RunCancelled:
                self._events.emit("abort", {"reason": "user_initiated"})
                raise
            finally:
                self._events.emit("assistant.turn_end", {"turnId": turn_id})
            step += 1
            if calls:
                continue
            follow_up = await self._follow_up(stop_blocks)
            if follow_up is None:
                return last
            stop_blocks += 1
            hooked = await self._submit_prompt(follow_up)
            if hooked.rejected:
                return last
            # A new prompt to the agent, as in the Copilot CLI (where it is queued as one).
            message_id_of_prompt, step = next(self._message_ids), 0
            transformed = hooked.prompt if hooked.prompt != follow_up else None
            await self._say_user(follow_up, transformed, hooked.additional_context, None, message_id_of_prompt)

    async def _say_user(
        self,
        prompt: str,
        transformed: str | None,
        context: str | None,
        queued: _Queued | None,
        message_id: str | None = None,
    ) -> None:
        """Emit the ``user.message`` of a prompt (a queued one, or an agent-stop hook's
        follow-up), after the prompt-transformed hooks chose the text the model gets."""
        text = transformed if transformed is not None else prompt
        if self._transform_prompt is not None:
            given = await self._transform_prompt(text, text)
            transformed = given if given != prompt else transformed
        user: dict[str, Any] = {"content": prompt, "messageId": queued.message_id if queued else message_id}
        if transformed is not None:
            user["transformedContent"] = transformed
        if queued is not None and queued.attachments:
            user["attachments"] = list(queued.attachments)
        if queued is not None and queued.source is not None:
            user["source"] = queued.source
        if not self._titled:  # as Copilot CLI offline: the session's first prompt is its title
            self._titled = True
            self._events.emit("session.title_changed", {"title": _title(prompt)}, ephemeral=True)
        self._events.emit("user.message", user)
        self._notify(context)

    async def _follow_up(self, blocks: int) -> str | None:
        """Run the agent-stop hooks on an agent that answered without a tool call; the reason
        of a ``block``, which keeps it going, or ``None``. Past :data:`MAX_STOP_BLOCKS` blocks
        in a row a block is ignored, with a ``session.warning``."""
        if self._stop_agent is None:
            return None
        decision = await self._stop_agent(blocks > 0)
        if not decision.blocked or not decision.reason:
            return None
        if blocks >= MAX_STOP_BLOCKS:
            message = f"Agent stop hook blocked {blocks} consecutive times; ending turn."
            self._events.emit("session.warning", {"warningType": "hook", "message": message})
            return None
        return decision.reason

    def _delta_emitter(self, message_id: str) -> Callable[[str], None]:
        def delta(text: str) -> None:
            if text:
                self._events.emit("assistant.message_delta", {"messageId": message_id, "deltaContent": text})

        return delta

    async def _ask(self, request: AgentRequest) -> AgentReply:
        """Ask the agent; when it fails, the error hooks hear of it (``model_call``) and may
        have it asked again (``retry``); otherwise the run ends."""
        assert self.agent is not None
        retries = 0
        while True:
            try:
                return await ask_agent(self.agent, request)
            except ExtensionHostError as exc:
                message = f"the agent failed: {exc}"  # its message says what to do
            except Exception as exc:
                message = f"the agent failed: {type(exc).__name__}: {exc}"
            decision = await self._report_error(message, "model_call", True)
            if decision.user_notification:
                self._events.emit("session.warning", {"warningType": "hook", "message": decision.user_notification})
            if decision.error_handling != "retry" or retries >= min(decision.retry_count or 1, MAX_MODEL_RETRIES):
                raise _Abort("agent", message) from None
            retries += 1

    def _settle_cancelled(self, running: ToolCall, unreached: Sequence[ToolCall]) -> None:
        """Give the cancelled call and those after it a ``rejected`` result, so the model context
        holds a result for every tool request."""
        text = f"tool {running.name} was cancelled: the turn was cancelled"
        self._settle_result(running, ToolCallResult(ToolResult(text, "rejected", error=text)))
        for call in unreached:
            skipped = f"tool {call.name} was not run: the turn was cancelled before it"
            self._settle_result(call, ToolCallResult(ToolResult(skipped, "rejected", error=skipped)))

    async def _run_tool(self, call: ToolCall, turn_id: str, model: str | None) -> None:
        assert call.id is not None
        try:
            outcome = await self._cancellation.guard(
                self._call_tool(call.name, call.arguments, call.id, ToolOrigin(turn_id, model))
            )
        except UnknownToolError as exc:
            outcome = ToolCallResult(ToolResult(str(exc), "failure", error=str(exc)))
        self._settle_result(call, outcome)
        self._notify(outcome.context_message)

    def _settle_result(self, call: ToolCall, outcome: ToolCallResult) -> None:
        """Make the model context hold the result the agent gets: the post-tool hooks may have
        replaced it, and a denied or unknown call never ran."""
        assert call.id is not None
        held = self.model_context.tool_result(call.id)
        if held is not None and held.content == outcome.text_result_for_llm and held.result_type == outcome.result_type:
            return
        text, kind = outcome.text_result_for_llm, outcome.result_type
        complete: dict[str, Any] = {"toolCallId": call.id, "toolName": call.name, "success": outcome.success}
        if outcome.success:
            complete["result"] = {"content": text}
        else:
            complete["error"] = {"message": outcome.error or text, "code": kind}
            complete["result"] = {"content": text, "resultType": kind}
        complete["toolTelemetry"] = {}
        self._events.emit("tool.execution_complete", complete)

    def _notify(self, context: str | None) -> None:
        if context:
            self._events.emit(
                "system.notification",
                {"content": context, "kind": {"type": "unclassified", "metadata": {"source": "hooks"}}},
            )


def _assistant_data(reply: AgentReply, calls: Sequence[ToolCall], turn_id: str, message_id: str) -> dict[str, Any]:
    data: dict[str, Any] = {
        "messageId": message_id,
        "content": reply.text,
        "turnId": turn_id,
        "toolRequests": [  # empty too, as Copilot CLI sends it
            {"toolCallId": call.id, "name": call.name, "arguments": call.arguments, "type": "function"}
            for call in calls
        ],
    }
    if reply.model:
        data["model"] = reply.model
    return data


_assistant_ids = unique_ids()


def _title(prompt: str) -> str:
    """A session title from its first prompt: the first line, at most :data:`TITLE_CHARS` characters."""
    line = prompt.strip().split("\n", 1)[0]
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"
