"""Unit tests for extension_protocol.hook_points: hook names, input/output dataclasses and their wire forms."""

from __future__ import annotations

import dataclasses
import subprocess
from datetime import UTC, datetime
from typing import Any, get_args

import pytest

from extension_host.launch.interpreter import python_command
from extension_protocol import hook_points
from extension_protocol.errors import HookOutputError, InvalidHookError
from extension_protocol.hook_models import (
    AgentStopInput,
    AgentStopOutput,
    ErrorOccurredInput,
    PermissionDecision,
    PostToolUseInput,
    PostToolUseOutput,
    PreToolUseInput,
    PreToolUseOutput,
    SessionEndInput,
    SessionEndOutput,
    SessionStartInput,
    SessionStartOutput,
    UserPromptSubmittedInput,
)
from extension_protocol.hook_points import HOOK_POINTS, MERGES, HookPoint, hook_point
from extension_protocol.matchers import MAX_MATCHER_PATTERN_LENGTH, MAX_MATCHER_PATTERNS, compile_matchers
from extension_protocol.protocol import HOOK_NAMES
from extension_protocol.results import ToolResult
from helpers import session_resume
from sdk_extension.join import resolve_hooks, wire_hook_matchers

ELEVEN = [
    "on_user_prompt_submitted",
    "on_pre_tool_use",
    "on_post_tool_use",
    "on_session_start",
    "on_session_end",
    "on_error_occurred",
    "on_user_prompt_transformed",
    "on_post_tool_use_failure",
    "on_agent_stop",
    "on_subagent_start",
    "on_subagent_stop",
]

PRE = HOOK_POINTS["on_pre_tool_use"]
POST = HOOK_POINTS["on_post_tool_use"]
END = HOOK_POINTS["on_session_end"]
ERR = HOOK_POINTS["on_error_occurred"]
START = HOOK_POINTS["on_session_start"]
PROMPT = HOOK_POINTS["on_user_prompt_submitted"]


def handler(data: Any, invocation: Any) -> None:
    return None


def other_handler(data: Any, invocation: Any) -> None:
    return None


# -- the points -------------------------------------------------------------------------


def test_hook_points_are_the_seeds_six_then_the_five_the_copilot_cli_added() -> None:
    """HOOK_POINTS and HOOK_NAMES list the hook points in order."""
    assert list(HOOK_POINTS) == ELEVEN
    assert tuple(ELEVEN) == HOOK_NAMES


def test_each_hook_point_has_copilot_and_wire_spellings() -> None:
    """on_pre_tool_use is onPreToolUse for Copilot and preToolUse on the wire, and so on."""
    assert [(p.copilot_name, p.wire_name) for p in HOOK_POINTS.values()] == [
        ("onUserPromptSubmitted", "userPromptSubmitted"),
        ("onPreToolUse", "preToolUse"),
        ("onPostToolUse", "postToolUse"),
        ("onSessionStart", "sessionStart"),
        ("onSessionEnd", "sessionEnd"),
        ("onErrorOccurred", "errorOccurred"),
        ("onUserPromptTransformed", "userPromptTransformed"),
        ("onPostToolUseFailure", "postToolUseFailure"),
        ("onAgentStop", "agentStop"),
        ("onSubagentStart", "subagentStart"),
        ("onSubagentStop", "subagentStop"),
    ]


@pytest.mark.parametrize("name", ["on_pre_tool_use", "onPreToolUse", "preToolUse"])
def test_hook_point_finds_a_point_by_any_of_its_spellings(name: str) -> None:
    """hook_point looks up Python, Copilot and wire names."""
    assert hook_point(name) is PRE


def test_hook_point_returns_none_for_an_unknown_name() -> None:
    """An unknown name gives None, not an exception."""
    assert hook_point("onSomethingElse") is None


# -- resolve_hooks -----------------------------------------------------------------------


def test_resolve_hooks_keys_snake_case_and_camel_case_names_by_python_name() -> None:
    """Both author spellings are accepted and the result is keyed by the Python name."""
    resolved = resolve_hooks({"on_pre_tool_use": handler, "onSessionEnd": other_handler})
    assert resolved == {"on_pre_tool_use": handler, "on_session_end": other_handler}


