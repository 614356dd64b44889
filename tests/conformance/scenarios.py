"""The scenarios of the conformance suite, one table (:data:`SCENARIOS`).

A scenario is a project with one extension (``probe``), written once in JavaScript
(``extension.mjs``, against ``@github/copilot-sdk/extension``) and once in Python (``extension.py``,
against ``sdk_extension``) doing the same things, a prompt, and the fake model's script, with
the parts of the wire it covers (:data:`SURFACES`; together they cover all). Both extensions subscribe to every event,
so the two sides are compared on everything they send. An extension's first import is its
tap (``tap.mjs``/``tap.py``, copied beside it).

The hooks an extension declares are the same on both sides; the Python one declares those of
:data:`WANTED_HOOKS` that the Python SDK has (``HOOK_POINTS``), so hook points added to it are
used as they land.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from real_agents.models import Call, Say, Turn

__all__ = ["DENY_REASON", "LANGUAGES", "SCENARIOS", "SURFACES", "Scenario"]

LANGUAGES: Final = ("mjs", "py")
DENY_REASON: Final = "the probe refuses this call"
CONTEXT_MARKER: Final = "PROBE-CONTEXT-7f3a"
"""Additional context a prompt hook adds: whether it reached the model is compared."""
WANTED_HOOKS: Final = {
    "onPreToolUse": "on_pre_tool_use",
    "onPostToolUse": "on_post_tool_use",
    "onPostToolUseFailure": "on_post_tool_use_failure",
    "onUserPromptSubmitted": "on_user_prompt_submitted",
    "onUserPromptTransformed": "on_user_prompt_transformed",
    "onSessionStart": "on_session_start",
    "onSessionEnd": "on_session_end",
    "onErrorOccurred": "on_error_occurred",
    "onAgentStop": "on_agent_stop",
}
"""Every hook of the published SDK's extension API (JavaScript name: Python name)."""
SUBAGENT_HOOKS: Final = {"onSubagentStart": "on_subagent_start", "onSubagentStop": "on_subagent_stop"}
"""The subagent hooks (JavaScript name: Python name): the SDK the CLI bundles has them, the
published one does not (it answers them with no output)."""
AGENT_MARKER: Final = "PROBE-REVIEWER-2b9d"
"""In the custom agent's prompt: the fake model answers the child's conversation by it."""
AGENT_FILE: Final = f"""---
name: reviewer
description: Reviews things
tools: ["probe_echo"]
---
You review things ({AGENT_MARKER}).
"""


SURFACES: Final = (
    "connect answer",
    "resume answer",
    "hook points",
    "hook input",
    "lifecycle notifications",
    "events",
    "hook events",
    "tool requests",
    "tool events",
    "deny text",
    "listings",
    "method names",
    "extension tools",
    "re-join",
    "subagent events",
    "hook input inside a subagent",
    "subagent hooks",
    "tool requests inside a subagent",
    "a subagent's model",
)
"""The parts of the wire the scenarios compare between the two sides."""


@dataclass(frozen=True)
class Scenario:
    """One scenario: ``mjs`` and ``py`` are the extension's code; ``model_tools`` the tools whose
    definitions (as offered to the model) are compared; ``markers`` texts whose arrival at the
    model is compared."""

    name: str
    covers: tuple[str, ...]
    """Which of :data:`SURFACES` it compares."""
    what: str
    prompt: str
    script: Sequence[Turn]
    mjs: str
    py: str
    model_tools: tuple[str, ...] = ("probe_echo",)
    markers: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    files: Mapping[str, str] = field(default_factory=dict)
    """Other files of the project (path under the project: text), written before either side runs."""
    agents: Mapping[str, Sequence[Turn]] = field(default_factory=dict)
    """The fake model's scripts of child conversations, by a marker of the child's system prompt
    (a custom agent's prompt, from :attr:`files`); what reached each child's model is compared
    like the parent's."""
    prompt_after: str | None = None
    """What the extension logs (``session.log``) once it has done what the prompt's turn must
    come after; ``None``: nothing. On both sides the model answers nothing before that log (at
    most :data:`~conformance.recording.PROMPT_WAIT`), and on the host the prompt is typed only
    then, as a person types after the start. Copilot CLI's ``-p`` prompt runs some tens of
    milliseconds after its extensions join (it loads skills and MCP servers meanwhile), this
    host's at once, and a turn that ends before the extension's last request ends the session
    under it: so the turn is compared, not the start's speed."""

    def code(self, language: str) -> str:
        return self.mjs if language == "mjs" else self.py


