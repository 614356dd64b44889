"""The Copilot CLI launcher: what ``export_copilot`` writes, and that the file runs the Python
extension the way Copilot CLI runs an ``extension.mjs``: with node, stdio as the protocol pipe.

The end-to-end tests need ``node`` and are skipped without it, as the other JavaScript tests are.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import extension_host.project.discovery
import extension_host.runtime.instance
from extension_host import Timeouts
from extension_host.bridges.copilot import (
    LAUNCHER_FILE,
    PYTHON_ENV,
    CopilotExportError,
    export_copilot,
    launcher_text,
)
from extension_host.launch.lifeline import LIFELINE_ENV
from extension_host.project.discovery import COPILOT_LAUNCHER_MARKER, ExtensionSpec
from helpers import Project, is_log, run, wait_for_event, wait_for_exit

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is needed to run extension.mjs")

GUARDED_TOOLS = """
    import os
    from sdk_extension import join_session, tool

    @tool(description="What Copilot's environment told the extension")
    def environment() -> str:
        return os.environ["SESSION_ID"] + " " + os.environ["COPILOT_EXTENSION_PARENT_PID"]

    @tool(description="Greet someone")
    def greet(name: str) -> str:
        return f"hello {name}"

    @tool(description="Dangerous")
    def danger() -> str:
        return "it ran"

    def pre(input, invocation):
        if input.tool_name == "danger":
            return {"permission_decision": "deny", "permission_decision_reason": "blocked by python via node"}
        return None

    session = join_session(tools=[environment, greet, danger], hooks={"on_pre_tool_use": pre})
    session.log("python joined through extension.mjs")
"""

EXITS_WITH_3 = """
    import sys
    sys.exit(3)
"""

WAITS = """
    import os, subprocess, sys, threading
    helper = subprocess.Popen([sys.executable, "-c", "import threading; threading.Event().wait()"])
    print(os.getpid(), helper.pid, file=sys.stderr, flush=True)
    threading.Event().wait()
