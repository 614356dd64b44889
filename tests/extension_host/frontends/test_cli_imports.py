"""What the extensions command imports: --help and --version almost nothing, a call to a running host
no host. Which modules, not how long: the start-up figures are the bench's (``python -m bench --only cli``)."""

from __future__ import annotations

import json
import sys

import pytest

from extension_host.control.service import ControlServer
from helpers import CALC, Project, finished, run

PROBE = """
import sys
from extension_host.frontends.launcher import main
code = main(sys.argv[1:])
import json
sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
sys.exit(code)
"""
"""Runs the command as the console script does, then says every module it imported (``json``
after the command: the probe's own import)."""

PARSER_ONLY = {
    "extension_host",
    "extension_host.frontends",
    "extension_host.frontends.launcher",
    "extension_host.frontends.cli",
    "extension_host.frontends.parser",
    "extension_host.frontends.command_options",
    "extension_host.runtime",
    "extension_host.runtime.defaults",
    "extension_host.version",
    "extension_protocol",
    "extension_protocol.lazy",
}
"""What ``--help`` may import of the project: the launcher, the parser (with the options of the
command named) and the one default it shows."""

CALL_CLIENT = PARSER_ONLY | {
    "extension_host.bridges",
    "extension_host.bridges.agent_hooks",
    "extension_host.bridges.agent_hooks.client",
    "extension_host.bridges.agent_hooks.deadline",
    "extension_host.control",
    "extension_host.control.methods",
    "extension_host.control.private_socket",
    "extension_host.errors",
    "extension_host.frontends.call_command",
    "extension_host.frontends.output",
    "extension_host.frontends.render",
    "extension_host.project",
    "extension_host.project.paths",
    "extension_host.project.private_files",
    "extension_host.visible",
    "extension_protocol.framing",
    "extension_protocol.json_codec",
    "extension_protocol.nesting",
}
"""What a ``call`` answered by a running host may import: the blocking control client, the
framing and the printing; no host, no event loop, not even the result's type."""

ONE_SHOT_LIST_NEVER = {
    "extension_protocol.hook_models",
    "extension_host.control.hook_calls",
    "extension_host.session.manage_tools",
    "extension_host.project.scaffold",
    "extension_host.session.front_matter",
}
"""What a one-shot ``list`` of extensions without hooks, commands or agent files has no use for:
the hook points' models (the table names them), the ``host.hook`` request, the agent's built-in
tools and the custom agent files' parser."""

NEVER = {"extension_host.host", "pydantic", "asyncio", "extension_host.runtime.options", "dataclasses"}


async def _imports(project: Project, *args: str, root: bool = True) -> tuple[int, str, set[str]]:
    """Run the command (on the project, unless not ``root``) through :data:`PROBE` in a process of
    its own: its exit code, stdout and modules."""
    code, out, err = await finished(
        sys.executable, "-c", PROBE, *(["--root", str(project.root)] if root else []), *args
    )
    marker = err.rsplit("\nMODULES ", 1)
    assert len(marker) == 2, err
    return code, out, set(json.loads(marker[1]))


def _ours(modules: set[str]) -> set[str]:
    return {name for name in modules if name.split(".")[0] in {"extension_host", "extension_protocol", "sdk_extension"}}


@pytest.mark.parametrize("args", [["--help"], ["list", "--help"], ["call", "--help"], ["lst"]])
def test_help_and_usage_errors_import_the_parser_and_nothing_of_the_host(project: Project, args: list[str]) -> None:
    code, out, modules = run(_imports(project, *args))
    assert (code, "usage: extensions" in out) == ((2, False) if args == ["lst"] else (0, True))
    assert _ours(modules) <= PARSER_ONLY, _ours(modules) - PARSER_ONLY
    assert not modules & NEVER


def test_version_imports_the_package_alone(project: Project) -> None:
    code, out, modules = run(_imports(project, "--version", root=False))
    assert (code, out.split()[0]) == (0, "extensions")
    assert not modules & (NEVER | {"argparse"})
    code, out, modules = run(_imports(project, "--version"))  # after an option: the parser answers
    assert (code, out.split()[0]) == (0, "extensions")
    assert _ours(modules) <= PARSER_ONLY and not modules & NEVER


@pytest.mark.subprocess
def test_a_call_answered_by_the_running_host_imports_its_client_not_the_host(project: Project) -> None:
    project.add_extension("calc", CALC)

    async def scenario() -> tuple[int, str, set[str]]:
        async with project.host() as host, ControlServer(host):
            return await _imports(project, "call", "add", '{"a": 1, "b": 2}')

    code, out, modules = run(scenario())
    assert (code, out) == (0, "3\n")
    assert _ours(modules) <= CALL_CLIENT, _ours(modules) - CALL_CLIENT
    assert not modules & NEVER


@pytest.mark.subprocess
def test_a_one_shot_list_imports_no_hook_model_nor_what_only_a_session_with_an_agent_uses(project: Project) -> None:
    project.add_extension("calc", CALC)
    code, out, modules = run(_imports(project, "list"))
    assert code == 0 and "project:calc" in out and "running" in out
    assert "extension_host.host" in modules  # it started a host of its own
    assert not modules & ONE_SHOT_LIST_NEVER, modules & ONE_SHOT_LIST_NEVER
