"""The hook-point table: the one place that says what each hook point is and does.

Each hook point has a Python name (``on_pre_tool_use``), the Copilot spelling
(``onPreToolUse``) and a wire ``hookType`` (``preToolUse``). Inputs and outputs are frozen
dataclasses with snake_case fields; on the wire they are camelCase with ``timestamp`` in epoch
milliseconds. Output checking is strict: an unknown key or a value of the wrong type is an
error naming the hook and the key, never silently dropped.

A :class:`HookPoint` entry of :data:`HOOK_POINTS` says everything the layers need: its input
and output models (the checks of output values are derived from the output model's
annotations, so allowed values are the ``Literal`` types themselves), which input field its
rewrite replaces, how each output field of several implementations merges (:data:`Merge`),
whether it is a guard (fails closed), and whether it is about a tool (so it takes matchers).
The host's runner and composition and the pluggy hookspecs are read from it; adding a hook
point is its name in :data:`extension_protocol.hook_names.HOOK_NAMES` (the one place hook names
are written, kept there so joining a session does not import these models; the wire's and the
SDK's spellings are derived from it), its two models (``<Point>Input`` and ``<Point>Output``,
whose ``<Point>`` names the row), and one entry here. A row and the names that disagree are
refused when this module loads; a row and its models that disagree, when the row's models are
first read.

The models themselves are :mod:`extension_protocol.hook_models`'; the table names them by
string and imports them when a row's models are first asked for (a hook run, checked or
listed with its input type), so importing the table creates none of them. Which tools a tool
hook is for (matchers) is :mod:`extension_protocol.matchers`'.

This module is shared by both sides. It does not run hooks and does not know the connection.
An extension imports it only when the host first invokes one of its hooks.
"""

from __future__ import annotations

import dataclasses
import json
import re
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, Literal, Union, get_args, get_origin, get_type_hints

from .errors import HookOutputError
from .hook_names import HOOK_NAMES, HOOK_WIRE_NAMES, camel_case, hook_name
from .results import ToolResult, normalize_result, result_from_wire

if TYPE_CHECKING:
    from .hook_models import HookInput

__all__ = [
    "HOOK_NAMES",
    "HOOK_POINTS",
    "MERGES",
    "HookPoint",
    "Merge",
    "hook_point",
]

# -- the table -----------------------------------------------------------------------------

_Check = Callable[[Any], Any]
"""Validate one output value and return its Python form; raise ValueError with the reason."""

Merge = Literal["rewrite", "context", "paragraphs", "lines", "concat", "max", "strongest", "decision", "reason"]
"""How one output field of several implementations combines (:mod:`extension_host.hooks.composition`):

- ``rewrite``: replaces the hook point's ``rewrites`` input field; the next implementation sees it;
- ``context``: joined in order with a blank line, capped (one pool per call, pre and post share it);
- ``paragraphs``: joined like context; ``lines``: joined with a newline; ``concat``: lists concatenate;
- ``max``: the largest number;
- ``strongest``: the strongest value of its ``Literal`` (listed weakest first);
- ``decision``: the permission decision: like ``strongest``, recorded with who decided, and its
  strongest value (``deny``) stops the chain; at most one per hook point;
- ``reason``: the reason that goes with the decision given in the same output.
"""
MERGES: Final = frozenset(get_args(Merge))


def _string(value: Any) -> Any:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {type(value).__name__}")
    return value


def _choice(*allowed: str) -> _Check:
    def check(value: Any) -> Any:
        if value not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}, got {value!r}")
        return value

    return check


def _string_list(value: Any) -> Any:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("expected a list of strings")
    return value


def _count(value: Any) -> Any:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"expected a non-negative integer, got {value!r}")
    return value


def _any(value: Any) -> Any:
    return value


def _tool_result(value: Any) -> Any:
    try:
        if isinstance(value, dict):
            return result_from_wire(value)
        return normalize_result(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"expected a tool result: {exc}") from None


def _check_for(annotation: Any) -> _Check:
    """The check of one output field, from its annotation (``X | None`` checks ``X``)."""
    if get_origin(annotation) in (Union, types.UnionType):
        inner = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(inner) == 1:
            annotation = inner[0]
    if annotation is Any:
        return _any
    if get_origin(annotation) is Literal:
        return _choice(*get_args(annotation))
    if annotation is str:
        return _string
    if annotation is int:  # output numbers are counts
        return _count
    if annotation is ToolResult:
        return _tool_result
    if get_origin(annotation) is list and get_args(annotation) == (str,):
        return _string_list
    raise TypeError(
        f"no output check for annotation {annotation!r}; add one to extension_protocol.hook_points._check_for"
    )


def _literal_values(annotation: Any) -> tuple[str, ...]:
    for arg in (annotation, *get_args(annotation)):
        if get_origin(arg) is Literal:
            return tuple(get_args(arg))
    return ()