"""


def spec_of(folder: Path) -> ExtensionSpec:
    """The Python extension in ``folder``, as discovery reports it."""
    return ExtensionSpec(folder.name, "project", folder)


# -- the file ------------------------------------------------------------------------------


def test_export_writes_the_marked_launcher_recording_the_python_and_again_leaves_it(project: Project) -> None:
    folder = project.add_extension("tools", GUARDED_TOOLS)
    done = export_copilot(spec_of(folder), "/opt/py/bin/python3")
    assert (done.extension, done.path, done.action) == ("project:tools", folder / LAUNCHER_FILE, "created")
    text = done.path.read_text(encoding="utf-8")
    assert text.splitlines()[0] == COPILOT_LAUNCHER_MARKER
    assert 'const RECORDED_PYTHON = "/opt/py/bin/python3";' in text
    assert PYTHON_ENV in text
    assert export_copilot(spec_of(folder), "/opt/py/bin/python3").action == "unchanged"


def test_a_generated_launcher_with_another_python_is_brought_up_to_date(project: Project) -> None:
    folder = project.add_extension("tools", GUARDED_TOOLS)
    export_copilot(spec_of(folder), "/old/python")
    done = export_copilot(spec_of(folder), "/new/python")
    assert done.action == "updated"
    assert done.path.read_text(encoding="utf-8") == launcher_text("/new/python")


def test_a_hand_written_extension_mjs_is_kept_unless_forced(project: Project) -> None:
    folder = project.add_extension("tools", GUARDED_TOOLS)
    mine = folder / LAUNCHER_FILE
    mine.write_text("// my own launcher\n", encoding="utf-8")
    with pytest.raises(CopilotExportError, match=r"extension\.mjs exists and was not generated.*--force"):
        export_copilot(spec_of(folder), "/usr/bin/python3")
    assert mine.read_text(encoding="utf-8") == "// my own launcher\n"
    assert export_copilot(spec_of(folder), "/usr/bin/python3", force=True).action == "replaced"
    assert mine.read_text(encoding="utf-8") == launcher_text("/usr/bin/python3")


def test_a_javascript_extension_or_a_second_javascript_entry_is_refused(project: Project) -> None:
    js = project.root / ".github" / "extensions" / "js"
    js.mkdir(parents=True)
    (js / "extension.mjs").write_text("// a Copilot extension\n", encoding="utf-8")
    with pytest.raises(CopilotExportError, match="project:js is a JavaScript extension"):
        export_copilot(ExtensionSpec("js", "project", js, "extension.mjs"), "/usr/bin/python3")
    folder = project.add_extension("tools", GUARDED_TOOLS)
    (folder / "extension.cjs").write_text("// left over\n", encoding="utf-8")
    with pytest.raises(CopilotExportError, match=r"project:tools also has extension\.cjs"):
        export_copilot(spec_of(folder), "/usr/bin/python3")
    assert not (folder / LAUNCHER_FILE).exists()


def test_a_python_path_that_is_not_absolute_is_refused(project: Project) -> None:
    folder = project.add_extension("tools", GUARDED_TOOLS)
    with pytest.raises(CopilotExportError, match="not an absolute path"):
        export_copilot(spec_of(folder), "python3")


def test_a_python_path_with_quotes_is_written_as_a_valid_string() -> None:
    text = launcher_text('/odd "dir"/python')
    assert 'const RECORDED_PYTHON = "/odd \\"dir\\"/python";' in text


# -- run by node, as Copilot CLI runs it ---------------------------------------------------


@pytest.fixture
def javascript_only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Make the host discover JavaScript entry files only, as Copilot CLI does, so that it runs
    the generated extension.mjs with node. The launcher imports nothing from the Copilot SDK,
    so none is installed."""
    monkeypatch.setattr(extension_host.project.discovery, "ENTRY_FILES", {"extension.mjs": "node"})
    sdk = tmp_path / "no-sdk"
    sdk.mkdir()

    async def no_install(cache: Path, environment: object) -> Path:
        return sdk

    monkeypatch.setattr(extension_host.runtime.instance, "ensure_sdk", no_install)


@needs_node
@pytest.mark.subprocess
@pytest.mark.usefixtures("javascript_only")
def test_under_node_the_python_extensions_tools_and_hooks_work_through_the_launcher(project: Project) -> None:
    folder = project.add_extension("tools", GUARDED_TOOLS)
    export_copilot(spec_of(folder), sys.executable)

    async def scenario() -> None:
        async with project.host(timeouts=Timeouts(readiness=60, stop_grace=2.0)) as host:
            (info,) = host.extensions
            assert info.status == "running", info.error
            assert info.pid is not None
            assert Path(f"/proc/{info.pid}/exe").resolve().name.startswith("node")
            assert set(info.tools) == {"environment", "greet", "danger"}
            seen = await host.call_tool("environment")
            assert seen.text_result_for_llm == f"{host.session_id} {os.getpid()}"
            assert info.hooks == ("on_pre_tool_use",)
            greeting = await host.call_tool("greet", {"name": "ada"})
            assert (greeting.result_type, greeting.text_result_for_llm) == ("success", "hello ada")
            denied = await host.call_tool("danger")
            assert denied.result_type == "denied"
            assert "blocked by python via node" in denied.text_result_for_llm
            await wait_for_event(host, is_log("python joined through extension.mjs"))

    run(scenario(), timeout=120)


@pytest.fixture
def copilot_env(project: Project) -> Iterator[dict[str, str]]:
    """The environment Copilot CLI gives an extension (no lifeline of this host's)."""
    env = {key: value for key, value in os.environ.items() if key != LIFELINE_ENV}
    env.update(SESSION_ID="copilot-session-1", COPILOT_EXTENSION_PARENT_PID=str(os.getpid()))
    env.pop("EXTENSION_HOST_PARENT_PID", None)
    yield env


