"""extensions install, update, uninstall and link: from local git repositories, folders and a
wheel built here, each bad input one line with nothing left behind."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from extension_host.project.install import INSTALLING_DIR
from extension_host.project.origins import ORIGINS_DIR, origin_json
from helpers import Project, build_wheel, git, run, running_dev

GREETER = """
    from sdk_extension import join_session, tool

    @tool(description="Say which version answers")
    def {tool}() -> str:
        return "{text}"

    join_session(tools=[{tool}])
"""


def greeter(tool: str, text: str) -> str:
    return GREETER.format(tool=tool, text=text)


def commit_all(repository: Path, message: str) -> str:
    git("-C", str(repository), "add", "-A")
    git("-C", str(repository), "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", message)
    return subprocess.run(
        ["git", "-C", str(repository), "rev-parse", "HEAD"], capture_output=True, text=True, check=True, timeout=30
    ).stdout.strip()


def repository_with(folder: Path, files: dict[str, str]) -> Path:
    """A git repository (branch main) whose first commit holds ``files`` (dedented)."""
    folder.mkdir(parents=True)
    git("init", "-q", "-b", "main", str(folder))
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    commit_all(folder, "first")
    return folder


def listing(project: Project) -> dict[str, dict[str, object]]:
    result = project.run_command("list", "--json")
    return {item["id"]: item for item in json.loads(result.stdout)["extensions"]}


def leftovers(folder: Path) -> list[str]:
    """What an install left in an extension folder (nothing, after a failure)."""
    return sorted(path.name for path in folder.iterdir()) if folder.exists() else []


@pytest.mark.subprocess
@pytest.mark.slow
def test_a_repository_installs_runs_updates_to_a_new_commit_and_uninstalls(project: Project, tmp_path: Path) -> None:
    repository = repository_with(tmp_path / "greet", {"extension.py": greeter("greet_version", "one")})
    installed = project.run_command("install", str(repository), "--yes", "--json")
    assert installed.returncode == 0, installed.stderr
    assert "greet: runs extension.py" in installed.stderr  # what will run was shown
    answer = json.loads(installed.stdout)
    assert answer["installed"][0]["id"] == "user:greet"
    commit = answer["origin"]["commit"]
    assert len(commit) == 40

    called = project.run_command("call", "greet_version")
    assert (called.returncode, called.stdout.strip()) == (0, "one")
    origin = listing(project)["user:greet"]["origin"]
    assert isinstance(origin, dict) and (origin["kind"], origin["commit"]) == ("git", commit)

    (repository / "extension.py").write_text(textwrap.dedent(greeter("greet_version", "two")), encoding="utf-8")
    newer = commit_all(repository, "second")
    updated = project.run_command("update", "greet")
    assert updated.returncode == 0, updated.stderr
    assert f"user:greet: updated {commit[:12]} -> {newer[:12]}, 1 file changed" in updated.stdout
    assert project.run_command("call", "greet_version").stdout.strip() == "two"
    again = project.run_command("update", "greet")
    assert f"user:greet: up to date ({newer[:12]})" in again.stdout

    removed = project.run_command("uninstall", "greet")
    assert removed.returncode == 0, removed.stderr
    assert leftovers(project.home / "extensions") == []


@pytest.mark.subprocess
def test_a_tag_installs_its_commit_and_a_branch_is_followed_by_update(project: Project, tmp_path: Path) -> None:
    repository = repository_with(tmp_path / "multi", {"extension.py": greeter("multi_v", "tagged")})
    git("-C", str(repository), "tag", "v1")
    git("-C", str(repository), "checkout", "-q", "-b", "next")
    (repository / "extension.py").write_text(textwrap.dedent(greeter("multi_v", "next")), encoding="utf-8")
    on_branch = commit_all(repository, "on next")

    tagged = project.run_command("install", str(repository), "--ref", "v1", "--name", "tagged", "--yes", "--json")
    assert tagged.returncode == 0, tagged.stderr
    assert '"tagged"' in (project.home / "extensions" / "tagged" / "extension.py").read_text()
    branch = project.run_command("install", f"file://{repository}", "--ref", "next", "--name", "nxt", "--yes", "--json")
    assert branch.returncode == 0, branch.stderr
    assert json.loads(branch.stdout)["origin"]["commit"] == on_branch
    assert json.loads(branch.stdout)["origin"]["ref"] == "next"


@pytest.mark.subprocess
def test_each_bad_source_is_one_line_and_leaves_nothing_behind(project: Project, tmp_path: Path) -> None:
    empty = repository_with(tmp_path / "empty", {"README.md": "no extension here\n"})
    good = repository_with(tmp_path / "good", {"extension.py": greeter("good_tool", "x")})
    target = project.home / "extensions"
    cases = {
        "no extension in": ("install", str(empty), "--yes"),
        "ref 'nope' is not a branch, tag or commit": ("install", str(good), "--ref", "nope", "--yes"),
        "no such file or folder": ("install", str(tmp_path / "missing")),
        "--subdir 'x/../..' must be a folder inside": ("install", str(good), "--subdir", "x/../..", "--yes"),
        "invalid extension name": ("install", str(good), "--name", "../up", "--yes"),
    }
    for expected, argv in cases.items():
        result = project.run_command(*argv)
        assert result.returncode == 1, (argv, result.stderr)
        errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and expected in errors[0], (argv, result.stderr)
        assert leftovers(target) == [], argv

    assert project.run_command("install", str(good), "--yes").returncode == 0
    collision = project.run_command("install", str(good), "--yes")
    assert collision.returncode == 1
    assert "an extension named good is already in the user folder" in collision.stderr
    assert "--name" in collision.stderr and "uninstall" in collision.stderr
    assert leftovers(target) == [".origins", "good"]


@pytest.mark.subprocess
def test_a_repository_is_not_installed_without_yes_when_there_is_no_terminal_to_ask(
    project: Project, tmp_path: Path
) -> None:
    repository = repository_with(tmp_path / "asked", {"extension.py": greeter("asked_tool", "x")})
    result = project.run_command("install", str(repository))
    assert result.returncode == 1
    assert "asked: runs extension.py" in result.stderr
    assert "pass --yes" in result.stderr
    assert leftovers(project.home / "extensions") == []


@pytest.mark.subprocess
def test_a_folder_of_extensions_installs_each_into_the_project_and_says_the_project_is_untrusted(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EXTENSION_HOST_TRUST_PROJECT")
    source = tmp_path / "bundle"
    for name in ("alpha", "beta"):
        (source / ".github" / "extensions" / name).mkdir(parents=True)
        (source / ".github" / "extensions" / name / "extension.py").write_text("print()\n", encoding="utf-8")
    result = project.run_command("install", str(source), "--project", "--json")
    assert result.returncode == 0, result.stderr
    assert [item["id"] for item in json.loads(result.stdout)["installed"]] == ["project:alpha", "project:beta"]
    assert json.loads(result.stdout)["project_trusted"] is False
    human = project.run_command("uninstall", "alpha")
    assert human.returncode == 0
    again = project.run_command("install", str(source), "--project", "--name", "one")
    assert again.returncode == 1 and "--name renames one extension" in again.stderr
    single = project.run_command("install", str(source), "--project", "--subdir", ".github/extensions/alpha")
    assert single.returncode == 0, single.stderr
    assert "not trusted" in single.stderr and "extensions trust" in single.stderr
    origin = json.loads((project.root / ".github" / "extensions" / ORIGINS_DIR / "alpha.json").read_text())
    assert (origin["kind"], origin["subdir"]) == ("folder", ".github/extensions/alpha")


@pytest.mark.subprocess
@pytest.mark.slow
def test_a_distribution_exposes_its_extension_in_the_package_scope_below_user_extensions(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheels = tmp_path / "wheels"  # a local package index: pip finds the distribution by name there
    wheels.mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    build_wheel(wheels, "hello-ext", "1.0", {"hello": greeter("hello_pkg", "from the wheel")})
    installed = project.run_command("install", "hello-ext", "--json")
    assert installed.returncode == 0, installed.stderr
    assert json.loads(installed.stdout)["installed"][0]["id"] == "package:hello"
    assert project.run_command("call", "hello_pkg").stdout.strip() == "from the wheel"
    found = listing(project)["package:hello"]
    assert found["status"] == "running"
    assert isinstance(found["origin"], dict) and found["origin"]["version"] == "1.0"

    project.add_extension("hello", greeter("hello_user", "mine"), source="user")
    shadowed = listing(project)["package:hello"]
    assert (shadowed["status"], shadowed["shadowed_by"]) == ("shadowed", "user:hello")

    build_wheel(wheels, "hello-ext", "2.0", {"hello": greeter("hello_pkg", "two")})
    updated = project.run_command("update", "package:hello")
    assert updated.returncode == 0, updated.stderr
    assert "package:hello: updated 1.0 -> 2.0" in updated.stdout

    removed = project.run_command("uninstall", "package:hello")
    assert removed.returncode == 0, removed.stderr
    assert leftovers(project.home / "packages") == []


@pytest.mark.subprocess
def test_a_wheel_without_the_entry_point_group_is_refused_and_leaves_nothing(
    project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wheel = build_wheel(tmp_path, "plain-lib", "1.0", {})
    assert project.cli("install", str(wheel)) == 1
    assert "plain-lib exposes no extensions (no entry point in the group extension_host.extensions)" in (
        capsys.readouterr().err
    )
    assert leftovers(project.home / "packages") == []


def test_a_link_is_used_in_place_and_uninstall_removes_only_the_link(project: Project, tmp_path: Path) -> None:
    work = tmp_path / "work" / "dev-ext"
    work.mkdir(parents=True)
    (work / "extension.py").write_text("print()\n", encoding="utf-8")
    assert project.cli("link", str(work)) == 0
    link = project.home / "extensions" / "dev-ext"
    assert link.is_symlink() and link.resolve() == work
    assert project.cli("uninstall", "dev-ext") == 0
    assert not link.exists() and (work / "extension.py").is_file()


def test_uninstall_refuses_a_folder_made_by_hand_unless_forced(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = project.add_extension("handmade", "print()\n", source="user")
    assert project.cli("uninstall", "handmade") == 1
    error = capsys.readouterr().err
    assert "was not installed by 'extensions install'" in error and "--force" in error
    assert folder.is_dir()
    assert project.cli("uninstall", "handmade", "--force") == 0
    assert not folder.exists()


def test_a_damaged_origin_record_is_one_line_in_list_and_the_extension_is_still_found(project: Project) -> None:
    project.add_extension("kept", "print()\n", source="user")
    records = project.home / "extensions" / ORIGINS_DIR
    records.mkdir()
    (records / "kept.json").write_text("{not json", encoding="utf-8")
    origin = origin_json("user", "kept", project.home / "extensions" / "kept", project.home)
    assert origin is not None and "kept.json: the origin record is damaged" in str(origin["error"])
    assert INSTALLING_DIR not in leftovers(project.home / "extensions")


@pytest.mark.subprocess
@pytest.mark.slow
def test_a_running_host_starts_what_is_installed_and_stops_what_is_uninstalled(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "watched"
    source.mkdir()
    (source / "extension.py").write_text(textwrap.dedent(greeter("watched_tool", "seen")), encoding="utf-8")
    wheel = build_wheel(tmp_path, "late-ext", "1.0", {"late": greeter("late_tool", "told")})

    async def scenario() -> None:
        async with running_dev(project) as dev:
            assert await project.cli_in_thread("install", str(source)) == 0
            await dev.expect(r"user:watched: started")  # the watcher saw the new folder
            assert await project.cli_in_thread("install", str(wheel)) == 0
            await dev.expect(r"package:late: started")  # the host was told
            assert await project.cli_in_thread("uninstall", "watched") == 0
            await dev.expect(r"user:watched: stopped")

    run(scenario(), timeout=120)
