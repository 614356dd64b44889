"""Which event types one extension is sent: its join's choice, grown and shrunk by handles."""

from __future__ import annotations

import pytest

from extension_host.runtime.interests import MAX_INTEREST_HANDLES, Interests, TooManyInterests


def test_an_extension_that_has_not_joined_wants_nothing() -> None:
    assert not Interests().wants("session.idle")


def test_a_join_that_names_no_types_wants_every_type() -> None:
    interests = Interests()
    interests.join(None, permission_handler=False)
    assert interests.wants("session.idle")
    assert interests.wants("tool.execution_complete")


def test_a_join_that_names_types_wants_only_those_and_a_permission_handler_its_requests() -> None:
    interests = Interests()
    interests.join(["session.idle"], permission_handler=True)
    assert interests.wants("session.idle")
    assert interests.wants("permission.requested")
    assert not interests.wants("user.message")


def test_releasing_the_last_handle_of_a_type_stops_it_but_never_a_type_the_join_asked_for() -> None:
    interests = Interests()
    interests.join(["session.idle"], permission_handler=False)
    first = interests.register("user.message")
    second = interests.register("user.message")
    joined = interests.register("session.idle")
    interests.release(first)
    assert interests.wants("user.message")
    interests.release(second)
    assert not interests.wants("user.message")
    interests.release(joined)
    assert interests.wants("session.idle")


def test_an_unknown_handle_is_ignored() -> None:
    interests = Interests()
    interests.join([], permission_handler=False)
    interests.release("no-such-handle")
    assert not interests.wants("session.idle")


def test_one_handle_past_the_limit_is_refused_until_one_is_released() -> None:
    interests = Interests()
    interests.join([], permission_handler=False)
    handles = [interests.register(f"type.{n}") for n in range(MAX_INTEREST_HANDLES)]
    assert len(set(handles)) == MAX_INTEREST_HANDLES
    with pytest.raises(TooManyInterests, match="the most it may"):
        interests.register("one.more")
    interests.release(handles[0])
    interests.register("one.more")
    assert interests.wants("one.more")
