"""redact_secrets: keep tokens, keys and passwords out of what the agent's model reads.

Registers two hooks and no tools: ``on_user_prompt_submitted`` redacts the user's prompt and
``on_post_tool_use`` redacts tool results. The patterns live in ``redact.py`` next to this file.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

# This folder is sys.path[0] when the host runs the extension, so the sibling module imports.
from redact import describe, redact

from sdk_extension import ToolResult, join_session

if TYPE_CHECKING:
    # Annotations only: the SDK loads its hook types on first use, which keeps start-up fast.
    from sdk_extension import HookInvocation, PostToolUseInput, UserPromptSubmittedInput


def on_user_prompt_submitted(input: UserPromptSubmittedInput, invocation: HookInvocation) -> dict[str, str] | None:
    """Replace secrets in the prompt with markers and tell the agent how many went."""
    redaction = redact(input.prompt)
    if not redaction.findings:
        return None
    return {
        "modified_prompt": redaction.text,
        "additional_context": describe(redaction.findings, "the prompt"),
    }


def on_post_tool_use(input: PostToolUseInput, invocation: HookInvocation) -> dict[str, Any] | None:
    """Replace secrets in a tool's text result (and its error) with markers; keep the rest."""
    result = input.tool_result
    text = redact(result.text_result_for_llm)
    # A failure's error message reaches the model too, and often quotes the offending config.
    error = redact(result.error) if result.error is not None else None
    findings = text.findings + (error.findings if error is not None else ())
    if not findings:
        return None
    redacted: ToolResult = dataclasses.replace(
        result, text_result_for_llm=text.text, error=error.text if error is not None else None
    )
    return {
        "modified_result": redacted,
        "additional_context": describe(findings, f"the result of {input.tool_name}"),
    }


if __name__ == "__main__":
    session = join_session(
        hooks={
            "on_user_prompt_submitted": on_user_prompt_submitted,
            "on_post_tool_use": on_post_tool_use,
        }
    )
    session.log("redact_secrets ready", ephemeral=True)
