"""Workspace trust: the record, who decides, and that an untrusted project runs none of its code."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from extension_host import TrustFileError, UnknownToolError
from extension_host.control.service import ControlServer
from extension_host.project.trust import TRUST_ENV, TrustDecision, TrustStore, decide_project_trust
from helpers import Project, run, running_dev, wait_for_event

MARKER_EXTENSION = """
    from pathlib import Path
    Path({marker!r}).write_text("ran")
    from sdk_extension import join_session, tool

    @tool(description="Say that it runs")
    def runs() -> str:
        return "it runs"

    join_session(tools=[runs])
"""

USER_TOOL = """
    from sdk_extension import join_session, tool

    @tool(description="The user's own tool")
    def mine() -> str:
        return "mine"

    join_session(tools=[mine])
"""


@pytest.fixture
def cloned(project: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A project as freshly cloned: one extension that leaves a marker file when its code runs,
    and no trust from the environment. Returns the marker's path."""
    monkeypatch.delenv(TRUST_ENV)
    marker = tmp_path / "MARKER"
    project.add_extension("payload", MARKER_EXTENSION.format(marker=str(marker)))
    return marker


# -- the record ------------------------------------------------------------------------------


def test_trust_is_recorded_for_the_real_path_of_the_project(tmp_path: Path) -> None:
    """A decision taken through a symlink to the project applies to the project itself."""
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    store = TrustStore(tmp_path / "home")
    assert not store.project_trusted(real)
    store.set_project_trusted(link, True)
    assert store.project_trusted(real)
    assert store.trusted_projects() == [str(real)]
    info = store.path.stat()
    assert stat.S_IMODE(info.st_mode) == 0o600
    store.set_project_trusted(real, False)
    assert not store.project_trusted(link)


def test_a_different_home_is_a_different_set_of_decisions(tmp_path: Path) -> None:
    """Trust recorded under one home means nothing under another."""
    project = tmp_path / "project"
    project.mkdir()
    TrustStore(tmp_path / "one").set_project_trusted(project, True)
    assert TrustStore(tmp_path / "one").project_trusted(project)
    assert not TrustStore(tmp_path / "two").project_trusted(project)


def test_the_application_decides_before_the_environment_which_decides_before_the_record(tmp_path: Path) -> None:
    """explicit trust= wins; EXTENSION_HOST_TRUST_PROJECT=1 trusts without a record; else the record."""
    project = tmp_path / "project"
    project.mkdir()
    store = TrustStore(tmp_path / "home")
    assert decide_project_trust(project, store, environ={}).trusted is False
    assert decide_project_trust(project, store, environ={TRUST_ENV: "1"}).source == "environment"
    assert decide_project_trust(project, store, environ={TRUST_ENV: "yes"}).trusted is False
    store.set_project_trusted(project, True)
    assert decide_project_trust(project, store, environ={}).source == "record"
    decision = decide_project_trust(project, store, explicit=False, environ={TRUST_ENV: "1"})
    assert (decision.trusted, decision.source) == (False, "application")
    assert not (tmp_path / "home" / "trust.json").read_text().count(str(tmp_path / "other"))


def test_a_damaged_record_is_an_error_naming_it_and_counts_as_untrusted(tmp_path: Path) -> None:
    """Bad JSON or a wrong shape: the store raises naming the file; the decision is 'not trusted'."""
    project = tmp_path / "project"
    project.mkdir()
    store = TrustStore(tmp_path / "home")
    store.home.mkdir()
    for damage in ("{not json", '{"projects": {"/x": {"trusted": "maybe"}}}', "[]"):
        store.path.write_text(damage)
        store.path.chmod(0o600)
        with pytest.raises(TrustFileError, match=r"trust\.json is damaged"):
            store.project_trusted(project)
        decision = decide_project_trust(project, store, environ={})
        assert decision.trusted is False and decision.problem is not None and "trust.json" in decision.problem
        with pytest.raises(TrustFileError):
            store.set_project_trusted(project, True)  # never overwrites what it cannot read
        assert store.path.read_text() == damage


