"""One hook point of a host's extensions run for another agent: the ``host.hook`` request.

A hook adapter (:mod:`~extension_host.bridges.agent_hooks.adapter`) turns an agent's hook payload into an agent-neutral
request, ``{hook, toolName?, toolArgs?, toolResult?, error?, prompt?, source?, reason?,
transcriptPath?, stopHookActive?, agentId?, agentType?, response?}``, and gets back
an agent-neutral answer (see :func:`run_hook_call`). The request arrives over the control socket
(from a hook command, a process of the same user, but still checked: shapes and sizes are
validated here) or from the adapter's one-shot host. This module owns that shape and how it is
run on an :class:`~extension_host.ExtensionHost`; it ignores any agent's own format.

``agentId`` (with ``agentType``) says the call was made inside one of the agent's subagents:
the hook point then runs in that child's scope (:func:`~extension_host.events.agent_scope`),
so its input carries ``sessionId`` = ``agentId`` = the child's id, ``agentType``, and
``parentAgentId`` = this host's session, as GitHub Copilot CLI gives a child's hooks, and its
``hook.start``/``hook.end`` events carry the child's ``agentId``.

``hook`` is the wire name of a hook point (``preToolUse``, ``postToolUse``,
``postToolUseFailure`` (with the tool's ``error``), ``userPromptSubmitted``, ``sessionStart``,
``sessionEnd``, ``agentStop``, ``subagentStart`` and ``subagentStop`` (both with ``agentId``;
``response``: the subagent's answer), which run in the session that owns the subagent). The
answer has only the keys that apply: ``decision`` (``allow``/``ask``/``deny``; ``block`` for
``agentStop`` and ``subagentStop``: the agent should go on with ``reason``), ``reason``,
``decidedBy``, ``modifiedArgs``,
``modifiedPrompt``, ``modifiedResult`` (text), ``additionalContext``, ``sessionSummary``, and for
the two guard hook points ``unjudged`` (``{message, extensions, allowed}``) when extensions that
should be running are not, so they judged nothing (:mod:`extension_host.hooks.unjudged`):
``allowed`` when the user let this project's calls through meanwhile; and, for every hook point,
``trustRefused`` when the project's own extensions do not run because the user's trust record
cannot be read (damaged, another user's, open to others' writes): the reason, naming the file
and the fix. Trust that cannot be determined is not a decision, so the hook command treats
such a call as one its guards could not judge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Literal, NotRequired, TypedDict, cast

from pydantic import ConfigDict, StrictBool, TypeAdapter, ValidationError, with_config
from typing_extensions import TypedDict as PydanticTypedDict

from extension_protocol.connection import RpcError
from extension_protocol.hook_points import HOOK_POINTS
from extension_protocol.protocol import HOOK_NAMES, HOOK_WIRE_NAMES, INVALID_PARAMS, ResultType, hook_name
from extension_protocol.results import ToolResult

from ..errors import TrustFileError
from ..events import AgentScope, agent_scope
from ..hooks.unjudged import unjudged_answer
from ..host import ExtensionHost
from .methods import METHOD_HOOK

__all__ = [
    "HOOK_CALL_NAMES",
    "MAX_HOOK_AGENT_CHARS",
    "MAX_HOOK_TOOL_NAME_CHARS",
    "HookCall",
    "HookWireName",
    "parse_hook_call",
    "run_hook_call",
]

MAX_HOOK_TOOL_NAME_CHARS: Final = 256
"""Longest tool name a hook request may carry; agents' tool names are far shorter."""
MAX_HOOK_AGENT_CHARS: Final = 256
"""Longest subagent id or type a hook request may carry."""

_NOT_CALLED: Final = frozenset({"on_user_prompt_transformed", "on_error_occurred"})
"""The hook points no other agent has: the transformed prompt, and the error hook the host calls itself."""
HOOK_CALL_NAMES: Final = tuple(HOOK_WIRE_NAMES[name] for name in HOOK_NAMES if name not in _NOT_CALLED)
"""The ``hook`` values ``host.hook`` takes: every other hook point, by its wire name."""
if TYPE_CHECKING:
    HookWireName = str
else:
    HookWireName = Literal[HOOK_CALL_NAMES]
