"""Running a hook point across every implementation: order, timeouts, failure policy, events.

Implementations are pluggy hookimpls: one forwarding plugin per running extension (only for the
hooks it declared, so a hook point nobody implements costs no IPC) and any in-process plugins
of the embedding application. The order of a call is fixed and documented:

1. in-process plugins marked ``tryfirst``;
2. extensions, in load order (project before user, each by name);
3. other in-process plugins (pluggy's order: the last registered first);
4. in-process plugins marked ``trylast``.

Each implementation call is bounded by the hook point's timeout (an extension that times out
is told to cancel, and its late answer is ignored). A failure (exception, timeout, extension
gone, or an answer of any shape other than no opinion or a valid output) of a *guard* hook
(the table's ``guard``: ``on_pre_tool_use``, ``on_user_prompt_submitted``) denies, with a
reason naming the implementation; the other hook points ignore that implementation's answer,
with a ``session.warning``. Each run of a hook point that has implementations emits one
``hook.start`` (with the input) and one ``hook.end`` (with the combined output, and this host's
addition ``calls``: each implementation's outcome, decision and time), persisted, as the
Copilot CLI does; a hook point nobody implements emits nothing.

Matchers: an implementation of a tool hook may be registered for some tools only (names or
patterns, :func:`extension_protocol.matchers.compile_matchers`). :meth:`HookRunner.chain_for` gives the
chain for one tool, cached per (hook, tool) until the registrations change, so a hook whose
matcher does not match costs one dictionary lookup; it is not called and emits no event.

Health: an implementation that timed out :data:`SUSPEND_AFTER_TIMEOUTS` times in a row is
suspended until it is registered again (an extension registers anew each time it joins, so a
reload or restart resumes it): a guard then denies at once, an observer is skipped at once,
and one ``session.warning`` says so when it happens. Any answer resets the count.

How outputs combine is :mod:`extension_host.hooks.composition`'s; what a valid output is, which
hook points are guards and which take matchers, is the hook-point table's
(:mod:`extension_protocol.hook_points`); nothing here names a hook point. This module does not start
processes.
"""

from __future__ import annotations

import asyncio
import inspect
import time
import types
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, cast

import pluggy

from extension_protocol.connection import ConnectionClosed, RpcError
from extension_protocol.errors import HookOutputError
from extension_protocol.hook_invocation import HookInvocation
from extension_protocol.hook_points import HOOK_POINTS, HookPoint
from extension_protocol.matchers import Matcher, compile_matchers

from ..events import CURRENT_AGENT, EventLog, unique_ids
from . import specs as hookspecs
from .composition import Composition, denial_text

if TYPE_CHECKING:
    from extension_protocol.hook_models import HookInput

__all__ = [
    "DEFAULT_HOOK_TIMEOUT",
    "GUARD_HOOKS",
    "SUSPEND_AFTER_TIMEOUTS",
    "ExtensionHookCall",
    "HookRecord",
    "HookRunner",
    "output_of",
]

_AGENT_KEYS: Final = frozenset({"agentId", "agentType", "parentAgentId"})
"""The sub-agent's fields of a hook input, which ``hook.start`` of a tool hook leaves out, as
Copilot CLI's does."""

DEFAULT_HOOK_TIMEOUT: Final = 30.0
"""Seconds one hook implementation may take; configurable per host and per hook point (``Timeouts``)."""
GUARD_HOOKS: Final = frozenset(point.name for point in HOOK_POINTS.values() if point.guard)
"""Hook points that fail closed: when one of their implementations fails, the action is denied
(the table's ``guard``, as of import; the runner reads the table itself)."""
SUSPEND_AFTER_TIMEOUTS: Final = 2
"""Consecutive timeouts after which an implementation is suspended until registered again: a
hung guard would otherwise cost every later call the whole timeout again."""
_FORWARDER: Final = "_extension_host_forwarder"
"""Marks a function that forwards to an extension (its own request enforces the timeout)."""
_TOOL_CHAINS_MAX: Final = 4096
"""How many (hook, tool) chains are cached before the cache starts over (tool names are few)."""
_RECENT: Final = 20
"""How many recent outcomes are kept per implementation, for ``extensions inspect``."""

