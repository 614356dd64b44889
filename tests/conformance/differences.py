"""The reviewed tables of how this host may differ from the real Copilot CLI on the wire.

A :class:`~conformance.compare.Difference` the suite observes is allowed only when an entry of
:data:`INTENDED` matches it (a difference by design, with its reason; the section "Differences
from Copilot CLI" of ``docs/other-agents.md`` lists exactly these). Anything else fails the suite.

An entry matches a difference's subject and key path by glob (``fnmatch``: ``*`` matches
anything, ``[`` is literal here); ``path=""`` is the subject as a whole (sent by one side only),
``path="*"`` any key of it; ``a|b`` is either (subject or key). ``languages``, ``scenarios`` and ``kind`` narrow
it (empty: any).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Final

from conformance.compare import Difference

__all__ = ["INTENDED", "PAGE", "PAGE_HEADING", "Entry", "classify", "page_rows", "page_table"]


@dataclass(frozen=True)
class Entry:
    """A kind of difference: which ones it matches, and why it is allowed."""

    subject: str
    path: str = ""
    reason: str = ""
    kind: str = ""
    """Only differences of this kind (``cli only``, ``host only``, ``values``...; empty: any)."""
    languages: tuple[str, ...] = ()
    scenarios: tuple[str, ...] = ()

    def matches(self, difference: Difference, language: str, scenario: str) -> bool:
        if self.languages and language not in self.languages:
            return False
        if self.scenarios and scenario not in self.scenarios:
            return False
        if bool(self.path) != bool(difference.path):  # a key never stands for the whole subject
            return False
        if self.kind and difference.kind != self.kind:
            return False
        paths = self.path.split("|")
        subjects = self.subject.split("|")
        return any(_glob(difference.subject, subject) for subject in subjects) and any(
            _glob(difference.path, path) for path in paths
        )

    def what(self) -> str:
        """What it matches, in words: ``subject`` or ``subject`` key ``path``."""
        keys = ", ".join(f"`{path}`" for path in self.path.split("|")) if self.path else ""
        where = f"`{self.subject}`" + (f" key{'s' if '|' in self.path else ''} {keys}" if keys else "")
        narrowed = [*self.languages, *self.scenarios, *([self.kind] if self.kind else [])]
        return where + (f" ({', '.join(narrowed)})" if narrowed else "")


def _glob(text: str, pattern: str) -> bool:
    return fnmatchcase(text, pattern.replace("[", "[[]"))


_CLI_LOOP = (
    "bookkeeping of the CLI's own model client (interaction, turn and API-call ids, routing); "
    "the SDK passes it through and extensions do not depend on it"
)
_DECLARED_HOOKS = (
    "the Python SDK declares the hooks an extension implements (`hookTypes`) and this host "
    "calls only those; the CLI calls every hook point and the SDK answers the others with no "
    "output"
)
_HOST_EXTRA = (
    "this host's addition (declared in its event schema); the SDK passes it through and "
    "extensions written for the CLI never read it"
)

_TASK = (
    "the CLI runs a subagent as one of its session tasks (`host.event` `task_transition`) and tells "
    "extensions of each change; this host runs no session tasks"
)

_SUBSCRIBED = (
    "this host sends an extension only the event types it subscribed to, and the Python SDK "
    "subscribes when `session.on` is called, after joining: which events come before that "
    "varies (the JavaScript SDK subscribes to all when it joins, so the `.mjs` variants compare"
    " which events are sent)"
)

INTENDED: Final = (
    Entry("result of connect", "version", kind="values", reason="each answers with its own version"),
    Entry(
        "result of connect",
        "taskKinds[]",
        reason="this host runs no session tasks (background agents, shells), so it offers an extension none",
    ),
    Entry(
        "result of session.resume",
        "capabilities.ui.elicitation",
        kind="values",
        reason=(
            "this host says it can ask the user only when something can answer; the CLI says so in a prompt "
            "run (`-p`) too, where nothing can"
        ),
    ),
    Entry(
        "event session.usage_info",
        reason="the CLI's context-window accounting; this host keeps no context window, its agents report usage",
    ),
    Entry(
        "event system.message",
        reason=(
            "the CLI's own system prompt, recorded in the session; this host's agent has no system prompt of its own"
        ),
    ),
    Entry("event *", languages=("py",), reason=_SUBSCRIBED),
    Entry("event *", "event *", kind="link", languages=("py",), reason=_SUBSCRIBED),
    Entry("hook *", languages=("py",), reason=_DECLARED_HOOKS),
    Entry("result of hook *", languages=("py",), reason=_DECLARED_HOOKS),
    Entry(
        "event model.*",
        reason=(
            "the CLI's telemetry of its own model client (call start, messages, snapshots, logs); this "
            "host's agents report `assistant.usage`"
        ),
    ),
    Entry("event session.skills_loaded", reason="skills are a CLI feature this host does not have"),
    Entry(
        "event session.mcp_servers_loaded",
        reason="MCP servers of the session are a CLI feature; this host serves MCP the other way (`extensions mcp`)",
    ),
    Entry(
        "result of session.commands.list [kind=builtin]",
        reason="the CLI's own slash commands; this host's commands are the extensions'",
    ),
    Entry("result of session.resume", "workspacePath", reason="each keeps a session's files in its own folder"),
    Entry(
        "event user.message",
        "data.interactionId|data.turnId|data.delivery|data.parentAgentTaskId|data.supportedNativeDocumentMimeTypes",
        reason=_CLI_LOOP,
        kind="cli only",
    ),
    Entry("event assistant.turn_start", "data.interactionId", reason=_CLI_LOOP, kind="cli only"),
    Entry("event tool.execution_complete", "data.interactionId|data.rte", reason=_CLI_LOOP, kind="cli only"),
    Entry(
        "event assistant.message",
        "data.interactionId|data.originatingMessageId|data.apiCallId|data.rte",
        reason=_CLI_LOOP,
        kind="cli only",
    ),
    Entry(
        "event assistant.usage",
        "data.*",
        kind="cli only",
        reason="the CLI's billing, quota and request telemetry of a model call",
    ),
    Entry(
        "event assistant.message_delta",
        reason="this host streams the reply to extensions; the CLI in a prompt run (`-p`) does not",
    ),
    Entry("event hook.* *", "data.hook", reason=_HOST_EXTRA, kind="host only"),
    Entry("event hook.end *", "data.calls", reason=_HOST_EXTRA, kind="host only"),
    Entry(
        "hook agentStop|event hook.start agentStop|hook subagentStart|event hook.start subagentStart|"
        "hook subagentStop|event hook.start subagentStop",
        "transcriptPath|data.input.transcriptPath",
        kind="values",
        reason="the transcript is this host's own session log (its `events.jsonl`), in its sessions folder",
    ),
    Entry(
        "hook userPromptTransformed|event hook.start userPromptTransformed",
        "transformedPrompt|data.input.transformedPrompt",
        kind="values",
        reason=(
            "the CLI prefixes the current date and appends the prompt hooks' context as a "
            "`<system_reminder>`; this host adds neither (the context is a message of its own)"
        ),
    ),
    Entry(
        "hook sessionStart|event hook.start sessionStart",
        "initialPrompt|data.input.initialPrompt",
        kind="cli only",
        reason="this host starts its session before any prompt; the CLI in a prompt run (`-p`) has it already",
    ),
    Entry(
        "hook postToolUse|event hook.start postToolUse|event tool.execution_complete",
        "toolResult.toolTelemetry.metrics|data.input.toolResult.toolTelemetry.metrics|data.toolTelemetry.metrics",
        kind="cli only",
        reason="the CLI adds its own context-window figures to a result's telemetry; this host has none",
    ),
    Entry("event session.extensions_loaded", "data.changes", reason=_HOST_EXTRA, kind="host only"),
    Entry("event tool.execution_complete", "data.toolName", reason=_HOST_EXTRA, kind="host only"),
    Entry("event session.info", "data.extensionId", reason=_HOST_EXTRA, kind="host only"),
    Entry(
        "event session.tools_updated", "data.added|data.removed|data.extensionId", reason=_HOST_EXTRA, kind="host only"
    ),
    Entry(
        "model: tool probe_echo",
        kind="host only",
        languages=("py",),
        scenarios=("rejoin",),
        reason=(
            "the comparison gives Copilot CLI its prompt at once (`-p`) and this host its prompt once the "
            "extension has joined again; the CLI's model request does not wait for an extension that joins "
            "again, so under load it can leave before the Python probe is back and offer the model no tool"
        ),
    ),
    Entry(
        "event session.info",
        "data.extensionId|data.infoType|data.message",
        scenarios=("rejoin",),
        reason="this host says on the session's timeline that an extension joined again (`infoType` `extension`)",
    ),
    Entry(
        "event tool.execution_complete",
        "data.result",
        kind="host only",
        reason=(
            "a call that did not succeed keeps the text the model read (`result.content`) beside the CLI's "
            "`error`, so a session's model context can be rebuilt from its log; the SDK passes it through"
        ),
    ),
    Entry(
        "event tool.execution_complete",
        "data.result.detailedContent",
        kind="cli only",
        reason=(
            "this host sends `detailedContent` only when a tool gave a session log other than its result; "
            "the CLI repeats the result there, which would write a large result twice to the session log"
        ),
    ),
    Entry(
        "event user.message",
        "data.transformedContent",
        kind="cli only",
        reason=(
            "the CLI always transforms a prompt (it prefixes the current date); this host sends the prompt "
            "as it is, so `transformedContent` is there only when a hook changed it"
        ),
    ),
    Entry(
        "event permission.*",
        reason=(
            "this host tells extensions of a hook's deny as a permission request resolved by the hook; "
            "the CLI runs its guard silently"
        ),
    ),
    Entry(
        "model: tool extensions_manage",
        "description|parameters.properties.*.description",
        kind="values",
        reason=(
            "the agent's extension tool describes this host: it scaffolds a Python extension by default "
            "and names no Copilot CLI feature (the operations, parameters and result texts are the CLI's)"
        ),
    ),
    Entry(
        "model: tool extensions_manage",
        "parameters.properties.kind.enum[]|parameters.properties.location.enum[]|parameters.properties.language",
        reason=(
            "this host scaffolds no canvas extensions and has no session-scoped extensions (`canvas`, "
            "`session`), offers its own `tool-only` template, and adds `language` to scaffold `extension.mjs` "
            "on request"
        ),
    ),
    Entry(
        "event system.notification",
        reason=(
            "this host records a prompt hook's additional context in the session as a "
            "`system.notification` (source `hooks`); the CLI adds it to the model's context without an event"
        ),
    ),
    Entry(
        "event subagent.started",
        "data.remoteSessionId",
        kind="host only",
        scenarios=("subagent",),
        reason="this host names the child session in the data too (`remoteSessionId`, the same as `agentId`); "
        + _HOST_EXTRA,
    ),
    Entry(
        "event subagent.started|event subagent.completed",
        "data.modelSelectionSource|data.taskModelSource|data.resumable|data.firstDispatchedModel",
        kind="cli only",
        scenarios=("subagent",),
        reason=(
            "the CLI's bookkeeping of how it chose a child's model and whether it can resume it; this host's "
            "child answers with the model `subagent.started` names and is never resumed"
        ),
    ),
    Entry(
        "event subagent.configured|event session.model_change",
        scenarios=("subagent",),
        reason=(
            "the CLI configures a child's model client (multi-turn, its model) as events of the child; this "
            "host's child answers with the session's agent, or the custom agent's own, named in `subagent.started`"
        ),
    ),
    Entry("host.event|event session.background_tasks_changed", scenarios=("subagent",), reason=_TASK),
    Entry(
        "event assistant.message_start|event assistant.streaming_delta|event assistant.tool_call_delta",
        scenarios=("subagent",),
        reason=(
            "the CLI streams a subagent's model output to extensions in events of its own beside "
            "`assistant.message_delta`; this host streams every reply as `assistant.message_delta`"
        ),
    ),
    Entry(
        "event assistant.message_delta",
        "data.deltaContent",
        kind="values",
        scenarios=("subagent",),
        reason=(
            "the CLI in a prompt run (`-p`) streams a subagent's reply but not the parent's; this host streams both"
        ),
    ),
    Entry(
        "event system.message",
        "data.content|data.contentBlocks|data.interactionId|data.metadata",
        scenarios=("subagent",),
        reason=(
            "a child's system message is its agent's prompt on both sides; the CLI appends its own policy "
            "sections and records the parts of its prompt"
        ),
    ),
    Entry(
        "event assistant.message",
        "data.toolRequests[].intentionSummary",
        kind="cli only",
        scenarios=("subagent",),
        reason="the CLI's summary of what a call of its own tool does (a `task` call's `description`), for its UI",
    ),
    Entry(
        "hook postToolUse|event hook.start postToolUse|event tool.execution_complete",
        "toolResult.toolTelemetry.properties|toolResult.toolTelemetry.restrictedProperties|"
        "data.input.toolResult.toolTelemetry.properties|data.input.toolResult.toolTelemetry.restrictedProperties|"
        "data.toolTelemetry.properties|data.toolTelemetry.restrictedProperties",
        kind="cli only",
        scenarios=("subagent",),
        reason="the CLI's telemetry of a `task` call (hashed agent name, agent kind, mode, lengths)",
    ),
    Entry(
        "event external_tool.requested",
        "data.ownerNativeSessionId|data.providerId",
        kind="cli only",
        scenarios=("subagent",),
        reason=(
            "in a child, the CLI adds its native runtime's handle of the child (neither the session's nor the "
            "agent's id) and its provider routing (`null`); the extension answers on the session's id either way"
        ),
    ),
    Entry(
        "event * data.toolCallId|event * data.parentToolCallId",
        "event * data.toolCallId|event * data.parentToolCallId",
        kind="link",
        scenarios=("subagent",),
        reason=(
            "the fake model numbers tool calls within one answer (each is `call_0`) and the CLI keeps the "
            "model's ids, so the parent's `task` call and the child's call share one there; this host gives "
            "each call an id of its own"
        ),
    ),
    Entry(
        "model: tool task",
        "description|parameters.properties.agent_type.enum[]|parameters.properties.mode.description|"
        "parameters.properties.model.description|parameters.properties.context_tier|"
        "parameters.properties.reasoning_effort",
        reason=(
            "the CLI's `task` also starts its built-in agents (explore, general-purpose, code-review...) and "
            "lists them, and takes a context tier and reasoning effort for the child; this host starts only "
            "custom agents, with the session's settings, and says that `background` waits too"
        ),
    ),
)
"""Differences by design (each with its reason); the documentation lists these."""


def classify(difference: Difference, language: str, scenario: str) -> Entry | None:
    """The entry that allows ``difference``, or ``None``."""
    for entry in INTENDED:
        if entry.matches(difference, language, scenario):
            return entry
    return None


def page_rows(entries: Iterable[Entry] = INTENDED) -> list[str]:
    """The documentation's table rows for ``entries``: ``| what | why |``."""
    return [f"| {entry.what()} | {entry.reason} |" for entry in entries]


PAGE: Final = "other-agents.md"
"""The page of the documentation (under ``docs/``) that lists the differences."""
PAGE_HEADING: Final = "## Differences from Copilot CLI"
_ROW: Final = re.compile(r"^\| `.*\|$")


def page_table(page: str) -> list[str]:
    """The rows of the table in the page's section :data:`PAGE_HEADING`."""
    section = page.partition("\n" + PAGE_HEADING + "\n")[2].partition("\n## ")[0]
    return [line for line in section.splitlines() if _ROW.match(line)]
