"""What the host keeps under its home is its user's alone: folders 0700, files 0600 whatever the
umask, older ones tightened, nothing changed through a link or that another user owns; and a
real run, looked at by another local user."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from extension_host.project.paths import project_logs_dir
from extension_host.project.private_files import open_private, private_folder, tighten_files_in, write_private
from helpers import OtherUser, Project

LOUD = """
    import sys
    from sdk_extension import join_session, tool

    print("GITHUB_TOKEN=ghp_not_for_other_users", file=sys.stderr, flush=True)

    @tool(description="Say hi")
    def hi() -> str:
        return "hi"

    join_session(tools=[hi])
"""


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@contextlib.contextmanager
def umask(value: int) -> Iterator[None]:
    old = os.umask(value)
    try:
        yield
    finally:
        os.umask(old)


def test_folders_and_files_are_made_private_whatever_the_umask(tmp_path: Path) -> None:
    with umask(0):
        folder = private_folder(tmp_path / "home" / "logs" / "project")
        os.close(open_private(folder / "x.log", os.O_WRONLY))
        write_private(folder / "session.json", b"{}")
    assert [mode(path) for path in (tmp_path / "home", folder.parent, folder)] == [0o700] * 3
    assert (mode(folder / "x.log"), mode(folder / "session.json")) == (0o600, 0o600)
    assert (folder / "session.json").read_bytes() == b"{}"
    assert sorted(path.name for path in folder.iterdir()) == ["session.json", "x.log"]  # no temporary left


def test_folders_and_files_an_older_version_left_open_are_tightened(tmp_path: Path) -> None:
    home = tmp_path / "home"
    logs = home / "logs" / "project"
    logs.mkdir(parents=True)
    for folder in (home, home / "logs", logs):
        folder.chmod(0o755)
    old_log = logs / "project-x.log"
    old_log.write_text("old\n")
    old_log.chmod(0o644)
    (logs / "project-x.log.1").write_text("older\n")
    (logs / "project-x.log.1").chmod(0o664)

    private_folder(logs, within=home)
    assert [mode(path) for path in (home, home / "logs", logs)] == [0o700] * 3
    tighten_files_in(logs)
    assert (mode(old_log), mode(logs / "project-x.log.1")) == (0o600, 0o600)
    os.close(open_private(old_log, os.O_WRONLY | os.O_APPEND))
    assert old_log.read_text() == "old\n"


def test_a_folder_that_cannot_be_made_is_an_os_error_naming_it(tmp_path: Path) -> None:
    """Home, logs and sessions are no control socket folder: what is wrong is said of the folder."""
    (tmp_path / "home").write_text("a file where the home folder goes")
    with pytest.raises(NotADirectoryError) as caught:
        private_folder(tmp_path / "home" / "logs", within=tmp_path)
    assert caught.value.filename == str(tmp_path / "home" / "logs")


def test_nothing_is_changed_through_a_link_and_a_linked_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o755)
    target.chmod(0o755)
    (target / "notes").write_text("mine\n")
    (target / "notes").chmod(0o644)
    link = tmp_path / "home"
    link.symlink_to(target)

    (target / "below").mkdir()
    (target / "below").chmod(0o755)

    private_folder(link / "below", within=link)
    private_folder(link)
    tighten_files_in(link)
    assert (mode(target), mode(target / "below"), mode(target / "notes")) == (0o755, 0o755, 0o644)
    (tmp_path / "linked.log").symlink_to(target / "notes")
    with pytest.raises(OSError) as refused:
        open_private(tmp_path / "linked.log", os.O_WRONLY | os.O_APPEND)
    assert refused.value.errno == errno.ELOOP
    tighten_files_in(tmp_path)
    assert mode(target / "notes") == 0o644


def test_a_folder_or_file_of_another_user_is_left_as_it_is(tmp_path: Path, another_user: OtherUser) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    theirs.chmod(0o755)
    (theirs / "their.log").write_text("theirs\n")
    (theirs / "their.log").chmod(0o644)
    os.chown(theirs / "their.log", another_user.uid, another_user.gid)
    os.chown(theirs, another_user.uid, another_user.gid)

    private_folder(theirs)
    tighten_files_in(theirs)
    assert (mode(theirs), mode(theirs / "their.log")) == (0o755, 0o644)


@pytest.mark.subprocess
def test_what_a_run_keeps_in_its_home_is_out_of_another_users_reach(
    project: Project, reachable_tmp: Path, another_user: OtherUser
) -> None:
    here = Project(project.root, reachable_tmp / "home")  # a home other users could walk into
    here.add_extension("loud", LOUD)
    with umask(0o002):  # a loose umask, as some systems have
        # dev keeps its session (call does not): a log, a session and its record to look at.
        done = subprocess.run(here.command("dev"), input="call hi\nquit\n", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr

    home = here.home
    logs = project_logs_dir(home, here.root)
    log = logs / "project-loud.log"
    assert "ghp_not_for_other_users" in log.read_text()
    (session,) = (home / "sessions").iterdir()
    folders = [home, home / "logs", logs, home / "sessions", session, session / "files"]
    files = [*logs.iterdir(), session / "session.json", session / "events.jsonl", session / "lock"]
    assert {path.name: mode(path) for path in folders} == {path.name: 0o700 for path in folders}
    assert {path.name: mode(path) for path in files} == {path.name: 0o600 for path in files}

    for path in (log, session / "session.json", session / "events.jsonl"):
        read = another_user.run("cat", str(path))
        assert read.returncode != 0 and "Permission denied" in read.stderr, read
        assert "ghp_" not in read.stdout
    listed = another_user.run("ls", str(home))
    assert listed.returncode != 0 and "Permission denied" in listed.stderr


@pytest.mark.subprocess
def test_a_home_an_older_version_left_open_is_closed_by_the_next_run(
    project: Project, reachable_tmp: Path, another_user: OtherUser
) -> None:
    here = Project(project.root, reachable_tmp / "home")
    here.add_extension("loud", LOUD)
    logs = project_logs_dir(here.home, here.root)
    logs.mkdir(parents=True)
    for folder in (here.home, here.home / "logs", logs):
        folder.chmod(0o755)
    old = logs / "project-loud.log.1"
    old.write_text("AWS_SECRET_ACCESS_KEY=from_an_older_run\n")
    old.chmod(0o644)
    assert another_user.run("cat", str(old)).returncode == 0  # what an older version left readable

    done = subprocess.run(here.command("call", "hi"), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert [mode(path) for path in (here.home, here.home / "logs", logs)] == [0o700] * 3
    assert mode(old) == 0o600
    read = another_user.run("cat", str(old))
    assert read.returncode != 0 and "from_an_older_run" not in read.stdout
