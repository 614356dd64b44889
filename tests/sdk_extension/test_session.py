"""join_session's checks that run before any connection exists."""

from __future__ import annotations

import pytest

from sdk_extension import InvalidHookError, NotUnderHostError, join_session, tool


@tool(description="Echo")
def echo(text: str) -> str:
    return text


def test_joining_outside_a_host_says_how_to_run_the_extension(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without SESSION_ID, join_session raises NotUnderHostError pointing at the host's commands."""
    monkeypatch.delenv("SESSION_ID", raising=False)
    with pytest.raises(NotUnderHostError, match="started by the extension host.*extensions list"):
        join_session(tools=[echo])


def test_an_unknown_hook_name_is_refused_before_connecting(monkeypatch: pytest.MonkeyPatch) -> None:
    """The error lists the six hook points; the bad name is on the exception."""
    monkeypatch.delenv("SESSION_ID", raising=False)
    with pytest.raises(InvalidHookError) as caught:
        join_session(hooks={"before_tool": lambda i, inv: None})
    assert caught.value.hook == "before_tool"
    for name in ("on_user_prompt_submitted", "on_pre_tool_use", "on_post_tool_use", "on_session_start",
                 "on_session_end", "on_error_occurred"):
        assert name in str(caught.value)


def test_tools_must_be_tool_objects_and_names_unique(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plain function, or the same tool twice, is refused with a message saying so."""
    monkeypatch.delenv("SESSION_ID", raising=False)
    with pytest.raises(TypeError, match="use @tool"):
        join_session(tools=[lambda: None])  # type: ignore[list-item]
    with pytest.raises(Exception, match="given twice"):
        join_session(tools=[echo, echo])


def test_requested_environment_variables_must_be_a_list_of_names() -> None:
    """A bare string (a common slip) is refused before anything is sent."""
    with pytest.raises(TypeError, match="takes a list of names"):
        join_session(requested_environment_variables="GITHUB_TOKEN")
    with pytest.raises(TypeError, match="is not a variable name"):
        join_session(requested_environment_variables=["GITHUB_TOKEN", 3])  # type: ignore[list-item]