_SUBAGENT_HOOKS: Final = frozenset({"on_subagent_start", "on_subagent_stop"})


class _ToolResultShape(PydanticTypedDict):
    textResultForLlm: str
    resultType: NotRequired[ResultType]


@with_config(ConfigDict(defer_build=True))  # built at the first call: a command that makes none never builds it
class _HookCallShape(PydanticTypedDict):
    hook: HookWireName
    toolName: NotRequired[str]
    toolArgs: NotRequired[dict[str, Any]]
    toolResult: NotRequired[_ToolResultShape]
    error: NotRequired[str]
    prompt: NotRequired[str]
    source: NotRequired[str]
    reason: NotRequired[str]
    transcriptPath: NotRequired[str]
    stopHookActive: NotRequired[StrictBool]
    agentId: NotRequired[str]
    agentType: NotRequired[str]
    response: NotRequired[str]


class HookCall(TypedDict, total=False):
    """A validated ``host.hook`` request (the same keys as its params)."""

    hook: str
    toolName: str
    toolArgs: dict[str, Any]
    toolResult: dict[str, str]
    error: str
    prompt: str
    source: str
    reason: str
    transcriptPath: str
    stopHookActive: bool
    agentId: str
    agentType: str
    response: str


_VALIDATOR: Final = TypeAdapter(_HookCallShape)
_TOOL_HOOKS: Final = frozenset(point.name for point in HOOK_POINTS.values() if point.for_tools)
_SOURCES: Final = frozenset({"startup", "resume", "new"})
_END_REASONS: Final = frozenset({"complete", "error", "abort", "timeout", "user_exit"})


def parse_hook_call(params: Any) -> HookCall:
    """Check ``params`` of ``host.hook``; raises ``INVALID_PARAMS`` naming the field at fault."""
    try:
        call: dict[str, Any] = dict(_VALIDATOR.validate_python(params))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "params"
        raise RpcError(INVALID_PARAMS, f"{METHOD_HOOK}: {where}: {first['msg']}") from None
    hook = call["hook"]
    point = hook_name(hook)
    if point in _TOOL_HOOKS:
        name = call.get("toolName")
        if not name or len(name) > MAX_HOOK_TOOL_NAME_CHARS:
            raise RpcError(
                INVALID_PARAMS, f"{METHOD_HOOK}: {hook} needs a toolName of 1 to {MAX_HOOK_TOOL_NAME_CHARS} characters"
            )
    for key in ("agentId", "agentType"):
        if key in call and not 0 < len(call[key]) <= MAX_HOOK_AGENT_CHARS:
            raise RpcError(INVALID_PARAMS, f"{METHOD_HOOK}: {key} must have 1 to {MAX_HOOK_AGENT_CHARS} characters")
    if "agentType" in call and "agentId" not in call:
        raise RpcError(INVALID_PARAMS, f"{METHOD_HOOK}: agentType needs the agentId of the subagent")
    if point in _SUBAGENT_HOOKS and "agentId" not in call:
        raise RpcError(INVALID_PARAMS, f"{METHOD_HOOK}: {hook} needs the agentId of the subagent")
    if point == "on_post_tool_use" and "toolResult" not in call:
        raise RpcError(INVALID_PARAMS, f"{METHOD_HOOK}: {hook} needs a toolResult")
    if point == "on_post_tool_use_failure" and "error" not in call:
        raise RpcError(INVALID_PARAMS, f"{METHOD_HOOK}: {hook} needs an error")
    if point == "on_user_prompt_submitted" and "prompt" not in call:
        raise RpcError(INVALID_PARAMS, f"{METHOD_HOOK}: {hook} needs a prompt")
    if point == "on_session_start" and call.get("source", "startup") not in _SOURCES:
        raise RpcError(INVALID_PARAMS, f"{METHOD_HOOK}: source must be one of {', '.join(sorted(_SOURCES))}")
    if point == "on_session_end" and call.get("reason", "complete") not in _END_REASONS:
        raise RpcError(INVALID_PARAMS, f"{METHOD_HOOK}: reason must be one of {', '.join(sorted(_END_REASONS))}")
    return cast(HookCall, call)


