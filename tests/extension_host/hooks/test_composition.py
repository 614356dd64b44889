"""How the outputs of several hook implementations combine: context, decisions, rewrites, errors."""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime

import pytest

from extension_host.hooks.composition import CONTEXT_LIMIT_BYTES, Composition, join_context
from extension_protocol.hook_models import (
    ErrorOccurredOutput,
    PostToolUseInput,
    PostToolUseOutput,
    PreToolUseInput,
    PreToolUseOutput,
    SessionEndOutput,
    SessionStartInput,
    SessionStartOutput,
    UserPromptSubmittedInput,
    UserPromptSubmittedOutput,
)
from extension_protocol.results import ToolResult

NOW = datetime.now(UTC)
CWD = "/srv/project"


# -- join_context ----------------------------------------------------------------------------


def test_context_parts_are_joined_in_order_with_a_blank_line() -> None:
    """Three parts come back in their order, separated by one empty line."""
    assert join_context(["first", "second", "third"]) == "first\n\nsecond\n\nthird"


def test_empty_context_parts_are_skipped_without_leaving_extra_blank_lines() -> None:
    """Empty strings between, before and after real parts add nothing."""
    assert join_context(["", "first", "", "", "second", ""]) == "first\n\nsecond"


@pytest.mark.parametrize("parts", [[], [""], ["", "", ""]], ids=["no parts", "one empty", "all empty"])
def test_context_is_none_when_there_is_nothing_to_add(parts: list[str]) -> None:
    """No part, or only empty parts, gives None rather than an empty string."""
    assert join_context(parts) is None


