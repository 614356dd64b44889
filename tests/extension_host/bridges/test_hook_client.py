"""The hook command's light client: one ``host.hook`` request over the control socket."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

from extension_host import ExtensionHost, ExtensionHostError, hookimpl
from extension_host.bridges.hook_client import (
    HOOK_REQUEST_TIMEOUT,
    HOOK_TIMEOUT_ENV,
    METHOD_HOOK,
    HostUnreachableError,
    ask_running_host,
    hook_request_timeout,
)
from extension_host.control import ControlServer, connect_to_host
from helpers import Project, run


class Deny:
    @hookimpl
    def on_pre_tool_use(self, input: object) -> dict[str, str]:
        return {"permission_decision": "deny", "permission_decision_reason": "never"}


def test_with_no_host_running_the_client_says_none(project: Project) -> None:
    assert ask_running_host(project.root, METHOD_HOOK, {"hook": "sessionEnd"}) is None


def test_the_client_gets_the_running_hosts_answer(project: Project) -> None:
    async def scenario() -> None:
        async with ExtensionHost(project.root, project.home, watch=False, persist=False) as host, ControlServer(host):
            host.register_plugin(Deny(), "policy")
            params = {"hook": "preToolUse", "toolName": "Bash", "toolArgs": {"command": "ls"}}
            answer = await asyncio.to_thread(ask_running_host, project.root, METHOD_HOOK, params)
            assert answer == {"decision": "deny", "reason": "never", "decidedBy": "policy"}
            with pytest.raises(HostUnreachableError, match=r"host.hook: preToolUse needs a toolName"):
                await asyncio.to_thread(ask_running_host, project.root, METHOD_HOOK, {"hook": "preToolUse"})

    run(scenario())


def test_the_control_socket_refuses_a_malformed_hook_request(project: Project) -> None:
    async def scenario() -> None:
        async with ExtensionHost(project.root, project.home, watch=False, persist=False) as host, ControlServer(host):
            client = await connect_to_host(project.root)
            assert client is not None
            try:
                with pytest.raises(ExtensionHostError, match=r"host.hook: hook"):
                    await client.request(METHOD_HOOK, {"hook": "onPreToolUse"})
                assert await client.request(METHOD_HOOK, {"hook": "sessionStart"}) == {}
            finally:
                await client.close()

    run(scenario())


def test_a_hook_command_imports_neither_the_host_nor_the_event_loop() -> None:
    code = (
        "import sys, extension_host.frontends.hook_command as h; h.agent('claude'); h.agent('gemini');"
        "import json; print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, timeout=60)
    modules = set(json.loads(done.stdout))
    assert not modules & {"asyncio", "pydantic", "pluggy", "extension_host.host", "sdk_extension", "dataclasses"}


@pytest.mark.parametrize(
    ("value", "timeout"),
    [
        ("", HOOK_REQUEST_TIMEOUT),
        ("5", 5.0),
        ("0.5", 0.5),
        ("0", HOOK_REQUEST_TIMEOUT),
        ("soon", HOOK_REQUEST_TIMEOUT),
        ("nan", HOOK_REQUEST_TIMEOUT),
        ("600", HOOK_REQUEST_TIMEOUT),
    ],
)
def test_the_timeout_can_be_lowered_from_the_environment_but_not_raised_past_the_agents_limit(
    value: str, timeout: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the agents' own 60 s the hook command would be killed, which both agents read as
    "carry on": a longer wait is ignored, as is anything that is not a positive number."""
    monkeypatch.setenv(HOOK_TIMEOUT_ENV, value)
    assert hook_request_timeout() == timeout