def test_resolve_hooks_accepts_every_copilot_name() -> None:
    """Every onXxx spelling maps to its hook."""
    resolved = resolve_hooks({p.copilot_name: handler for p in HOOK_POINTS.values()})
    assert list(resolved) == ELEVEN


def test_resolve_hooks_of_none_or_empty_is_empty() -> None:
    """No hooks is fine."""
    assert resolve_hooks(None) == {}
    assert resolve_hooks({}) == {}


def test_unknown_hook_name_is_rejected_listing_all_six_valid_names() -> None:
    """A misspelt hook name raises InvalidHookError whose message lists every hook point."""
    with pytest.raises(InvalidHookError) as info:
        resolve_hooks({"on_pre_tool": handler})
    assert info.value.hook == "on_pre_tool"
    message = str(info.value)
    assert "'on_pre_tool'" in message
    for name in ELEVEN:
        assert name in message


def test_wire_hook_type_is_not_accepted_as_an_author_hook_name() -> None:
    """preToolUse is the wire spelling; authors use on_pre_tool_use or onPreToolUse."""
    with pytest.raises(InvalidHookError, match="unknown hook"):
        resolve_hooks({"preToolUse": handler})


def test_non_string_hook_name_is_rejected() -> None:
    """A key that is not a string is an unknown hook."""
    with pytest.raises(InvalidHookError):
        resolve_hooks({42: handler})  # type: ignore[dict-item,unused-ignore]


@pytest.mark.parametrize("value", [None, "handler", 3, {"a": 1}])
def test_non_callable_hook_handler_is_rejected(value: Any) -> None:
    """A hook must map to something callable."""
    with pytest.raises(InvalidHookError, match="not a function") as info:
        resolve_hooks({"onSessionStart": value})
    assert info.value.hook == "on_session_start"


def test_same_hook_under_two_spellings_is_rejected() -> None:
    """on_pre_tool_use and onPreToolUse together name one hook twice."""
    with pytest.raises(InvalidHookError, match="twice") as info:
        resolve_hooks({"on_pre_tool_use": handler, "onPreToolUse": other_handler})
    assert info.value.hook == "on_pre_tool_use"


# -- inputs ------------------------------------------------------------------------------


def test_input_from_wire_converts_camel_case_and_epoch_ms_to_snake_case_and_utc_datetime() -> None:
    """preToolUse input becomes PreToolUseInput with a UTC datetime and snake_case attributes."""
    data = PRE.input_from_wire(
        {"timestamp": 1700000000123, "cwd": "/repo", "toolName": "bash", "toolArgs": {"cmd": "ls"}}
    )
    assert isinstance(data, PreToolUseInput)
    assert data.timestamp == datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=UTC)
    assert data.timestamp.tzinfo == UTC
    assert (data.cwd, data.tool_name, data.tool_args) == ("/repo", "bash", {"cmd": "ls"})


def test_input_from_wire_accepts_working_directory_as_cwd() -> None:
    """workingDirectory is read as cwd when cwd itself is absent."""
    data = PROMPT.input_from_wire({"timestamp": 0, "workingDirectory": "/w", "prompt": "hi"})
    assert isinstance(data, UserPromptSubmittedInput)
    assert data.cwd == "/w"
    assert data.prompt == "hi"


def test_input_from_wire_prefers_cwd_over_working_directory() -> None:
    """When both are present, cwd wins."""
    data = PROMPT.input_from_wire({"timestamp": 0, "cwd": "/a", "workingDirectory": "/b", "prompt": "p"})
    assert data.cwd == "/a"


def test_input_from_wire_ignores_unknown_keys() -> None:
    """Extra keys the host may send are ignored."""
    data = START.input_from_wire({"timestamp": 0, "cwd": "/", "source": "new", "futureField": [1]})
    assert data == SessionStartInput(timestamp=datetime(1970, 1, 1, tzinfo=UTC), cwd="/", source="new")


def test_input_from_wire_reads_tool_result_into_a_tool_result() -> None:
    """postToolUse's toolResult (string or object) becomes a ToolResult."""
    data = POST.input_from_wire(
        {
            "timestamp": 0,
            "cwd": "/",
            "toolName": "t",
            "toolArgs": None,
            "toolResult": {"textResultForLlm": "x", "error": "e"},
        }
    )
    assert isinstance(data, PostToolUseInput)
    assert data.tool_result == ToolResult("x", "failure", error="e")
    plain = POST.input_from_wire({"timestamp": 0, "toolName": "t", "toolArgs": 1, "toolResult": "ok"})
    assert plain.tool_result == ToolResult("ok")


