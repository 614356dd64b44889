"""Extensions with ``requires``: real environments, built offline from a wheel written by the test
(pip, and uv where it is installed): the extension imports its requirement and not the host's
packages, a second extension with the same requirements shares the environment, one that does
not resolve fails with the installer's reason and leaves nothing, a changed requirement makes
another environment, and an extension without requirements is still forked."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest

from extension_host.launch.python_env import ENVIRONMENTS_FOLDER
from extension_host.launch.python_installer import INSTALLER_ENV
from extension_host.project.manifest import read_manifest
from extension_host.project.paths import CACHE_ENV
from extension_host.runtime.requirements import installing
from helpers import CALC, Project, recording_program, run, wait_for_exit, write_wheel

GREETER = """
    import importlib.util

    import tinygreet
    from sdk_extension import join_session, tool

    @tool(description="Greet someone")
    def {name}(who: str) -> str:
        sees_the_host = [m for m in ("pydantic", "extension_host") if importlib.util.find_spec(m)]
        return f"{{tinygreet.hello(who)}}; host packages seen: {{sees_the_host or 'none'}}"

    join_session(tools=[{name}])
"""
BUILD_LINE = "building its Python environment with"


@pytest.fixture
def offline(project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A wheel folder with tinygreet 1.0 and 2.0, the only place pip and uv may install from;
    the host's cache in the test's folder. Returns the cache."""
    wheels = tmp_path / "wheels"
    for version in ("1.0", "2.0"):
        code = f"def hello(who):\n    return 'hello ' + who + ' from tinygreet {version}'\n"
        write_wheel(wheels, "tinygreet", version, {"tinygreet/__init__.py": code})
    for name, value in {
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheels),
        "UV_NO_INDEX": "1",
        "UV_FIND_LINKS": str(wheels),
        "UV_OFFLINE": "1",
        CACHE_ENV: str(tmp_path / "cache"),
    }.items():
        monkeypatch.setenv(name, value)
    return tmp_path / "cache"


def _greeter(project: Project, name: str, requires: list[str]) -> Path:
    folder = project.add_extension(name, GREETER.format(name=name))
    (folder / "extension.toml").write_text(f"requires = {json.dumps(requires)}\n")
    return folder


def _environments(cache: Path) -> list[str]:
    folder = cache / ENVIRONMENTS_FOLDER
    return sorted(path.name for path in folder.iterdir() if path.suffix != ".lock") if folder.is_dir() else []


def _builds(project: Project) -> int:
    """How many environment builds the extensions' logs record."""
    return sum(log.read_text().count(BUILD_LINE) for log in project.home.rglob("*.log"))


@pytest.mark.parametrize("installer", ["pip", "uv"])
@pytest.mark.subprocess
@pytest.mark.slow  # builds real environments: seconds each
def test_extensions_with_the_same_requirements_share_one_environment_and_import_only_what_they_declare(
    project: Project, offline: Path, monkeypatch: pytest.MonkeyPatch, installer: str
) -> None:
    if installer == "uv" and shutil.which("uv") is None:
        pytest.skip("uv is not installed here: the uv build is not tested")
    monkeypatch.setenv(INSTALLER_ENV, installer)
    _greeter(project, "greet", ["tinygreet==1.0"])
    _greeter(project, "hello", ["TinyGreet==1.0"])
    forgot = project.add_extension("forgot", "import tinygreet, no_such_module_declared\n")
    (forgot / "extension.toml").write_text('requires = ["tinygreet==1.0"]\n')
    project.add_extension("calc", CALC)

    async def scenario() -> None:
        async with project.host() as host:
            statuses = {info.name: (info.status, info.error) for info in host.extensions}
            missing = statuses.pop("forgot")[1] or ""  # the hint is the last line of its error
            assert missing.splitlines()[-1].startswith("add the package that provides 'no_such_module_declared'")
            assert statuses == dict.fromkeys(("calc", "greet", "hello"), ("running", None))
            for tool in ("greet", "hello"):
                result = await host.call_tool(tool, {"who": "you"})
                assert result.text_result_for_llm == "hello you from tinygreet 1.0; host packages seen: none"
            assert (await host.call_tool("add", {"a": 2, "b": 3})).text_result_for_llm == "5"
            forked = {
                instance.spec.name: instance.process.forked
                for instance in host._supervisor.current()
                if instance.process
            }
            assert forked == {"calc": True, "forgot": False, "greet": False, "hello": False}
            notes = [e["data"]["message"] for e in host.events.history() if e["type"] == "session.info"]
            assert any(f"{installing(('tinygreet==1.0',))} (tinygreet==1.0) with {installer}" in note for note in notes)

    run(scenario(), timeout=240)
    assert len(_environments(offline)) == 1
    assert _builds(project) == 1


