"""Tools an extension offers: the :class:`Tool` value, the :func:`tool` decorator, and running one.

A ``Tool`` has a name, a description, a JSON Schema and a handler ``(args, invocation)``.
``@tool`` builds one from a plain function: the schema and argument checks come from its
signature (:mod:`extension_protocol.schema`). :func:`run_tool` calls a handler the way the
contract says (sync handlers on a worker thread, errors and bad arguments as ``failure``).
This module does not know how calls arrive or where results go.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, overload

from extension_protocol.workers import run_in_worker

from .errors import InvalidToolError, ToolArgumentsError
from .protocol import ToolDefinition
from .results import ToolResult, normalize_result
from .schema import ArgumentError, Signature, signature_of

__all__ = ["TOOL_NAME_PATTERN", "Tool", "ToolInvocation", "run_tool", "tool"]

TOOL_NAME_PATTERN: Final = re.compile(r"\A[A-Za-z0-9_-]{1,64}\Z")
"""Tool names as model APIs accept them: letters, digits, ``_`` and ``-``, at most 64.

Anchored with ``\\A`` and ``\\Z`` (``$`` would also match before a final newline) and used with
``fullmatch``, so ``"abc\\n"`` is refused."""


@dataclass(frozen=True, slots=True)
class ToolInvocation:
    """About one call, passed to handlers that ask for it (a parameter named ``invocation``)."""

    session_id: str
    tool_call_id: str
    tool_name: str
    arguments: Any


@dataclass(frozen=True)
class Tool:
    """A tool as offered to the agent.

    ``handler(args, invocation)`` may be sync or async and may return anything
    :func:`~extension_protocol.results.normalize_result` accepts. ``function`` is the decorated
    function when the tool came from :func:`tool`; calling the ``Tool`` calls it, so decorated
    functions stay testable as plain functions.
    """

    name: str
    description: str
    handler: Callable[[Any, ToolInvocation], Any]
    parameters: dict[str, Any] | None = None
    overrides_built_in_tool: bool = False
    function: Callable[..., Any] | None = field(default=None, compare=False, repr=False)
    _is_async: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not TOOL_NAME_PATTERN.fullmatch(self.name):
            raise InvalidToolError(
                str(self.name),
                "a tool name is 1-64 letters, digits, '_' or '-' (it is what the model calls)",
            )
        if not callable(self.handler):
            raise InvalidToolError(self.name, "handler is not callable")
        if self.parameters is not None and not isinstance(self.parameters, dict):
            raise InvalidToolError(self.name, "parameters must be a JSON Schema object (a dict)")
        object.__setattr__(self, "_is_async", _is_async_callable(self.handler))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.function is None:
            raise TypeError(f"tool {self.name!r} wraps no plain function; call .handler(args, invocation)")
        return self.function(*args, **kwargs)

    def to_wire(self) -> ToolDefinition:
        """The declaration sent in ``session.resume``."""
        definition: ToolDefinition = {"name": self.name, "description": self.description}
        if self.parameters is not None:
            definition["parameters"] = self.parameters
        if self.overrides_built_in_tool:
            definition["overridesBuiltInTool"] = True
        return definition


@overload
def tool(function: Callable[..., Any], /) -> Tool: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    overrides_built_in_tool: bool = False,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    overrides_built_in_tool: bool = False,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a :class:`Tool` from a function; usable bare (``@tool``) or with options.

    The name defaults to the function's name, the description to its docstring's first
    paragraph. Each parameter is a JSON argument typed by its annotation
    (``Annotated[str, "what it is"]`` adds a description); a parameter named ``invocation``
    receives the :class:`ToolInvocation` instead.

    Raises:
        InvalidToolError: the name is invalid, there is no description, or the signature
            cannot take JSON arguments.
    """

    def build(fn: Callable[..., Any]) -> Tool:
        tool_name = str(name or getattr(fn, "__name__", ""))
        text = description if description is not None else _first_paragraph(inspect.getdoc(fn))
        if not text:
            raise InvalidToolError(
                tool_name, "needs a description: pass description=... or give the function a docstring"
            )
        try:
            signature = signature_of(fn)
        except (TypeError, NameError) as exc:
            raise InvalidToolError(tool_name, str(exc)) from None
        return Tool(
            name=tool_name,
            description=text,
            handler=_bound_handler(tool_name, fn, signature),
            parameters=signature.json_schema(),
            overrides_built_in_tool=overrides_built_in_tool,
            function=fn,
        )

    return build(function) if function is not None else build


def _bound_handler(name: str, fn: Callable[..., Any], signature: Signature) -> Callable[..., Any]:
    def bind(args: Any, invocation: ToolInvocation) -> dict[str, Any]:
        try:
            kwargs = signature.bind(args)
        except ArgumentError as exc:
            raise ToolArgumentsError(name, exc.field, exc.message) from None
        if signature.wants_invocation:
            kwargs["invocation"] = invocation
        return kwargs

    if _is_async_callable(fn):

        async def call_async(args: Any, invocation: ToolInvocation) -> Any:
            return await fn(**bind(args, invocation))

        return call_async

    def call(args: Any, invocation: ToolInvocation) -> Any:
        return fn(**bind(args, invocation))

    return call


async def run_tool(tool_: Tool, arguments: Any, invocation: ToolInvocation) -> ToolResult:
    """Call a tool's handler and return its normalised result; never raises for handler faults.

    A sync handler runs on a worker thread so it cannot stall the protocol. Bad arguments,
    an exception, or an unusable return value become a ``failure`` result whose text says why.
    """
    try:
        if tool_._is_async:
            value = await tool_.handler(arguments, invocation)
        else:
            value = await run_in_worker(tool_.handler, arguments, invocation)
        return normalize_result(value)
    except ToolArgumentsError as exc:
        return ToolResult(str(exc), "failure", error=str(exc))
    except Exception as exc:
        message = str(exc) or type(exc).__name__
        return ToolResult(message, "failure", error=f"{type(exc).__name__}: {message}")


def _is_async_callable(function: Any) -> bool:
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(type(function).__call__)


def _first_paragraph(doc: str | None) -> str:
    if not doc:
        return ""
    return " ".join(doc.strip().split("\n\n", 1)[0].split())