_WIRE_KEYS: dict[type[Any], tuple[tuple[str, str], ...]] = {}
_INPUT_KEY_SPELLINGS: Final = {"stop_hook_active": "stop_hook_active"}
"""Input fields the Copilot CLI does not spell in camelCase on the wire (the published SDK
renames ``stop_hook_active`` to ``stopHookActive`` after reading it)."""
_INPUT_KEY_ALIASES: Final = {"cwd": "workingDirectory", "stop_hook_active": "stopHookActive"}
"""Other spellings an input is read under when its wire key is absent (what the published SDK
hands an extension after renaming)."""


def _wire_keys(cls: type[Any]) -> tuple[tuple[str, str], ...]:
    """(field name, wire key) of a dataclass, computed once: hooks run on every tool call."""
    keys = _WIRE_KEYS.get(cls)
    if keys is None:
        keys = _WIRE_KEYS[cls] = tuple(
            (item.name, _INPUT_KEY_SPELLINGS.get(item.name) or camel_case(item.name))
            for item in dataclasses.fields(cls)
        )
    return keys


def _error_message(value: Any) -> Any:
    """An error as the Copilot CLI sends it to error and session-end hooks (``{message, ...}``)
    read as its message; a string stays as it is."""
    if isinstance(value, Mapping):
        message = value.get("message")
        return message if isinstance(message, str) else json.dumps(value)
    return value


_DERIVED: Final = frozenset({"input_type", "output_type", "checks", "ranks", "decision_values", "for_tools"})
"""The attributes of a :class:`HookPoint` read from its models, on first use."""