def test_input_from_wire_with_a_missing_required_field_is_a_value_error() -> None:
    """A missing prompt is reported as ValueError naming the hook type."""
    with pytest.raises(ValueError, match="userPromptSubmitted"):
        PROMPT.input_from_wire({"timestamp": 0, "cwd": "/"})


def test_input_from_wire_defaults_missing_timestamp_and_cwd() -> None:
    """Without timestamp and cwd the input gets now (UTC) and an empty cwd."""
    before = datetime.now(UTC)
    data = START.input_from_wire({"source": "startup"})
    after = datetime.now(UTC)
    assert before <= data.timestamp <= after
    assert data.cwd == ""


def test_input_to_wire_gives_camel_case_and_epoch_milliseconds_and_omits_none() -> None:
    """The inverse of input_from_wire: camelCase keys, integer ms, None fields left out."""
    value = SessionEndInput(
        timestamp=datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=UTC),
        cwd="/repo",
        reason="complete",
        final_message="bye",
    )
    assert END.input_to_wire(value) == {
        "timestamp": 1700000000123,
        "cwd": "/repo",
        "reason": "complete",
        "finalMessage": "bye",
    }


def test_input_to_wire_writes_the_exact_millisecond_of_the_timestamp() -> None:
    """A datetime on a whole millisecond is written as exactly that many ms (no float truncation)."""
    value = SessionStartInput(timestamp=datetime(2004, 3, 16, 21, 13, 22, 149000, tzinfo=UTC), cwd="/", source="new")
    assert START.input_to_wire(value)["timestamp"] == 1079471602149


def test_input_to_wire_writes_tool_result_in_wire_form() -> None:
    """A ToolResult inside an input goes out as its camelCase object, with ``toolTelemetry``
    (empty when the tool gave none) as the Copilot CLI sends it."""
    value = PostToolUseInput(
        timestamp=datetime(1970, 1, 1, tzinfo=UTC),
        cwd="/",
        tool_name="t",
        tool_args={"a": 1},
        tool_result=ToolResult("out", "denied"),
    )
    assert POST.input_to_wire(value) == {
        "timestamp": 0,
        "cwd": "/",
        "toolName": "t",
        "toolArgs": {"a": 1},
        "toolResult": {"textResultForLlm": "out", "resultType": "denied", "toolTelemetry": {}},
    }


def test_input_round_trips_through_the_wire() -> None:
    """input_from_wire(input_to_wire(x)) == x for an error input."""
    value = ErrorOccurredInput(
        timestamp=datetime(2024, 5, 6, 7, 8, 9, 500000, tzinfo=UTC),
        cwd="/c",
        error="boom",
        error_context="tool_execution",
        recoverable=False,
    )
    assert ERR.input_from_wire(ERR.input_to_wire(value)) == value


# -- outputs -----------------------------------------------------------------------------


def test_output_to_wire_of_none_is_none() -> None:
    """None means no opinion."""
    assert PRE.output_to_wire(None) is None


def test_output_to_wire_accepts_a_snake_case_dict() -> None:
    """snake_case keys are checked and written camelCase."""
    assert PRE.output_to_wire(
        {"permission_decision": "deny", "permission_decision_reason": "no", "modified_args": {"a": 1}}
    ) == {"permissionDecision": "deny", "permissionDecisionReason": "no", "modifiedArgs": {"a": 1}}


def test_output_to_wire_accepts_a_camel_case_dict() -> None:
    """camelCase keys are accepted as they are."""
    assert PRE.output_to_wire({"permissionDecision": "ask", "additionalContext": "ctx"}) == {
        "permissionDecision": "ask",
        "additionalContext": "ctx",
    }


def test_output_to_wire_accepts_the_output_dataclass_and_drops_unset_fields() -> None:
    """The hook's output dataclass is accepted; None fields are left out."""
    assert PRE.output_to_wire(PreToolUseOutput(permission_decision="allow")) == {"permissionDecision": "allow"}


