"""The six hook points: their names, typed inputs and outputs, and their wire forms.

Each hook point has a Python name (``on_pre_tool_use``), the Copilot spelling
(``onPreToolUse``) and a wire ``hookType`` (``preToolUse``). Inputs and outputs are frozen
dataclasses with snake_case fields; on the wire they are camelCase with ``timestamp`` in epoch
milliseconds. Output checking is strict: an unknown key or a value of the wrong type is an
error naming the hook and the key, never silently dropped.

This module is shared by both sides. It does not run hooks and does not know the connection.
An extension imports it only when the host first invokes one of its hooks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Final, Literal

from .errors import HookOutputError
from .protocol import HOOK_NAMES, HOOK_WIRE_NAMES, camel_case, hook_name
from .results import ToolResult, normalize_result, result_from_wire

__all__ = [
    "HOOK_NAMES",
    "HookInvocation",
    "HookPoint",
    "HOOK_POINTS",
    "UserPromptSubmittedInput",
    "UserPromptSubmittedOutput",
    "PreToolUseInput",
    "PreToolUseOutput",
    "PostToolUseInput",
    "PostToolUseOutput",
    "SessionStartInput",
    "SessionStartOutput",
    "SessionEndInput",
    "SessionEndOutput",
    "ErrorOccurredInput",
    "ErrorOccurredOutput",
    "hook_point",
]

PermissionDecision = Literal["allow", "deny", "ask"]
ErrorHandling = Literal["retry", "skip", "abort"]


@dataclass(frozen=True, slots=True)
class HookInvocation:
    """Passed to every hook handler as its second argument."""

    session_id: str


# -- inputs --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class _Input:
    timestamp: datetime
    cwd: str


@dataclass(frozen=True, slots=True, kw_only=True)
class UserPromptSubmittedInput(_Input):
    """The user submitted ``prompt``."""

    prompt: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PreToolUseInput(_Input):
    """``tool_name`` is about to run with ``tool_args``."""

    tool_name: str
    tool_args: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class PostToolUseInput(_Input):
    """``tool_name`` ran with ``tool_args`` and produced ``tool_result``."""

    tool_name: str
    tool_args: Any
    tool_result: ToolResult


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionStartInput(_Input):
    """A session starts (``source``: startup, resume or new)."""

    source: str
    initial_prompt: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionEndInput(_Input):
    """A session ends (``reason``: complete, error, abort, timeout or user_exit)."""

    reason: str
    final_message: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorOccurredInput(_Input):
    """An error occurred (``error_context``: model_call, tool_execution, system or user_input)."""

    error: str
    error_context: str
    recoverable: bool


# -- outputs -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class UserPromptSubmittedOutput:
    """What a prompt hook may say: a replacement prompt and hidden context."""

    modified_prompt: str | None = None
    additional_context: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PreToolUseOutput:
    """What a pre-tool hook may say: a permission decision, rewritten args, context."""

    permission_decision: PermissionDecision | None = None
    permission_decision_reason: str | None = None
    modified_args: Any = None
    additional_context: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PostToolUseOutput:
    """What a post-tool hook may say: a replacement result and context."""

    modified_result: ToolResult | None = None
    additional_context: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionStartOutput:
    """What a session-start hook may say: initial context."""

    additional_context: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionEndOutput:
    """What a session-end hook may say: a summary and cleanup descriptions."""

    session_summary: str | None = None
    cleanup_actions: list[str] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorOccurredOutput:
    """What an error hook may say: how to handle the error and what to tell the user."""

    error_handling: ErrorHandling | None = None
    retry_count: int | None = None
    user_notification: str | None = None


# -- the table -----------------------------------------------------------------------------

_Check = Callable[[Any], Any]
"""Validate one output value and return its Python form; raise ValueError with the reason."""


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


_WIRE_KEYS: dict[type[Any], tuple[tuple[str, str], ...]] = {}


def _wire_keys(cls: type[Any]) -> tuple[tuple[str, str], ...]:
    """(field name, wire key) of a dataclass, computed once: hooks run on every tool call."""
    keys = _WIRE_KEYS.get(cls)
    if keys is None:
        keys = _WIRE_KEYS[cls] = tuple((item.name, camel_case(item.name)) for item in dataclasses.fields(cls))
    return keys


@dataclass(frozen=True, slots=True)
class HookPoint:
    """One of the six hook points and everything needed to carry its data."""

    name: str
    input_type: type[_Input]
    output_type: type[Any]
    checks: Mapping[str, _Check]

    @property
    def wire_name(self) -> str:
        """The ``hookType`` on the wire, e.g. ``preToolUse``."""
        return HOOK_WIRE_NAMES[self.name]

    @property
    def copilot_name(self) -> str:
        """The Copilot SDK spelling, e.g. ``onPreToolUse``."""
        return camel_case(self.name)

    def input_to_wire(self, value: _Input) -> dict[str, Any]:
        """The camelCase input object, ``timestamp`` in epoch milliseconds."""
        wire: dict[str, Any] = {}
        for name, key in _wire_keys(type(value)):
            field_value = getattr(value, name)
            if name == "timestamp":
                field_value = round(field_value.timestamp() * 1000)
            elif isinstance(field_value, ToolResult):
                field_value = field_value.to_wire()
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
            if key == "cwd" and key not in data and "workingDirectory" in data:
                key = "workingDirectory"
            if key not in data:
                continue
            value = data[key]
            if name == "timestamp":
                value = datetime.fromtimestamp(float(value) / 1000, tz=timezone.utc)
            elif name == "tool_result":
                value = result_from_wire(value)
            kwargs[name] = value
        kwargs.setdefault("timestamp", datetime.now(timezone.utc))
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


HOOK_POINTS: Final[dict[str, HookPoint]] = {
    point.name: point
    for point in (
        HookPoint(
            "on_user_prompt_submitted",
            UserPromptSubmittedInput,
            UserPromptSubmittedOutput,
            {"modified_prompt": _string, "additional_context": _string},
        ),
        HookPoint(
            "on_pre_tool_use",
            PreToolUseInput,
            PreToolUseOutput,
            {
                "permission_decision": _choice("allow", "deny", "ask"),
                "permission_decision_reason": _string,
                "modified_args": _any,
                "additional_context": _string,
            },
        ),
        HookPoint(
            "on_post_tool_use",
            PostToolUseInput,
            PostToolUseOutput,
            {"modified_result": _tool_result, "additional_context": _string},
        ),
        HookPoint("on_session_start", SessionStartInput, SessionStartOutput, {"additional_context": _string}),
        HookPoint(
            "on_session_end",
            SessionEndInput,
            SessionEndOutput,
            {"session_summary": _string, "cleanup_actions": _string_list},
        ),
        HookPoint(
            "on_error_occurred",
            ErrorOccurredInput,
            ErrorOccurredOutput,
            {
                "error_handling": _choice("retry", "skip", "abort"),
                "retry_count": _count,
                "user_notification": _string,
            },
        ),
    )
}
"""The six hook points by Python name, in the order the contract lists them."""


def hook_point(name: str) -> HookPoint | None:
    """The hook point for a Python, Copilot or wire name, or ``None``."""
    python_name = hook_name(name)
    return HOOK_POINTS[python_name] if python_name is not None else None
