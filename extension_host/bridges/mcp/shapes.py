"""What the MCP bridge says, as plain data: tools, call results, prompts and log entries.

The host's tools, tool-call outcomes, slash commands and timeline events become the fields of
MCP's ``tools/list``, ``tools/call``, ``prompts/*`` and ``notifications/message`` here, as
frozen dataclasses and dicts, so every rule (who decided a denial, what an error says, which
events are log entries) is tested in memory. It never imports the MCP SDK and never talks to
a client: :mod:`.server` does that.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from ...calls.command_registry import CommandInfo, CommandResult
from ...info import ToolInfo
from ...outcomes import ToolCallResult

__all__ = [
    "COMMAND_ARGUMENT",
    "LOG_EVENT_LEVELS",
    "MAX_PROMPT_MESSAGES",
    "CallAnswer",
    "LogEntry",
    "PromptText",
    "call_answer",
    "command_prompt",
    "input_schema",
    "log_entry",
    "prompt_messages",
    "tools_signature",
    "unknown_tool_answer",
]

COMMAND_ARGUMENT: Final = "args"
"""The one argument of every prompt made from a slash command: the text after its name."""
MAX_PROMPT_MESSAGES: Final = 64
"""Messages a prompt keeps of what its command logged and sent; the rest is cut, saying so."""
LOG_EVENT_LEVELS: Final[Mapping[str, Literal["info", "warning", "error"]]] = {
    "session.info": "info",
    "session.warning": "warning",
    "session.error": "error",
}
"""The timeline events that become MCP log entries, and the level of each."""

_EMPTY_SCHEMA: Final[Mapping[str, Any]] = {"type": "object", "properties": {}}


def input_schema(tool: ToolInfo) -> dict[str, Any]:
    """The tool's JSON Schema as MCP's ``inputSchema``, which must describe an object."""
    parameters = tool.parameters
    if not parameters or parameters.get("type") != "object":
        # A tool without a schema takes any object; MCP has no way to say "anything".
        return dict(_EMPTY_SCHEMA)
    return dict(parameters)


def tools_signature(tools: Iterable[ToolInfo]) -> tuple[tuple[str, str, str], ...]:
    """What a client's tool list depends on (names, descriptions, schemas): a change of it is a list change."""
    return tuple(sorted((tool.name, tool.description, repr(tool.parameters)) for tool in tools))


@dataclass(frozen=True)
class CallAnswer:
    """A ``tools/call`` result: its text blocks, and whether it is an error (``isError``)."""

    texts: tuple[str, ...]
    is_error: bool


def call_answer(name: str, owner: str | None, outcome: ToolCallResult) -> CallAnswer:
    """What the client is told of one call through the pipeline.

    A success is the tool's text. Anything else is an error whose first line says who decided
    what: the hook that denied (``decided_by``) and its reason, or the extension whose tool
    failed or timed out. What the hooks added for the model and the result does not carry
    (the post-tool hooks' guidance is in it) follows as its own block.
    """
    text = outcome.text_result_for_llm
    context = (outcome.context_message,) if outcome.context_message else ()
    kind = outcome.result_type
    if kind == "success":
        return CallAnswer((text, *context), False)
    who = owner or "the host"
    if kind == "denied":
        by = outcome.decided_by or "a hook"
        head = f"denied by {by} before {name} ran: {text}"
    elif kind == "timeout":
        head = f"{name} of {who} timed out: {text}"
    elif kind == "rejected":
        head = f"{name} of {who} was rejected: {text}"
    else:
        head = f"{name} of {who} failed: {text}"
    return CallAnswer((head, *context), True)


def unknown_tool_answer(error: Exception) -> CallAnswer:
    """The answer to a call of a tool nobody offers (any more): the host's one-line reason."""
    return CallAnswer((f"{error}; list the tools again (tools/list)",), True)


def command_prompt(command: CommandInfo) -> dict[str, Any]:
    """A slash command as an MCP prompt: its name, description, and its one optional argument."""
    return {
        "name": command.name,
        "description": command.description or f"/{command.name} of {command.owner}",
        "arguments": [
            {
                "name": COMMAND_ARGUMENT,
                "description": f"what follows /{command.name} (its argument string)",
                "required": False,
            }
        ],
    }


@dataclass(frozen=True)
class PromptText:
    """One line a command produced while it ran: a prompt it sent (``sent``) or a message it logged."""

    text: str
    sent: bool = False


def prompt_messages(result: CommandResult, produced: list[PromptText]) -> list[str]:
    """The prompt's messages (all the user's): what the command logged and sent, in order, then its error.

    A command that ran and said nothing yields one message saying so, so the client always
    has something to show.
    """
    texts = [item.text for item in produced[:MAX_PROMPT_MESSAGES]]
    if len(produced) > MAX_PROMPT_MESSAGES:
        texts.append(f"({len(produced) - MAX_PROMPT_MESSAGES} more messages of /{result.command} were left out)")
    if not result.ok:
        texts.append(f"/{result.command} failed: {result.error or result.status}")
    elif not texts:
        texts.append(f"/{result.command} ran ({result.owner or 'its extension'} said nothing)")
    return texts


@dataclass(frozen=True)
class LogEntry:
    """One MCP log notification: its level, its logger (the extension), its message."""

    level: Literal["info", "warning", "error"]
    logger: str
    message: str


def log_entry(event: Mapping[str, Any]) -> LogEntry | None:
    """The log notification for a ``session.info``/``warning``/``error`` event; ``None`` for any other."""
    level = LOG_EVENT_LEVELS.get(str(event.get("type")))
    data = event.get("data")
    if level is None or not isinstance(data, Mapping):
        return None
    logger = data.get("extensionId")
    return LogEntry(level, logger if isinstance(logger, str) else "extension-host", str(data.get("message", "")))
