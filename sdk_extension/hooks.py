"""The ``@hook`` decorator: a function made a hook of one hook point, with the tools it is for.

::

    @hook("pre_tool_use", tools=["bash", "run_*"])
    def guard(input: PreToolUseInput, invocation: HookInvocation) -> PreToolUseOutput | None: ...

    join_session(hooks=[guard])

A hook point is named by the table's Python name without its ``on_`` (``pre_tool_use`` for
``on_pre_tool_use``): one spelling, the one the type checker knows, so ``on_pre_tool_use`` and
the wire's ``preToolUse`` are refused with the spelling to write. ``tools=`` (tool names or
``fnmatch`` patterns) is the matcher, taken only by the hook points about a tool. The
overloads of :func:`hook` type each hook point's function: its input is the hook point's input
model, its return its output model or ``None`` (``def`` or ``async def``).

Everything is checked when the decorator runs (:class:`~extension_protocol.errors.InvalidHookError`,
one line naming the hook and what to do); joining turns decorated hooks into the same handlers
and matchers the ``hooks={...}`` mapping gives (:func:`hook_registration`), and the session
calls the function itself, so a decorated hook costs a call nothing more. This module imports
the hook-point table only for ``tools=`` (which hook points are about a tool); the models are
for the type checker, loaded when a hook first runs, as with the mapping.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Generic, Literal, TypeVar, overload

from extension_protocol.errors import InvalidHookError
from extension_protocol.protocol import HOOK_NAMES, hook_name

if TYPE_CHECKING:
    from extension_protocol import hook_models as models

__all__ = ["HOOK_POINT_NAMES", "Hook", "HookDecorator", "hook", "hook_registration"]

HOOK_POINT_NAMES: Final[dict[str, str]] = {name.removeprefix("on_"): name for name in HOOK_NAMES}
"""``@hook``'s names of the hook points (``pre_tool_use``), each to the table's Python name."""

_I = TypeVar("_I")
_O = TypeVar("_O")
_R = TypeVar("_R")


@dataclass(frozen=True, slots=True)
class Hook(Generic[_I, _R]):
    """A hook function and the hook point it is for, as ``@hook`` makes it.

    ``point`` is the table's Python name (``on_pre_tool_use``); ``tools`` the tool names or
    patterns it is for (``None``: every tool). Calling it calls the function, so a decorated
    hook stays testable as a plain function.
    """

    point: str
    function: Callable[[_I, models.HookInvocation], _R]
    tools: tuple[str, ...] | None = None

    def __call__(self, input: _I, invocation: models.HookInvocation) -> _R:
        return self.function(input, invocation)


class HookDecorator(Generic[_I, _O]):
    """What ``hook(point, ...)`` returns: applied to a function, the :class:`Hook` for that point."""

    __slots__ = ("_point", "_tools")

    def __init__(self, point: str, tools: tuple[str, ...] | None) -> None:
        self._point = point
        self._tools = tools

    @overload
    def __call__(self, function: Callable[[_I, models.HookInvocation], _O | None], /) -> Hook[_I, _O | None]: ...
    @overload
    def __call__(
        self, function: Callable[[_I, models.HookInvocation], Coroutine[Any, Any, _O | None]], /
    ) -> Hook[_I, Coroutine[Any, Any, _O | None]]: ...

    def __call__(self, function: Callable[[_I, models.HookInvocation], Any], /) -> Hook[_I, Any]:
        if isinstance(function, Hook) or not callable(function):
            what = "another @hook" if isinstance(function, Hook) else type(function).__name__
            raise InvalidHookError(
                self._point, f"@hook({_short(self._point)!r}) decorates a function (input, invocation), not {what}"
            )
        return Hook(self._point, function, self._tools)


@overload
def hook(
    point: Literal["user_prompt_submitted"], /
) -> HookDecorator[models.UserPromptSubmittedInput, models.UserPromptSubmittedOutput]: ...
@overload
def hook(
    point: Literal["pre_tool_use"], /, *, tools: Iterable[str] | None = None
) -> HookDecorator[models.PreToolUseInput, models.PreToolUseOutput]: ...
@overload
def hook(
    point: Literal["post_tool_use"], /, *, tools: Iterable[str] | None = None
) -> HookDecorator[models.PostToolUseInput, models.PostToolUseOutput]: ...
@overload
def hook(point: Literal["session_start"], /) -> HookDecorator[models.SessionStartInput, models.SessionStartOutput]: ...
@overload
def hook(point: Literal["session_end"], /) -> HookDecorator[models.SessionEndInput, models.SessionEndOutput]: ...
@overload
def hook(
    point: Literal["error_occurred"], /
) -> HookDecorator[models.ErrorOccurredInput, models.ErrorOccurredOutput]: ...
@overload
def hook(
    point: Literal["user_prompt_transformed"], /
) -> HookDecorator[models.UserPromptTransformedInput, models.UserPromptTransformedOutput]: ...
@overload
def hook(
    point: Literal["post_tool_use_failure"], /, *, tools: Iterable[str] | None = None
) -> HookDecorator[models.PostToolUseFailureInput, models.PostToolUseFailureOutput]: ...
@overload
def hook(point: Literal["agent_stop"], /) -> HookDecorator[models.AgentStopInput, models.AgentStopOutput]: ...
@overload
def hook(
    point: Literal["subagent_start"], /
) -> HookDecorator[models.SubagentStartInput, models.SubagentStartOutput]: ...
@overload
def hook(point: Literal["subagent_stop"], /) -> HookDecorator[models.SubagentStopInput, models.SubagentStopOutput]: ...


def hook(point: str, /, *, tools: Iterable[str] | None = None) -> HookDecorator[Any, Any]:
    """Make a function ``(input, invocation)`` a hook of ``point`` (``"pre_tool_use"``...).

    ``tools`` (for ``pre_tool_use``, ``post_tool_use`` and ``post_tool_use_failure``) are the
    tool names or ``fnmatch`` patterns the hook is for; without it, it is called for every tool.
    Pass the decorated functions to ``join_session(hooks=[...])``.

    Raises:
        InvalidHookError: the hook point is unknown or spelled another way, ``tools=`` is given
            to a hook point that is not about a tool, or a pattern is unusable.
    """
    name = HOOK_POINT_NAMES.get(point) if isinstance(point, str) else None
    if name is None:
        known = hook_name(point) if isinstance(point, str) else None
        if known is not None:
            raise InvalidHookError(known, f"@hook({point!r}): write @hook({_short(known)!r}) (its name without 'on_')")
        valid = ", ".join(HOOK_POINT_NAMES)
        raise InvalidHookError(str(point), f"@hook({point!r}): no such hook point; the hook points are: {valid}")
    return HookDecorator(name, None if tools is None else _patterns(name, tools))


def _short(name: str) -> str:
    return name.removeprefix("on_")


def _patterns(name: str, tools: Iterable[str]) -> tuple[str, ...]:
    """``tools=`` checked and compiled once here, as the join would (the table loads for it)."""
    from extension_protocol.hook_points import HOOK_POINTS
    from extension_protocol.matchers import compile_matcher

    short = _short(name)
    if not HOOK_POINTS[name].for_tools:
        takers = ", ".join(_short(point.name) for point in HOOK_POINTS.values() if point.for_tools)
        raise InvalidHookError(name, f"@hook({short!r}) is not about a tool: drop tools= (it is for: {takers})")
    patterns = (tools,) if isinstance(tools, str) else tuple(tools) if isinstance(tools, Iterable) else tools
    if patterns == ():
        raise InvalidHookError(name, f"@hook({short!r}): tools= is empty; drop it to call the hook for every tool")
    try:
        return compile_matcher(short, patterns).patterns
    except ValueError as exc:
        raise InvalidHookError(name, str(exc)) from None


def hook_registration(
    hooks: Iterable[Hook[Any, Any]], hook_matchers: Mapping[str, Iterable[str]] | None
) -> tuple[dict[str, Callable[..., Any]], dict[str, list[str]]]:
    """Decorated hooks as the ``hooks={...}`` mapping and ``hook_matchers`` that say the same,
    keyed by Python name, in the order given.

    Raises:
        InvalidHookError: an item is not a decorated hook, two are for one hook point, or
            ``hook_matchers`` is given too (matchers go in ``@hook(..., tools=...)``).
    """
    if hook_matchers:
        raise InvalidHookError(
            "hook_matchers", "with @hook functions, give matchers as @hook(..., tools=[...]), not hook_matchers="
        )
    handlers: dict[str, Callable[..., Any]] = {}
    matchers: dict[str, list[str]] = {}
    for item in hooks:
        if not isinstance(item, Hook):
            label = getattr(item, "__name__", type(item).__name__)
            raise InvalidHookError(
                str(label),
                f"hooks=[...] takes @hook functions; decorate {label} with @hook('<hook point>') "
                "or pass hooks={'on_<hook point>': function}",
            )
        if item.point in handlers:
            raise InvalidHookError(
                item.point,
                f"@hook({_short(item.point)!r}) is given twice; an extension has one function per hook point, "
                "so call both from one",
            )
        handlers[item.point] = item.function
        if item.tools is not None:
            matchers[item.point] = list(item.tools)
    return handlers, matchers
