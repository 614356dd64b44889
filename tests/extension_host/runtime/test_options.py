"""``Timeouts`` and ``Limits``: the defaults a host had, checked values, and the keywords they
replace still working for a release, with a warning that names the replacement."""

from __future__ import annotations

import math
import warnings
from dataclasses import fields

import pytest

from extension_host import DEFAULT_READINESS_TIMEOUT, DEFAULT_TOOL_TIMEOUT, ExtensionHost, Limits, Timeouts
from extension_host.events import HISTORY_BYTES, HISTORY_EVENT_BYTES, HISTORY_LIMIT
from extension_host.hooks.runner import DEFAULT_HOOK_TIMEOUT
from extension_host.launch.process_groups import STOP_GRACE_SECONDS
from extension_host.runtime.context import MAX_QUEUED_BYTES
from extension_host.runtime.options import (
    _REPLACED,
    DEFAULT_INSTALL_TIMEOUT,
    INSTALL_TIMEOUT_ENV,
    DeprecatedOptions,
    InstallTimeoutError,
)
from helpers import Project


def test_the_objects_defaults_are_the_hosts_defaults() -> None:
    assert Timeouts() == Timeouts(
        DEFAULT_READINESS_TIMEOUT,
        DEFAULT_TOOL_TIMEOUT,
        DEFAULT_HOOK_TIMEOUT,
        {},
        STOP_GRACE_SECONDS,
        DEFAULT_INSTALL_TIMEOUT,
    )
    assert Limits() == Limits(MAX_QUEUED_BYTES, HISTORY_LIMIT, HISTORY_BYTES, HISTORY_EVENT_BYTES)


