"""The reviewed table of how ``extensions serve`` may differ from ``copilot --ahp-host`` on the
AHP 1.0 wire, for the client script of :mod:`ahp_client`.

A :class:`~conformance.compare.Difference` the differential test observes is allowed only when an
entry of :data:`INTENDED` matches it: a difference by design, with its reason. Entries are the
extension conformance suite's :class:`~conformance.differences.Entry` (subject and key path by
glob; ``path=""`` is the subject as a whole, ``kind`` narrows it); the subject starts with the
step (``turn: action chat/toolCallStart``), so ``*: ...`` matches it in any step. An entry that
matches nothing in a run is stale and fails the test too, so the table says only what is true.
The documentation shows the same table (:data:`PAGE`, section "Differences from Copilot CLI"),
row for row (``tests/ahp_conformance/test_ahp_tables.py`` checks it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from conformance.compare import Difference
from conformance.differences import Entry

__all__ = ["INTENDED", "PAGE", "classify", "stale"]

PAGE: Final = "serving-ahp.md"
"""The page of the documentation (under ``docs/``) that shows the table."""

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

_CUSTOMIZATIONS = (
    "AHP's customizations are plugins, directories (agents, skills, prompts, rules, hooks) and MCP servers; "
    "this host's are extensions, which none of those types describes, so it reports none rather than an empty "
    "list that would say none is active"
)
_EDITS = (
    "Copilot CLI tracks the agent's file edits (changesets per session, chat and turn, and counts of added and "
    "deleted lines); this host does not track file edits, so it has no changesets, and it leaves the optional "
    "counts out rather than report zeros it cannot vouch for"
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
    Entry("turn: action chat/usage", "action.usage._meta", _COPILOT_META),
    Entry(
        "*",
        "*provider|snapshots[].state.agents[].displayName",
        "the agent provider is what each server runs: `copilot` there, the configured one here (`openai`)",
        kind="values",
    ),
    Entry(
        "initialize: result of initialize",
        "snapshots[].state.agents[].capabilities.*",
        "Copilot CLI's agent runs several chats in a session and several working directories; this host's session "
        "has one chat and one working directory, and in AHP a capability left out is one the agent lacks (even an "
        "empty object would claim it)",
        kind="cli only",
    ),
    Entry(
        "initialize: result of initialize",
        "completionTriggerCharacters",
        "this host does not answer `completions` over AHP 1.0 (its 0.1.0 protocol does), so it names no characters "
        "that would make a client ask",
        kind="cli only",
    ),
    Entry(
        "initialize: result of initialize",
        "terminalCommandPrefix",
        "Copilot CLI runs a prompt that starts with `!` as a terminal command; this host gives every prompt to the "
        "agent, and in AHP a prefix left out means the host has no such shorthand",
        kind="cli only",
    ),
    Entry(
        "initialize: result of initialize",
        "serverInfo",
        "`serverInfo` is optional in AHP 1.0; this host names itself (`extension-host`), Copilot CLI does not",
        kind="host only",
    ),
    Entry(
        "turn: action chat/toolCallComplete",
        "action.result.success|action.result.content|action.result.error",
        "Copilot CLI 1.0.102 does not load a project's extensions into the sessions of `--ahp-host` (its "
        "`probe_echo` call ends in `Tool 'probe_echo' does not exist.`); this host runs the extension's tool",
    ),
    Entry(
        "turn: action session/serverToolsChanged",
        "action.tools[].*",
        "each server lists the tools its own agent is offered: Copilot CLI its built-in tools (with its own "
        "`_meta`), this host the extensions' tools and its own (`extensions_manage`, `extensions_reload`)",
    ),
    Entry(
        "turn: action chat/usage",
        "action.usage.cacheReadTokens",
        "this host reports the token counts the model endpoint gives, and the scripted endpoint gives no cached "
        "tokens; Copilot CLI reports 0 for them",
        kind="cli only",
    ),
    Entry(
        "subscribe: result of subscribe (session)|initialize: result of initialize",
        "snapshot.state.config|snapshots[].state.config",
        "the session configuration schema is Copilot's runtime's (approval modes, session store, Mission Control "
        "publishing); this host's agent has no such options",
    ),
    Entry("subscribe: result of subscribe (session)", "snapshot.state.customizations", _CUSTOMIZATIONS),
    Entry("*: action session/customizationsChanged", reason=_CUSTOMIZATIONS),
    Entry("*", "*changes|snapshot.state.changesets", _EDITS, kind="cli only"),
    Entry(
        "sessions: root/sessionSummaryChanged",
        "changes.annotations",
        "Copilot CLI gives each session an annotations channel (`ahp-session:/<id>/annotations`) and announces it "
        "in the session list; this host has no annotations",
        kind="cli only",
    ),
    Entry(
        "cancel: root/sessionSummaryChanged",
        "changes.status|changes.chats[].status|changes.modifiedAt",
        "Copilot CLI 1.0.102 tells the session list of a turn's start only with the first prompt's title, and of "
        "a turn's end without the time; this host tells the list each change of the session's status with the "
        "time it changed (the cancelled turn's start, 8, too)",
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