def test_context_of_exactly_the_limit_is_kept_whole() -> None:
    """A joined text of exactly 10 KB of UTF-8 is not truncated."""
    half = "a" * ((CONTEXT_LIMIT_BYTES - 2) // 2)
    parts = [half, "b" * (CONTEXT_LIMIT_BYTES - 2 - len(half))]
    joined = join_context(parts)
    assert joined is not None
    assert len(joined.encode()) == CONTEXT_LIMIT_BYTES
    assert joined == parts[0] + "\n\n" + parts[1]


def test_the_limit_is_ten_kilobytes() -> None:
    """The cap on additional context is 10 * 1024 bytes."""
    assert CONTEXT_LIMIT_BYTES == 10 * 1024


def test_context_over_the_limit_is_cut_to_the_limit_with_a_truncation_marker() -> None:
    """One byte too many: the result fits in 10 KB, keeps the start, and says it was truncated."""
    text = "z" * (CONTEXT_LIMIT_BYTES + 1)
    joined = join_context([text])
    assert joined is not None
    assert len(joined.encode()) <= CONTEXT_LIMIT_BYTES
    kept = re.match("z*", joined)
    assert kept is not None and len(kept.group()) > CONTEXT_LIMIT_BYTES - 200
    marker = joined[kept.end() :]
    assert "truncated" in marker


def test_the_limit_counts_utf8_bytes_not_characters() -> None:
    """6000 two-byte characters are fewer than 10 240 characters but more than 10 KB: truncated."""
    text = "é" * 6000
    joined = join_context([text])
    assert joined is not None
    assert joined != text
    assert len(joined.encode()) <= CONTEXT_LIMIT_BYTES
    assert "truncated" in joined


@pytest.mark.parametrize("padding", [0, 1, 2, 3])
def test_truncation_never_cuts_a_multi_byte_character_in_half(padding: int) -> None:
    """Whatever byte the cut falls on, only whole characters of the original text are kept."""
    text = "y" * padding + "€😀" * 3000  # 3- and 4-byte characters; paddings shift the cut point
    joined = join_context([text])
    assert joined is not None
    assert "\ufffd" not in joined
    encoded = joined.encode()
    assert len(encoded) <= CONTEXT_LIMIT_BYTES
    assert encoded.decode("utf-8") == joined  # well-formed UTF-8
    kept = re.match("[y€😀]*", joined)
    assert kept is not None
    assert text.startswith(kept.group())
    # at most one partial character (< 4 bytes) is dropped before the marker
    marker_bytes = len(joined[kept.end() :].encode())
    assert len(kept.group().encode()) >= CONTEXT_LIMIT_BYTES - marker_bytes - 3
    assert "truncated" in joined[kept.end() :]


def test_the_cap_applies_to_all_parts_together() -> None:
    """Two parts of 6 KB each fit alone but not together: the joined text is truncated."""
    parts = ["a" * 6000, "b" * 6000]
    joined = join_context(parts)
    assert joined is not None
    assert joined.startswith("a" * 6000 + "\n\n" + "b")
    assert len(joined.encode()) <= CONTEXT_LIMIT_BYTES
    assert "truncated" in joined


def test_composition_additional_context_joins_and_caps_every_output() -> None:
    """Contexts from successive outputs are joined in order; empty ones are not recorded."""
    composition = Composition("on_session_start")
    composition.apply(SessionStartOutput(additional_context="one"), "a")
    composition.apply(SessionStartOutput(additional_context=""), "b")
    composition.apply(None, "c")
    composition.apply(SessionStartOutput(additional_context="two"), "d")
    assert composition.contexts == ["one", "two"]
    assert composition.additional_context == "one\n\ntwo"
    composition.apply(SessionStartOutput(additional_context="x" * CONTEXT_LIMIT_BYTES), "e")
    capped = composition.additional_context
    assert capped is not None and len(capped.encode()) <= CONTEXT_LIMIT_BYTES
    assert capped.startswith("one\n\ntwo\n\nx")


def test_composition_without_context_has_none() -> None:
    """A fresh composition and one fed only None outputs add no context."""
    composition = Composition("on_pre_tool_use")
    assert composition.additional_context is None
    assert composition.apply(None, "a") is None
    assert composition.additional_context is None


# -- permission decisions --------------------------------------------------------------------


@pytest.mark.parametrize("order", list(itertools.permutations(["allow", "ask", "deny"])), ids=lambda o: ">".join(o))
def test_deny_beats_ask_beats_allow_whatever_the_order(order: tuple[str, ...]) -> None:
    """The deny wins with its own reason and owner, however the three decisions arrive."""
    composition = Composition("on_pre_tool_use")
    for decision in order:
        composition.decide(decision, f"because {decision}", f"owner-{decision}")
    assert composition.decision == "deny"
    assert composition.reason == "because deny"
    assert composition.decided_by == "owner-deny"


@pytest.mark.parametrize("order", [("allow", "ask"), ("ask", "allow")], ids=["allow>ask", "ask>allow"])
def test_ask_beats_allow_whatever_the_order(order: tuple[str, str]) -> None:
    """Without a deny, ask wins over allow and the chain is not stopped."""
    composition = Composition("on_pre_tool_use")
    for decision in order:
        composition.decide(decision, f"because {decision}", f"owner-{decision}")
    assert (composition.decision, composition.reason, composition.decided_by) == ("ask", "because ask", "owner-ask")
    assert composition.stopped is False


@pytest.mark.parametrize("decision", ["allow", "ask", "deny"])
def test_an_equally_strong_later_decision_keeps_the_first_reason_and_owner(decision: str) -> None:
    """Only a strictly stronger decision replaces the current one."""
    composition = Composition("on_pre_tool_use")
    composition.decide(decision, "first reason", "first")
    composition.decide(decision, "second reason", "second")
    assert (composition.decision, composition.reason, composition.decided_by) == (decision, "first reason", "first")


def test_a_weaker_later_decision_does_not_replace_a_stronger_one() -> None:
    """An allow after an ask leaves the ask with its reason."""
    composition = Composition("on_pre_tool_use")
    composition.decide("ask", "check with user", "guard")
    composition.decide("allow", "fine", "other")
    assert (composition.decision, composition.reason, composition.decided_by) == ("ask", "check with user", "guard")


def test_deny_stops_the_chain_and_allow_or_ask_do_not() -> None:
    """stopped turns True at the first deny only."""
    composition = Composition("on_pre_tool_use")
    composition.decide("allow", None, "a")
    assert composition.stopped is False
    composition.decide("ask", None, "b")
    assert composition.stopped is False
    composition.decide("deny", "no", "c")
    assert composition.stopped is True


def test_apply_records_a_permission_decision_and_returns_it() -> None:
    """A pre-tool output's decision is folded in with its reason, and reported back."""
    composition = Composition("on_pre_tool_use")
    ask = PreToolUseOutput(permission_decision="ask", permission_decision_reason="why")
    assert composition.apply(ask, "g") == "ask"
    assert (composition.decision, composition.reason, composition.decided_by) == ("ask", "why", "g")
    deny = PreToolUseOutput(permission_decision="deny", permission_decision_reason="no")
    assert composition.apply(deny, "h") == "deny"
    assert (composition.decision, composition.reason, composition.decided_by) == ("deny", "no", "h")
    assert composition.stopped is True


def test_an_output_without_a_decision_leaves_the_decision_unset() -> None:
    """Context alone makes no decision and does not stop the chain."""
    composition = Composition("on_pre_tool_use")
    assert composition.apply(PreToolUseOutput(additional_context="fyi"), "a") is None
    assert composition.decision is None and composition.stopped is False


# -- rewrites --------------------------------------------------------------------------------


def test_prompt_rewrites_chain_into_the_next_input() -> None:
    """Each modified prompt replaces the last; the next input carries it, other fields intact."""
    base = UserPromptSubmittedInput(timestamp=NOW, cwd=CWD, prompt="hello")
    composition = Composition("on_user_prompt_submitted", base.prompt)
    assert composition.next_input(base) == base
    composition.apply(UserPromptSubmittedOutput(modified_prompt="hello one"), "a")
    composition.apply(UserPromptSubmittedOutput(additional_context="no rewrite"), "b")
    assert composition.next_input(base) == UserPromptSubmittedInput(timestamp=NOW, cwd=CWD, prompt="hello one")
    composition.apply(UserPromptSubmittedOutput(modified_prompt="hello one two"), "c")
    assert composition.prompt == "hello one two"
    assert composition.next_input(base).prompt == "hello one two"
    assert base.prompt == "hello"


def test_tool_args_rewrites_chain_into_the_next_input() -> None:
    """modified_args replaces the arguments; an output without it keeps the previous rewrite."""
    base = PreToolUseInput(timestamp=NOW, cwd=CWD, tool_name="shell", tool_args={"command": "ls"})
    composition = Composition("on_pre_tool_use", base.tool_args)
    composition.apply(PreToolUseOutput(modified_args={"command": "ls -la"}), "a")
    composition.apply(PreToolUseOutput(permission_decision="allow"), "b")
    following = composition.next_input(base)
    assert following.tool_args == {"command": "ls -la"}
    assert (following.tool_name, following.cwd, following.timestamp) == ("shell", CWD, NOW)
    composition.apply(PreToolUseOutput(modified_args={"command": "ls -la /tmp"}), "c")
    assert composition.next_input(base).tool_args == {"command": "ls -la /tmp"}
    assert base.tool_args == {"command": "ls"}


def test_tool_result_rewrites_chain_into_the_next_input() -> None:
    """modified_result replaces the result seen by the next implementation."""
    original = ToolResult("secret=123")
    base = PostToolUseInput(timestamp=NOW, cwd=CWD, tool_name="shell", tool_args={}, tool_result=original)
    composition = Composition("on_post_tool_use", original)
    composition.apply(PostToolUseOutput(modified_result=ToolResult("secret=***")), "redact")
    composition.apply(PostToolUseOutput(additional_context="noted"), "other")
    assert composition.next_input(base).tool_result == ToolResult("secret=***")
    assert composition.result == ToolResult("secret=***")
    assert base.tool_result == original


def test_hooks_without_rewrites_pass_the_base_input_unchanged() -> None:
    """For session start (no rewrite field) the next input is the base itself."""
    base = SessionStartInput(timestamp=NOW, cwd=CWD, source="startup")
    composition = Composition("on_session_start")
    composition.apply(SessionStartOutput(additional_context="ctx"), "a")
    assert composition.next_input(base) is base


# -- session end and errors ------------------------------------------------------------------


def test_session_end_summaries_and_cleanup_actions_concatenate_in_order() -> None:
    """Summaries are collected in order (empty ones skipped); cleanup actions are appended."""
    composition = Composition("on_session_end")
    composition.apply(SessionEndOutput(session_summary="did A", cleanup_actions=["rm a"]), "a")
    composition.apply(SessionEndOutput(cleanup_actions=["rm b", "rm c"]), "b")
    composition.apply(SessionEndOutput(session_summary=""), "c")
    composition.apply(SessionEndOutput(session_summary="did D"), "d")
    assert composition.merged_value("cleanup_actions") == ["rm a", "rm b", "rm c"]
    assert composition.merged_value("session_summary") == "did A\n\ndid D"


@pytest.mark.parametrize("order", list(itertools.permutations(["retry", "skip", "abort"])), ids=lambda o: ">".join(o))
def test_error_handling_takes_the_strongest_whatever_the_order(order: tuple[str, ...]) -> None:
    """abort beats skip beats retry."""
    composition = Composition("on_error_occurred")
    for handling in order:
        composition.apply(ErrorOccurredOutput(error_handling=handling), handling)  # type: ignore[arg-type]
    assert composition.merged_value("error_handling") == "abort"


@pytest.mark.parametrize("order", [("retry", "skip"), ("skip", "retry")], ids=["retry>skip", "skip>retry"])
def test_skip_beats_retry_whatever_the_order(order: tuple[str, str]) -> None:
    """Without an abort, skip wins over retry."""
    composition = Composition("on_error_occurred")
    for handling in order:
        composition.apply(ErrorOccurredOutput(error_handling=handling), handling)  # type: ignore[arg-type]
    assert composition.merged_value("error_handling") == "skip"


def test_an_output_without_error_handling_keeps_the_current_one() -> None:
    """A later output that only notifies does not reset the handling."""
    composition = Composition("on_error_occurred")
    composition.apply(ErrorOccurredOutput(error_handling="skip"), "a")
    composition.apply(ErrorOccurredOutput(user_notification="hm"), "b")
    assert composition.merged_value("error_handling") == "skip"


def test_retry_count_is_the_largest_given() -> None:
    """retry_count takes the maximum, not the last; outputs without one leave it."""
    composition = Composition("on_error_occurred")
    assert composition.merged_value("retry_count") is None
    composition.apply(ErrorOccurredOutput(retry_count=2), "a")
    composition.apply(ErrorOccurredOutput(retry_count=5), "b")
    composition.apply(ErrorOccurredOutput(retry_count=3), "c")
    composition.apply(ErrorOccurredOutput(error_handling="retry"), "d")
    assert composition.merged_value("retry_count") == 5


def test_a_retry_count_of_zero_is_recorded() -> None:
    """Zero is a real count, not a missing one."""
    composition = Composition("on_error_occurred")
    composition.apply(ErrorOccurredOutput(retry_count=0), "a")
    assert composition.merged_value("retry_count") == 0


def test_user_notifications_are_collected_in_order() -> None:
    """Every non-empty notification is kept, in the order the outputs came."""
    composition = Composition("on_error_occurred")
    composition.apply(ErrorOccurredOutput(user_notification="first"), "a")
    composition.apply(ErrorOccurredOutput(user_notification=""), "b")
    composition.apply(ErrorOccurredOutput(error_handling="retry"), "c")
    composition.apply(ErrorOccurredOutput(user_notification="second"), "d")
    assert composition.merged_value("user_notification") == "first\nsecond"


def test_apply_reports_each_error_output_s_own_handling() -> None:
    """apply returns the decision the output made: its own handling, or None when it has none."""
    composition = Composition("on_error_occurred")
    assert composition.apply(ErrorOccurredOutput(error_handling="abort"), "a") == "abort"
    assert composition.apply(ErrorOccurredOutput(error_handling="retry"), "b") == "retry"
    assert composition.apply(ErrorOccurredOutput(user_notification="just saying"), "c") is None
    assert composition.merged_value("error_handling") == "abort"