def start_launcher(folder: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        ["node", str(folder / LAUNCHER_FILE)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )


def stop_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.communicate(timeout=10)


def first_line(process: subprocess.Popen[bytes], timeout: float = 30) -> bytes:
    assert process.stderr is not None
    readable, _, _ = select.select([process.stderr], [], [], timeout)
    assert readable, "the extension did not write its pid"
    return process.stderr.readline()


@needs_node
@pytest.mark.subprocess
def test_the_launcher_exits_with_the_python_extensions_exit_code(project: Project, copilot_env: dict[str, str]) -> None:
    folder = project.add_extension("quits", EXITS_WITH_3)
    export_copilot(spec_of(folder), sys.executable)
    process = start_launcher(folder, copilot_env)
    try:
        assert process.wait(timeout=30) == 3
    finally:
        stop_group(process)


@needs_node
@pytest.mark.subprocess
def test_a_missing_python_is_one_line_on_stderr_and_exit_127(project: Project, copilot_env: dict[str, str]) -> None:
    folder = project.add_extension("tools", GUARDED_TOOLS)
    export_copilot(spec_of(folder), "/nonexistent/bin/python3")
    process = start_launcher(folder, copilot_env)
    try:
        _, err = process.communicate(timeout=30)
        assert process.returncode == 127
        (line,) = err.decode().splitlines()
        assert line.startswith("extension tools: cannot run Python /nonexistent/bin/python3 (ENOENT)")
        assert PYTHON_ENV in line
    finally:
        stop_group(process)


@needs_node
@pytest.mark.subprocess
def test_extension_host_python_overrides_the_recorded_interpreter(
    project: Project, copilot_env: dict[str, str]
) -> None:
    folder = project.add_extension("quits", EXITS_WITH_3)
    export_copilot(spec_of(folder), "/nonexistent/bin/python3")
    process = start_launcher(folder, {**copilot_env, PYTHON_ENV: sys.executable})
    try:
        assert process.wait(timeout=30) == 3
    finally:
        stop_group(process)


@needs_node
@pytest.mark.subprocess
@pytest.mark.parametrize(
    "stop",
    [
        pytest.param(signal.SIGTERM, id="stopped by SIGTERM, as Copilot CLI stops an extension"),
        pytest.param(signal.SIGKILL, id="killed outright"),
    ],
)
def test_a_stopped_launcher_takes_the_python_extension_and_its_group_with_it(
    project: Project, copilot_env: dict[str, str], stop: signal.Signals
) -> None:
    """The launcher ends by the signal; the Python extension leads a group of its own, and it
    and what it started end with the launcher."""
    folder = project.add_extension("waits", WAITS)
    export_copilot(spec_of(folder), sys.executable)
    process = start_launcher(folder, copilot_env)
    try:
        python, helper = map(int, first_line(process).split())
        process.send_signal(stop)
        assert process.wait(timeout=30) == -stop
        assert wait_for_exit(python, timeout=15), "the Python extension outlived its launcher"
        assert wait_for_exit(helper, timeout=15), "what the Python extension started outlived it"
    finally:
        stop_group(process)


@needs_node
@pytest.mark.subprocess
def test_a_launcher_whose_extension_py_is_gone_says_so(project: Project, copilot_env: dict[str, str]) -> None:
    folder = project.add_extension("tools", GUARDED_TOOLS)
    export_copilot(spec_of(folder), sys.executable)
    (folder / "extension.py").unlink()
    process = start_launcher(folder, copilot_env)
    try:
        _, err = process.communicate(timeout=30)
        assert process.returncode == 127
        assert err.decode() == (
            f"extension tools: {folder / 'extension.py'} is missing; "
            "this file only starts the Python extension beside it\n"
        )
    finally:
        stop_group(process)