# -- the JavaScript extension's parts ----------------------------------------------------------

_JS_HEAD = """
import "./tap.mjs";
import { joinSession } from "@github/copilot-sdk/extension";
"""
_JS_ECHO = """{ name: "probe_echo", description: "Echo the text back.",
    parameters: {
      type: "object", properties: { text: { type: "string", description: "what to echo" } }, required: ["text"],
    },
    handler: async (args) => `echo ${args.text}` }"""
_JS_FAIL = """{ name: "probe_fail", description: "Always fails.", parameters: { type: "object", properties: {} },
    handler: async () => { throw new Error("the probe failed on purpose"); } }"""
_JS_COMMAND = """{ name: "probe-cmd", description: "A probe command.", handler: async () => {} }"""


def _js(tools: str = "", hooks: Mapping[str, str] | None = None, commands: str = "", after: str = "") -> str:
    hook_lines = ",\n    ".join(f"{name}: async (input) => {body}" for name, body in (hooks or {}).items())
    return (
        textwrap.dedent(_JS_HEAD)
        + "const options = {\n"
        + f"  tools: [{tools}],\n"
        + f"  hooks: {{\n    {hook_lines}\n  }},\n"
        + f"  commands: [{commands}],\n"
        + "};\n"
        + "const session = await joinSession(options);\n"
        + "session.on(() => {});\n"
        + textwrap.dedent(after)
    )


# -- the Python extension's parts --------------------------------------------------------------

_PY_HEAD = """
import tap  # noqa: F401  (first: it taps the protocol)
from sdk_extension import command, join_session, tool
from extension_protocol.hook_points import HOOK_POINTS


@tool(name="probe_echo", description="Echo the text back.")
def probe_echo(text: str) -> str:
    return f"echo {text}"


@tool(name="probe_fail", description="Always fails.")
def probe_fail() -> str:
    raise RuntimeError("the probe failed on purpose")


@command(name="probe-cmd", description="A probe command.")
def probe_cmd(context):
    return None


def hooks(**bodies):
    return {name: body for name, body in bodies.items() if name in HOOK_POINTS}


def nothing(input, invocation):
    return None
"""


_PY_HOOKS: Final = f"""
def deny(input, invocation):
    return {{"permission_decision": "deny", "permission_decision_reason": {DENY_REASON!r}}}


def add_context(input, invocation):
    return {{"additional_context": {CONTEXT_MARKER!r}}}
"""


def _py(tools: str = "", hooks: Mapping[str, str] | None = None, commands: str = "", after: str = "") -> str:
    hook_items = ", ".join(f"{name}={body}" for name, body in (hooks or {}).items())
    return (
        textwrap.dedent(_PY_HEAD)
        + _PY_HOOKS
        + f"\nsession = join_session(tools=[{tools}], hooks=hooks({hook_items}), commands=[{commands}])\n"
        + 'session.on("*", lambda event: None)\n'
        + textwrap.dedent(after)
    )


def _all_hooks_js(
    overrides: Mapping[str, str] | None = None, names: Sequence[str] = tuple(WANTED_HOOKS)
) -> dict[str, str]:
    return {name: (overrides or {}).get(name, "undefined") for name in names}


def _all_hooks_py(
    overrides: Mapping[str, str] | None = None, names: Sequence[str] = tuple(WANTED_HOOKS.values())
) -> dict[str, str]:
    return {name: (overrides or {}).get(name, "nothing") for name in names}


