"""The sample extensions run under the host exactly as a user would install them."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from helpers import SAMPLES, Project, run

pytestmark = pytest.mark.subprocess


def install(project: Project, name: str) -> None:
    shutil.copytree(SAMPLES / name, project.root / ".github" / "extensions" / name)


def git(project: Project, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=project.root,
        check=True,
        capture_output=True,
        timeout=30,
    )


def test_both_samples_load_together_with_their_tools_and_hooks(project: Project) -> None:
    """git_stats offers its tool; shell_guard declares its pre-tool hook and offers no tool."""
    shutil.rmtree(project.root / ".git")
    git(project, "init", "-q", "-b", "main")
    (project.root / "notes.txt").write_text("one\ntwo\n")
    git(project, "add", "notes.txt")
    git(project, "commit", "-q", "-m", "first")
    (project.root / "notes.txt").write_text("one\ntwo\nthree\n")
    for name in ("git_stats", "shell_guard"):
        install(project, name)

    async def scenario() -> None:
        async with project.host() as host:
            stats, guard = host.extensions
            assert (stats.status, stats.tools) == ("running", ("git_stats",))
            assert (guard.status, guard.tools, guard.hooks) == ("running", (), ("on_pre_tool_use",))
            result = await host.call_tool("git_stats", {"max_files": 5})
            assert result.success, result.text_result_for_llm
            report = json.loads(result.text_result_for_llm)
            assert report["branch"] == "main"
            assert "notes.txt" in json.dumps(report)

    run(scenario())
