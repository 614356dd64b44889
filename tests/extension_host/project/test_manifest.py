"""An extension's manifest: read from extension.toml or pyproject.toml, checked field by field."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from extension_host.errors import ManifestError
from extension_host.project.manifest import (
    EMPTY_MANIFEST,
    MANIFEST_MAX_BYTES,
    Setting,
    read_manifest,
)


def test_a_folder_without_a_manifest_has_the_empty_one(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert read_manifest(tmp_path) is EMPTY_MANIFEST


def test_extension_toml_gives_every_field(tmp_path: Path) -> None:
    (tmp_path / "extension.toml").write_text(
        'description = "Counts lines"\nversion = "1.2.0"\n'
        'requires = ["requests>=2.31", "rich ; python_version >= \'3.11\'"]\n'
        '[settings.limit]\ntype = "integer"\ndefault = 10\ndescription = "most lines"\n'
        "[settings.token]\nsecret = true\n"
    )
    manifest = read_manifest(tmp_path)
    assert manifest.description == "Counts lines"
    assert manifest.version == "1.2.0"
    assert manifest.requires == ("requests>=2.31", "rich ; python_version >= '3.11'")
    assert manifest.settings == (
        Setting("limit", "integer", 10, False, "most lines"),
        Setting("token", "string", None, True, ""),
    )
    assert manifest.setting("token") == Setting("token", secret=True)
    assert manifest.setting("nope") is None
    assert manifest.path == tmp_path / "extension.toml"


def test_the_tool_extension_table_of_pyproject_is_a_manifest(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.extension]\nrequires = ["httpx"]\n')
    manifest = read_manifest(tmp_path)
    assert manifest.requires == ("httpx",)
    assert manifest.path == tmp_path / "pyproject.toml"


def test_two_manifests_in_one_folder_are_refused(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.extension]\n")
    (tmp_path / "extension.toml").write_text("")
    with pytest.raises(ManifestError, match="keep one"):
        read_manifest(tmp_path)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("version = 3\n", "version: Input should be a valid string"),
        ('descripton = "typo"\n', "descripton: Extra inputs are not permitted"),
        ('requires = ["--index-url=http://evil"]\n', "is not one requirement"),
        ('requires = ["a\\nb"]\n', "is not one requirement"),
        ('requires = [""]\n', "is not one requirement"),
        ('[settings.Limit]\ntype = "integer"\n', "is not a setting name"),
        ('[settings.limit]\ntype = "integer"\ndefault = "ten"\n', "is not of type integer"),
        ('[settings.flag]\ntype = "boolean"\ndefault = 1\n', "is not of type boolean"),
        ('[settings.token]\nsecret = true\ndefault = "abc"\n', "cannot have a default"),
        ('[settings.x]\ntype = "list"\n', "settings.x.type"),
        ("description = \n", "is not valid TOML"),
    ],
)
def test_a_wrong_field_is_one_line_naming_the_file_and_field(tmp_path: Path, text: str, names: str) -> None:
    (tmp_path / "extension.toml").write_text(text)
    with pytest.raises(ManifestError) as caught:
        read_manifest(tmp_path)
    message = str(caught.value)
    assert names in message
    assert message.startswith(str(tmp_path / "extension.toml"))
    assert "\n" not in message


def test_a_number_setting_takes_an_integer_default(tmp_path: Path) -> None:
    (tmp_path / "extension.toml").write_text('[settings.ratio]\ntype = "number"\ndefault = 2\n')
    assert read_manifest(tmp_path).settings[0].default == 2


def test_a_manifest_larger_than_the_bound_is_refused_unread(tmp_path: Path) -> None:
    (tmp_path / "extension.toml").write_text('description = "' + "x" * MANIFEST_MAX_BYTES + '"\n')
    with pytest.raises(ManifestError, match="larger than"):
        read_manifest(tmp_path)


@given(st.binary(max_size=300))
def test_any_bytes_either_read_or_are_a_manifest_error(data: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "extension.toml").write_bytes(data)
        try:
            read_manifest(Path(folder))
        except ManifestError as exc:
            assert "\n" not in exc.problem.strip()
