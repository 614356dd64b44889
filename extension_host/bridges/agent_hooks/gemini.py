"""Gemini CLI's command hooks, answered by this project's extensions: the field mapping.

Gemini CLI runs ``extensions hook gemini EVENT`` with the event's JSON on stdin (common fields
``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``, ``timestamp``); stdout must
hold nothing but the final JSON. Each row of :data:`GEMINI` maps one event to a hook point; the
extensions see Gemini CLI's own tool names (``run_shell_command``, ``write_file``,
``mcp_<server>_<tool>``) and arguments.

===============  ============================  ===========================================================
Gemini event     hook point, from stdin        answer, on stdout (exit 0)
===============  ============================  ===========================================================
``BeforeTool``   ``on_pre_tool_use``:          ``{"decision": "deny", "reason"}`` for ``deny``, and for
                 ``tool_name`` → tool_name,    ``ask``, saying who asked (Gemini CLI would ask, but a headless
                 ``tool_input`` → tool_args    run waits for ever, and no field says whether a run is
                                               headless); ``{"decision": "allow"}`` for ``allow``;
                                               ``hookSpecificOutput.tool_input``: ``modified_args`` (Gemini
                                               merges it over the model's arguments)
``AfterTool``    ``on_post_tool_use``:         ``modified_result`` → ``{"decision": "deny", "reason": <the new
                 ``tool_response.llmContent``  result>}``: Gemini CLI gives the model the reason as the tool's
                 → the result text             error in place of its result (with ``additional_context`` after
                                               it); else ``hookSpecificOutput.additionalContext``
``AfterTool``,   ``on_post_tool_use_failure``: ``hookSpecificOutput.additionalContext`` (Gemini CLI puts it
a failed tool    ``tool_response.error``       after the tool's error)
(``error`` set)  (its ``message``) → error
``BeforeAgent``  ``on_user_prompt_submitted``: ``{"decision": "deny", "reason"}`` when rejected;
                 ``prompt`` → prompt           ``hookSpecificOutput.additionalContext``; a rewritten prompt
                                               is not carried (Gemini CLI cannot rewrite one)
``SessionStart`` ``on_session_start``:         ``hookSpecificOutput.additionalContext``
                 ``source`` startup → startup,
                 resume → resume, clear → new
``SessionEnd``   ``on_session_end``:           ``systemMessage``: the ``session_summary``
                 ``reason`` exit (sent at every
                 exit, headless too), other →
                 complete; anything else
                 (clear, logout, ...) →
                 user_exit
``AfterAgent``   ``on_agent_stop``:            ``{"decision": "block", "reason"}`` when a hook blocks: Gemini
                 ``stop_hook_active``,         CLI sends the reason as the next prompt (the hooks see
                 ``transcript_path``, stop     ``stop_hook_active`` then, and decide when to let it stop)
                 reason ``end_turn``
===============  ============================  ===========================================================

A failed tool gets ``on_post_tool_use_failure`` and not ``on_post_tool_use``, as in the host.
``on_user_prompt_transformed`` has no equivalent (Gemini CLI shows no hook the prompt the model
gets).

``BeforeTool`` and ``BeforeAgent`` are guards: they fail closed (exit 2, reason on stderr:
:mod:`.adapter`). ``additional_context`` of a pre-tool hook is not carried. This module
holds the mapping only; it imports nothing heavy.
"""

from __future__ import annotations

import json
from typing import Any, Final

from extension_protocol.hook_names import HOOK_WIRE_NAMES

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

__all__ = ["GEMINI"]

_FAILURE: Final = HOOK_WIRE_NAMES["on_post_tool_use_failure"]
"""``AfterTool`` of a tool that failed runs the failure hook point in place of the row's."""


def _before_tool_request(payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "toolName": field(payload, "tool_name", str),
        "toolArgs": field(payload, "tool_input", dict, required=False) or {},
    }


def _before_tool_reply(_payload: dict[str, Any], answer: dict[str, Any]) -> HookReply:
    decision = answer.get("decision")
    reason = answer.get("reason")
    who = answer.get("decidedBy") or "an extension"
    if decision == "ask":
        # Gemini CLI would ask, but a headless run then waits for ever, and nothing in the payload
        # says whether anyone is there to answer: a hook's ask stops the call.
        return json_reply(
            {
                "decision": "deny",
                "reason": f"{reason or 'confirmation wanted'} ({who} asked for confirmation; "
                "an ask stops the call, as a hook cannot tell whether this Gemini CLI run can ask anyone)",
            }
        )
    if decision == "deny":
        return json_reply({"decision": "deny", "reason": reason or f"denied by {who}"})
    reply: dict[str, Any] = {"decision": "allow"} if decision == "allow" else {}
    if answer.get("modifiedArgs") is not None:
        reply["hookSpecificOutput"] = specific("BeforeTool", tool_input=answer["modifiedArgs"])
    return json_reply(reply)


def _after_tool_request(payload: dict[str, Any]) -> dict[str, Any]:
    params = _before_tool_request(payload)
    response = payload.get("tool_response")
    if isinstance(response, dict):
        error = response.get("error")
        if error not in (None, "", {}):  # the tool failed: {type, message}
            message = error.get("message") if isinstance(error, dict) else error
            text = message if isinstance(message, str) and message else json.dumps(error)
            return {**params, "hook": _FAILURE, "error": text}
        content = response.get("llmContent")
        text = content if isinstance(content, str) else json.dumps(content if content is not None else response)
    else:
        text = response if isinstance(response, str) else json.dumps(response)
    return {**params, "toolResult": {"textResultForLlm": text}}


def _after_tool_reply(_payload: dict[str, Any], answer: dict[str, Any]) -> HookReply:
    result = answer.get("modifiedResult")
    context = answer.get("additionalContext")
    if result is not None:  # Gemini CLI gives the model "Tool result blocked: <reason>" in place of the result
        return json_reply({"decision": "deny", "reason": f"{result}\n\n{context}" if context else result})
    return json_reply({"hookSpecificOutput": specific("AfterTool", additionalContext=context)} if context else None)


def _before_agent_reply(_payload: dict[str, Any], answer: dict[str, Any]) -> HookReply:
    reply: dict[str, Any] = {}
    if answer.get("decision") == "deny":
        reply = {"decision": "deny", "reason": answer.get("reason") or "rejected by the project's extensions"}
    if answer.get("additionalContext"):
        reply["hookSpecificOutput"] = specific("BeforeAgent", additionalContext=answer["additionalContext"])
    return json_reply(reply)


_SOURCES: Final = {"startup": "startup", "resume": "resume", "clear": "new"}

_COMPLETE: Final = ("exit", "other")
"""The ``SessionEnd`` reasons of a session that ended by itself (the others: the user ended it)."""


GEMINI: Final = HookAgent(
    name="gemini",
    display_name="Gemini CLI",
    settings_folder=".gemini",
    events={
        row.event: row
        for row in (
            AgentEvent("BeforeTool", "on_pre_tool_use", True, _before_tool_request, _before_tool_reply),
            AgentEvent("AfterTool", "on_post_tool_use", False, _after_tool_request, _after_tool_reply),
            AgentEvent("BeforeAgent", "on_user_prompt_submitted", True, prompt_request, _before_agent_reply),
            AgentEvent("SessionStart", "on_session_start", False, session_start_request(_SOURCES), session_start_reply),
            AgentEvent("SessionEnd", "on_session_end", False, session_end_request(_COMPLETE), session_end_reply),
            AgentEvent("AfterAgent", "on_agent_stop", False, stop_request, stop_reply),
        )
    },
)
"""Gemini CLI's table: event name → row."""
