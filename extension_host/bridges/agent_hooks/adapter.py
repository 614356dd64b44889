"""What every hook adapter shares: read the agent's payload, run the hook point, answer, fail closed.

An agent (Claude Code, Gemini CLI) runs ``extensions hook AGENT EVENT`` with one JSON object on
stdin. :func:`run_agent_hook` looks ``EVENT`` up in the agent's table (:class:`HookAgent`, one
:class:`AgentEvent` per row, in :mod:`.claude` and :mod:`.gemini`), turns the payload
into a ``host.hook`` request (:mod:`.hook_calls`), asks the host running for the project
(:mod:`.client`) or, with none, a host started for this one call (:mod:`.one_shot`,
imported only then), and turns the answer into what the agent reads: a :class:`HookReply`
(stdout, stderr, exit code).

Guards fail closed. For a guard event (a tool about to run, a prompt about to be sent) anything
that keeps the extensions from judging is a block: exit code 2 with the reason on stderr in one
line, which both agents read as "do not do it", whatever they make of stdout. That is a payload
too big, not JSON or nested deeper than the wire's :data:`~extension_protocol.nesting.MAX_DEPTH`
levels, a field of the wrong type, a host that cannot be reached, fails or stopped answering,
an extension in scope that is not running (the host's answer names it under ``unjudged``), and
the project's extensions held back because the user's trust record cannot be read
(``trustRefused``). Other events say what went wrong on stderr and exit 1, which both agents
show as a warning and go on. Three things only warn, in one stderr line beside the answer: a
runtime folder that cannot be used (another user took it first) leaves the call to a host of
its own, the user may have let this project's calls through while an extension cannot run
(``allowed`` in ``unjudged``), and a trust record that cannot be read at an event that is not a
guard. Every wait draws from one deadline (:mod:`.deadline`), so the command answers within
the agents' limit: what was still under way when it ran out is the reason. A host that did not
answer in time is replaced or left alone and not waited for again (:mod:`.health`).

This module stays light to import (no event loop, no pydantic, no host): it is paid on every
tool call. It ignores what the agents' fields mean; the tables hold that.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any, Final, NamedTuple

from extension_protocol.hook_names import HOOK_WIRE_NAMES
from extension_protocol.nesting import TooDeep, loads

from ...control.methods import METHOD_HOOK
from ...errors import RuntimeFolderError
from ...project.paths import find_project_root
from .client import HostTimeoutError, HostUnreachableError, ask_running_host
from .deadline import HookDeadline
from .health import check_health, replace_hung_host

__all__ = [
    "EXIT_BLOCK",
    "EXIT_WARNING",
    "MAX_HOOK_INPUT_BYTES",
    "AgentEvent",
    "Background",
    "HookAgent",
    "HookReply",
    "OneShot",
    "PayloadError",
    "field",
    "json_reply",
    "prompt_request",
    "run_agent_hook",
    "session_end_reply",
    "session_end_request",
    "session_start_reply",
    "session_start_request",
    "specific",
    "stop_reply",
    "stop_request",
]

MAX_HOOK_INPUT_BYTES: Final = 8 * 1024 * 1024
"""Largest payload a hook command reads from stdin (a tool's whole output can be in it)."""
EXIT_BLOCK: Final = 2
"""The exit code both agents read as "block", with stderr as the reason."""
EXIT_WARNING: Final = 1
"""Any other non-zero exit: both agents show stderr as a warning and carry on."""


class PayloadError(ValueError):
    """The agent's payload lacks a field the hook point needs, or has one of the wrong type."""


# Records are NamedTuples, not dataclasses: importing dataclasses (it imports inspect) would add
# several milliseconds to every hook call.
class HookReply(NamedTuple):
    """What the hook command prints and how it exits."""

    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0


def json_reply(answer: Mapping[str, Any] | None) -> HookReply:
    """Exit 0 with ``answer`` as JSON on stdout (nothing at all for an empty answer)."""
    return HookReply(json.dumps(answer) + "\n" if answer else "")


class AgentEvent(NamedTuple):
    """One row of an agent's table: its event, the hook point it runs, and both translations.

    ``hook`` is the hook point by its Python name (``on_pre_tool_use``); ``request(payload)``
    builds the rest of the ``host.hook`` params, ``hook`` being that point's wire name unless it
    says otherwise (raising :class:`PayloadError` for a payload it cannot use);
    ``reply(payload, answer)`` turns the host's answer into the agent's output.
    """

    event: str
    hook: str
    guard: bool
    request: Callable[[dict[str, Any]], dict[str, Any]]
    reply: Callable[[dict[str, Any], dict[str, Any]], HookReply]


class HookAgent(NamedTuple):
    """An agent whose command hooks this project serves: its name, its events, and where its
    settings live (``settings_folder`` under the project or the user's home)."""

    name: str
    display_name: str
    events: Mapping[str, AgentEvent]
    settings_folder: str


OneShot = Callable[[Path, dict[str, Any], HookDeadline], dict[str, Any]]
"""Runs a ``host.hook`` request in a host of its own for the project, by the deadline given."""
Background = Callable[[Path, dict[str, Any], HookDeadline], dict[str, Any] | None]
"""Starts the project's background host and asks it, by the deadline given; ``None``: it did not start."""


def run_agent_hook(
    agent: HookAgent,
    event: str,
    stdin: bytes,
    project_root: Path | None,
    *,
    one_shot: OneShot | None = None,
    background: Background | None = None,
    deadline: HookDeadline | None = None,
) -> HookReply:
    """Answer one hook call of ``agent`` for ``event`` with payload ``stdin``; never raises.

    The project is the one containing ``project_root`` (``None``: the working directory, where
    the agents run their hooks). Every wait ends at ``deadline`` (default: a whole one from now);
    what was still under way then is the answer's reason.

    With no host on the project's control socket, ``background(root, params, deadline)`` may
    start one and ask it (``None``: it did not); else ``one_shot(root, params, deadline)`` runs
    the request in a host of its own (default :func:`.one_shot.run_once`). A runtime
    folder that cannot be used leaves the call to ``one_shot`` with a warning line.
    """
    if deadline is None:
        deadline = HookDeadline()
    row = agent.events.get(event)
    if row is None:
        known = ", ".join(agent.events)
        return HookReply(
            stderr=f"extensions hook {agent.name}: unknown event {event!r}; events: {known}\n", exit_code=EXIT_WARNING
        )
    try:
        payload = _payload(stdin)
        params = {"hook": HOOK_WIRE_NAMES[row.hook], **row.request(payload)}
    except PayloadError as exc:
        return _failed(agent, row, f"the {agent.display_name} {event} payload on stdin {exc}")
    except Exception as exc:  # a payload no row foresaw must not crash a guard open
        return _failed(agent, row, f"the {agent.display_name} {event} payload could not be read: {exc!r}")
    note = ""
    try:
        project_root = find_project_root(project_root)
        answer, note = _ask(project_root, params, one_shot, background, deadline)
    except Exception as exc:  # every failure is an answer: a guard must deny, not crash through
        where = f"of {project_root} " if project_root is not None else ""
        return _failed(agent, row, f"the extensions {where}could not be asked: {exc}")
    if not isinstance(answer, dict):
        return _failed(agent, row, f"the host answered {METHOD_HOOK} with {answer!r}, not an object", note)
    refused = answer.get("trustRefused")
    if refused is not None:
        if not isinstance(refused, str) or not refused:
            return _failed(agent, row, f"the host's answer to {METHOD_HOOK} has an unreadable 'trustRefused'", note)
        why = f"this project's extensions cannot run, as the trust record cannot be read: {refused}"
        if row.guard:
            return _failed(agent, row, why, note)
        note = "; ".join(filter(None, (why, note)))
    unjudged = answer.get("unjudged") if row.guard else None
    if unjudged is not None:
        if not isinstance(unjudged, dict) or not isinstance(unjudged.get("message"), str) or not unjudged["message"]:
            return _failed(agent, row, f"the host's answer to {METHOD_HOOK} has an unreadable 'unjudged'", note)
        if unjudged.get("allowed") is not True:
            return _failed(agent, row, unjudged["message"], note)
        note = "; ".join(filter(None, (unjudged["message"], note)))
    try:
        reply = row.reply(payload, answer)
    except Exception as exc:  # an answer of an unexpected shape is no answer: a guard must still deny
        return _failed(agent, row, f"the host's answer to {METHOD_HOOK} could not be read: {exc!r}", note)
    return _noted(agent, row, reply, note)


def _ask(
    root: Path, params: dict[str, Any], one_shot: OneShot | None, background: Background | None, deadline: HookDeadline
) -> tuple[Any, str]:
    """The answer to ``params``, and what to warn about how it was got ("" when nothing)."""
    if one_shot is None:
        from .one_shot import run_once

        def one_shot(root: Path, params: dict[str, Any], deadline: HookDeadline) -> dict[str, Any]:
            return run_once(root, params, None, deadline)

    try:
        check_health(root, deadline)  # a host that stopped answering is not waited for again
        answer = ask_running_host(root, METHOD_HOOK, params, deadline)
        if answer is None and background is not None:
            answer = background(root, params, deadline)
    except RuntimeFolderError as exc:
        return one_shot(root, params, deadline), f"{exc}; answered by a host started for this call"
    except HostTimeoutError as exc:
        raise HostUnreachableError(replace_hung_host(root, exc)) from None
    return (answer if answer is not None else one_shot(root, params, deadline)), ""


def _payload(stdin: bytes) -> dict[str, Any]:
    if len(stdin) > MAX_HOOK_INPUT_BYTES:
        raise PayloadError(f"is over {MAX_HOOK_INPUT_BYTES // (1024 * 1024)} MiB")
    try:
        payload = loads(stdin)  # the wire's own limit: nothing deeper could be sent to a host
    except TooDeep as exc:
        raise PayloadError(f"is {exc}") from None
    except ValueError as exc:
        raise PayloadError(f"is not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise PayloadError("is not a JSON object")
    return payload


def _failed(agent: HookAgent, row: AgentEvent, why: str, note: str = "") -> HookReply:
    from ...visible import safe_cell

    why = "; ".join(filter(None, (why, note)))
    if row.guard:
        return HookReply(
            stderr=f"blocked by the project's extensions (failing closed): {safe_cell(why)}\n", exit_code=EXIT_BLOCK
        )
    return HookReply(stderr=f"extensions hook {agent.name} {row.event}: {safe_cell(why)}\n", exit_code=EXIT_WARNING)


def _noted(agent: HookAgent, row: AgentEvent, reply: HookReply, note: str) -> HookReply:
    """``reply`` with ``note`` as a warning: on its stderr line if it has one, else as its own line."""
    if not note:
        return reply
    from ...visible import safe_cell

    if reply.stderr:
        return reply._replace(stderr=f"{reply.stderr.rstrip()}; also: {safe_cell(note)}\n")
    return reply._replace(stderr=f"extensions hook {agent.name} {row.event}: warning: {safe_cell(note)}\n")


def field(payload: Mapping[str, Any], name: str, kind: type, *, required: bool = True) -> Any:
    """``payload[name]`` checked to be a ``kind`` (``None`` when absent and not required)."""
    value = payload.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, kind):
        raise PayloadError(
            f"has no {kind.__name__} field {name!r}"
            if value is None
            else f"has a {name!r} that is not a {kind.__name__}"
        )
    return value


def specific(event: str, **fields: Any) -> dict[str, Any]:
    """A ``hookSpecificOutput`` object for ``event``: the fields given, ``None`` ones left out."""
    return {"hookEventName": event, **{key: value for key, value in fields.items() if value is not None}}


def session_start_request(sources: Mapping[str, str]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The ``SessionStart`` request of an agent whose ``source`` values map by ``sources`` to
    the host's (anything else: ``startup``); both agents send the same payload field."""

    def request(payload: dict[str, Any]) -> dict[str, Any]:
        source = field(payload, "source", str, required=False) or "startup"
        return {"source": sources.get(source, "startup")}

    return request


def session_start_reply(_payload: dict[str, Any], answer: dict[str, Any]) -> HookReply:
    """``SessionStart``'s answer, the same for both agents: the hooks' context, if any."""
    context = answer.get("additionalContext")
    return json_reply({"hookSpecificOutput": specific("SessionStart", additionalContext=context)} if context else None)


def session_end_request(complete: Collection[str]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The ``SessionEnd`` request of an agent whose ``reason`` values in ``complete`` (or no
    reason) end the session as ``complete``; any other ends it as ``user_exit``."""

    def request(payload: dict[str, Any]) -> dict[str, Any]:
        reason = field(payload, "reason", str, required=False)
        return {"reason": "complete" if reason is None or reason in complete else "user_exit"}

    return request


def session_end_reply(_payload: dict[str, Any], answer: dict[str, Any]) -> HookReply:
    """``SessionEnd``'s answer: the hooks' session summary as a system message."""
    summary = answer.get("sessionSummary")
    return json_reply({"systemMessage": summary} if summary else None)


def prompt_request(payload: dict[str, Any]) -> dict[str, Any]:
    """The request of a prompt about to be sent, the same for both agents: its ``prompt``."""
    return {"prompt": field(payload, "prompt", str)}


def stop_request(payload: dict[str, Any]) -> dict[str, Any]:
    """The agent-stop request of an agent about to stop, the same for both agents: whether it
    was answering a hook's follow-up (``stop_hook_active``) and its ``transcript_path``."""
    params: dict[str, Any] = {
        "stopHookActive": field(payload, "stop_hook_active", bool, required=False) or False,
    }
    transcript = field(payload, "transcript_path", str, required=False)
    if transcript:
        params["transcriptPath"] = transcript
    return params


def stop_reply(_payload: dict[str, Any], answer: dict[str, Any]) -> HookReply:
    """The agent-stop answer, the same for both agents: ``{"decision": "block", "reason"}`` (the
    agent goes on with the reason as its next instruction) when a hook blocked, else nothing."""
    if answer.get("decision") != "block":
        return json_reply(None)
    return json_reply({"decision": "block", "reason": answer.get("reason") or "an extension asked to go on"})