def test_output_to_wire_drops_keys_whose_value_is_none() -> None:
    """A key given as None in a dict is treated as unset."""
    output = {"session_summary": None, "cleanup_actions": ["rm tmp"]}
    assert END.output_to_wire(output) == {"cleanupActions": ["rm tmp"]}


def test_empty_output_dict_is_an_empty_wire_object() -> None:
    """{} is accepted and stays an (empty) object."""
    assert START.output_to_wire({}) == {}


def test_unknown_output_key_is_a_hook_output_error_naming_the_key_and_listing_valid_keys() -> None:
    """A key the hook does not know raises HookOutputError with .key and the valid keys."""
    with pytest.raises(HookOutputError) as info:
        PRE.output_to_wire({"permission_decision": "allow", "decision": "allow"})
    error = info.value
    assert error.key == "decision"
    assert error.hook == "on_pre_tool_use"
    message = str(error)
    for valid in ("permission_decision", "permission_decision_reason", "modified_args", "additional_context"):
        assert valid in message


def test_wrong_permission_decision_is_a_hook_output_error_naming_the_key() -> None:
    """permission_decision='maybe' is not one of allow/deny/ask."""
    with pytest.raises(HookOutputError) as info:
        PRE.output_to_wire({"permission_decision": "maybe"})
    assert info.value.key == "permission_decision"
    assert "'maybe'" in str(info.value)


def test_wrong_type_given_in_camel_case_is_reported_by_python_name() -> None:
    """A bad value under a camelCase key names the field by its Python name."""
    with pytest.raises(HookOutputError) as info:
        PROMPT.output_to_wire({"modifiedPrompt": 5})
    assert info.value.key == "modified_prompt"


@pytest.mark.parametrize(
    ("point_name", "output", "key"),
    [
        ("on_session_end", {"cleanup_actions": ["ok", 3]}, "cleanup_actions"),
        ("on_session_end", {"cleanup_actions": "rm"}, "cleanup_actions"),
        ("on_error_occurred", {"retry_count": -1}, "retry_count"),
        ("on_error_occurred", {"retry_count": True}, "retry_count"),
        ("on_error_occurred", {"error_handling": "ignore"}, "error_handling"),
        ("on_session_start", {"additional_context": ["a"]}, "additional_context"),
        ("on_post_tool_use", {"modified_result": {"textResultForLlm": "x", "resultType": "odd"}}, "modified_result"),
    ],
)
def test_values_of_the_wrong_type_are_hook_output_errors_naming_the_key(
    point_name: str, output: dict[str, Any], key: str
) -> None:
    """Each output field is checked; the error names the offending key."""
    with pytest.raises(HookOutputError) as info:
        HOOK_POINTS[point_name].output_to_wire(output)
    assert info.value.key == key
    assert info.value.hook == point_name


@pytest.mark.parametrize("returned", ["allow", 1, ["permission_decision"], SessionStartOutput()])
def test_non_dict_return_is_a_hook_output_error(returned: Any) -> None:
    """A string, number, list or another hook's dataclass is not an output."""
    with pytest.raises(HookOutputError) as info:
        PRE.output_to_wire(returned)
    assert info.value.key is None
    assert "PreToolUseOutput" in str(info.value)


def test_error_occurred_output_accepts_valid_values() -> None:
    """error_handling, retry_count and user_notification pass when well-typed."""
    assert ERR.output_to_wire({"error_handling": "retry", "retry_count": 0, "user_notification": "n"}) == {
        "errorHandling": "retry",
        "retryCount": 0,
        "userNotification": "n",
    }


def test_output_from_wire_builds_the_output_dataclass() -> None:
    """A camelCase output object becomes the hook's dataclass."""
    assert PRE.output_from_wire({"permissionDecision": "deny", "permissionDecisionReason": "r"}) == PreToolUseOutput(
        permission_decision="deny", permission_decision_reason="r"
    )
    assert END.output_from_wire({"cleanupActions": ["a"]}) == SessionEndOutput(cleanup_actions=["a"])


def test_output_from_wire_of_none_is_none_and_checks_keys() -> None:
    """None stays None; unknown keys are rejected just like output_to_wire."""
    assert PRE.output_from_wire(None) is None
    with pytest.raises(HookOutputError) as info:
        PRE.output_from_wire({"bogus": 1})
    assert info.value.key == "bogus"


