"""Every code block the documentation marks as runnable works as written (the markers are
described in ``docs/contributing.md``, "Runnable snippets"), in the pages and in the README:

- ``<!-- run: extension=NAME tools=A,B hooks=H commands=C project=P -->`` before a ``python``
  block: the block is the ``extension.py`` of extension NAME in a temporary project (the blocks
  of one ``project=`` together), and the host runs it with exactly those tools, hooks and
  commands;
- ``<!-- run: shell -->`` before a ``sh`` block: it runs with ``bash -e`` in a temporary folder
  holding ``your-project/`` (a git repository with a three-line ``README.md``), ``extensions``
  being this interpreter's command with a home of its own, and succeeds.

Some examples also show what they claim: the first extension denies a ``.env`` file, and the
worked example of how hooks combine gives the rewrite and the context its page says."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest

from extension_host.launch.interpreter import python_command
from extension_protocol.tools import tool
from helpers import DOCS, REPO_ROOT, Project, run

pytestmark = pytest.mark.subprocess

_MARKED: Final = re.compile(
    r"^<!-- run: (?P<options>[^>]*?) -->\n```(?P<language>\w+)\n(?P<code>.*?)^```$", re.M | re.S
)
_LANGUAGES: Final = {"shell": "sh", "extension": "python"}


@dataclass(frozen=True)
class Snippet:
    """One runnable block: where it is, its marker's options and its code."""

    where: str
    options: dict[str, str]
    code: str

    def names(self, option: str) -> list[str]:
        """The comma-separated names of ``option`` (``tools=a,b``), sorted; ``[]`` without it."""
        return sorted(filter(None, self.options.get(option, "").split(",")))


def _snippets() -> list[Snippet]:
    found = []
    for page in [REPO_ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for match in _MARKED.finditer(text):
            words = match["options"].split()
            options = dict(word.partition("=")[::2] for word in words)
            where = f"{page.relative_to(REPO_ROOT)}:{text.count(chr(10), 0, match.start()) + 2}"
            kind = "shell" if words == ["shell"] else "extension"
            assert match["language"] == _LANGUAGES[kind], f"{where}: a {kind} block is ```{_LANGUAGES[kind]}"
            assert kind == "shell" or options.get("extension"), f"{where}: say extension=NAME"
            found.append(Snippet(where, options, match["code"]))
    return found


SNIPPETS: Final = _snippets()


def _projects() -> dict[str, list[Snippet]]:
    """The extension blocks, one project each unless their ``project=`` puts them together."""
    projects: dict[str, list[Snippet]] = {}
    for snippet in SNIPPETS:
        if "extension" in snippet.options:
            projects.setdefault(snippet.options.get("project", snippet.where), []).append(snippet)
    return projects


PROJECTS: Final = _projects()


def _one(page: str, extension: str) -> Snippet:
    (snippet,) = [s for s in SNIPPETS if s.where.startswith(page + ":") and s.options.get("extension") == extension]
    return snippet


def test_the_docs_mark_the_first_extension_a_hook_a_command_and_the_hooks_combine_example() -> None:
    marked = {(s.where.partition(":")[0], s.options.get("extension", "shell")) for s in SNIPPETS}
    assert {
        ("README.md", "my-ext"),
        ("README.md", "shell"),
        ("docs/getting-started.md", "my-ext"),
        ("docs/getting-started.md", "shell"),
        ("docs/writing-extensions/hooks.md", "shell-guard"),
        ("docs/writing-extensions/commands.md", "deploy"),
        ("docs/writing-extensions/combining-hooks.md", "audit"),
        ("docs/writing-extensions/combining-hooks.md", "guard"),
    } <= marked


@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_each_runnable_extension_runs_with_the_tools_and_hooks_its_marker_names(project: Project, name: str) -> None:
    for snippet in PROJECTS[name]:
        project.add_extension(snippet.options["extension"], snippet.code)

    async def scenario() -> None:
        async with project.host(watch=False) as host:
            for snippet in PROJECTS[name]:
                info = host.extension(snippet.options["extension"])
                assert info.status == "running", f"{snippet.where}: {info.status}: {info.error}"
                assert sorted(info.tools) == snippet.names("tools"), snippet.where
                assert sorted(info.hooks) == snippet.names("hooks"), snippet.where
                assert sorted(info.commands) == snippet.names("commands"), snippet.where
                assert all(host.tools[tool_name].owner == info.id for tool_name in info.tools), snippet.where

    run(scenario())


@pytest.fixture
def shell_folder(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """A folder holding ``your-project/`` and the environment of a shell block: a home and a
    runtime folder of its own, the trust of the real user's home not consulted."""
    (tmp_path / "work" / "your-project" / ".git").mkdir(parents=True)
    (tmp_path / "work" / "your-project" / "README.md").write_text("one\ntwo\nthree\n")
    runtime = tempfile.mkdtemp(prefix="eh-")  # a control socket's path must be short
    env = {key: value for key, value in os.environ.items() if not key.startswith("EXTENSION_HOST_")}
    env |= {"EXTENSION_HOST_HOME": str(tmp_path / "home"), "EXTENSION_HOST_RUNTIME_DIR": runtime}
    yield tmp_path / "work", env
    shutil.rmtree(runtime, ignore_errors=True)


@pytest.mark.parametrize("snippet", [s for s in SNIPPETS if "shell" in s.options], ids=lambda s: s.where)
def test_each_runnable_shell_block_succeeds_as_written(
    shell_folder: tuple[Path, dict[str, str]], snippet: Snippet
) -> None:
    folder, env = shell_folder
    command = shlex.join(python_command("-m", "extension_host"))
    script = f'extensions() {{ {command} "$@"; }}\nset -e\n{snippet.code}'
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=folder,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"{snippet.where}:\n{done.stdout}\n{done.stderr}"


def test_the_first_extension_counts_lines_and_denies_a_secrets_file(project: Project) -> None:
    snippet = _one("docs/getting-started.md", "my-ext")
    assert snippet.code == _one("README.md", "my-ext").code, "the README shows the getting-started page's extension"
    project.add_extension("my-ext", snippet.code)
    (project.root / "README.md").write_text("one\ntwo\nthree\n")

    async def scenario() -> None:
        async with project.host(watch=False) as host:
            counted = await host.call_tool("my-ext_count_lines", {"path": "README.md"})
            assert (counted.result_type, counted.text_result_for_llm) == ("success", "README.md: 3 lines")
            denied = await host.call_tool("my-ext_count_lines", {"path": "config/.env"})
            assert denied.result_type == "denied" and "config/.env may hold secrets" in denied.text_result_for_llm

    run(scenario())


def test_the_hooks_of_the_worked_example_combine_as_its_page_says(project: Project) -> None:
    for name in ("audit", "guard"):
        project.add_extension(name, _one("docs/writing-extensions/combining-hooks.md", name).code)
    received: list[str] = []

    @tool(description="Run a shell command (records what it was given)")
    def bash(command: str) -> str:
        received.append(command)
        return "ran"

    async def scenario() -> None:
        async with project.host(watch=False, builtin_tools=[bash]) as host:
            result = await host.call_tool("bash", {"command": "rm -rf build"})
            assert received == ["rm -r build"]
            assert result.additional_context == "audit: bash logged\n\nguard: dropped -f from rm"

    run(scenario())
