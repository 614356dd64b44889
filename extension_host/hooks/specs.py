"""The hook points as pluggy hook specifications, generated from the hook-point table.

One specification per entry of :data:`extension_protocol.hook_points.HOOK_POINTS`, documented by the
entry's ``doc``. Every implementation (an extension's hooks, forwarded over the wire, or an
in-process plugin of the embedding application) takes ``input`` (the hook's input object from
:mod:`extension_protocol.hook_points`) and optionally ``invocation`` (with ``session_id``), and returns
``None`` (no opinion), the hook's output object, or a dict of its output keys; it may be
``async``. Anything else is malformed: a guard hook denies, another hook's answer is ignored
with a warning. How outputs of several implementations compose is
:mod:`extension_host.hooks.composition`'s business, not pluggy's.

The runner calls each implementation itself (it needs per-implementation timeouts, order and
failure policy), so pluggy's call-time features cannot work and are refused at registration
(:func:`refuse_unsupported`): wrappers (``wrapper``, ``hookwrapper``), ``firstresult`` and
``historic``.

In-process plugins use :data:`hookimpl`::

    from extension_host import hookimpl

    class AuditLog:
        @hookimpl(tryfirst=True)
        def on_pre_tool_use(self, input):
            print("about to run", input.tool_name)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import pluggy

from extension_protocol.hook_points import HOOK_POINTS

if TYPE_CHECKING:
    from extension_protocol.hook_invocation import HookInvocation

__all__ = ["PROJECT_NAME", "hookimpl", "hookspec", "refuse_unsupported", "specifications"]

PROJECT_NAME: Final = "extension_host"
hookspec: Final = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl: Final = pluggy.HookimplMarker(PROJECT_NAME)
"""Marks a method of an in-process plugin as the implementation of a hook point."""

_REFUSED: Final = {
    "wrapper": "wrappers run around the other implementations, but the host calls each one "
    "itself, with its own timeout and failure policy",
    "hookwrapper": "wrappers run around the other implementations, but the host calls each one "
    "itself, with its own timeout and failure policy",
    "firstresult": "every implementation's output is merged by the hook-point table, so the "
    "first answer cannot end the call",
    "historic": "hook calls are not replayed to plugins registered later",
}
"""pluggy options the runner cannot honour, and why."""


def specifications() -> type:
    """A namespace of pluggy specifications, one per hook point of the table as it is now."""
    namespace: dict[str, Any] = {}
    for point in HOOK_POINTS.values():

        def spec(input: Any, invocation: HookInvocation) -> Any:
            """A hook point (generated from the table)."""

        spec.__name__ = spec.__qualname__ = point.name
        guard = " A guard: if an implementation fails, the action is denied." if point.guard else ""
        spec.__doc__ = point.doc + guard
        namespace[point.name] = hookspec(spec)
    return type("HookSpecifications", (), namespace)


def refuse_unsupported(plugin: object, name: str) -> None:
    """Refuse a plugin that uses a pluggy feature the runner cannot honour, before it registers.

    Refused: an implementation marked ``wrapper`` or ``hookwrapper``, and a method marked as a
    specification (with ``firstresult`` or ``historic``, or at all: the hook points are the
    table's, and such a method would silently never run).

    Raises:
        pluggy.PluginValidationError: naming the plugin, the method, the option and why.
    """
    for attribute in dir(plugin):
        try:
            method = getattr(plugin, attribute)
        except Exception:  # pluggy skips what it cannot read; so do we
            continue
        impl = getattr(method, f"{PROJECT_NAME}_impl", None)
        if isinstance(impl, dict):
            for option in ("wrapper", "hookwrapper"):
                if impl.get(option):
                    raise pluggy.PluginValidationError(
                        plugin,
                        f"plugin {name}: {attribute} uses {option}=True, which is not supported: {_REFUSED[option]}",
                    )
        spec = getattr(method, f"{PROJECT_NAME}_spec", None)
        if isinstance(spec, dict):
            used = [option for option in ("firstresult", "historic") if spec.get(option)]
            why = (
                f"uses {used[0]}=True, which is not supported: {_REFUSED[used[0]]}"
                if used
                else "is marked hookspec; the hook points are fixed, mark implementations with hookimpl"
            )
            raise pluggy.PluginValidationError(plugin, f"plugin {name}: {attribute} {why}")