@dataclass(frozen=True, slots=True)
class HookPoint:
    """One hook point and everything every layer needs to carry, run and merge it.

    ``models`` names its two models in :mod:`extension_protocol.hook_models`
    (``PreToolUse``: ``PreToolUseInput`` and ``PreToolUseOutput``); ``merge`` names the strategy
    of every output field; ``rewrites`` is the input field a ``rewrite`` output replaces; a
    ``guard`` fails closed (a failing implementation denies).

    The models are imported when one of the attributes read from them (:data:`_DERIVED`) is
    first asked for, so that a process that never runs or checks a hook does not create them;
    each is then a plain attribute. ``checks`` and the ranks are derived from ``output_type``'s
    annotations; a row whose merge strategies or rewrite do not fit its models is refused then.
    """

    name: str
    models: str
    merge: Mapping[str, Merge]
    doc: str
    rewrites: str | None = None
    guard: bool = False
    error_object: bool = False
    """Its input's ``error`` travels as an object ``{message}``, as the Copilot CLI sends it."""
    input_type: type[HookInput] = dataclasses.field(init=False, repr=False, compare=False)
    output_type: type[Any] = dataclasses.field(init=False, repr=False, compare=False)
    checks: Mapping[str, _Check] = dataclasses.field(init=False, repr=False, compare=False)
    ranks: Mapping[str, Mapping[str, int]] = dataclasses.field(init=False, repr=False, compare=False)
    """For ``strongest`` and ``decision`` fields: each allowed value's strength."""
    decision_values: tuple[str, ...] = dataclasses.field(init=False, repr=False, compare=False)
    """The permission decisions, weakest first; the last one is what a failing guard answers."""
    for_tools: bool = dataclasses.field(init=False, repr=False, compare=False)
    """Whether its input names a tool, so it can take matchers."""

    if not TYPE_CHECKING:  # mypy would read any attribute as valid

        def __getattr__(self, attribute: str) -> Any:
            """An attribute read from the models, set on first use (a slot not set yet)."""
            if attribute not in _DERIVED:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {attribute!r}")
            self._read_models()
            return object.__getattribute__(self, attribute)

    def _read_models(self) -> None:
        from . import hook_models

        input_type = getattr(hook_models, f"{self.models}Input", None)
        output_type = getattr(hook_models, f"{self.models}Output", None)
        if input_type is None or output_type is None:
            raise TypeError(f"hook point {self.name}: {hook_models.__name__} has no {self.models}Input and Output")
        hints = get_type_hints(output_type)
        fields = [item.name for item in dataclasses.fields(output_type)]
        if set(fields) != set(self.merge) or not set(self.merge.values()) <= MERGES:
            raise TypeError(f"hook point {self.name}: give one known merge strategy per output field {fields}")
        if ("rewrite" in self.merge.values()) != (self.rewrites is not None):
            raise TypeError(f"hook point {self.name}: a rewrite output needs rewrites=<input field>, and only then")
        inputs = {item.name for item in dataclasses.fields(input_type)}
        if self.rewrites is not None and self.rewrites not in inputs:
            raise TypeError(f"hook point {self.name}: rewrites={self.rewrites!r} is not a field of its input")
        decisions = [name for name, how in self.merge.items() if how == "decision"]
        if len(decisions) > 1:
            raise TypeError(f"hook point {self.name}: at most one decision field")
        ranks = {
            name: {value: rank for rank, value in enumerate(_literal_values(hints[name]))}
            for name, how in self.merge.items()
            if how in ("strongest", "decision")
        }
        # A guard without a decision of its own can still deny (a failing implementation).
        values = _literal_values(hints[decisions[0]]) if decisions else get_args(hook_models.PermissionDecision)
        derived = {
            "checks": {name: _check_for(hints[name]) for name in fields},
            "ranks": ranks,
            "decision_values": tuple(values),
            "for_tools": "tool_name" in inputs,
            "output_type": output_type,
            "input_type": input_type,  # last: a row refused above stays unread
        }
        for attribute, value in derived.items():
            object.__setattr__(self, attribute, value)

    @property
    def wire_name(self) -> str:
        """The ``hookType`` on the wire, e.g. ``preToolUse``."""
        return HOOK_WIRE_NAMES[self.name]

    @property
    def copilot_name(self) -> str:
        """The Copilot SDK spelling, e.g. ``onPreToolUse``."""
        return camel_case(self.name)

    def input_to_wire(self, value: HookInput) -> dict[str, Any]:
        """The input object as the Copilot CLI sends it: camelCase (``stop_hook_active`` as it
        is), ``timestamp`` in epoch milliseconds, a tool result with ``toolTelemetry`` (``{}``
        when the tool gave none), an error of the error and session-end hooks as ``{message}``,
        and no ``sessionId`` when it is not known."""
        wire: dict[str, Any] = {}
        for name, key in _wire_keys(type(value)):
            field_value = getattr(value, name)
            if name == "timestamp":
                field_value = round(field_value.timestamp() * 1000)
            elif isinstance(field_value, ToolResult):
                field_value = field_value.to_wire()
                field_value.setdefault("toolTelemetry", {})
            elif name == "error" and self.error_object and field_value is not None:
                field_value = {"message": field_value}
            elif name == "session_id" and not field_value:
                continue
            if field_value is not None:
                wire[key] = field_value
        return wire

    def input_from_wire(self, data: Mapping[str, Any]) -> Any:
        """Read a camelCase input object; unknown keys are ignored (the host may send more).

        Raises:
            ValueError: a required field is missing or malformed.
        """
        kwargs: dict[str, Any] = {}
        for name, key in _wire_keys(self.input_type):
            if key not in data:
                key = _INPUT_KEY_ALIASES.get(name, key)
                if key not in data:
                    continue
            value = data[key]
            if name == "timestamp":
                value = datetime.fromtimestamp(float(value) / 1000, tz=UTC)
            elif name == "tool_result":
                value = result_from_wire(value)
            elif name == "error":
                value = _error_message(value)
            kwargs[name] = value
        kwargs.setdefault("timestamp", datetime.now(UTC))
        kwargs.setdefault("cwd", "")
        try:
            return self.input_type(**kwargs)
        except TypeError as exc:
            raise ValueError(f"{self.wire_name} input: {exc}") from None

    def output_to_wire(self, value: Any) -> dict[str, Any] | None:
        """Check a handler's return value and give its camelCase form (``None`` = no opinion).

        Accepts ``None``, this hook's output dataclass, or a dict in snake_case or camelCase.

        Raises:
            HookOutputError: naming the unknown key, the key with a wrong value, or the wrong type.
        """
        fields = self._output_fields(value)
        if fields is None:
            return None
        wire: dict[str, Any] = {}
        for name, item in fields.items():
            if isinstance(item, ToolResult):
                item = item.to_wire()
            wire[camel_case(name)] = item
        return wire

    def output_from_wire(self, value: Any) -> Any:
        """Read and check an output object into this hook's output dataclass.

        Raises:
            HookOutputError: naming the unknown key, the key with a wrong value, or the wrong type.
        """
        fields = self._output_fields(value)
        return self.output_type(**fields) if fields is not None else None

    def _output_fields(self, value: Any) -> dict[str, Any] | None:
        if value is None:
            return None
        if isinstance(value, self.output_type):
            value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        if not isinstance(value, Mapping):
            raise HookOutputError(
                self.name,
                None,
                f"returned {type(value).__name__}; return None, a dict or {self.output_type.__name__}",
            )
        by_camel = {camel_case(name): name for name in self.checks}
        fields: dict[str, Any] = {}
        seen: set[str] = set()
        for key, item in value.items():
            name = key if key in self.checks else by_camel.get(key) if isinstance(key, str) else None
            if name is None:
                valid = ", ".join(self.checks)
                raise HookOutputError(self.name, str(key), f"unknown output key {key!r} (valid: {valid})")
            if name in seen:
                # Both spellings at once: which one was meant is a guess, and a guess may be "allow".
                raise HookOutputError(self.name, name, f"output key {name!r} is given twice (snake_case and camelCase)")
            seen.add(name)
            if item is None:
                continue
            try:
                fields[name] = self.checks[name](item)
            except ValueError as exc:
                raise HookOutputError(self.name, name, f"output key {name!r}: {exc}") from None
        return fields


