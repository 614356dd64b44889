"""extensions doctor: each problem of a broken project on one line and exit 1; a healthy one exits 0;
it starts no extension and never imports the host."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from extension_host.project.enablement import EnablementStore
from extension_host.project.trust import TRUST_ENV
from helpers import Project

HEALTHY = """
    import pathlib
    from sdk_extension import join_session, tool

    pathlib.Path({marker!r}).write_text("started")

    @tool(description="Say hello")
    def {name}() -> str:
        return "hello"

    join_session(tools=[{name}])
"""


def _healthy(project: Project, name: str, tool: str, marker: Path) -> None:
    project.add_extension(name, HEALTHY.format(marker=str(marker), name=tool))


def _doctor(project: Project) -> subprocess.CompletedProcess[str]:
    return project.run_command("doctor")


@pytest.mark.subprocess
@pytest.mark.slow
def test_a_broken_project_gets_one_line_per_problem_and_exit_1(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TRUST_ENV)
    marker = tmp_path / "started"
    _healthy(project, "first", "shared", marker)
    second = project.add_extension("second", 'from sdk_extension import Tool\nTool(name="shared", description="x")\n')
    project.add_extension("broken", "def f(:\n    pass\n")
    bad_manifest = project.add_extension("configured", "x = 1\n")
    (bad_manifest / "extension.toml").write_text("version = 3\n", encoding="utf-8")
    js = project.add_extension("weather", "export const x = 1;\n", entry="extension.mjs")
    (js / "package.json").write_text(json.dumps({"dependencies": {"left-pad": "1.3.0"}}), encoding="utf-8")
    project.add_extension("invalid", '@tool(name="no spaces allowed")\ndef f():\n    "x"\n')
    project.add_extension("off", "raise SystemExit\n")
    EnablementStore(project.home).set_enabled(project.root, "project:off", False, "project")

    result = _doctor(project)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()

    def line(*parts: str) -> str:
        found = [text for text in lines if all(part in text for part in parts)]
        assert len(found) == 1, (parts, result.stdout)
        return found[0]

    assert line("XX", "trust", "not trusted", "extensions trust")
    assert line("XX", "project:broken", "SyntaxError", "extension.py:1:7")
    assert line("XX", "project:configured", "extension.toml", "version")
    assert line("XX", "project:second", "tool 'shared' is also declared by project:first", "rename")
    assert line("XX", "project:weather", "left-pad", "npm install --omit=dev", str(js))
    assert line("XX", "project:invalid", "'no spaces allowed'", "extension.py:1", "invalid")
    assert line("--", "project:off", "disabled for this project")
    assert line("ok", "python", sys.executable)
    assert lines[-1].startswith("6 problems")
    assert not marker.exists()  # nothing was started
    assert second.is_dir() and not (project.home / "logs").exists()  # nothing was written


@pytest.mark.subprocess
def test_a_healthy_project_exits_0_and_json_says_the_same(project: Project, tmp_path: Path) -> None:
    _healthy(project, "greet", "hello", tmp_path / "started")
    result = _doctor(project)
    assert result.returncode == 0, result.stdout
    assert "everything looks right" in result.stdout
    assert "XX" not in result.stdout
    report = json.loads(project.run_command("doctor", "--json").stdout)
    assert report["ok"] is True
    assert {"level": "ok", "subject": "project:greet", "message": "extension.py parses"} in report["checks"]
    assert not (tmp_path / "started").exists()


@pytest.mark.subprocess
def test_doctor_does_not_import_the_host(project: Project) -> None:
    code = (
        "import sys; from extension_host.frontends.cli import main\n"
        "try:\n    main(['--root', sys.argv[1], '--home', sys.argv[2], 'doctor'])\n"
        "except SystemExit:\n    pass\n"
        "print('host imported' if 'extension_host.host' in sys.modules else 'host not imported', file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-P", "-c", code, str(project.root), str(project.home)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "host not imported" in result.stderr, result.stderr


@pytest.mark.subprocess
@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_a_javascript_syntax_error_is_found_by_node_check_without_running_it(project: Project, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    project.add_extension(
        "js",
        f'import {{ writeFileSync }} from "node:fs";\nwriteFileSync({str(marker)!r}, "x");\nconst = 1;\n',
        entry="extension.mjs",
    )
    result = _doctor(project)
    assert result.returncode == 1
    assert any("project:js" in text and "SyntaxError" in text for text in result.stdout.splitlines()), result.stdout
    assert not marker.exists()
