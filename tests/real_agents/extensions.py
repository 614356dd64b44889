"""Extensions the scenarios of more than one test module install (their ``extension.py`` code)."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from real_agents.runner import SECRET

__all__ = ["DENY_ENV", "DENY_REASON", "MASKED", "MASKER", "REDACTED", "REDACTOR", "TOOLS", "counter", "record_to"]

DENY_REASON: Final = "reading .env is refused by the guard"
DENY_ENV: Final = f"""
import json
from sdk_extension import join_session

def guard(input, invocation):
    if ".env" in json.dumps(input.tool_args):
        return {{"permission_decision": "deny", "permission_decision_reason": {DENY_REASON!r}}}
    return None

join_session(hooks={{"on_pre_tool_use": guard}})
"""
"""A guard that denies every tool call whose arguments name ``.env``, with :data:`DENY_REASON`."""

REDACTED: Final = "[redacted by the redactor]"
REDACTOR: Final = f"""
from sdk_extension import join_session

def redact(input, invocation):
    if {SECRET!r} in input.tool_result.text_result_for_llm:
        return {{"modified_result": {REDACTED!r}}}
    return None

join_session(hooks={{"on_post_tool_use": redact}})
"""
"""A post-tool hook that replaces any result holding the secret with :data:`REDACTED`."""

MASKED: Final = "API_TOKEN=[masked]"
MASKER: Final = f"""
from sdk_extension import join_session

def mask(input, invocation):
    text = input.tool_result.text_result_for_llm
    if {SECRET!r} in text:
        return {{"modified_result": text.replace({SECRET!r}, "[masked]")}}
    return None

join_session(hooks={{"on_post_tool_use": mask}})
"""
"""A post-tool hook that masks the secret inside a result's text, keeping the rest of it (and
so the fields of a result given as JSON): ``API_TOKEN=...`` becomes :data:`MASKED`."""

TOOLS: Final = f"""
from typing import Annotated
from sdk_extension import join_session, tool

@tool(name="tools_shout", description="Say the text louder.")
def shout(text: Annotated[str, "what to say"]) -> str:
    return text.upper() + "!"

@tool(name="tools_read_secret", description="Read the project's secret.")
def read_secret() -> str:
    return "API_TOKEN={SECRET}"

join_session(tools=[shout, read_secret])
"""
"""An extension (name it ``tools``) with two tools: one that shouts, one that returns the secret."""


def record_to(path: Path) -> str:
    """The start of an extension whose hooks call ``record(line)``, which appends to ``path``."""
    return f"""
def record(line):
    with open({str(path)!r}, "a") as file:
        file.write(line + "\\n")
"""


def counter(path: Path) -> str:
    """An extension whose tool hooks append ``pre TOOL`` and ``post TOOL`` to ``path`` on each call."""
    return (
        record_to(path)
        + """
from sdk_extension import join_session

def pre(input, invocation):
    record(f"pre {input.tool_name}")

def post(input, invocation):
    record(f"post {input.tool_name}")

join_session(hooks={"on_pre_tool_use": pre, "on_post_tool_use": post})
"""
    )