def _named_after(models: str) -> str:
    """The hook point whose models ``models`` names: ``PreToolUse`` → ``on_pre_tool_use``."""
    words = re.findall(r"[A-Z][a-z]*", models)
    return "on_" + "_".join(word.lower() for word in words)


def _entry(
    models: str,
    merge: Mapping[str, Merge],
    doc: str,
    *,
    rewrites: str | None = None,
    guard: bool = False,
    error_object: bool = False,
) -> HookPoint:
    """A row of the table, named after its models (the names are written in ``HOOK_NAMES`` only)."""
    return HookPoint(_named_after(models), models, merge, doc, rewrites, guard, error_object)


def _in_order(points: tuple[HookPoint, ...]) -> dict[str, HookPoint]:
    """The rows by name in the order of ``HOOK_NAMES``; a row for no hook point there, or a
    hook point without a row, is refused when this module loads."""
    rows = {point.name: point for point in points}
    if sorted(rows) != sorted(HOOK_NAMES) or len(rows) != len(points):
        raise TypeError(f"the hook-point table's rows {sorted(rows)} are not those of HOOK_NAMES {sorted(HOOK_NAMES)}")
    return {name: rows[name] for name in HOOK_NAMES}


HOOK_POINTS: Final[dict[str, HookPoint]] = _in_order(
    (
        _entry(
            "UserPromptSubmitted",
            {"modified_prompt": "rewrite", "additional_context": "context"},
            "The user submitted a prompt; may rewrite it (``modified_prompt``) or add hidden context.",
            rewrites="prompt",
            guard=True,
        ),
        _entry(
            "PreToolUse",
            {
                "permission_decision": "decision",
                "permission_decision_reason": "reason",
                "modified_args": "rewrite",
                "additional_context": "context",
            },
            "A tool is about to run; may decide ``allow``/``ask``/``deny``, rewrite its arguments "
            "(``modified_args``) or add context.",
            rewrites="tool_args",
            guard=True,
        ),
        _entry(
            "PostToolUse",
            {"modified_result": "rewrite", "additional_context": "context"},
            "A tool ran; may replace its result (``modified_result``) or add context.",
            rewrites="tool_result",
        ),
        _entry(
            "SessionStart",
            {"additional_context": "context"},
            "A session starts (``startup``, ``resume`` or ``new``); may add initial context.",
        ),
        _entry(
            "SessionEnd",
            {"session_summary": "paragraphs", "cleanup_actions": "concat"},
            "A session ends; may give a summary and describe cleanup actions.",
            error_object=True,
        ),
        _entry(
            "ErrorOccurred",
            {"error_handling": "strongest", "retry_count": "max", "user_notification": "lines"},
            "A model call failed; may say how to handle it (``retry``/``skip``/``abort``).",
            error_object=True,
        ),
        _entry(
            "UserPromptTransformed",
            {"modified_transformed_prompt": "rewrite"},
            "A prompt is about to go to the model as ``transformed_prompt``; may replace that text "
            "(``modified_transformed_prompt``).",
            rewrites="transformed_prompt",
        ),
        _entry(
            "PostToolUseFailure",
            {"additional_context": "context"},
            "A tool failed (result type ``failure``); may add guidance for the model.",
        ),
        _entry(
            "AgentStop",
            {"decision": "decision", "reason": "reason"},
            "The agent answered without calling a tool; ``block`` keeps it going with ``reason`` as "
            "the next user message.",
        ),
        _entry(
            "SubagentStart",
            {"additional_context": "context"},
            "A custom agent's child session is about to start; may add context before its prompt.",
        ),
        _entry(
            "SubagentStop",
            {"decision": "decision", "reason": "reason", "modified_response": "rewrite"},
            "A custom agent's child session answered; ``block`` keeps it going with ``reason`` as its "
            "next user message, ``modified_response`` replaces the answer its parent reads.",
            rewrites="response",
        ),
    )
)
"""The hook points by Python name, in the order of :data:`~extension_protocol.hook_names.HOOK_NAMES`."""


def hook_point(name: str) -> HookPoint | None:
    """The hook point for a Python, Copilot or wire name, or ``None``."""
    python_name = hook_name(name)
    return HOOK_POINTS[python_name] if python_name is not None else None
