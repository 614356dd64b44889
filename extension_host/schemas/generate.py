"""Generating ``session-events.schema.json`` and ``api.schema.json`` from the models, and
finding the copies shipped inside the package.

The shipped files are what ``extensions schema`` prints (reading a file, so the command never
imports pydantic); ``python -m extension_host.schemas`` writes them again from the models in
:mod:`~extension_host.schemas.event_models` and :mod:`~extension_host.schemas.api`, and a test fails
when they differ. The output is deterministic: the same models give the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from pydantic import TypeAdapter
from pydantic.json_schema import JsonSchemaMode

from extension_host.schemas import SCHEMA_FILES
from extension_host.schemas.api import API_METHODS
from extension_host.schemas.event_models import event_adapter
from extension_host.validation import pydantic_shape
from extension_protocol.protocol import PROTOCOL_VERSION

__all__ = ["DIALECT", "GENERATORS", "api_schema", "events_schema", "generate", "render", "stale_files", "write_files"]

DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
_FOLDER: Final = Path(__file__).parent


def events_schema() -> dict[str, Any]:
    """The JSON Schema of every session event: a union told apart by ``type``."""
    schema = event_adapter().json_schema(ref_template="#/$defs/{model}")
    return {
        "$schema": DIALECT,
        "title": "SessionEvent",
        "description": (
            "Every session event extension-host emits: the envelope {id, timestamp, parentId, type, data, "
            "ephemeral?, agentId?} with the data of its type. Generated from extension_host/schemas; "
            "field names and shapes follow the Copilot SDK's session-events schema."
        ),
        **schema,
    }


def api_schema() -> dict[str, Any]:
    """The JSON Schema of the wire methods: for each, who sends it and its params and result."""
    keyed: list[tuple[tuple[str, str], JsonSchemaMode, TypeAdapter[Any]]] = []
    for method in API_METHODS:
        keyed.append(((method.name, "params"), "validation", TypeAdapter(pydantic_shape(method.params))))
        if method.result is not None:
            keyed.append(((method.name, "result"), "serialization", TypeAdapter(pydantic_shape(method.result))))
    schemas, definitions = TypeAdapter.json_schemas(keyed, ref_template="#/$defs/{model}")
    methods: dict[str, Any] = {}
    for method in API_METHODS:
        entry: dict[str, Any] = {
            "description": method.description,
            "direction": method.direction,
            "kind": "notification" if method.result is None else "request",
            "params": schemas[((method.name, "params"), "validation")],
        }
        if method.result is not None:
            entry["result"] = schemas[((method.name, "result"), "serialization")]
        methods[method.name] = entry
    return {
        "$schema": DIALECT,
        "title": "extension-host API",
        "description": (
            "The JSON-RPC methods extension-host and its extensions speak (the Copilot SDK extension protocol, "
            "framed as in LSP). Generated from extension_host/schemas."
        ),
        "protocolVersion": PROTOCOL_VERSION,
        "methods": methods,
        **definitions,
    }


GENERATORS: Final = {"events": events_schema, "api": api_schema}
"""What generates each schema, by the name ``extensions schema`` takes (files: ``SCHEMA_FILES``)."""


def render(schema: dict[str, Any]) -> str:
    """The text of a schema file: indented JSON, ASCII only, ending with a newline."""
    return json.dumps(schema, indent=2, ensure_ascii=True) + "\n"


def generate(name: str) -> str:
    """The text the models give for schema ``name`` (``events`` or ``api``)."""
    return render(GENERATORS[name]())


def write_files(folder: Path = _FOLDER) -> list[Path]:
    """Write every schema file into ``folder`` (the package's by default); the paths written."""
    written = []
    for name, file_name in SCHEMA_FILES.items():
        path = folder / file_name
        path.write_text(generate(name), encoding="utf-8")
        written.append(path)
    return written


def stale_files(folder: Path = _FOLDER) -> list[str]:
    """The schema files in ``folder`` that are missing or differ from what the models give."""
    stale = []
    for name, file_name in SCHEMA_FILES.items():
        path = folder / file_name
        if not path.is_file() or path.read_text(encoding="utf-8") != generate(name):
            stale.append(file_name)
    return stale
