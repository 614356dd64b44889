"""Session folders: ids that cannot escape, one host per session, listing and removal."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from extension_host.errors import SessionIdError, SessionLockedError, UnknownSessionError
from extension_host.events import make_event
from extension_host.session.log import encode_event
from extension_host.session.store import SessionStore, check_session_id
from extension_protocol.protocol import Event


def encoded(event: Event) -> bytes:
    return encode_event(event).encode("ascii")


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "home")


@pytest.mark.parametrize("bad", ["../x", "..", ".", "", "a/b", "a\\b", "x" * 129, "id with space", "ü"])
def test_anything_but_letters_digits_dash_and_underscore_is_not_a_session_id(bad: str) -> None:
    with pytest.raises(SessionIdError, match="is not a session id"):
        check_session_id(bad)


def test_a_new_session_has_its_folder_workspace_record_and_lock(store: SessionStore, tmp_path: Path) -> None:
    opened = store.create(tmp_path / "project")
    try:
        folder = store.root / opened.id
        assert opened.folder == folder and opened.workspace == folder / "files" and opened.workspace.is_dir()
        record = json.loads((folder / "session.json").read_text())
        assert record["sessionId"] == opened.id and record["projectRoot"] == str(tmp_path / "project")
        assert (folder / "lock").read_text() == str(os.getpid())
    finally:
        opened.close()


def test_a_second_opener_is_refused_with_the_session_and_the_holders_pid(store: SessionStore, tmp_path: Path) -> None:
    opened = store.create(tmp_path)
    try:
        with pytest.raises(SessionLockedError) as refused:
            store.open(opened.id, tmp_path)
        assert refused.value.pid == os.getpid()
        assert str(refused.value) == (
            f"session {opened.id} is in use by process {os.getpid()}; stop that host first or start a new session"
        )
    finally:
        opened.close()
    store.open(opened.id, tmp_path).close()  # closed: free again


def test_an_unknown_id_is_refused_naming_it(store: SessionStore, tmp_path: Path) -> None:
    with pytest.raises(UnknownSessionError, match="session nope: no such session; see 'extensions sessions list'"):
        store.open("nope", tmp_path)


def test_another_projects_session_is_refused_naming_its_project(store: SessionStore, tmp_path: Path) -> None:
    store.create(tmp_path / "one").close()
    [folder] = store.root.iterdir()
    with pytest.raises(UnknownSessionError, match=f"belongs to project {tmp_path / 'one'}, not {tmp_path / 'two'}"):
        store.open(folder.name, tmp_path / "two")


def test_opening_cuts_a_torn_last_line_so_the_next_append_starts_whole(store: SessionStore, tmp_path: Path) -> None:
    opened = store.create(tmp_path)
    first = make_event("user.message", {"content": "kept"})
    opened.events_path.write_bytes(encoded(first) + b'{"id":"torn')
    opened.close()
    resumed = store.open(opened.id, tmp_path)
    assert resumed.scan.torn and resumed.scan.last_event == first
    resumed.log.append(make_event("user.message", {"content": "next"}))
    resumed.close()
    assert [json.loads(line)["data"]["content"] for line in opened.events_path.read_bytes().splitlines()] == [
        "kept",
        "next",
    ]


def test_the_list_counts_user_messages_as_turns_and_shows_which_sessions_are_in_use(
    store: SessionStore, tmp_path: Path
) -> None:
    idle = store.create(tmp_path)
    for text in ("one", "two"):
        idle.log.append(make_event("user.message", {"content": text}))
    idle.log.append(make_event("assistant.message", {"content": 'says "type":"user.message"'}))
    idle.close()
    busy = store.create(tmp_path)
    try:
        summaries = {summary.id: summary for summary in store.summaries()}
        assert summaries[idle.id].turns == 2 and summaries[idle.id].events == 3
        assert not summaries[idle.id].in_use and summaries[busy.id].in_use
        assert summaries[idle.id].project == str(tmp_path) and summaries[idle.id].last_event is not None
    finally:
        busy.close()


def test_lines_nested_1000_deep_cost_the_list_only_those_lines_and_it_says_which(
    store: SessionStore, tmp_path: Path
) -> None:
    """A deep line among the user messages (the list reads those) and a deep last line (it reads
    that too): both are skipped and named; the other session's summary is untouched."""
    deep = b'{"id":"d","timestamp":"t","type":"user.message","data":' + b"[" * 1000 + b"]" * 1000 + b"}\n"
    damaged = store.create(tmp_path)
    damaged.log.append(make_event("user.message", {"content": "one"}))
    damaged.log.flush()
    with damaged.events_path.open("ab") as handle:
        handle.write(deep)
    damaged.log.append(make_event("user.message", {"content": "two"}))
    damaged.log.flush()
    with damaged.events_path.open("ab") as handle:
        handle.write(deep)
    damaged.close()
    whole = store.create(tmp_path)
    whole.log.append(make_event("user.message", {"content": "three"}))
    whole.close()
    summaries = {summary.id: summary for summary in store.summaries()}
    assert summaries[damaged.id].turns == 2 and summaries[damaged.id].events == 4
    assert summaries[damaged.id].problems == (
        "line 2 is nested deeper than 100 levels; skipped",
        "line 4 is nested deeper than 100 levels; skipped",
    )
    assert summaries[whole.id].turns == 1 and summaries[whole.id].problems == ()
    assert summaries[whole.id].last_event is not None


def test_a_session_record_nested_too_deep_is_not_believed_and_the_list_goes_on(
    store: SessionStore, tmp_path: Path
) -> None:
    opened = store.create(tmp_path)
    opened.close()
    (opened.folder / "session.json").write_bytes(b'{"projectRoot":' + b"[" * 30_000 + b"]" * 30_000 + b"}")
    [summary] = store.summaries()
    assert (summary.id, summary.project, summary.started) == (opened.id, None, None)


def test_removal_deletes_the_folder_and_is_refused_while_a_host_holds_it(store: SessionStore, tmp_path: Path) -> None:
    opened = store.create(tmp_path)
    with pytest.raises(SessionLockedError):
        store.remove(opened.id)
    opened.close()
    store.remove(opened.id)
    assert not opened.folder.exists()
    with pytest.raises(UnknownSessionError):
        store.remove(opened.id)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_session_is_its_users_alone_whatever_the_umask(store: SessionStore, tmp_path: Path) -> None:
    old_umask = os.umask(0)
    try:
        opened = store.create(tmp_path / "project")
    finally:
        os.umask(old_umask)
    try:
        folder = opened.folder
        assert [mode(path) for path in (tmp_path / "home", store.root, folder, opened.workspace)] == [0o700] * 4
        assert [mode(folder / name) for name in ("session.json", "events.jsonl", "lock")] == [0o600] * 3
    finally:
        opened.close()


def test_resuming_a_session_an_older_version_left_readable_makes_it_private(
    store: SessionStore, tmp_path: Path
) -> None:
    store.create(tmp_path).close()
    (folder,) = store.root.iterdir()
    home = tmp_path / "home"
    for path, loose in [(home, 0o755), (store.root, 0o755), (folder, 0o755), (folder / "files", 0o775)]:
        path.chmod(loose)
    for name in ("session.json", "events.jsonl", "lock"):
        (folder / name).chmod(0o644)

    store.open(folder.name, tmp_path).close()
    assert [mode(path) for path in (home, store.root, folder, folder / "files")] == [0o700] * 4
    assert [mode(folder / name) for name in ("session.json", "events.jsonl", "lock")] == [0o600] * 3
