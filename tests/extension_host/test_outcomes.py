"""The pipeline's results in their JSON form, as ``--json`` prints them."""

from __future__ import annotations

import json

from extension_host.outcomes import PromptResult, ToolCallResult
from extension_protocol.results import ToolResult


def test_a_tool_call_result_in_json_says_what_the_model_sees_and_who_decided() -> None:
    result = ToolCallResult(
        ToolResult("blocked", "denied", error="denied by project:guard"),
        additional_context="ctx",
        decision="deny",
        decided_by="project:guard",
    )
    assert json.loads(json.dumps(result.to_json())) == {
        "result_type": "denied",
        "text_result_for_llm": "blocked",
        "error": "denied by project:guard",
        "decision": "deny",
        "decided_by": "project:guard",
        "additional_context": "ctx",
    }


def test_a_prompt_result_in_json_says_whether_and_by_whom_it_was_rejected() -> None:
    outcome = PromptResult("rewritten", rejected=True, reason="no secrets", rejected_by="project:redact")
    assert json.loads(json.dumps(outcome.to_json())) == {
        "prompt": "rewritten",
        "additional_context": None,
        "rejected": True,
        "reason": "no secrets",
        "rejected_by": "project:redact",
    }
