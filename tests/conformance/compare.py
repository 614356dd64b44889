"""Comparing two transcripts of one scenario: what differs, as :class:`Difference` lines.

Messages are grouped by subject (see :mod:`conformance.transcript`); for each subject the two
sides are compared as shapes and values, never as sequences of messages, so incidental
interleaving never counts:

- a subject one side has and the other never does (``event assistant.idle: CLI sends it, host
  never does``);
- a key path (``data.extensions[].status``; ``[]`` stands for any item of a list) that one side's
  messages of a subject have and the other's lack;
- a key path both have whose values differ (after normalisation), the values quoted;
- a *link*: two places holding the same id on one side (``external_tool.requested
  data.requestId`` = ``session.tools.handlePendingToolCall requestId``) but not on the other;
- the order rules of :data:`ORDER_RULES`, the only places where order is part of the contract;
- what reached the model (:func:`compare_models`): the definitions of the tools the scenario
  names, the tool results and the marker texts it looks for, from the request bodies; the same
  for each subagent's conversation (by its marker), with the names of the tools it was offered.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

from conformance.transcript import Message, Transcript, normalise

__all__ = ["ORDER_RULES", "Difference", "compare", "compare_models", "paths", "shapes"]

ORDER_RULES: Final = (
    ("event tool.execution_start", "hook preToolUse"),
    ("hook preToolUse", "event external_tool.requested"),
    ("event external_tool.requested", "hook postToolUse"),
    ("event external_tool.requested", "hook postToolUseFailure"),
    ("hook sessionStart", "hook userPromptSubmitted"),
    ("hook userPromptSubmitted", "hook userPromptTransformed"),
    ("hook agentStop", "hook sessionEnd"),
)
"""(first, then): on a side that has both subjects, the first ``first`` comes before the first
``then``. Only these orders are compared."""
_SHOWN: Final = 3
_WIDTH: Final = 100
_ENVELOPE: Final = frozenset({"id", "parentId"})


@dataclass(frozen=True, order=True)
class Difference:
    """One way the host differs from the CLI in one scenario.

    ``kind``: ``cli only`` (the CLI has the subject or key, the host lacks it), ``host only``,
    ``values``, ``link`` or ``order``; ``path`` is ``""`` for the subject as a whole.
    """

    subject: str
    path: str
    kind: str
    detail: str = ""

    def line(self) -> str:
        """The difference in one line, as a failing test says it."""
        where = f"{self.subject}: key {self.path}" if self.path else self.subject
        said = {
            "cli only": "CLI has it, host lacks it" if self.path else "CLI sends it, host never does",
            "host only": "host has it, CLI lacks it" if self.path else "host sends it, CLI never does",
        }.get(self.kind, self.detail)
        if self.kind in ("link", "order"):
            where = f"{self.kind} {self.subject}" + (f" = {self.path}" if self.kind == "link" else "")
        return f"{where}: {said}"


def paths(value: Any, prefix: str = "") -> Iterator[tuple[str, str | None]]:
    """Every key path in ``value`` with its leaf value as JSON (``None`` for objects and lists)."""
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            yield path, None
            yield from paths(item, path)
    elif isinstance(value, list):
        for item in value:
            yield from paths(item, f"{prefix}[]")
    elif prefix:
        yield prefix, json.dumps(value, sort_keys=True)


def shapes(messages: Iterable[Message]) -> dict[str, dict[str, set[str]]]:
    """Per subject, every key path its messages have, with the values each path held."""
    shapes: dict[str, dict[str, set[str]]] = {}
    for message in messages:
        shape = shapes.setdefault(message.subject, {})
        for path, leaf in paths(message.body):
            values = shape.setdefault(path, set())
            if leaf is not None:
                values.add(leaf)
    return shapes


def _quote(values: set[str]) -> str:
    shown = sorted(values)[:_SHOWN]
    text = ", ".join(value if len(value) <= _WIDTH else value[: _WIDTH - 3] + "..." for value in shown)
    return text + (f" (+{len(values) - _SHOWN})" if len(values) > _SHOWN else "")


def compare_shapes(cli: dict[str, dict[str, set[str]]], host: dict[str, dict[str, set[str]]]) -> list[Difference]:
    """The differences between two sides' shapes, subject by subject."""
    found: list[Difference] = []
    for subject in sorted(cli.keys() | host.keys()):
        if subject not in host:
            found.append(Difference(subject, "", "cli only"))
            continue
        if subject not in cli:
            found.append(Difference(subject, "", "host only"))
            continue
        ours, theirs = host[subject], cli[subject]
        for path in sorted(theirs.keys() | ours.keys()):
            if path not in ours:
                if not _under_reported(path, theirs.keys() - ours.keys()):
                    found.append(Difference(subject, path, "cli only"))
            elif path not in theirs:
                if not _under_reported(path, ours.keys() - theirs.keys()):
                    found.append(Difference(subject, path, "host only"))
            elif theirs[path] != ours[path] and theirs[path] and ours[path]:
                detail = f"CLI {_quote(theirs[path])}; host {_quote(ours[path])}"
                found.append(Difference(subject, path, "values", detail))
    return found