def test_modified_result_accepts_a_tool_result_and_sends_its_wire_form() -> None:
    """A ToolResult as modified_result is written as the camelCase result object."""
    assert POST.output_to_wire({"modified_result": ToolResult("redacted", "failure", error="e")}) == {
        "modifiedResult": {"textResultForLlm": "redacted", "resultType": "failure", "error": "e"}
    }


def test_modified_result_accepts_a_dict_in_either_spelling() -> None:
    """A result dict (camelCase or snake_case) is read as a ToolResult."""
    assert POST.output_to_wire({"modifiedResult": {"textResultForLlm": "x"}}) == {
        "modifiedResult": {"textResultForLlm": "x", "resultType": "success"}
    }
    assert POST.output_from_wire({"modified_result": {"text_result_for_llm": "y", "result_type": "denied"}}) == (
        PostToolUseOutput(modified_result=ToolResult("y", "denied"))
    )


def test_modified_result_given_as_a_string_becomes_a_success_result() -> None:
    """A plain string is normalised like a tool's return value."""
    assert POST.output_from_wire({"modifiedResult": "plain"}) == PostToolUseOutput(modified_result=ToolResult("plain"))


def test_output_dataclass_round_trips_through_the_wire() -> None:
    """output_from_wire(output_to_wire(x)) == x for a post-tool output."""
    value = PostToolUseOutput(modified_result=ToolResult("r", "rejected"), additional_context="c")
    assert POST.output_from_wire(POST.output_to_wire(value)) == value


# -- the table derives what it can -----------------------------------------------------------


def test_allowed_values_of_an_output_come_from_its_literal_type_weakest_first() -> None:
    """The check and the ranking are the Literal itself: no second list of allowed values."""
    assert PRE.decision_values == get_args(PermissionDecision) == ("allow", "ask", "deny")
    assert HOOK_POINTS["on_error_occurred"].ranks["error_handling"] == {"retry": 0, "skip": 1, "abort": 2}
    with pytest.raises(HookOutputError, match="expected one of allow, ask, deny, got 'yes'"):
        PRE.output_to_wire({"permission_decision": "yes"})


def test_every_hook_point_names_a_merge_strategy_for_every_output_field() -> None:
    for point in HOOK_POINTS.values():
        fields = {f.name for f in dataclasses.fields(point.output_type)}
        assert set(point.merge) == fields and set(point.merge.values()) <= MERGES, point.name
        assert point.checks.keys() == fields


def test_each_row_is_named_after_its_models_and_the_rows_follow_the_names() -> None:
    """``PreToolUseInput`` names the row ``on_pre_tool_use``; the rows are those of HOOK_NAMES, in order."""
    assert [(point.name, point.input_type.__name__) for point in HOOK_POINTS.values()][:2] == [
        ("on_user_prompt_submitted", "UserPromptSubmittedInput"),
        ("on_pre_tool_use", "PreToolUseInput"),
    ]
    assert all(
        point.output_type.__name__ == point.input_type.__name__[:-5] + "Output" for point in HOOK_POINTS.values()
    )
    assert tuple(HOOK_POINTS) == HOOK_NAMES


def test_a_table_without_a_row_for_every_hook_name_is_refused_at_import() -> None:
    rows = tuple(HOOK_POINTS.values())
    with pytest.raises(TypeError, match="not those of HOOK_NAMES"):
        hook_points._in_order(rows[1:])
    with pytest.raises(TypeError, match="not those of HOOK_NAMES"):
        hook_points._in_order((*rows, rows[0]))
    assert list(hook_points._in_order(tuple(reversed(rows)))) == list(HOOK_NAMES)


def test_a_table_entry_whose_merge_strategies_or_rewrite_do_not_fit_its_models_is_refused_when_read() -> None:
    no_merge = HookPoint("on_x", "PreToolUse", {}, "doc")
    with pytest.raises(TypeError, match="one known merge strategy per output field"):
        _ = no_merge.checks
    no_rewrite = HookPoint(
        "on_x", "PostToolUse", {"modified_result": "rewrite", "additional_context": "context"}, "doc"
    )
    with pytest.raises(TypeError, match="rewrites=<input field>"):
        _ = no_rewrite.input_type
    wrong_rewrite = HookPoint(
        "on_x", "PostToolUse", {"modified_result": "rewrite", "additional_context": "context"}, "doc", "tool"
    )
    with pytest.raises(TypeError, match="rewrites='tool' is not a field of its input"):
        _ = wrong_rewrite.for_tools
    with pytest.raises(TypeError, match="has no MadeUpInput and Output"):
        _ = HookPoint("on_made_up", "MadeUp", {}, "doc").output_type
    with pytest.raises(AttributeError, match="no attribute 'input_types'"):
        _ = no_merge.input_types  # type: ignore[attr-defined]