def test_a_record_other_users_can_write_is_not_believed(tmp_path: Path) -> None:
    """A group- or world-writable trust.json could have been written by someone else."""
    project = tmp_path / "project"
    project.mkdir()
    store = TrustStore(tmp_path / "home")
    store.set_project_trusted(project, True)
    store.path.chmod(0o666)
    with pytest.raises(TrustFileError, match=r"can be written by other users.*chmod 600"):
        store.project_trusted(project)
    assert decide_project_trust(project, store, environ={}).trusted is False


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_fifo_or_a_folder_in_place_of_the_record_is_refused_at_once_naming_it(tmp_path: Path, kind: str) -> None:
    """Neither is a record: reading a fifo would wait for a writer (every command, hook calls
    included, would hang), reading a folder fails. Both are refused as damaged files are."""
    store = TrustStore(tmp_path)
    if kind == "fifo":
        os.mkfifo(store.path, 0o600)
    else:
        store.path.mkdir()
    decisions: list[TrustDecision] = []
    reader = threading.Thread(
        target=lambda: decisions.append(decide_project_trust(tmp_path, store, environ={})), daemon=True
    )
    reader.start()
    reader.join(10)
    if reader.is_alive():  # waiting for a writer: give it one so the thread ends, then fail
        os.close(os.open(store.path, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(10)
        pytest.fail("reading the record waited for a writer")
    assert len(decisions) == 1, "reading the record raised instead of refusing it"
    assert decisions[0].trusted is False
    assert decisions[0].problem is not None
    assert decisions[0].problem.startswith(f"{store.path} is not a regular file; remove it and decide again")


def test_letting_failed_guards_through_is_part_of_one_trust_decision(tmp_path: Path) -> None:
    """Off unless the user asks with their trust; trusting again without it, or revoking, ends
    it; another project never has it."""
    project, other = tmp_path / "project", tmp_path / "other"
    project.mkdir()
    other.mkdir()
    store = TrustStore(tmp_path / "home")
    assert not store.failed_guards_allowed(project)
    store.set_project_trusted(project, True)
    assert not store.failed_guards_allowed(project)
    store.set_project_trusted(project, True, allow_failed_guards=True)
    assert store.failed_guards_allowed(project) and store.project_trusted(project)
    assert not store.failed_guards_allowed(other)
    store.set_project_trusted(project, True)
    assert not store.failed_guards_allowed(project)
    store.set_project_trusted(project, True, allow_failed_guards=True)
    store.set_project_trusted(project, False)
    assert not store.failed_guards_allowed(project)


def test_concurrent_grants_lose_nothing(tmp_path: Path) -> None:
    """Twenty writers at once, each granting its own variable: all twenty are recorded."""
    project = tmp_path / "project"
    project.mkdir()
    store = TrustStore(tmp_path / "home")
    threads = [threading.Thread(target=store.grant, args=(project, "project", "lint", [f"VAR_{n}"])) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert store.granted(project, "project", "lint") == {f"VAR_{n}" for n in range(20)}


def test_project_grants_belong_to_their_project_and_user_grants_to_every_project(tmp_path: Path) -> None:
    """A project extension's grant does not follow its name into another repository."""
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    store = TrustStore(tmp_path / "home")
    store.grant(one, "project", "lint", ["GITHUB_TOKEN"])
    store.grant(one, "user", "fmt", ["NPM_TOKEN"])
    assert store.granted(one, "project", "lint") == {"GITHUB_TOKEN"}
    assert store.granted(two, "project", "lint") == frozenset()
    assert store.granted(two, "user", "fmt") == {"NPM_TOKEN"}
    assert store.revoke(one, "project", "lint", ["GITHUB_TOKEN"]) == frozenset()
    assert "lint" not in json.loads(store.path.read_text())["projects"][str(one.resolve())]["grants"]


# -- nothing of an untrusted project runs ------------------------------------------------------


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "command",
    [
        ["list"],
        ["list", "--json"],
        ["inspect", "payload"],
        ["reload"],
        ["prompt", "hello"],
        ["call", "runs"],
    ],
    ids=lambda command: " ".join(command),
)
def test_no_command_runs_an_untrusted_projects_code(
    project: Project,
    cloned: Path,
    command: list[str],
    capsys: pytest.CaptureFixture[str],
    reap_extension_processes: list[int],
) -> None:
    """list, inspect, reload, prompt and call leave no marker and start no process."""
    code = project.cli(*command)
    out = capsys.readouterr()
    assert not cloned.exists(), f"{command} ran the project's code"
    assert reap_extension_processes == [], "a process was started (an extension or the fork server)"
    if command[0] == "call":
        assert code == 1
        assert "not trusted (project:payload)" in out.err and "extensions trust" in out.err
    else:
        assert code == 0, out.err
    if command == ["list", "--json"]:
        (entry,) = json.loads(out.out)["extensions"]
        assert entry["status"] == "untrusted"
        assert "extensions trust" in entry["error"]
    elif command[0] in ("list", "inspect"):
        assert "untrusted" in out.out and "run 'extensions trust'" in out.out


@pytest.mark.subprocess
def test_after_extensions_trust_the_project_runs_and_revoke_stops_it_again(
    project: Project, cloned: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """trust lists the extensions and records the decision; list then runs them; --revoke undoes it."""
    assert project.cli("trust", "--json") == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["trusted"] is True and shown["project"] == str(project.root.resolve())
    assert [entry["id"] for entry in shown["extensions"]] == ["project:payload"]
    assert not cloned.exists()  # showing them ran nothing
    assert project.cli("list", "--json") == 0
    (entry,) = json.loads(capsys.readouterr().out)["extensions"]
    assert entry["status"] == "running"
    assert cloned.read_text() == "ran"
    cloned.unlink()
    assert project.cli("trust", "--revoke") == 0
    assert "no longer trusted" in capsys.readouterr().out
    assert project.cli("list", "--json") == 0
    assert json.loads(capsys.readouterr().out)["extensions"][0]["status"] == "untrusted"
    assert not cloned.exists()


@pytest.mark.subprocess
def test_the_python_api_runs_nothing_untrusted_unless_the_application_trusts_it(
    project: Project, cloned: Path, reap_extension_processes: list[int]
) -> None:
    """The default follows the record; trust=True runs the project; trust=False overrides a record."""

    async def scenario() -> None:
        async with project.host(watch=False) as host:
            (info,) = host.extensions
            assert (info.status, info.pid) == ("untrusted", None)
            assert host.trust.trusted is False
            with pytest.raises(UnknownToolError, match="not trusted"):
                await host.call_tool("runs")
        assert not cloned.exists() and reap_extension_processes == []
        TrustStore(project.home).set_project_trusted(project.root, True)
        async with project.host(watch=False, trust=False) as host:
            assert host.extensions[0].status == "untrusted"
        assert not cloned.exists()
        async with project.host(watch=False) as host:
            assert host.extensions[0].status == "running"
            assert (await host.call_tool("runs")).text_result_for_llm == "it runs"
        assert cloned.exists()

    run(scenario())


@pytest.mark.subprocess
def test_the_environment_variable_trusts_for_one_process_without_a_record(
    project: Project, cloned: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EXTENSION_HOST_TRUST_PROJECT=1 runs the project and writes no decision."""
    monkeypatch.setenv(TRUST_ENV, "1")
    assert project.cli("list") == 0
    assert cloned.exists()
    assert not (project.home / "trust.json").exists()


@pytest.mark.subprocess
def test_an_untrusted_project_extension_shadows_nothing(project: Project, cloned: Path) -> None:
    """The user's own extension of the same name runs while the project's may not."""
    project.add_extension("payload", USER_TOOL, source="user")

    async def scenario() -> None:
        async with project.host(watch=False) as host:
            statuses = {info.id: info.status for info in host.extensions}
            assert statuses == {"project:payload": "untrusted", "user:payload": "running"}
            assert (await host.call_tool("mine")).text_result_for_llm == "mine"

    run(scenario())
    assert not cloned.exists()


@pytest.mark.subprocess
def test_a_save_in_an_untrusted_project_runs_none_of_its_code(project: Project, cloned: Path) -> None:
    """The watcher sees the change; the project stays untrusted and nothing of it starts."""
    project.add_extension("later", USER_TOOL.replace("mine", "later"), source="user")
    (project.home / "extensions" / "later").rename(project.home / "later")

    async def scenario() -> None:
        async with project.host() as host:
            assert [info.status for info in host.extensions] == ["untrusted"]
            folder = project.root / ".github" / "extensions" / "payload"
            (folder / "extension.py").write_text((folder / "extension.py").read_text() + "\n# edited\n")
            # A user extension arriving in the same moment gives the batch something to announce.
            (project.home / "later").rename(project.home / "extensions" / "later")
            await wait_for_event(
                host,
                lambda e: (
                    e["type"] == "session.extensions_loaded"
                    and any(c["extension"] == "user:later" for c in e["data"].get("changes", []))
                ),
            )
            assert host.extension("payload").status == "untrusted"

    run(scenario())
    assert not cloned.exists()


@pytest.mark.subprocess
def test_scaffold_in_a_project_records_trust_in_it(
    project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Creating your own extension is consent: it runs at once; --user records nothing."""
    monkeypatch.delenv(TRUST_ENV)
    assert project.cli("scaffold", "mine", "--user", "--template", "tool-only") == 0
    assert not TrustStore(project.home).project_trusted(project.root)
    assert project.cli("scaffold", "notes") == 0
    assert "trusted" in capsys.readouterr().out
    assert TrustStore(project.home).project_trusted(project.root)
    assert project.cli("list", "--json") == 0
    statuses = {e["id"]: e["status"] for e in json.loads(capsys.readouterr().out)["extensions"]}
    assert statuses == {"project:notes": "running", "user:mine": "running"}


# -- dev ---------------------------------------------------------------------------------------


@pytest.mark.subprocess
def test_dev_without_a_terminal_asks_nothing_and_runs_nothing_untrusted(project: Project, cloned: Path) -> None:
    """stdin is a pipe: the table shows the extension untrusted with the way to trust it."""

    async def scenario() -> None:
        async with running_dev(project) as dev:
            assert any("untrusted" in line and "extensions trust" in line for line in dev.seen), dev.seen
            assert not any("[y/N]" in line for line in dev.seen)
            # A folder that appears later is reported too (moved in whole, as a checkout does).
            staged = project.root / "staged"
            staged.mkdir()
            (staged / "extension.py").write_text((project.root / ".github/extensions/payload/extension.py").read_text())
            staged.rename(project.root / ".github" / "extensions" / "later")
            await dev.expect(r"^project:later: untrusted \(not run: this project is not trusted")
            await dev.send("quit")
            async with asyncio.timeout(30):
                assert await dev.process.wait() == 0

    run(scenario())
    assert not cloned.exists()


@pytest.mark.subprocess
@pytest.mark.parametrize("answer", ["y", "n"])
def test_dev_on_a_terminal_asks_once_and_runs_the_project_only_on_yes(
    project: Project, cloned: Path, answer: str
) -> None:
    """The question names the extensions; y records trust and runs them, n runs nothing."""

    async def scenario() -> None:
        async with running_dev(project, terminal=True, ready=None) as dev:
            await dev.expect(r"\[y/N\]")
            assert "project:payload" in " ".join(dev.seen[-3:])
            await dev.send(answer)
            status = "running" if answer == "y" else "untrusted"
            await dev.expect(rf"^project:payload\s+{status}")
            await dev.expect(r"^watching ")
            await dev.send("quit")
            async with asyncio.timeout(30):
                assert await dev.process.wait() == 0

    run(scenario())
    assert cloned.exists() == (answer == "y")
    assert TrustStore(project.home).project_trusted(project.root) == (answer == "y")


@pytest.mark.subprocess
def test_trust_and_revoke_take_effect_in_the_running_host_and_its_watching(
    project: Project, cloned: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """extensions trust makes the running host start the project's extensions, whose saves then
    reload them; --revoke stops them."""
    folder = project.root / ".github" / "extensions" / "payload"

    async def scenario() -> None:
        async with (
            project.host() as host,
            ControlServer(host),
        ):
            assert host.extension("payload").status == "untrusted"
            assert await asyncio.to_thread(project.cli, "trust") == 0
            assert "the running host applied it" in capsys.readouterr().out
            assert host.extension("payload").status == "running"
            assert cloned.exists()
            source = (folder / "extension.py").read_text()
            (folder / "extension.py").write_text(source.replace("it runs", "it runs again"))
            await wait_for_event(
                host,
                lambda e: (
                    e["type"] == "session.extensions_loaded"
                    and any(c["action"] == "reloaded" for c in e["data"].get("changes", []))
                ),
                timeout=20,
            )
            assert (await host.call_tool("runs")).text_result_for_llm == "it runs again"
            assert await asyncio.to_thread(project.cli, "trust", "--revoke") == 0
            assert host.extension("payload").status == "untrusted"
            assert "runs" not in host.tools

    run(scenario())


@pytest.mark.subprocess
def test_a_home_without_records_is_decided_without_building_a_record_validator(tmp_path: Path) -> None:
    # What a one-shot command in a fresh home does first; the validators are built once a file is read.
    probe = """
import sys
from pathlib import Path
from extension_host.project import enablement, trust
home, root = Path(sys.argv[1]), Path(sys.argv[2])
decision = trust.decide_project_trust(root, trust.TrustStore(home))
choices = enablement.EnablementStore(home).choices(root)
assert not decision.trusted and not choices.disabled and choices.problem is None
print(trust._Document.__pydantic_complete__, enablement._Document.__pydantic_complete__)
(home / "trust.json").write_text('{"projects": {}}')
(home / "trust.json").chmod(0o600)
trust.TrustStore(home).project_trusted(root)
print(trust._Document.__pydantic_complete__)
"""
    environment = {name: value for name, value in os.environ.items() if name != TRUST_ENV}
    result = subprocess.run(
        [sys.executable, "-P", "-c", probe, str(tmp_path), str(tmp_path / "project")],
        capture_output=True,
        text=True,
        timeout=60,
        env=environment,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "False", "True"]
