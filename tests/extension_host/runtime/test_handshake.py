"""The join handshake in memory: what a session.resume declares, and what it is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from extension_host.errors import TrustFileError
from extension_host.project.discovery import ExtensionSpec
from extension_host.runtime.handshake import JoinRefused, declared_hooks, declared_matchers, granted_environment
from extension_protocol import protocol as p
from extension_protocol.hook_points import HOOK_NAMES

SPEC = ExtensionSpec("deploy", "project", Path("/project/.github/extensions/deploy"))
HOST = {"GITHUB_TOKEN": "ghp_secret", "PATH": "/usr/bin"}


def resume(**fields: Any) -> p.ResumeParams:
    params: dict[str, Any] = {"sessionId": "s", **fields}
    return params  # type: ignore[return-value]


def test_hook_types_name_the_hooks_and_hooks_true_alone_means_every_one() -> None:
    assert declared_hooks(resume(hookTypes=["preToolUse", "sessionEnd"])) == ("on_pre_tool_use", "on_session_end")
    assert declared_hooks(resume(hooks=True)) == HOOK_NAMES
    assert declared_hooks(resume()) == ()
    with pytest.raises(JoinRefused, match=r"^session\.resume: unknown hook type 'onLunch'$") as refused:
        declared_hooks(resume(hookTypes=["onLunch"]))
    assert refused.value.code == p.INVALID_PARAMS


def test_matchers_are_compiled_for_the_declared_hooks_and_a_bad_one_refuses_the_join() -> None:
    matchers = declared_matchers(resume(hookMatchers={"preToolUse": ["run_*"]}), ("on_pre_tool_use",))
    assert set(matchers) == {"on_pre_tool_use"}
    with pytest.raises(JoinRefused, match=r"^session\.resume: hookMatchers: hook on_post_tool_use has a matcher"):
        declared_matchers(resume(hookMatchers={"postToolUse": ["x"]}), ("on_pre_tool_use",))


def test_a_granted_variable_is_given_and_one_not_granted_refuses_the_join_saying_how_to_grant_it() -> None:
    asked = resume(requestedEnvironmentVariables=["GITHUB_TOKEN"])
    given = granted_environment(SPEC, asked, HOST, lambda spec: frozenset({"GITHUB_TOKEN"}))
    assert given.values == {"GITHUB_TOKEN": "ghp_secret"} and given.missing == ()
    with pytest.raises(JoinRefused) as refused:
        granted_environment(SPEC, asked, HOST, lambda spec: frozenset())
    assert refused.value.reason == (
        "requests environment variable GITHUB_TOKEN, not granted; to grant: extensions grant deploy GITHUB_TOKEN"
    )
    assert (refused.value.code, refused.value.data) == (p.ENVIRONMENT_NOT_GRANTED, {"variables": ["GITHUB_TOKEN"]})
    assert refused.value.grant is not None and refused.value.grant.missing == ("GITHUB_TOKEN",)
    assert granted_environment(SPEC, resume(), HOST, lambda spec: frozenset()).values == {}


def test_grants_that_cannot_be_read_refuse_the_join_naming_why() -> None:
    def unreadable(spec: ExtensionSpec) -> frozenset[str]:
        raise TrustFileError(Path("/home/me/trust.json"), "/home/me/trust.json is damaged")

    with pytest.raises(JoinRefused, match=r"its environment grants cannot be checked: .*trust\.json is damaged"):
        granted_environment(SPEC, resume(requestedEnvironmentVariables=["GITHUB_TOKEN"]), HOST, unreadable)
    with pytest.raises(JoinRefused, match="requestedEnvironmentVariables"):
        granted_environment(SPEC, resume(requestedEnvironmentVariables=["not a name"]), HOST, unreadable)
