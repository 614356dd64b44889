"""Guard events that extensions which are not running did not judge: what is said about them.

At a guard hook point (a tool call about to run, a prompt about to be sent) every running
extension's hooks judge. One that should run and does not (not joined yet, ``failed``,
``quarantined``: :data:`~extension_host.info.NOT_RUNNING`) judges nothing, and a guard it holds
would let everything through unseen: a scaffolded guard with a syntax error, say, and
``cat .env`` goes to the model. Which extensions those are is the supervisor's to say; this
module words it for the two places that act on it:

- the host's own sessions (the API, ``serve``, ``chat``, ``mcp``) go on, with one
  ``session.warning`` per such extension on each guarded call (:func:`warning_message`);
- the ``host.hook`` answer for another agent carries :func:`unjudged_answer`, on which the hook
  command blocks the call, or, where the user let this project's calls through
  (``extensions trust --allow-failed-guards``), warns.

It decides nothing, and ignores which hooks such an extension would have had (it never said).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ..info import ExtensionInfo

__all__ = ["ALLOW_FAILED_GUARDS_OPTION", "state", "unjudged_answer", "warning_message"]

ALLOW_FAILED_GUARDS_OPTION: Final = "--allow-failed-guards"
"""The ``extensions trust`` option that lets a project's agent calls through while one of its
extensions cannot run."""


def state(info: ExtensionInfo) -> str:
    """Why ``info`` judges nothing, in a few words: ``project:guard is failed (SyntaxError: ...)``."""
    if info.status == "starting":
        return f"{info.id} has not joined yet (it is starting)"
    return f"{info.id} is {info.status}" + (f" ({info.error})" if info.error else "")


def warning_message(info: ExtensionInfo, subject: str) -> str:
    """The ``session.warning`` of a guarded call (``subject``: "this call of bash", "this prompt")."""
    return f"{state(info)}, so its hooks did not judge {subject}; fix it (extensions inspect {info.name} shows why)"


def unjudged_answer(infos: Sequence[ExtensionInfo], allowed: bool) -> dict[str, Any]:
    """The ``unjudged`` entry of a ``host.hook`` answer for the extensions ``infos`` (not empty):
    ``{message, extensions, allowed}``; ``allowed`` when the user lets the project's calls through."""
    states = "; ".join(state(info) for info in infos)
    their = "its hooks" if len(infos) == 1 else "their hooks"
    if allowed:
        message = (
            f"{states}, so {their} did not judge this call; let through, as 'extensions trust "
            f"{ALLOW_FAILED_GUARDS_OPTION}' asked for this project ('extensions trust' alone ends that)"
        )
    else:
        inspect = ", ".join(f"extensions inspect {info.name}" for info in infos)
        message = (
            f"{states}, so {their} cannot judge this call; fix it ({inspect} shows why), or let this project's "
            f"calls through while an extension cannot run: extensions trust {ALLOW_FAILED_GUARDS_OPTION}"
        )
    return {"message": message, "extensions": [info.id for info in infos], "allowed": allowed}
