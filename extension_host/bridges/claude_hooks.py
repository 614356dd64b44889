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
                    ``tool_input`` → tool_args   reason), ``updatedInput`` (``modified_args``; with no decision
                                                 it goes with ``ask``, so a rewrite never skips Claude Code's own
                                                 permission check); nothing when no hook has an opinion
``PostToolUse``     ``on_post_tool_use``:        ``hookSpecificOutput.additionalContext``; ``modified_result`` is
                    ``tool_response`` → the      ``updatedMCPToolOutput`` for an ``mcp__`` tool, else
                    result text (JSON text       ``{"decision": "block", "reason": <the new result>}`` (Claude
                    unless a string)             Code shows the model the reason in place of a result it cannot
                                                 replace)
``UserPromptSubmit`` ``on_user_prompt_submitted``: ``{"decision": "block", "reason"}`` when rejected;
                    ``prompt`` → prompt          ``hookSpecificOutput.additionalContext``; a rewritten prompt is
                                                 not carried (Claude Code cannot rewrite one)
``SessionStart``    ``on_session_start``:        ``hookSpecificOutput.additionalContext``
                    ``source`` startup → startup,
                    resume/compact → resume,
                    clear → new
``SessionEnd``      ``on_session_end``:          ``systemMessage``: the ``session_summary``
                    ``reason`` other → complete,
                    anything else → user_exit
==================  ===========================  ==============================================================

``PreToolUse`` and ``UserPromptSubmit`` are guards: they fail closed (exit 2, reason on stderr:
:mod:`.hook_adapter`). ``additional_context`` of a pre-tool hook is not carried. This module
holds the mapping only; it imports nothing heavy.
"""

from __future__ import annotations

import json
from typing import Any, Final

from .hook_adapter import (
    AgentEvent,
    HookAgent,
    HookReply,
    field,
    json_reply,
    session_end_reply,
    session_end_request,
    session_start_reply,
    session_start_request,
    specific,
)

__all__ = ["CLAUDE"]


def _tool_request(hook: str) -> Any:
    def request(payload: dict[str, Any]) -> dict[str, Any]:
        params: dict[str, Any] = {
            "hook": hook,
            "toolName": field(payload, "tool_name", str),
            "toolArgs": field(payload, "tool_input", dict, required=False) or {},
        }
        if hook == "postToolUse":
            response = payload.get("tool_response")
            text = response if isinstance(response, str) else json.dumps(response)
            params["toolResult"] = {"textResultForLlm": text}
        return params

    return request


def _pre_reply(_payload: dict[str, Any], answer: dict[str, Any]) -> HookReply:
    decision = answer.get("decision")
    updated = answer.get("modifiedArgs") if decision != "deny" else None
    if decision is None and updated is None:
        return json_reply(None)
    if decision is None:
        decision = "ask"  # Claude Code applies updatedInput with a decision; ask keeps its own check
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


def _post_reply(payload: dict[str, Any], answer: dict[str, Any]) -> HookReply:
    reply: dict[str, Any] = {}
    output = specific("PostToolUse", additionalContext=answer.get("additionalContext"))
    result = answer.get("modifiedResult")
    if result is not None:
        if str(payload.get("tool_name")).startswith("mcp__"):
            output["updatedMCPToolOutput"] = result
        else:
            reply = {"decision": "block", "reason": result}
    if len(output) > 1:
        reply["hookSpecificOutput"] = output
    return json_reply(reply)


def _prompt_reply(_payload: dict[str, Any], answer: dict[str, Any]) -> HookReply:
    reply: dict[str, Any] = {}
    if answer.get("decision") == "deny":
        reply = {"decision": "block", "reason": answer.get("reason") or "rejected by the project's extensions"}
    if answer.get("additionalContext"):
        reply["hookSpecificOutput"] = specific("UserPromptSubmit", additionalContext=answer["additionalContext"])
    return json_reply(reply)


_SOURCES: Final = {"startup": "startup", "resume": "resume", "compact": "resume", "clear": "new"}


CLAUDE: Final = HookAgent(
    name="claude",
    display_name="Claude Code",
    settings_folder=".claude",
    events={
        "PreToolUse": AgentEvent("PreToolUse", "preToolUse", True, _tool_request("preToolUse"), _pre_reply),
        "PostToolUse": AgentEvent("PostToolUse", "postToolUse", False, _tool_request("postToolUse"), _post_reply),
        "UserPromptSubmit": AgentEvent(
            "UserPromptSubmit",
            "userPromptSubmitted",
            True,
            lambda payload: {"hook": "userPromptSubmitted", "prompt": field(payload, "prompt", str)},
            _prompt_reply,
        ),
        "SessionStart": AgentEvent(
            "SessionStart", "sessionStart", False, session_start_request(_SOURCES), session_start_reply
        ),
        "SessionEnd": AgentEvent("SessionEnd", "sessionEnd", False, session_end_request, session_end_reply),
    },
)
"""Claude Code's table: event name → row."""