SCENARIOS: Final = (
    Scenario(
        "join",
        (
            "connect answer",
            "resume answer",
            "lifecycle notifications",
            "events",
            "tool requests",
            "listings",
            "extension tools",
        ),
        "joins with a tool and a command, lists the commands; the model only answers",
        "say hello",
        [Say("hello")],
        _js(_JS_ECHO, commands=_JS_COMMAND, after="await session.rpc.commands.list().catch(() => {});\n"),
        _py("probe_echo", commands="probe_cmd", after='session.rpc("session.commands.list")\n'),
        model_tools=("probe_echo", "extensions_manage", "extensions_reload"),
    ),
    Scenario(
        "prompt",
        ("hook points", "hook input"),
        "every session and prompt hook; the prompt hook adds context",
        "say hello",
        [Say("hello")],
        _js(_JS_ECHO, hooks=_all_hooks_js({"onUserPromptSubmitted": f"({{ additionalContext: {CONTEXT_MARKER!r} }})"})),
        _py("probe_echo", hooks=_all_hooks_py({"on_user_prompt_submitted": "add_context"})),
        markers=(CONTEXT_MARKER,),
    ),
    Scenario(
        "tool",
        ("hook points", "hook input", "hook events", "tool requests", "tool events"),
        "the model calls the extension's tool, which answers; every hook is declared",
        "echo hi",
        [Call("probe_echo", {"text": "hi"}), Say("done")],
        _js(_JS_ECHO, hooks=_all_hooks_js()),
        _py("probe_echo", hooks=_all_hooks_py()),
    ),
    Scenario(
        "tool-fails",
        ("hook points", "tool events"),
        "the model calls a tool that throws; every hook is declared",
        "try the failing tool",
        [Call("probe_fail", {}), Say("done")],
        _js(_JS_FAIL, hooks=_all_hooks_js()),
        _py("probe_fail", hooks=_all_hooks_py()),
        model_tools=("probe_fail",),
    ),
    Scenario(
        "deny",
        ("tool events", "deny text"),
        "a pre-tool hook denies the extension's own tool; what the model reads",
        "echo hi",
        [Call("probe_echo", {"text": "hi"}), Say("done")],
        _js(
            _JS_ECHO,
            hooks={"onPreToolUse": f"({{ permissionDecision: 'deny', permissionDecisionReason: {DENY_REASON!r} }})"},
        ),
        _py("probe_echo", hooks={"on_pre_tool_use": "deny"}),
    ),
    Scenario(
        "rpc",
        ("method names",),
        "after joining, the extension reads the session's events and asks for the auth status",
        "say hello",
        [Say("hello")],
        _js(
            _JS_ECHO,
            after="""
            await session.getEvents().catch(() => {});
            await session.rpc.gitHubAuth.getStatus().catch(() => {});
            await session.log("asked");
            """,
        ),
        _py(
            "probe_echo",
            after="""
            for method in ("session.getMessages", "session.gitHubAuth.getStatus"):
                try:
                    session.rpc(method)
                except Exception:
                    pass
            session.log("asked")
            """,
        ),
        prompt_after="asked",
    ),
    Scenario(
        "rejoin",
        ("re-join",),
        "the extension joins, disconnects and joins again from the same process, then logs",
        "say hello",
        [Say("hello")],
        _js(
            _JS_ECHO,
            after="""
            await session.disconnect();
            const again = await joinSession(options);
            await again.log("joined again");
            """,
        ),
        _py(
            "probe_echo",
            after="""
            session.detach()
            session.rejoin()
            session.log("joined again")
            """,
        ),
        prompt_after="joined again",
    ),
    Scenario(
        "subagent",
        (
            "subagent events",
            "hook input inside a subagent",
            "subagent hooks",
            "tool requests inside a subagent",
            "a subagent's model",
        ),
        "the model delegates to a custom agent (a project file) whose child calls the extension's tool "
        "and answers; every hook is declared, the subagent ones too",
        "review it",
        [
            Call("task", {"description": "review", "prompt": "echo hi", "agent_type": "reviewer", "name": "rev"}),
            Say("done"),
        ],
        _js(_JS_ECHO, hooks=_all_hooks_js(names=(*WANTED_HOOKS, *SUBAGENT_HOOKS))),
        _py("probe_echo", hooks=_all_hooks_py(names=(*WANTED_HOOKS.values(), *SUBAGENT_HOOKS.values()))),
        model_tools=("probe_echo", "task"),
        files={".github/agents/reviewer.agent.md": AGENT_FILE},
        agents={AGENT_MARKER: [Call("probe_echo", {"text": "hi"}), Say("child answer")]},
    ),
)
"""Every scenario, in the order the suite runs them."""
