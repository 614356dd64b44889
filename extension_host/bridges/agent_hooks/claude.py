"""Claude Code's command hooks, answered by this project's extensions: the field mapping.

Claude Code runs ``extensions hook claude EVENT`` with the event's JSON on stdin (common fields
``session_id``, ``transcript_path``, ``cwd``, ``permission_mode``, ``hook_event_name``). Each
row of :data:`CLAUDE` maps one event to a hook point; the extensions see Claude Code's own tool
names (``Bash``, ``Edit``, ``mcp__server__tool``) and arguments.

==================  ===========================  ==============================================================
Claude Code event   hook point, from stdin       answer, on stdout (exit 0)
==================  ===========================  ==============================================================
``PreToolUse``      ``on_pre_tool_use``:         ``hookSpecificOutput``: ``permissionDecision`` ``allow``/``ask``/
                    ``tool_name`` → tool_name,   ``deny`` and ``permissionDecisionReason`` (the decision and its
                    ``tool_input`` → tool_args   reason), ``updatedInput`` (``modified_args``; with no decision it
                                                 goes alone, so Claude Code applies it and its own permission rules
                                                 judge the new arguments); nothing when no hook has an opinion
``PostToolUse``     ``on_post_tool_use``:        ``hookSpecificOutput.additionalContext``; ``modified_result`` is
                    ``tool_response`` → the      ``updatedMCPToolOutput`` for an ``mcp__`` tool, else
                    result text (JSON text       ``updatedToolOutput`` in the tool's output shape (Claude Code keeps
                    unless a string)             the original when it does not fit): the text for a string result,
                                                 the hook's JSON when it has the result's fields (values edited),
                                                 Bash's ``stdout`` for Bash; any other new result is not applied, and
                                                 a ``systemMessage`` (and stderr) warning line says so
``PostToolUseFailure`` ``on_post_tool_use_failure``: ``hookSpecificOutput.additionalContext`` (Claude Code gives it
                    ``tool_name``, ``tool_input``, to the model after the failure)
                    ``error`` → error
``UserPromptSubmit`` ``on_user_prompt_submitted``: ``{"decision": "block", "reason"}`` when rejected;
                    ``prompt`` → prompt          ``hookSpecificOutput.additionalContext``; a rewritten prompt is
                                                 not carried (Claude Code cannot rewrite one)
``SessionStart``    ``on_session_start``:        ``hookSpecificOutput.additionalContext``
                    ``source`` startup → startup,
                    resume/compact → resume,
                    clear → new
``SessionEnd``      ``on_session_end``:          ``systemMessage``: the ``session_summary``
                    ``reason`` other → complete,
                    anything else (clear,
                    logout, prompt_input_exit,
                    ...) → user_exit
``Stop``            ``on_agent_stop``:           ``{"decision": "block", "reason"}`` when a hook blocks: Claude Code
                    ``stop_hook_active``,        goes on with the reason as its next instruction (the hooks see
                    ``transcript_path`` (Claude  ``stop_hook_active`` then, and decide when to let it stop)
                    Code's own), stop reason
                    ``end_turn``
==================  ===========================  ==============================================================

Inside a subagent (its ``Agent`` tool) Claude Code runs the same tool events with the parent's
``session_id`` and the child's ``agent_id`` and ``agent_type``; they become the request's
``agentId`` and ``agentType`` (:mod:`.hook_calls`), so the hooks see the child's ``sessionId``,
``agentId``, ``agentType`` and ``parentAgentId`` as GitHub Copilot CLI gives a child's hooks.
Its ``SubagentStart`` runs ``on_subagent_start`` (the hooks' ``additional_context`` goes to the
subagent, ``hookSpecificOutput.additionalContext``) and its ``SubagentStop`` runs
``on_subagent_stop`` with ``last_assistant_message`` as ``response`` and
``agent_transcript_path`` (``{"decision": "block", "reason"}`` keeps the subagent going; a
``modified_response`` is not carried: Claude Code cannot replace a subagent's answer).

A failed tool gets ``PostToolUseFailure`` and not ``PostToolUse``, as a failed call gets
``on_post_tool_use_failure`` and not ``on_post_tool_use`` in the host. ``on_user_prompt_transformed``
has no equivalent (Claude Code does not show a hook the expanded prompt before the model gets it).

``PreToolUse`` and ``UserPromptSubmit`` are guards: they fail closed (exit 2, reason on stderr:
:mod:`.adapter`). ``additional_context`` of a pre-tool hook is not carried. This module
holds the mapping only; it imports nothing heavy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from .adapter import (
    AgentEvent,
    HookAgent,
    HookReply,
    field,
    json_reply,
    prompt_request,
    session_end_reply,
    session_end_request,
    session_start_reply,
    session_start_request,
    specific,
    stop_reply,
    stop_request,
)

__all__ = ["CLAUDE"]


def _subagent(payload: dict[str, Any]) -> dict[str, Any]:
    """``agentId`` and ``agentType`` of a call made inside a subagent (Claude Code gives
    ``agent_id`` only there; ``agent_type`` alone names the main thread's ``--agent``)."""
    agent_id = field(payload, "agent_id", str, required=False)
    if not agent_id:
        return {}
    agent_type = field(payload, "agent_type", str, required=False)
    return {"agentId": agent_id, "agentType": agent_type} if agent_type else {"agentId": agent_id}


def _tool_request(payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "toolName": field(payload, "tool_name", str),
        "toolArgs": field(payload, "tool_input", dict, required=False) or {},
        **_subagent(payload),
    }


def _post_tool_request(payload: dict[str, Any]) -> dict[str, Any]:
    response = payload.get("tool_response")
    text = response if isinstance(response, str) else json.dumps(response)
    return {**_tool_request(payload), "toolResult": {"textResultForLlm": text}}


def _failure_request(payload: dict[str, Any]) -> dict[str, Any]:
    return {**_tool_request(payload), "error": field(payload, "error", str, required=False) or "the tool failed"}


def _subagent_start_request(payload: dict[str, Any]) -> dict[str, Any]:
    params: dict[str, Any] = {"agentId": field(payload, "agent_id", str)}
    agent_type = field(payload, "agent_type", str, required=False)
    if agent_type:
        params["agentType"] = agent_type
    transcript = field(payload, "agent_transcript_path", str, required=False)
    if transcript:
        params["transcriptPath"] = transcript
    return params


def _subagent_stop_request(payload: dict[str, Any]) -> dict[str, Any]:
    return {
        **_subagent_start_request(payload),
        "response": field(payload, "last_assistant_message", str, required=False) or "",
        "stopHookActive": field(payload, "stop_hook_active", bool, required=False) or False,
    }


def _subagent_start_reply(_payload: dict[str, Any], answer: dict[str, Any]) -> HookReply:
    context = answer.get("additionalContext")
    return json_reply({"hookSpecificOutput": specific("SubagentStart", additionalContext=context)} if context else None)


def _pre_reply(_payload: dict[str, Any], answer: dict[str, Any]) -> HookReply:
    decision = answer.get("decision")
    updated = answer.get("modifiedArgs") if decision != "deny" else None
    if decision is None and updated is None:
        return json_reply(None)
    if decision is None:  # a rewrite alone: Claude Code applies it, then its own permission rules decide
        return json_reply({"hookSpecificOutput": specific("PreToolUse", updatedInput=updated)})
    reason = answer.get("reason")
    if reason is None and answer.get("decidedBy"):
        reason = f"decided by {answer['decidedBy']}"
    return json_reply(
        {
            "hookSpecificOutput": specific(
                "PreToolUse", permissionDecision=decision, permissionDecisionReason=reason, updatedInput=updated
            )
        }
    )


_TEXT_OUTPUTS: Final[Mapping[str, tuple[str, Mapping[str, Any]]]] = {
    "Bash": ("stdout", {"stderr": "", "interrupted": False}),
}
"""Built-in tools whose output a hook's new text can be: the output field the text goes in, and
the other fields of the output. Claude Code checks a replaced output against the tool's own
output shape, and keeps the original when it does not fit."""


def _same_shape(new: Any, old: Any) -> bool:
    """Whether ``new`` has the keys of the object ``old``, each value of the same JSON kind."""
    return (
        isinstance(new, dict)
        and isinstance(old, dict)
        and new.keys() == old.keys()
        and all(type(new[key]) is type(old[key]) for key in old)
    )


def _replaced_output(payload: dict[str, Any], text: str) -> Any:
    """The ``updatedToolOutput`` that makes a built-in tool's result ``text``; ``None`` when this
    bridge cannot put it in the tool's output shape."""
    original = payload.get("tool_response")
    if isinstance(original, str):
        return text
    try:
        edited = json.loads(text)
    except ValueError:
        edited = None
    if _same_shape(edited, original):  # the hook edited the result's JSON text: the same shape, new values
        return edited
    shape = _TEXT_OUTPUTS.get(str(payload.get("tool_name")))
    return {shape[0]: text, **shape[1]} if shape is not None else None


def _post_reply(payload: dict[str, Any], answer: dict[str, Any]) -> HookReply:
    output = specific("PostToolUse", additionalContext=answer.get("additionalContext"))
    result = answer.get("modifiedResult")
    warning = None
    if result is not None:
        tool = str(payload.get("tool_name"))
        replaced = result if tool.startswith("mcp__") else _replaced_output(payload, result)
        if replaced is None:
            warning = (
                f"extensions hook claude PostToolUse: warning: a post-tool hook replaced the result of {tool}, "
                "but Claude Code takes a built-in tool's new result only in that tool's output shape (a string, "
                f"the same JSON fields, or Bash's text), so the model got {tool}'s own result"
            )
        else:
            output["updatedMCPToolOutput" if tool.startswith("mcp__") else "updatedToolOutput"] = replaced
    reply: dict[str, Any] = {"hookSpecificOutput": output} if len(output) > 1 else {}
    if warning is not None:
        reply["systemMessage"] = warning
    return json_reply(reply)._replace(stderr=f"{warning}\n" if warning else "")


def _prompt_reply(_payload: dict[str, Any], answer: dict[str, Any]) -> HookReply:
    reply: dict[str, Any] = {}
    if answer.get("decision") == "deny":
        reply = {"decision": "block", "reason": answer.get("reason") or "rejected by the project's extensions"}
    if answer.get("additionalContext"):
        reply["hookSpecificOutput"] = specific("UserPromptSubmit", additionalContext=answer["additionalContext"])
    return json_reply(reply)


def _failure_reply(_payload: dict[str, Any], answer: dict[str, Any]) -> HookReply:
    context = answer.get("additionalContext")
    return json_reply(
        {"hookSpecificOutput": specific("PostToolUseFailure", additionalContext=context)} if context else None
    )


_SOURCES: Final = {"startup": "startup", "resume": "resume", "compact": "resume", "clear": "new"}

_COMPLETE: Final = ("other",)
"""The ``SessionEnd`` reasons of a session that ended by itself (the others: the user ended it)."""


CLAUDE: Final = HookAgent(
    name="claude",
    display_name="Claude Code",
    settings_folder=".claude",
    events={
        row.event: row
        for row in (
            AgentEvent("PreToolUse", "on_pre_tool_use", True, _tool_request, _pre_reply),
            AgentEvent("PostToolUse", "on_post_tool_use", False, _post_tool_request, _post_reply),
            AgentEvent("PostToolUseFailure", "on_post_tool_use_failure", False, _failure_request, _failure_reply),
            AgentEvent("UserPromptSubmit", "on_user_prompt_submitted", True, prompt_request, _prompt_reply),
            AgentEvent("SessionStart", "on_session_start", False, session_start_request(_SOURCES), session_start_reply),
            AgentEvent("SessionEnd", "on_session_end", False, session_end_request(_COMPLETE), session_end_reply),
            AgentEvent("Stop", "on_agent_stop", False, stop_request, stop_reply),
            AgentEvent("SubagentStart", "on_subagent_start", False, _subagent_start_request, _subagent_start_reply),
            AgentEvent("SubagentStop", "on_subagent_stop", False, _subagent_stop_request, stop_reply),
        )
    },
)
"""Claude Code's table: event name → row."""