def test_a_host_without_options_has_the_defaults(project: Project) -> None:
    host = ExtensionHost(project.root, project.home, persist=False)
    assert (host.timeouts, host.limits) == (Timeouts(), Limits())


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Timeouts(tool=0), "Timeouts.tool must be a positive number of seconds, not 0"),
        (lambda: Timeouts(readiness=-1), "Timeouts.readiness must be a positive number of seconds, not -1"),
        (lambda: Timeouts(hook=math.nan), "Timeouts.hook must be a positive number of seconds, not nan"),
        (lambda: Timeouts(hooks={"on_pre_tool_use": 0}), "Timeouts.hooks['on_pre_tool_use'] must be a positive"),
        (lambda: Limits(history_events=0), "Limits.history_events must be a whole number of at least 1, not 0"),
        (lambda: Limits(queued_bytes=1.5), "Limits.queued_bytes must be a whole number of at least 1, not 1.5"),  # type: ignore[arg-type]
    ],
    ids=[
        "a zero tool timeout",
        "a negative readiness",
        "a hook timeout that is no number",
        "a zero per-point timeout",
        "an empty history",
        "a fraction of a byte",
    ],
)
def test_a_value_that_cannot_be_one_is_refused_naming_the_field(make: object, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        make()  # type: ignore[operator]


def test_equal_options_hash_alike_whatever_their_per_hook_point_timeouts() -> None:
    """Frozen values: usable as keys, as the budgets are."""
    assert hash(Timeouts(hooks={"on_pre_tool_use": 5.0})) == hash(Timeouts(hooks={"on_pre_tool_use": 5.0}))
    assert len({Timeouts(), Timeouts(), Limits(), Limits()}) == 2


def test_the_per_hook_point_timeouts_cannot_be_changed_after_the_fact() -> None:
    given = {"on_pre_tool_use": 5.0}
    timeouts = Timeouts(hooks=given)
    given["on_pre_tool_use"] = 50.0
    assert timeouts.hooks == {"on_pre_tool_use": 5.0}
    with pytest.raises(TypeError):
        timeouts.hooks["on_session_end"] = 1.0  # type: ignore[index]


@pytest.mark.parametrize(
    ("keyword", "value", "replacement", "read"),
    [
        ("readiness_timeout", 3.0, "timeouts=Timeouts(readiness=...)", lambda h: h.timeouts.readiness),
        ("tool_timeout", 0.2, "timeouts=Timeouts(tool=...)", lambda h: h.timeouts.tool),
        ("hook_timeout", 4.0, "timeouts=Timeouts(hook=...)", lambda h: h.timeouts.hook),
        ("hook_timeouts", {"on_session_end": 5.0}, "timeouts=Timeouts(hooks=...)", lambda h: dict(h.timeouts.hooks)),
        ("stop_grace", 1.0, "timeouts=Timeouts(stop_grace=...)", lambda h: h.timeouts.stop_grace),
        ("max_queued_bytes", 1024, "limits=Limits(queued_bytes=...)", lambda h: h.limits.queued_bytes),
        ("history_limit", 10, "limits=Limits(history_events=...)", lambda h: h.limits.history_events),
        ("history_bytes", 4096, "limits=Limits(history_bytes=...)", lambda h: h.limits.history_bytes),
        ("history_event_bytes", 512, "limits=Limits(history_event_bytes=...)", lambda h: h.limits.history_event_bytes),
    ],
)
def test_an_old_keyword_still_works_and_warns_naming_its_replacement(
    project: Project, keyword: str, value: object, replacement: str, read: object
) -> None:
    with pytest.warns(DeprecationWarning) as caught:
        host = ExtensionHost(project.root, project.home, persist=False, **{keyword: value})  # type: ignore[arg-type]
    assert [str(w.message) for w in caught] == [f"ExtensionHost({keyword}=...) is deprecated; use {replacement}"]
    assert caught[0].filename == __file__  # the warning points at the caller's line
    assert read(host) == value  # type: ignore[operator]


def test_the_history_limit_given_reaches_the_event_history(project: Project) -> None:
    host = ExtensionHost(project.root, project.home, persist=False, limits=Limits(history_events=3))
    for number in range(5):
        host.events.emit("session.info", {"infoType": "test", "message": f"m{number}"})
    assert [event["data"]["message"] for event in host.events.history()] == ["m2", "m3", "m4"]


def test_an_old_keyword_beside_its_object_is_a_type_error_naming_both(project: Project) -> None:
    with pytest.raises(TypeError, match=r"got both tool_timeout= and timeouts=; give Timeouts\(tool=...\) alone"):
        ExtensionHost(project.root, project.home, timeouts=Timeouts(), tool_timeout=1.0)


def test_a_conflict_is_the_error_even_after_an_old_keyword_that_warns(project: Project) -> None:
    """Every keyword is checked before any warns: with warnings as errors (as this suite runs),
    a warning for ``tool_timeout`` would otherwise hide the conflict that follows it."""
    with pytest.raises(TypeError, match=r"got both history_limit= and limits="):
        ExtensionHost(project.root, project.home, tool_timeout=1.0, history_limit=5, limits=Limits())


def test_a_keyword_that_never_was_is_the_usual_type_error(project: Project) -> None:
    with warnings.catch_warnings(), pytest.raises(TypeError, match="unexpected keyword argument 'tool_timout'"):
        ExtensionHost(project.root, project.home, tool_timout=1.0)  # type: ignore[call-arg]


def test_every_old_keyword_the_signature_takes_names_a_field_that_replaces_it() -> None:
    """The typed keywords and the table of their replacements are kept in step by this test."""
    assert set(DeprecatedOptions.__annotations__) == set(_REPLACED)
    owners = {"timeouts": Timeouts, "limits": Limits}
    for holder, name in _REPLACED.values():
        assert name in {option.name for option in fields(owners[holder])}, (holder, name)


def test_the_install_timeout_defaults_to_its_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(INSTALL_TIMEOUT_ENV, raising=False)
    assert Timeouts().install == DEFAULT_INSTALL_TIMEOUT
    monkeypatch.setenv(INSTALL_TIMEOUT_ENV, " 90 ")
    assert Timeouts().install == 90.0
    assert Timeouts(install=5).install == 5.0, "given, it wins"


@pytest.mark.parametrize("value", ["soon", "0", "-3", "nan", "inf"])
def test_an_install_timeout_variable_that_is_not_a_positive_number_is_an_error_naming_it(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(INSTALL_TIMEOUT_ENV, value)
    with pytest.raises(InstallTimeoutError) as caught:
        Timeouts()
    assert str(caught.value) == f"{INSTALL_TIMEOUT_ENV} must be a positive number of seconds, not {value!r}"
    with pytest.raises(ValueError, match=r"^Timeouts.install must be a positive number of seconds, not 0$"):
        Timeouts(install=0)
