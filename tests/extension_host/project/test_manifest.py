"""An extension's manifest: read from extension.toml or pyproject.toml, checked field by field."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from extension_host.errors import ManifestError
from extension_host.project.manifest import (
    EMPTY_MANIFEST,
    MANIFEST_MAX_BYTES,
    MAX_SETTING_TEXT,
    Setting,
    SettingType,
    SettingValue,
    format_value,
    parse_value,
    read_manifest,
)


def test_a_folder_without_a_manifest_has_the_empty_one(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert read_manifest(tmp_path) is EMPTY_MANIFEST


def test_extension_toml_gives_every_field(tmp_path: Path) -> None:
    (tmp_path / "extension.toml").write_text(
        'description = "Counts lines"\nversion = "1.2.0"\n'
        'requires = ["requests>=2.31", "rich ; python_version >= \'3.11\'", "httpx >= 0.27"]\n'
        '[settings.limit]\ntype = "integer"\ndefault = 10\ndescription = "most lines"\n'
        "[settings.token]\nsecret = true\n"
    )
    manifest = read_manifest(tmp_path)
    assert manifest.description == "Counts lines"
    assert manifest.version == "1.2.0"
    assert manifest.requires == ("requests>=2.31", "rich ; python_version >= '3.11'", "httpx >= 0.27")
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
        ('[settings.x]\nenv = "LD_PRELOAD"\n', "LD_PRELOAD is not for settings"),
        ('[settings.x]\nenv = "PYTHONPATH"\n', "PYTHONPATH is not for settings"),
        ('[settings.x]\nenv = "PATH"\n', "PATH is not for settings"),
        ('[settings.x]\nenv = "EXTENSION_HOST_HOME"\n', "EXTENSION_HOST_HOME is not for settings"),
        ('[settings.x]\nenv = "api-token"\n', "is not an environment variable name"),
        ('[settings.a]\nenv = "SAME"\n[settings.b]\nenv = "SAME"\n', "'a' and 'b' both reach the extension as SAME"),
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


def test_a_setting_reaches_the_extension_as_its_env_or_its_name_upper_cased(tmp_path: Path) -> None:
    (tmp_path / "extension.toml").write_text(
        '[settings.api_url]\n[settings.token]\nsecret = true\nenv = "DEPLOY_TOKEN"\n'
    )
    api_url, token = read_manifest(tmp_path).settings
    assert (api_url.env_name, token.env_name) == ("EXTENSION_SETTING_API_URL", "DEPLOY_TOKEN")


@pytest.mark.parametrize(
    ("kind", "text", "value"),
    [
        ("integer", "42", 42),
        ("integer", " -7 ", -7),
        ("number", "2.5", 2.5),
        ("number", "1e3", 1000.0),
        ("number", "3", 3),
        ("boolean", "Yes", True),
        ("boolean", "0", False),
        ("boolean", "FALSE", False),
        ("string", " kept as typed ", " kept as typed "),
    ],
)
def test_a_value_is_read_by_the_setting_s_type(kind: SettingType, text: str, value: SettingValue) -> None:
    parsed = parse_value(kind, text)
    assert parsed == value and type(parsed) is type(value)


@pytest.mark.parametrize(
    ("kind", "text", "says"),
    [
        ("integer", "1.5", "is not an integer"),
        ("integer", "1_000", "is not an integer"),
        ("integer", "\u0661", "is not an integer"),
        ("number", "nan", "is not a finite number"),
        ("number", "inf", "is not a finite number"),
        ("number", "ten", "is not a finite number"),
        ("boolean", "maybe", "is not a boolean (true/false, yes/no, 1/0)"),
        ("string", "a\0b", "holds a NUL"),
        ("string", "x" * (MAX_SETTING_TEXT + 1), "longer than"),
    ],
)
def test_a_value_of_the_wrong_type_is_one_line_saying_what_was_expected(
    kind: SettingType, text: str, says: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(says)) as caught:
        parse_value(kind, text)
    assert "\n" not in str(caught.value)


_VALUES = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30).map(lambda n: ("integer", n)),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda x: ("number", x)),
    st.booleans().map(lambda b: ("boolean", b)),
    st.text(st.characters(exclude_characters="\0"), max_size=50).map(lambda t: ("string", t)),
)


@given(_VALUES)
def test_a_value_written_as_the_extension_sees_it_reads_back_the_same(case: tuple[SettingType, SettingValue]) -> None:
    kind, value = case
    assert parse_value(kind, format_value(value)) == value


@given(st.sampled_from(["integer", "number", "boolean", "string"]), st.text(max_size=80))
def test_any_text_is_a_value_of_the_type_or_a_value_error(kind: SettingType, text: str) -> None:
    try:
        value = parse_value(kind, text)
    except ValueError as exc:
        assert "\n" not in str(exc)
    else:
        assert isinstance(value, {"integer": int, "number": int | float, "boolean": bool, "string": str}[kind])
        assert kind == "boolean" or not isinstance(value, bool)
