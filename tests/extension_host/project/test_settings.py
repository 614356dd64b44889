"""Which value of a setting wins, and what of them reaches the extension when it starts."""

from __future__ import annotations

from pathlib import Path

from extension_host.project.discovery import ExtensionSpec
from extension_host.project.manifest import read_manifest
from extension_host.project.settings import NO_SETTINGS, deliver
from extension_host.project.settings_store import SettingsStore

MANIFEST = """
[settings.api_url]
default = "https://api.example.com"
[settings.limit]
type = "integer"
[settings.strict]
type = "boolean"
[settings.token]
secret = true
env = "DEPLOY_TOKEN"
"""


def _extension(tmp_path: Path, manifest: str = MANIFEST) -> ExtensionSpec:
    folder = tmp_path / "project" / ".github" / "extensions" / "deploy"
    folder.mkdir(parents=True)
    (folder / "extension.py").write_text("")
    (folder / "extension.toml").write_text(manifest)
    return ExtensionSpec("deploy", "project", folder)


def test_the_project_s_value_outranks_the_user_s_which_outranks_the_default(tmp_path: Path) -> None:
    spec = _extension(tmp_path)
    store, root = SettingsStore(tmp_path / "home"), tmp_path / "project"
    store.set(root, "deploy", "limit", 5, scope="user", secret=False)
    store.set(root, "deploy", "limit", 7, scope="project", secret=False)
    store.set(root, "deploy", "api_url", "https://user.example.com", scope="user", secret=False)
    store.set(root, "deploy", "token", "s3cr3t", scope="user", secret=True)
    delivery = deliver(store, root, spec, read_manifest(spec.folder))
    assert delivery.environment == {  # what its process starts with: never a secret
        "EXTENSION_SETTING_API_URL": "https://user.example.com",
        "EXTENSION_SETTING_LIMIT": "7",
    }
    assert delivery.secrets == {"DEPLOY_TOKEN": "token"}
    assert delivery.secret_values == {"DEPLOY_TOKEN": "s3cr3t"}  # given in the answer to its join
    assert delivery.names == ("api_url", "limit", "strict", "token")
    assert delivery.unset == ("strict",)
    assert "s3cr3t" not in repr(delivery)


def test_a_kept_value_the_manifest_no_longer_types_so_falls_back(tmp_path: Path) -> None:
    spec = _extension(tmp_path)
    store, root = SettingsStore(tmp_path / "home"), tmp_path / "project"
    store.set(root, "deploy", "limit", "ten", scope="project", secret=False)
    store.set(root, "deploy", "limit", 10, scope="user", secret=False)
    assert deliver(store, root, spec, read_manifest(spec.folder)).environment["EXTENSION_SETTING_LIMIT"] == "10"


def test_a_secret_taken_back_leaves_the_delivery_and_counts_as_unset(tmp_path: Path) -> None:
    spec = _extension(tmp_path)
    store, root = SettingsStore(tmp_path / "home"), tmp_path / "project"
    store.set(root, "deploy", "token", "s3cr3t", scope="project", secret=True)
    after = deliver(store, root, spec, read_manifest(spec.folder)).without(("DEPLOY_TOKEN",))
    assert after.secret_values == {} and after.secrets == {}
    assert "token" in after.unset


def test_an_extension_without_settings_reads_no_settings_file(tmp_path: Path) -> None:
    spec = _extension(tmp_path, 'description = "none"\n')
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "settings.json").write_text("damaged")
    assert (
        deliver(SettingsStore(tmp_path / "home"), tmp_path / "project", spec, read_manifest(spec.folder)) is NO_SETTINGS
    )