@pytest.mark.subprocess
@pytest.mark.slow  # builds real environments: seconds each
def test_a_requirement_that_does_not_resolve_fails_the_extension_with_pips_reason_and_the_next_start_retries(
    project: Project, offline: Path
) -> None:
    _greeter(project, "greet", ["nosuchpkg==9"])
    project.add_extension("calc", CALC)
    for attempt in (1, 2):
        listed = project.run_command("list", "--json", timeout=180, status_line=True)
        extensions = {e["name"]: e for e in json.loads(listed.stdout)["extensions"]}
        assert extensions["greet"]["status"] == "failed"
        assert extensions["greet"]["error"] == (
            "pip could not install its requirements: No matching distribution found for nosuchpkg==9"
        )
        assert extensions["calc"]["status"] == "running"
        assert "project:greet (installing 1 requirement) ... " in listed.stderr
        assert _environments(offline) == []
        assert _builds(project) == attempt


@pytest.mark.subprocess
@pytest.mark.slow  # builds real environments: seconds each
def test_changing_the_requirements_builds_another_environment_and_the_old_one_stays_for_others(
    project: Project, offline: Path
) -> None:
    folder = _greeter(project, "greet", ["tinygreet==1.0"])

    async def scenario() -> None:
        async with project.host() as host:
            assert (await host.call_tool("greet", {"who": "a"})).text_result_for_llm.startswith(
                "hello a from tinygreet 1.0"
            )
            (folder / "extension.toml").write_text('requires = ["tinygreet==2.0"]\n')
            (outcome,) = await host.reload("greet")
            assert outcome.status == "running", outcome.error
            assert (await host.call_tool("greet", {"who": "b"})).text_result_for_llm.startswith(
                "hello b from tinygreet 2.0"
            )

    run(scenario(), timeout=240)
    assert len(_environments(offline)) == 2
    assert _builds(project) == 2


@pytest.mark.subprocess
def test_a_wrong_manifest_fails_the_extension_naming_the_file_and_field(project: Project) -> None:
    folder = project.add_extension("greet", GREETER.format(name="greet"))
    (folder / "extension.toml").write_text('requires = "tinygreet"\n')

    async def scenario() -> None:
        async with project.host() as host:
            info = host.extension("greet")
            assert info.status == "failed"
            assert info.error == f"{folder / 'extension.toml'}: requires: Input should be a valid list"

    run(scenario())


def test_a_folder_without_a_manifest_has_no_requirements(tmp_path: Path) -> None:
    assert read_manifest(tmp_path).requires == ()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert read_manifest(tmp_path).requires == ()
    (tmp_path / "pyproject.toml").write_text('[tool.extension]\nrequires = ["tinygreet"]\n')
    assert read_manifest(tmp_path).requires == ("tinygreet",)


@pytest.mark.subprocess
@pytest.mark.slow
def test_stopping_the_host_while_an_environment_builds_ends_the_installer_and_leaves_nothing(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pid_file = tmp_path / "uv.pid"
    uv = recording_program(tmp_path / "bin" / "uv", tmp_path / "uv.calls", f'echo $$ > "{pid_file}"\nexec sleep 60')
    monkeypatch.setenv("PATH", f"{uv.parent}:{os.environ['PATH']}")
    monkeypatch.setenv(INSTALLER_ENV, "uv")
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    _greeter(project, "greet", ["tinygreet==1.0"])

    async def scenario() -> int:
        host = project.host()
        starting = asyncio.ensure_future(host.start())
        try:
            async with asyncio.timeout(30):
                while not pid_file.exists() or not pid_file.read_text().strip():
                    await asyncio.sleep(0.05)
            assert host.extension("greet").status == "starting"
            assert host.extension("greet").activity == "installing 1 requirement"
        finally:
            await host.stop()
            async with asyncio.timeout(30):
                await starting
        assert host.extension("greet").status != "running"
        return int(pid_file.read_text())

    pid = run(scenario())
    assert wait_for_exit(pid, timeout=10)
    assert _environments(tmp_path / "cache") == []
