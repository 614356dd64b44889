"""The session hook points the host itself calls, and what their outcomes mean to the caller.

:class:`SessionHooks` runs ``on_user_prompt_submitted``, ``on_user_prompt_transformed``,
``on_session_start``, ``on_session_end``, ``on_error_occurred``, ``on_agent_stop``,
``on_subagent_start`` and ``on_subagent_stop`` through
the :class:`~extension_host.hooks.runner.HookRunner` with the input each is given (the time, the
working folder, the session, the prompt or the error) and turns the combined outcome into what
the API returns (:mod:`~extension_host.outcomes`). It remembers whether the session-end hooks
ran, so a host ends a session once. When each runs (start, stop, ``/clear``, a turn, a failed
model call) is its callers' call; tool hooks are the dispatcher's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..events import AgentScope
from ..outcomes import ErrorDecision, PromptResult, SessionEndResult, SessionStartResult, StopDecision
from .runner import HookRunner

if TYPE_CHECKING:
    from extension_protocol.hook_models import HookInput

__all__ = ["SessionHooks"]


class SessionHooks:
    """The session hook points of one host, run through ``runner``."""

    def __init__(self, runner: HookRunner, transcript_path: Callable[[], str | None] = lambda: None) -> None:
        self._runner = runner
        self.transcript_path = transcript_path
        """The session's event log, for the hook points that name it."""
        self.ended = False
        """The session-end hooks ran for the current session."""

    async def submit_prompt(self, prompt: str) -> PromptResult:
        """Run the prompt hooks on a user prompt; returns it rewritten, or rejected with a reason."""
        outcome = await self._runner.run(
            "on_user_prompt_submitted",
            self._runner.make_input("on_user_prompt_submitted", prompt=prompt),
        )
        rejected = outcome.decision == "deny"
        return PromptResult(
            prompt=outcome.prompt if outcome.prompt is not None else prompt,
            additional_context=outcome.additional_context,
            rejected=rejected,
            reason=outcome.reason if rejected else None,
            rejected_by=outcome.decided_by if rejected else None,
        )

    async def transform_prompt(self, prompt: str, transformed: str) -> str:
        """Run the prompt-transformed hooks; returns the text the model gets (``transformed``
        unless a hook replaced it)."""
        outcome = await self._runner.run(
            "on_user_prompt_transformed",
            self._runner.make_input("on_user_prompt_transformed", prompt=prompt, transformed_prompt=transformed),
        )
        return outcome.value if isinstance(outcome.value, str) else transformed

    async def start_session(self, source: str, initial_prompt: str | None) -> SessionStartResult:
        """Run the session-start hooks (``source``: new, resume or startup)."""
        outcome = await self._runner.run(
            "on_session_start",
            self._runner.make_input("on_session_start", source=source, initial_prompt=initial_prompt),
        )
        return SessionStartResult(outcome.additional_context)

    async def end_session(self, reason: str, final_message: str | None, error: str | None) -> SessionEndResult:
        """Run the session-end hooks (``reason``: complete, error, abort, timeout or user_exit)."""
        self.ended = True
        outcome = await self._runner.run(
            "on_session_end",
            self._runner.make_input("on_session_end", reason=reason, final_message=final_message, error=error),
        )
        return SessionEndResult(outcome.merged_value("session_summary"), tuple(outcome.merged_value("cleanup_actions")))

    async def report_error(self, error: str, context: str, recoverable: bool) -> ErrorDecision:
        """Run the error hooks; returns the strongest handling asked for (abort > skip > retry)."""
        outcome = await self._runner.run(
            "on_error_occurred",
            self._runner.make_input("on_error_occurred", error=error, error_context=context, recoverable=recoverable),
        )
        return ErrorDecision(
            outcome.merged_value("error_handling"),
            outcome.merged_value("retry_count"),
            outcome.merged_value("user_notification"),
        )

    async def stop_agent(self, transcript_path: str | None, active: bool) -> StopDecision:
        """Run the agent-stop hooks on an agent that answered without calling a tool
        (``active``: it was answering a follow-up such a hook asked for); a ``block`` with its
        reason keeps it going."""
        outcome = await self._runner.run(
            "on_agent_stop",
            self._runner.make_input(
                "on_agent_stop", stop_reason="end_turn", transcript_path=transcript_path, stop_hook_active=active
            ),
        )
        return StopDecision(outcome.decision == "block", outcome.reason)

    async def start_subagent(
        self, child: AgentScope, name: str, display_name: str, description: str, transcript_path: str | None = None
    ) -> str | None:
        """Run the subagent-start hooks before ``child``'s first turn (in the session that
        starts it); the context they put before its prompt."""
        given = self._subagent_input(
            "on_subagent_start", child, name, display_name, description, transcript_path=transcript_path
        )
        return (await self._runner.run("on_subagent_start", given)).additional_context

    async def stop_subagent(
        self,
        child: AgentScope,
        name: str,
        display_name: str,
        description: str,
        response: str,
        active: bool,
        transcript_path: str | None = None,
    ) -> StopDecision:
        """Run the subagent-stop hooks on a child session that answered ``response`` without
        calling a tool (``active``: a follow-up such a hook asked for); a ``block`` keeps it
        going, a replaced response is what the parent reads."""
        given = self._subagent_input(
            "on_subagent_stop",
            child,
            name,
            display_name,
            description,
            response=response,
            stop_reason="end_turn",
            stop_hook_active=active,
            transcript_path=transcript_path,
        )
        outcome = await self._runner.run("on_subagent_stop", given)
        replaced = outcome.value if isinstance(outcome.value, str) and outcome.value != response else None
        return StopDecision(outcome.decision == "block", outcome.reason, replaced)

    def _subagent_input(
        self,
        hook: str,
        child: AgentScope,
        name: str,
        display: str,
        description: str,
        transcript_path: str | None,
        **fields: Any,
    ) -> HookInput:
        """A subagent hook point's input: the starting session's id, the child's as ``agent_id``
        (``transcript_path``: the session's log unless given)."""
        return self._runner.make_input(
            hook,
            session_id=child.parent_id,
            agent_id=child.agent_id,
            agent_type=child.agent_type,
            parent_agent_id=child.parent_id,
            agent_name=name,
            agent_display_name=display,
            agent_description=description,
            transcript_path=transcript_path or self.transcript_path(),
            **fields,
        )