def _under_reported(path: str, missing: set[str]) -> bool:
    """Whether a parent of ``path`` is missing too (only the parent is reported)."""
    return any(path.startswith(parent + ".") or path.startswith(parent + "[]") for parent in missing if parent != path)


def _links(transcript: Transcript) -> set[tuple[str, str]]:
    """Pairs of places (``subject path``) that hold the same id somewhere in ``transcript``."""
    places: dict[str, set[str]] = {}
    for message in transcript.messages:
        for path, leaf in _raw_ids(message.raw):
            places.setdefault(leaf, set()).add(f"{message.subject} {path}")
    pairs: set[tuple[str, str]] = set()
    for group in places.values():
        ordered = sorted(group)
        pairs.update((a, b) for n, a in enumerate(ordered) for b in ordered[n + 1 :])
    return pairs


def _raw_ids(value: Any, prefix: str = "", key: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for name, item in value.items():
            if name in _ENVELOPE or name == "sessionId":
                continue
            yield from _raw_ids(item, f"{prefix}.{name}" if prefix else name, name)
    elif isinstance(value, list):
        for item in value:
            yield from _raw_ids(item, f"{prefix}[]", key)
    elif isinstance(value, str) and key.endswith(("Id", "id")) and value:
        yield prefix, value


def compare(cli: Transcript, host: Transcript) -> list[Difference]:
    """Every difference between the CLI's and the host's transcript of one extension."""
    cli_shapes, host_shapes = shapes(cli.messages), shapes(host.messages)
    found = compare_shapes(cli_shapes, host_shapes)
    common = {
        f"{subject} {path}"
        for subject in cli_shapes.keys() & host_shapes.keys()
        for path in cli_shapes[subject].keys() & host_shapes[subject].keys()
    }
    cli_links = {pair for pair in _links(cli) if pair[0] in common and pair[1] in common}
    host_links = {pair for pair in _links(host) if pair[0] in common and pair[1] in common}
    for a, b in sorted(cli_links - host_links):
        found.append(Difference(a, b, "link", "the same id on the CLI, not on the host"))
    for a, b in sorted(host_links - cli_links):
        found.append(Difference(a, b, "link", "the same id on the host, not on the CLI"))
    found.extend(_order(cli, host))
    return found


def _first(transcript: Transcript, subject: str) -> int | None:
    return next((m.index for m in transcript.messages if m.subject == subject), None)


def _order(cli: Transcript, host: Transcript) -> Iterator[Difference]:
    for first, then in ORDER_RULES:
        positions = [(_first(side, first), _first(side, then)) for side in (cli, host)]
        if any(a is None or b is None for a, b in positions):
            continue
        (cli_a, cli_b), (host_a, host_b) = positions
        assert cli_a is not None and cli_b is not None and host_a is not None and host_b is not None
        if (cli_a < cli_b) != (host_a < host_b):
            said = "before" if cli_a < cli_b else "after"
            yield Difference(
                f"{first} before {then}", "", "order", f"the CLI sends {first} {said} {then}, the host does not"
            )


def model_view(
    requests: Sequence[dict[str, Any]],
    tools: Sequence[str],
    markers: Sequence[str],
    replacements: dict[str, str],
    child: str | None = None,
) -> dict[str, Any]:
    """What reached the model in one conversation, as one body per subject: the definitions of
    ``tools`` it was offered, what each tool call returned, and which ``markers`` any request
    held. ``child``: the conversation is a subagent's, named by its marker; its subjects say so
    (``model (child MARK): tool probe_echo``), and the names of every tool it was offered are one
    more subject (a child is offered only its agent's allowlist)."""
    view: dict[str, Any] = {}
    if not requests:
        return view
    prefix = "model: " if child is None else f"model (child {child}): "
    offered = [tool.get("function") for tool in requests[0].get("tools") or [] if isinstance(tool, dict)]
    functions = [function for function in offered if isinstance(function, dict)]
    if child is not None:
        view[prefix + "tools"] = {"names": sorted(str(function.get("name")) for function in functions)}
    for function in functions:
        if function.get("name") in tools:
            view[f"{prefix}tool {function['name']}"] = normalise(
                {k: v for k, v in function.items() if k != "name"}, replacements
            )
    names: dict[str, str] = {}
    for message in requests[-1].get("messages") or []:
        for call in message.get("tool_calls") or []:
            names[str(call.get("id"))] = str((call.get("function") or {}).get("name"))
        if message.get("role") == "tool":
            name = names.get(str(message.get("tool_call_id")), "?")
            view[f"{prefix}result of {name}"] = {"content": normalise(str(message.get("content")), replacements)}
    text = json.dumps(requests)
    for marker in markers:
        view[f"{prefix}marker {marker}"] = {"reached": marker in text}
    return view


def compare_models(cli: dict[str, Any], host: dict[str, Any]) -> list[Difference]:
    """The differences between what reached the model on each side (see :func:`model_view`)."""

    def shapes(view: dict[str, Any]) -> dict[str, dict[str, set[str]]]:
        found: dict[str, dict[str, set[str]]] = {}
        for subject, body in view.items():
            shape = found.setdefault(subject, {})
            for path, leaf in paths(body):
                shape.setdefault(path, set()).update([] if leaf is None else [leaf])
        return found

    return compare_shapes(shapes(cli), shapes(host))
