"""The reviewed table of how ``extensions serve`` may differ from ``copilot --ahp-host`` on the
AHP 1.0 wire, for the client script of :mod:`ahp_client`.

A :class:`~conformance.compare.Difference` the differential test observes is allowed only when an
entry of :data:`INTENDED` matches it: a difference by design, with its reason. Entries are the
extension conformance suite's :class:`~conformance.differences.Entry` (subject and key path by
glob; ``path=""`` is the subject as a whole, ``kind`` narrows it); the subject starts with the
step (``turn: action chat/toolCallStart``), so ``*: ...`` matches it in any step. An entry that
matches nothing in a run is stale and fails the test too, so the table says only what is true.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from conformance.compare import Difference
from conformance.differences import Entry

__all__ = ["INTENDED", "classify", "stale"]

_AUTH = (
    "Copilot CLI serves GitHub Copilot, which needs the user's GitHub credential: it advertises the GitHub "
    "API as a required protected resource and takes only a sealed token bound to the connection; this host "
    "answers only its own user (loopback and the listener's token), so it advertises no protected resource "
    "and the script has nothing to authenticate"
)
_COPILOT_META = (
    "Copilot CLI's own metadata under `_meta` (`copilot.*`: its runtime's context, checkpoints, pending "
    "messages, usage, tool telemetry, encryption keys); AHP leaves `_meta` to each implementation"
)

INTENDED: Final[tuple[Entry, ...]] = (
    Entry("authenticate: result of authenticate|authenticate: action root/agentsChanged", reason=_AUTH),
    Entry(
        "initialize: result of initialize", "_meta", _AUTH + " (`copilot.authChallenge`, `copilot.encryptionRequired`)"
    ),
    Entry("initialize: result of initialize", "snapshots[].state.agents[].protectedResources", _AUTH),
    Entry("reconnect: result of reconnect", "_meta", _AUTH + " (a new connection gets a new challenge)"),
    Entry(
        "reconnect: result of reconnect",
        "missing[]|actions[].*",
        "Copilot CLI withholds a session's and a chat's actions from a connection until it authenticates again, "
        "so it lists them as missing and replays nothing; this host needs no authentication and replays what "
        "the client missed",
    ),
    Entry("initialize: result of initialize", "snapshots[].state._meta", _COPILOT_META),
    Entry("subscribe: result of subscribe (session)", "snapshot.state._meta", _COPILOT_META),
    Entry("*: action session/metaChanged", reason=_COPILOT_META),
    Entry("turn: action chat/toolCallComplete", "action._meta", _COPILOT_META),
    Entry(
        "*",
        "*provider|snapshots[].state.agents[].displayName",
        "the agent provider is what each server runs: `copilot` there, the configured one here (`openai`)",
        kind="values",
    ),
    Entry(
        "turn: action chat/toolCallComplete",
        "action.result.success|action.result.content|action.result.error",
        "Copilot CLI 1.0.102 does not load a project's extensions into the sessions of `--ahp-host` (its "
        "`probe_echo` call ends in `Tool 'probe_echo' does not exist.`); this host runs the extension's tool",
    ),
    Entry(
        "subscribe: result of subscribe (session)|initialize: result of initialize",
        "snapshot.state.config|snapshots[].state.config",
        "the session configuration schema is Copilot's runtime's (approval modes, session store, Mission Control "
        "publishing); this host's agent has no such options",
    ),
    Entry(
        "subscribe: result of subscribe (*)",
        "snapshot.state.changesets",
        "Copilot CLI tracks the agent's file edits per turn and session (changeset channels); this host does not",
    ),
    Entry(
        "initialize: result of initialize",
        "serverInfo",
        "`serverInfo` is optional in AHP 1.0; this host names itself (`extension-host`), Copilot CLI does not",
        kind="host only",
    ),
)
"""Differences by design (each with its reason)."""


def classify(difference: Difference, table: Iterable[Entry] = INTENDED) -> Entry | None:
    """The entry of ``table`` that allows ``difference``, or ``None``."""
    return next((entry for entry in table if entry.matches(difference, "", "")), None)


def stale(differences: Iterable[Difference], table: Iterable[Entry] = INTENDED) -> list[Entry]:
    """The entries of ``table`` that allow none of ``differences``."""
    found = list(differences)
    return [entry for entry in table if not any(entry.matches(d, "", "") for d in found)]