@pytest.mark.subprocess
def test_importing_the_table_creates_no_hook_model_until_a_row_is_read() -> None:
    """The rows name their models; a process that reads no row's models never creates them."""
    script = (
        "import sys\n"
        "from extension_protocol.hook_points import HOOK_POINTS, hook_point\n"
        "assert hook_point('preToolUse').guard and HOOK_POINTS['on_pre_tool_use'].rewrites == 'tool_args'\n"
        "assert 'extension_protocol.hook_models' not in sys.modules, 'models imported with the table'\n"
        "point = HOOK_POINTS['on_pre_tool_use']\n"
        "assert point.for_tools and point.input_type.__name__ == 'PreToolUseInput'\n"
        "assert 'extension_protocol.hook_models' in sys.modules\n"
    )
    completed = subprocess.run(python_command("-c", script), capture_output=True, text=True, timeout=60, check=False)
    assert completed.returncode == 0, completed.stderr


def test_only_the_tool_hooks_take_matchers() -> None:
    assert [p.name for p in HOOK_POINTS.values() if p.for_tools] == [
        "on_pre_tool_use",
        "on_post_tool_use",
        "on_post_tool_use_failure",
    ]


# -- matchers --------------------------------------------------------------------------------

BOTH = ("on_pre_tool_use", "on_post_tool_use")


def test_matchers_take_names_and_globs_in_any_hook_spelling_and_match_case_sensitively() -> None:
    compiled = compile_matchers({"preToolUse": ["bash", "run_*"], "onPostToolUse": ("ed[io]t", "x?")}, BOTH)
    pre, post = compiled["on_pre_tool_use"], compiled["on_post_tool_use"]
    assert pre.patterns == ("bash", "run_*")
    assert [pre.matches(t) for t in ("bash", "run_tests", "run_", "Bash", "bash2", "xrun_a")] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]
    assert [post.matches(t) for t in ("edit", "edot", "xy", "x", "xyz")] == [True, True, True, False, False]
    assert compile_matchers({"on_pre_tool_use": "bash"}, BOTH)["on_pre_tool_use"].patterns == ("bash",)
    assert compile_matchers(None, BOTH) == {}


