"""The settings files: values per project and per user, 0600, a damaged or loose file one line."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from extension_host.errors import SettingsError
from extension_host.project.settings_store import SECRETS_FILE, SETTINGS_FILE, SettingsStore


def test_values_are_kept_per_project_and_per_user_and_unset_where_they_were_set(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "home")
    app, other = tmp_path / "app", tmp_path / "other"
    store.set(app, "lint", "max_lines", 50, scope="project", secret=False)
    store.set(app, "lint", "max_lines", 200, scope="user", secret=False)
    store.set(app, "lint", "strict", True, scope="user", secret=False)
    assert store.stored(app, "lint", secret=False) == {
        "project": {"max_lines": 50},
        "user": {"max_lines": 200, "strict": True},
    }
    assert store.stored(other, "lint", secret=False) == {"project": {}, "user": {"max_lines": 200, "strict": True}}
    assert store.stored(app, "lint", secret=True) == {"project": {}, "user": {}}

    assert store.unset(app, "lint", "max_lines", scope="project", secret=False)
    assert not store.unset(app, "lint", "max_lines", scope="project", secret=False)
    assert store.stored(app, "lint", secret=False)["project"] == {}
    assert store.stored(app, "lint", secret=False)["user"]["max_lines"] == 200


def test_both_files_are_the_user_s_alone_and_secrets_are_kept_apart(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = SettingsStore(home)
    store.set(tmp_path, "deploy", "token", "s3cr3t", scope="user", secret=True)
    store.set(tmp_path, "deploy", "region", "eu", scope="user", secret=False)
    for name in (SETTINGS_FILE, SECRETS_FILE):
        assert stat.S_IMODE((home / name).stat().st_mode) == 0o600
    assert "s3cr3t" in (home / SECRETS_FILE).read_text()
    assert "s3cr3t" not in (home / SETTINGS_FILE).read_text()
    assert store.stored(tmp_path, "deploy", secret=True)["user"] == {"token": "s3cr3t"}


@pytest.mark.parametrize(
    "text",
    ['{"user": {"deploy": {"token": "s3cr3t"}', '{"user": {"deploy": {"token": ["s3cr3t"]}}}', '{"user": 3}'],
)
def test_a_damaged_file_is_one_line_naming_it_and_never_quoting_a_secret(tmp_path: Path, text: str) -> None:
    (tmp_path / SECRETS_FILE).write_text(text)
    (tmp_path / SECRETS_FILE).chmod(0o600)
    with pytest.raises(SettingsError) as caught:
        SettingsStore(tmp_path).stored(tmp_path, "deploy", secret=True)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / SECRETS_FILE} is damaged") and "extensions config" in message
    assert "\n" not in message and "s3cr3t" not in message
    assert caught.value.path == tmp_path / SECRETS_FILE


def test_a_stored_value_no_environment_variable_can_hold_is_damage(tmp_path: Path) -> None:
    (tmp_path / SETTINGS_FILE).write_text('{"user": {"lint": {"x": "a\\u0000b"}}}')
    with pytest.raises(SettingsError, match="is damaged"):
        SettingsStore(tmp_path).stored(tmp_path, "lint", secret=False)


def test_a_secrets_file_others_can_read_is_refused_saying_to_change_them(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path)
    store.set(tmp_path, "deploy", "token", "s3cr3t", scope="user", secret=True)
    (tmp_path / SECRETS_FILE).chmod(0o644)
    with pytest.raises(SettingsError, match=r"can be read by other users \(mode 0644\): change the secrets"):
        store.stored(tmp_path, "deploy", secret=True)


def test_a_settings_file_others_can_write_is_refused(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path)
    store.set(tmp_path, "lint", "x", 1, scope="user", secret=False)
    (tmp_path / SETTINGS_FILE).chmod(0o666)
    with pytest.raises(SettingsError, match="can be written by other users"):
        store.set(tmp_path, "lint", "x", 2, scope="user", secret=False)


def test_a_fifo_in_place_of_the_file_is_refused_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / SETTINGS_FILE)
    with pytest.raises(SettingsError, match="is not a regular file"):
        SettingsStore(tmp_path).stored(tmp_path, "lint", secret=False)
