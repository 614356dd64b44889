"""__EXTENSION_NAME__: __EXTENSION_DESCRIPTION__

It offers one tool, `__TOOL_PREFIX___count_lines`, and one hook, `pre_tool_use`, that keeps
secrets files (.env and friends) away from every tool. Edit both; `extensions dev` reloads
this file when you save it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

from sdk_extension import HookInvocation, PreToolUseInput, PreToolUseOutput, ToolResult, hook, join_session, tool

SECRET_FILE_NAMES = {".env", ".envrc", ".netrc", ".npmrc", ".pypirc", "id_rsa", "id_ed25519"}


# The tool's name is what the agent calls; it starts with this extension's own prefix so that
# no two scaffolded extensions offer the same name. It need not match the function's name.
@tool(name="__TOOL_PREFIX___count_lines", description="Count the lines of a text file in the project.")
def count_lines(
    path: Annotated[str, "file path, relative to the project root"],
) -> str | ToolResult:
    root = Path.cwd().resolve()
    target = (root / path).resolve()
    if not target.is_relative_to(root):
        return ToolResult(f"{path} is outside the project", "rejected")
    if not target.is_file():
        return ToolResult(f"{path} is not a file", "failure")
    with target.open("rb") as handle:
        count = sum(1 for _ in handle)
    return f"{path}: {count} lines"


# A hook of every tool call (add tools=["bash", ...] to limit it to some tools). The type
# checker knows its input and output types from the hook point's name.
@hook("pre_tool_use")
def protect_secrets(input: PreToolUseInput, invocation: HookInvocation) -> PreToolUseOutput | None:
    """Deny any tool call whose arguments name a secrets file."""
    for value in _strings(input.tool_args):
        for part in value.replace("\\", "/").split("/"):
            name = part.strip().strip("'\"")
            if name in SECRET_FILE_NAMES or name.startswith(".env."):
                return PreToolUseOutput(
                    permission_decision="deny",
                    permission_decision_reason=f"{name} may hold secrets; __EXTENSION_NAME__ keeps it away from tools",
                )
    return None  # no opinion: other hooks and the user decide


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return value.split()
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


session = join_session(tools=[count_lines], hooks=[protect_secrets])
session.log(f"__EXTENSION_NAME__ ready (pid {os.getpid()})")