@pytest.mark.parametrize(
    ("matchers", "message"),
    [
        ({"on_pre_tool": ["a"]}, "hook matcher for unknown hook 'on_pre_tool'"),
        ({"on_session_start": ["a"]}, "hook on_session_start is not about a tool and takes no matcher"),
        ({"on_pre_tool_use": []}, "hook on_pre_tool_use: matcher must be a non-empty list"),
        ({"on_pre_tool_use": [""]}, "hook on_pre_tool_use: matcher pattern '' is not a non-empty string"),
        ({"on_pre_tool_use": ["a b"]}, "hook on_pre_tool_use: matcher pattern 'a b' can match no tool"),
        ({"on_pre_tool_use": ["a" * (MAX_MATCHER_PATTERN_LENGTH + 1)]}, "is longer than 128 characters"),
        ({"on_pre_tool_use": ["a"] * (MAX_MATCHER_PATTERNS + 1)}, "33 matcher patterns; at most 32"),
        ({"on_pre_tool_use": ["a"], "preToolUse": ["b"]}, "hook on_pre_tool_use has matchers under two spellings"),
    ],
)
def test_a_bad_matcher_is_one_line_naming_the_hook_and_the_pattern(matchers: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as caught:
        compile_matchers(matchers, BOTH)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_matcher_for_a_hook_without_a_handler_is_refused() -> None:
    with pytest.raises(ValueError, match="hook on_post_tool_use has a matcher but no handler"):
        compile_matchers({"on_post_tool_use": ["a"]}, ["on_pre_tool_use"])


def test_join_matchers_become_hook_matchers_keyed_by_wire_hook_type() -> None:
    hooks = resolve_hooks({"on_pre_tool_use": lambda i, v: None})
    assert wire_hook_matchers({"onPreToolUse": ["bash", "run_*"]}, hooks) == {"preToolUse": ["bash", "run_*"]}
    assert wire_hook_matchers(None, hooks) == {}
    with pytest.raises(InvalidHookError, match="hook on_pre_tool_use: matcher pattern 'a;b' can match no tool"):
        wire_hook_matchers({"on_pre_tool_use": ["a;b"]}, hooks)


def test_the_client_sends_hook_matchers_in_session_resume_only_when_given() -> None:
    hooks = {"on_pre_tool_use": lambda i, v: None}
    with_matchers = session_resume(hooks, {"preToolUse": ["bash"]})
    assert with_matchers["hookTypes"] == ["preToolUse"] and with_matchers["hookMatchers"] == {"preToolUse": ["bash"]}
    assert "hookMatchers" not in session_resume(hooks)


# -- inputs as the Copilot CLI sends them -------------------------------------------------------


def test_inputs_are_read_as_the_copilot_cli_sends_them() -> None:
    """``sessionId`` and ``cwd`` on every input; ``stop_hook_active`` spelled as it is; the error
    of the error and session-end hooks an object whose message is the error."""
    stop = HOOK_POINTS["on_agent_stop"].input_from_wire(
        {
            "sessionId": "s-1",
            "transcriptPath": "/home/u/.copilot/session-state/s-1/events.jsonl",
            "stopReason": "end_turn",
            "stop_hook_active": True,
            "timestamp": 0,
            "cwd": "/srv/project",
        }
    )
    assert stop == AgentStopInput(
        timestamp=datetime(1970, 1, 1, tzinfo=UTC),
        cwd="/srv/project",
        session_id="s-1",
        stop_reason="end_turn",
        transcript_path="/home/u/.copilot/session-state/s-1/events.jsonl",
        stop_hook_active=True,
    )
    error = ERR.input_from_wire(
        {
            "sessionId": "s-1",
            "error": {"name": "Error", "message": "500 fake model exploded", "stack": "Error: ..."},
            "errorContext": "model_call",
            "recoverable": True,
            "timestamp": 0,
            "cwd": "/",
        }
    )
    assert (error.error, error.session_id) == ("500 fake model exploded", "s-1")
    ended = END.input_from_wire(
        {"reason": "error", "error": {"message": "retried 5 times"}, "timestamp": 0, "cwd": "/"}
    )
    assert ended.error == "retried 5 times"


def test_inputs_are_also_read_as_the_published_sdk_hands_them_on() -> None:
    """``workingDirectory``, ``stopHookActive`` and a plain string error; no ``sessionId`` is empty."""
    stop = HOOK_POINTS["on_agent_stop"].input_from_wire({"stopHookActive": True, "workingDirectory": "/p"})
    assert (stop.stop_hook_active, stop.cwd, stop.session_id) == (True, "/p", "")
    assert (
        ERR.input_from_wire({"error": "boom", "errorContext": "system", "recoverable": False, "cwd": "/"}).error
        == "boom"
    )


def test_inputs_are_written_as_the_copilot_cli_sends_them() -> None:
    now = datetime(1970, 1, 1, tzinfo=UTC)
    stop = AgentStopInput(timestamp=now, cwd="/p", session_id="s-1", stop_reason="end_turn", stop_hook_active=False)
    assert HOOK_POINTS["on_agent_stop"].input_to_wire(stop) == {
        "timestamp": 0,
        "cwd": "/p",
        "sessionId": "s-1",
        "stopReason": "end_turn",
        "stop_hook_active": False,
    }
    error = ErrorOccurredInput(timestamp=now, cwd="/p", error="boom", error_context="model_call", recoverable=True)
    assert ERR.input_to_wire(error) == {
        "timestamp": 0,
        "cwd": "/p",
        "error": {"message": "boom"},
        "errorContext": "model_call",
        "recoverable": True,
    }


def test_an_agent_stop_hook_may_only_block() -> None:
    point = HOOK_POINTS["on_agent_stop"]
    assert point.output_from_wire({"decision": "block", "reason": "go on"}) == AgentStopOutput(
        decision="block", reason="go on"
    )
    with pytest.raises(HookOutputError, match="expected one of block, got 'allow'"):
        point.output_from_wire({"decision": "allow"})