async def run_hook_call(host: ExtensionHost, call: HookCall) -> dict[str, Any]:
    """Run the hook point ``call`` names on ``host``; returns the agent-neutral answer."""
    refused = await _trust_refused(host)
    child = call.get("agentId")
    if child is None or hook_name(call["hook"]) in _SUBAGENT_HOOKS:  # those two run in the session that owns the child
        return _compact(**await _run(host, call), trustRefused=refused)
    scope = AgentScope(child, call.get("agentType", ""), host.session_id, tool_call_id="")
    with agent_scope(scope):
        return _compact(**await _run(host, call), trustRefused=refused)


async def _run(host: ExtensionHost, call: HookCall) -> dict[str, Any]:
    point = hook_name(call["hook"])
    if point == "on_pre_tool_use":
        check = await host.check_tool_call(call["toolName"], call.get("toolArgs") or {})
        return _compact(
            decision=check.decision,
            reason=check.reason,
            decidedBy=check.decided_by,
            modifiedArgs=check.arguments,
            additionalContext=check.additional_context,
            unjudged=_unjudged(host),
        )
    if point == "on_post_tool_use":
        given = call["toolResult"]
        result = ToolResult(given["textResultForLlm"], given.get("resultType", "success"))  # type: ignore[arg-type]
        review = await host.review_tool_result(call["toolName"], call.get("toolArgs") or {}, result)
        return _compact(
            modifiedResult=review.result.text_result_for_llm if review.result is not None else None,
            additionalContext=review.additional_context,
        )
    if point == "on_post_tool_use_failure":
        guidance = await host.review_tool_failure(call["toolName"], call.get("toolArgs") or {}, call["error"])
        return _compact(additionalContext=guidance)
    if point == "on_agent_stop":
        stop = await host.stop_agent(call.get("transcriptPath"), call.get("stopHookActive", False))
        return _compact(decision="block" if stop.blocked else None, reason=stop.reason if stop.blocked else None)
    if point == "on_subagent_start":
        context = await host.start_subagent(
            call["agentId"], call.get("agentType", ""), transcript_path=call.get("transcriptPath")
        )
        return _compact(additionalContext=context)
    if point == "on_subagent_stop":
        stop = await host.stop_subagent(
            call["agentId"],
            call.get("agentType", ""),
            call.get("response", ""),
            active=call.get("stopHookActive", False),
            transcript_path=call.get("transcriptPath"),
        )
        return _compact(decision="block" if stop.blocked else None, reason=stop.reason if stop.blocked else None)
    if point == "on_user_prompt_submitted":
        prompt = call["prompt"]
        outcome = await host.submit_prompt(prompt)
        return _compact(
            decision="deny" if outcome.rejected else None,
            reason=outcome.reason,
            decidedBy=outcome.rejected_by,
            modifiedPrompt=outcome.prompt if outcome.prompt != prompt else None,
            additionalContext=outcome.additional_context,
            unjudged=_unjudged(host),
        )
    if point == "on_session_start":
        started = await host.start_session(call.get("source", "startup"))
        return _compact(additionalContext=started.additional_context)
    ended = await host.end_session(call.get("reason", "complete"))
    return _compact(sessionSummary=ended.session_summary)


async def _trust_refused(host: ExtensionHost) -> str | None:
    """Why the project's own extensions are held back because the user's trust record cannot be
    read (naming the file, what is wrong with it and the fix), or ``None``. Looked at only while
    some are held back: a record that has become readable and trusted since is applied first
    (the extensions start), so they judge this very call."""
    if not any(info.source == "project" and info.status == "untrusted" for info in host.extensions):
        return None
    decision = host.trust
    if decision.trusted:
        await host.apply_changes(set())
        return None
    return decision.problem


def _unjudged(host: ExtensionHost) -> dict[str, Any] | None:
    """What the extensions that are not running did not judge, once the hooks have run; the
    user's trust record says whether the call may go through all the same (unreadable: no)."""
    missing = host.not_running
    if not missing:
        return None
    try:
        allowed = host.trust_store.failed_guards_allowed(host.project_root)
    except TrustFileError:
        allowed = False
    return unjudged_answer(missing, allowed)


def _compact(**fields: Any) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not None}
