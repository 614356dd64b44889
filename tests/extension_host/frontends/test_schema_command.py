"""``extensions schema events|api``: prints or writes the shipped schema files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import extension_host.schemas
from extension_host.frontends.cli import main
from extension_host.schemas import SCHEMA_FILES

SHIPPED = Path(extension_host.schemas.__file__).parent


@pytest.mark.parametrize("which", sorted(SCHEMA_FILES))
def test_schema_prints_the_shipped_file(which: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", which]) == 0
    out = capsys.readouterr().out
    assert out == (SHIPPED / SCHEMA_FILES[which]).read_text(encoding="utf-8")
    assert json.loads(out)["$schema"].startswith("https://json-schema.org/")


def test_output_writes_the_schema_to_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "events.json"
    assert main(["schema", "events", "--output", str(target)]) == 0
    assert target.read_text(encoding="utf-8") == (SHIPPED / SCHEMA_FILES["events"]).read_text(encoding="utf-8")
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == f"wrote session-events.schema.json to {target}\n"


def test_an_output_file_that_cannot_be_written_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "missing" / "api.json"
    assert main(["schema", "api", "--output", str(target)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: cannot write {target}: ") and err.count("\n") == 1


def test_an_unknown_schema_name_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "tools"]) == 2
    assert capsys.readouterr().err == "extensions schema: unknown schema 'tools' (choose from events, api)\n"


@pytest.mark.subprocess
def test_the_command_does_not_build_the_models() -> None:
    """Printing a schema reads the shipped file: the models (and their validators) stay unimported."""
    code = (
        "import sys; from extension_host.frontends.cli import main; main(['schema', 'api']); "
        "print(sorted(m for m in sys.modules if m.startswith('extension_host.schemas')), file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stderr.strip() == "['extension_host.schemas']"
