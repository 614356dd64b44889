"""The shipped schema files: in step with the models, and what they contain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import extension_host.schemas
from extension_host.event_types import EVENT_TYPES
from extension_host.schemas import SCHEMA_FILES
from extension_host.schemas.__main__ import main
from extension_host.schemas.generate import generate, stale_files, write_files

SHIPPED = Path(extension_host.schemas.__file__).parent


@pytest.mark.parametrize("name", sorted(SCHEMA_FILES))
def test_the_shipped_schema_files_are_what_the_models_generate(name: str) -> None:
    """Change a model without regenerating and this fails, saying how to regenerate."""
    shipped = (SHIPPED / SCHEMA_FILES[name]).read_text(encoding="utf-8")
    assert shipped == generate(name), (
        f"{SCHEMA_FILES[name]} is out of date with extension_host/schemas; run: python -m extension_host.schemas"
    )


def test_generating_twice_gives_the_same_bytes() -> None:
    assert generate("events") == generate("events") and generate("api") == generate("api")


def test_the_events_schema_is_a_union_told_apart_by_type_with_every_modelled_event() -> None:
    schema = json.loads((SHIPPED / SCHEMA_FILES["events"]).read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["discriminator"]["propertyName"] == "type"
    assert set(schema["discriminator"]["mapping"]) == set(EVENT_TYPES)
    hook_end = schema["$defs"]["HookEndEvent"]
    assert hook_end["additionalProperties"] is False
    assert hook_end["required"] == ["id", "timestamp", "parentId", "type", "data"]
    assert hook_end["properties"]["type"]["const"] == "hook.end"


def test_the_command_writes_the_files_and_check_reports_a_stale_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """write_files fills a folder; a file edited by hand is stale until written again."""
    written = write_files(tmp_path)
    assert sorted(path.name for path in written) == sorted(SCHEMA_FILES.values())
    assert stale_files(tmp_path) == []
    (tmp_path / "api.schema.json").write_text("{}\n", encoding="utf-8")
    assert stale_files(tmp_path) == ["api.schema.json"]
    (tmp_path / "session-events.schema.json").unlink()
    assert stale_files(tmp_path) == ["session-events.schema.json", "api.schema.json"]


def test_check_passes_on_the_shipped_files(capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m extension_host.schemas --check`` exits 0 and writes nothing when in step."""
    assert main(["--check"]) == 0
    assert capsys.readouterr().err == ""