ExtensionHookCall = Callable[[str, Mapping[str, Any], float], Awaitable[Any]]
"""Forwards one hook to an extension: ``(hook name, wire input, timeout) -> the result of its
``hooks.invoke`` request`` as received (``{"output": ...}``), which the runner checks."""


@dataclass(frozen=True, slots=True)
class HookRecord:
    """The outcome of one implementation's call: ``ok``, ``error``, ``timeout``, ``invalid`` or
    ``suspended`` (not called: it timed out too often in a row)."""

    hook: str
    owner: str
    outcome: str
    decision: str | None
    duration_ms: float
    error: str | None

    def to_event(self) -> dict[str, Any]:
        """Its entry in ``hook.end``'s ``calls``: ``{extensionId, outcome, decision, durationMs}``
        and ``error: {message}`` when it failed."""
        entry: dict[str, Any] = {
            "extensionId": self.owner,
            "outcome": self.outcome,
            "decision": self.decision,
            "durationMs": self.duration_ms,
        }
        if self.error is not None:
            entry["error"] = {"message": self.error}
        return entry


class _Failure(Exception):
    def __init__(self, outcome: str, message: str) -> None:
        super().__init__(message)
        self.outcome = outcome


class HookRunner:
    """Holds the implementations of the hook points and runs them."""

    def __init__(
        self,
        events: EventLog,
        *,
        session_id: str,
        cwd: str,
        timeout: float = DEFAULT_HOOK_TIMEOUT,
        timeouts: Mapping[str, float] | None = None,
    ) -> None:
        unknown = set(timeouts or ()) - set(HOOK_POINTS)
        if unknown:
            raise ValueError(f"unknown hook point(s) {sorted(unknown)}; the hook points are: {', '.join(HOOK_POINTS)}")
        self._events = events
        self._session_id = session_id
        self._cwd = cwd
        self._timeouts = {name: (timeouts or {}).get(name, timeout) for name in HOOK_POINTS}
        self._manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self._manager.add_hookspecs(hookspecs.specifications())
        self._extension_order: dict[str, int] = {}
        self._holders: dict[str, object] = {}
        self._chains: dict[str, list[pluggy.HookImpl]] = {}
        """Each hook point's call order, computed on first use after any change (every tool
        call asks for two)."""
        self._matchers: dict[str, dict[str, Matcher]] = {}
        """Per registration (extension id or plugin name): the tools each of its hooks is for."""
        self._tool_chains: dict[tuple[str, str], list[pluggy.HookImpl]] = {}
        """Each tool hook's chain for one tool (matchers applied), computed on first use."""
        self._ids = unique_ids()
        self._timeouts_in_a_row: dict[tuple[str, str], int] = {}
        """Per (owner, hook point) of the current registrations; dropped when the owner
        registers again, which is what resumes a suspended hook."""
        self.recent: dict[str, deque[HookRecord]] = {}
        """Recent outcomes per implementation (extension id or plugin name)."""

    @property
    def cwd(self) -> str:
        """The working directory every hook input carries."""
        return self._cwd

    @property
    def session_id(self) -> str:
        """The session every hook input and invocation carries."""
        return self._session_id

    def make_input(self, hook: str, **fields: Any) -> HookInput:
        """An input of ``hook``'s input model stamped now, with this runner's working folder and
        session (in a sub-agent's child session: the child's, with the agent's fields)."""
        input_type = HOOK_POINTS[hook].input_type
        scope = CURRENT_AGENT.get()
        if scope is None and "session_id" not in fields:
            return input_type(timestamp=datetime.now(UTC), cwd=self._cwd, session_id=self._session_id, **fields)
        if scope is None:
            return input_type(timestamp=datetime.now(UTC), cwd=self._cwd, **fields)
        given: dict[str, Any] = {
            "session_id": scope.agent_id,
            "agent_id": scope.agent_id,
            "agent_type": scope.agent_type,
            "parent_agent_id": scope.parent_id,
        }
        given.update(fields)  # the subagent hook points name the parent's session
        return input_type(timestamp=datetime.now(UTC), cwd=self._cwd, **given)

    def timeout(self, hook: str) -> float:
        """The timeout of one hook point, in seconds."""
        return self._timeouts[hook]

    # -- registration -------------------------------------------------------------------

    def register_plugin(
        self, plugin: object, name: str | None = None, hook_matchers: Mapping[str, Any] | None = None
    ) -> str:
        """Register an in-process pluggy plugin; returns its name.

        ``hook_matchers`` limits its tool hooks to some tools, as an extension's do:
        ``{"on_pre_tool_use": ["bash", "run_*"]}``.

        Raises:
            pluggy.PluginValidationError: a hookimpl names an unknown hook or unknown arguments,
                or uses a pluggy feature the runner cannot honour (wrappers, firstresult,
                historic).
            ValueError: the plugin or its name is already registered, or a matcher is unusable.
        """
        hookspecs.refuse_unsupported(plugin, name or type(plugin).__name__)
        self._clear_chains()
        registered = self._manager.register(plugin, name)
        if registered is not None:
            self._remove_health(registered)
        if registered is None:
            raise ValueError(f"plugin {name or plugin!r} is blocked")
        try:
            # pluggy accepts methods named like no hook point until asked; a typo must not be
            # a hook that silently never runs.
            self._manager.check_pending()
            if hook_matchers:
                hooks = [caller.name for caller in self._manager.get_hookcallers(plugin) or ()]
                self._matchers[registered] = compile_matchers(hook_matchers, hooks)
        except (pluggy.PluginValidationError, ValueError):
            self._manager.unregister(plugin, registered)
            raise
        return registered

    def use_session(self, session_id: str) -> None:
        """Give later hook calls ``session_id`` (the host started a new session)."""
        self._session_id = session_id

    def register_extension(
        self,
        extension_id: str,
        order: int,
        hooks: tuple[str, ...],
        call: ExtensionHookCall,
        holder: object = None,
        matchers: Mapping[str, Matcher] | None = None,
    ) -> None:
        """Forward ``hooks`` to an extension; ``order`` is its place in the load order.

        ``matchers`` limits its tool hooks to some tools. Replaces, in one step, whatever an
        earlier generation of the same extension had.
        """
        self._remove(extension_id)
        if not hooks:
            return
        plugin = types.SimpleNamespace(**{name: _forwarder(name, call, self._timeouts[name]) for name in hooks})
        self._clear_chains()
        self._manager.register(plugin, extension_id)
        if matchers:
            self._matchers[extension_id] = dict(matchers)
        self._extension_order[extension_id] = order
        self._holders[extension_id] = holder

    def reorder(self, orders: Mapping[str, int]) -> None:
        """Update extensions' places in the load order (after discovery found new ones)."""
        self._clear_chains()
        for extension_id in self._extension_order:
            if extension_id in orders:
                self._extension_order[extension_id] = orders[extension_id]

    def unregister(self, name: str, holder: object = None) -> None:
        """Remove a plugin or an extension's hooks (nothing happens if it has none).

        With ``holder``, only if that generation registered them.
        """
        if holder is not None and self._holders.get(name) is not holder:
            return
        self._remove(name)

    def _remove(self, name: str) -> None:
        self._clear_chains()
        self._matchers.pop(name, None)
        self._remove_health(name)
        self._extension_order.pop(name, None)
        self._holders.pop(name, None)
        plugin = self._manager.get_plugin(name)
        if plugin is not None:
            self._manager.unregister(plugin, name)

    def _clear_chains(self) -> None:
        self._chains.clear()
        self._tool_chains.clear()

    def _remove_health(self, name: str) -> None:
        for key in [key for key in self._timeouts_in_a_row if key[0] == name]:
            del self._timeouts_in_a_row[key]

    def suspended(self, owner: str) -> list[str]:
        """The hook points of ``owner`` that are suspended (they timed out too often in a row)."""
        return [
            hook
            for (name, hook), count in self._timeouts_in_a_row.items()
            if name == owner and count >= SUSPEND_AFTER_TIMEOUTS
        ]

    def implementers(self, hook: str) -> list[str]:
        """Who implements ``hook``, in the order they are called."""
        return [impl.plugin_name for impl in self.chain(hook)]

    def chain(self, hook: str) -> list[pluggy.HookImpl]:
        """The implementations of ``hook`` in call order, as of now (a snapshot)."""
        chain = self._chains.get(hook)
        if chain is None:
            chain = self._chains[hook] = self._order(hook)
        return list(chain)

    def chain_for(self, hook: str, tool_name: str) -> Sequence[pluggy.HookImpl]:
        """The implementations of a tool hook that are for ``tool_name``, in call order (a
        snapshot: do not change it). Cached: a tool call asks for two on its hot path."""
        key = (hook, tool_name)
        chain = self._tool_chains.get(key)
        if chain is None:
            if len(self._tool_chains) >= _TOOL_CHAINS_MAX:
                self._tool_chains.clear()
            matchers = self._matchers
            chain = self._tool_chains[key] = [
                impl
                for impl in self.chain(hook)
                if (matcher := matchers.get(impl.plugin_name, {}).get(hook)) is None or matcher.matches(tool_name)
            ]
        return chain

    def skipped(self, hook: str, tool_name: str) -> list[str]:
        """Who implements ``hook`` but is not called for ``tool_name`` (their matcher does not
        match), in call order."""
        called = {id(impl) for impl in self.chain_for(hook, tool_name)}
        return [impl.plugin_name for impl in self.chain(hook) if id(impl) not in called]

    def matchers(self, owner: str) -> dict[str, tuple[str, ...]]:
        """The tool patterns each hook of ``owner`` is limited to (hooks left out: every tool)."""
        return {hook: matcher.patterns for hook, matcher in self._matchers.get(owner, {}).items()}

    def _order(self, hook: str) -> list[pluggy.HookImpl]:
        impls: list[pluggy.HookImpl] = getattr(self._manager.hook, hook).get_hookimpls()
        if not impls:
            return impls
        impls.reverse()
        extensions = sorted(
            (i for i in impls if i.plugin_name in self._extension_order),
            key=lambda i: self._extension_order[i.plugin_name],
        )
        plugins = [i for i in impls if i.plugin_name not in self._extension_order]
        first = [i for i in plugins if i.tryfirst]
        last = [i for i in plugins if i.trylast]
        middle = [i for i in plugins if not i.tryfirst and not i.trylast]
        return [*first, *extensions, *middle, *last]

    # -- running ------------------------------------------------------------------------

    async def run(
        self,
        hook: str,
        base: Any,
        chain: Sequence[pluggy.HookImpl] | None = None,
        *,
        tool_call_id: str | None = None,
    ) -> Composition:
        """Call every implementation of ``hook`` in order, starting from input ``base``.

        ``chain`` is a snapshot taken earlier (so both halves of one tool call see one set of
        hooks even if an extension is reloaded in between); by default, the current chain,
        matchers applied when the input names a tool. ``tool_call_id`` names the tool call a
        tool hook is about (its ``hook.start``/``hook.end`` say which).
        """
        point = HOOK_POINTS[hook]
        composition = Composition(hook, getattr(base, point.rewrites) if point.rewrites else None)
        if chain is None:
            tool_name = getattr(base, "tool_name", None)
            chain = self.chain_for(hook, tool_name) if isinstance(tool_name, str) else self.chain(hook)
        if not chain:
            return composition
        invocation_id = next(self._ids)
        wire = point.wire_name
        self._events.emit(
            "hook.start",
            {
                "hookInvocationId": invocation_id,
                "hookType": wire,
                "input": self._start_input(point, base, tool_call_id),
                "hook": hook,
            },
        )
        invocation = HookInvocation(base.session_id or self._session_id)  # a sub-agent's: the child's
        records: list[HookRecord] = []
        for impl in chain:
            if composition.stopped:
                break
            records.append(await self._call_one(hook, impl, composition.next_input(base), invocation, composition))
        failed = next((record for record in records if record.error is not None), None)
        end: dict[str, Any] = {"hookInvocationId": invocation_id, "hookType": wire, "success": failed is None}
        output = self._end_output(point, composition, tool_call_id)
        if output is not None:
            end["output"] = output
        if failed is not None:
            end["error"] = {"message": failed.error, "source": failed.owner}  # the SDK's shape
        end["hook"] = hook
        end["calls"] = [record.to_event() for record in records]
        self._events.emit("hook.end", end)
        return composition

    def _start_input(self, point: HookPoint, base: Any, tool_call_id: str | None) -> dict[str, Any]:
        """The input ``hook.start`` shows, as the Copilot CLI shows it: a guard about a tool call
        lists the calls (``{sessionId, cwd, toolCalls: [{id, name, args}]}``); any other hook
        point shows its wire input, a tool hook's in a sub-agent without the agent's fields
        (:data:`_AGENT_KEYS`: the hook is given them)."""
        if point.guard and point.for_tools:
            call = {"id": tool_call_id or "", "name": base.tool_name, "args": base.tool_args}
            return {"sessionId": base.session_id or self._session_id, "cwd": self._cwd, "toolCalls": [call]}
        shown = point.input_to_wire(base)
        if point.for_tools and "agentId" in shown:
            return {key: value for key, value in shown.items() if key not in _AGENT_KEYS}
        return shown

    def _end_output(self, point: HookPoint, composition: Composition, tool_call_id: str | None) -> Any:
        """The output ``hook.end`` shows: the combined output (per tool call id for a tool
        hook); a guard's denial of a tool call is the text the model reads, as in the CLI."""
        if point.guard and point.for_tools and composition.decision == point.decision_values[-1]:
            output: Any = denial_text(composition.reason)
        else:
            output = composition.wire_output()
        if output is None or not point.for_tools:
            return output
        return {tool_call_id or "": output}

    async def _call_one(
        self, hook: str, impl: pluggy.HookImpl, value: Any, invocation: HookInvocation, composition: Composition
    ) -> HookRecord:
        owner = impl.plugin_name
        started = time.perf_counter()
        # A chain snapshot may still hold an implementation its owner has since replaced
        # (reloaded mid-call): its health is no longer anyone's.
        current = self._manager.get_plugin(owner) is impl.plugin
        key = (owner, hook)
        suspended_now = False
        if current and self._timeouts_in_a_row.get(key, 0) >= SUSPEND_AFTER_TIMEOUTS:
            decision = None
            failure: _Failure | None = _Failure(
                "suspended", f"suspended after {SUSPEND_AFTER_TIMEOUTS} timeouts in a row; {self._resume_hint(owner)}"
            )
        else:
            decision, failure = await self._answer(hook, impl, value, invocation, composition)
            if current:
                suspended_now = self._track_health(key, failure)
        duration_ms = (time.perf_counter() - started) * 1000
        if failure is not None:
            verb = "is" if failure.outcome == "suspended" else "failed:"
            reason = f"hook {hook} of {owner} {verb} {failure}"
            point = HOOK_POINTS[hook]
            if point.guard:
                decision = point.decision_values[-1]
                composition.decide(decision, f"{reason} (guard hooks fail closed)", owner)
            elif failure.outcome != "suspended":  # said once, when it was suspended
                self._events.emit(
                    "session.warning",
                    {"warningType": "hook", "message": f"{reason} (ignored)", "extensionId": owner},
                )
        if suspended_now:
            effect = "denies every call at once" if HOOK_POINTS[hook].guard else "is skipped"
            message = (
                f"hook {hook} of {owner} timed out {SUSPEND_AFTER_TIMEOUTS} times in a row and is suspended: "
                f"it {effect} until {self._resume_hint(owner, until=True)}"
            )
            self._events.emit("session.warning", {"warningType": "hook", "message": message, "extensionId": owner})
        record = HookRecord(
            hook,
            owner,
            failure.outcome if failure else "ok",
            decision,
            round(duration_ms, 3),
            str(failure) if failure else None,
        )
        recent = self.recent.get(owner)
        if recent is None:
            recent = self.recent[owner] = deque(maxlen=_RECENT)
        recent.append(record)
        return record

    async def _answer(
        self, hook: str, impl: pluggy.HookImpl, value: Any, invocation: HookInvocation, composition: Composition
    ) -> tuple[str | None, _Failure | None]:
        """Call one implementation and fold its output in: (its decision, or how it failed)."""
        try:
            output = await self._invoke(hook, impl, value, invocation)
        except _Failure as exc:
            return None, exc
        try:
            return composition.apply(output, impl.plugin_name), None
        except Exception as exc:  # the checks passed, so a bug of ours: still never wave it through
            return None, _Failure("invalid", f"its output could not be applied ({type(exc).__name__}: {exc})")

    def _track_health(self, key: tuple[str, str], failure: _Failure | None) -> bool:
        """Count a timeout or reset the count; True when this call suspends the hook."""
        if failure is None or failure.outcome != "timeout":
            self._timeouts_in_a_row.pop(key, None)  # it answered: whatever came before was a blip
            return False
        count = self._timeouts_in_a_row[key] = self._timeouts_in_a_row.get(key, 0) + 1
        return count == SUSPEND_AFTER_TIMEOUTS

    def _resume_hint(self, owner: str, *, until: bool = False) -> str:
        if owner in self._extension_order:
            if until:
                return "the extension reloads (fix it and save, or reload it)"
            return "fix the extension and save or reload it to resume"
        return "the plugin is registered again" if until else "register the plugin again to resume"

    async def _invoke(self, hook: str, impl: pluggy.HookImpl, value: Any, invocation: HookInvocation) -> Any:
        arguments = {"input": value, "invocation": invocation}
        timeout = self._timeouts[hook]
        try:
            result = impl.function(**{name: arguments[name] for name in impl.argnames})
            if getattr(impl.function, _FORWARDER, False):
                result = await cast(Awaitable[Any], result)  # bounded by the request, which cancels it
            elif inspect.isawaitable(result):
                async with asyncio.timeout(timeout):
                    result = await result
            return HOOK_POINTS[hook].output_from_wire(result)
        except TimeoutError:
            raise _Failure("timeout", f"no answer within {timeout:g} s") from None
        except HookOutputError as exc:
            raise _Failure("invalid", str(exc)) from None
        except RpcError as exc:
            raise _Failure("error", exc.message) from None
        except ConnectionClosed as exc:
            raise _Failure("error", f"the extension is gone ({exc})") from None
        except Exception as exc:
            raise _Failure("error", f"{type(exc).__name__}: {exc}") from None


def _forwarder(hook: str, call: ExtensionHookCall, timeout: float) -> Callable[..., Awaitable[Any]]:
    point = HOOK_POINTS[hook]

    async def forward(input: Any) -> Any:
        return output_of(hook, await call(hook, point.input_to_wire(input), timeout))

    setattr(forward, _FORWARDER, True)
    return hookspecs.hookimpl(forward)


def output_of(hook: str, answer: Any) -> Any:
    """The output in an extension's answer to ``hooks.invoke`` (``{"output": ...}``), unchecked.

    No answer (``null``), no ``output`` key and ``"output": null`` are all "no opinion"; an
    answer of any other type than an object is an error, not silence.

    Raises:
        HookOutputError: the answer is neither ``null`` nor an object.
    """
    if answer is None:
        return None
    if not isinstance(answer, dict):
        kind = type(answer).__name__
        raise HookOutputError(hook, None, f'answered hooks.invoke with {kind}; expected an object {{"output": ...}}')
    return answer.get("output")
