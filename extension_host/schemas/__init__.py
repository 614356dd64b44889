"""The JSON Schemas of session events and of the wire API, the models they come from, and the
generated files shipped with the package.

- :mod:`.event_models` (with :mod:`.session_data`, :mod:`.turn_data`, :mod:`.call_data` and
  :mod:`.input_data`): every session event type of the table
  (:mod:`extension_host.event_types`), as pydantic-validated shapes, and
  :func:`.event_models.check_event`;
- :mod:`.api`: the wire methods, from the ``TypedDict``s of :mod:`extension_protocol.protocol`;
- :mod:`.generate`: the two schema files from those models;
- ``session-events.schema.json`` and ``api.schema.json``: the generated files, printed by
  ``extensions schema events|api`` and written again by ``python -m extension_host.schemas``.

Importing this package imports nothing: the host never loads the models (they cost pydantic
validators for every event type), only the ``schema`` command's file reading and the tests do.
"""

from __future__ import annotations

from typing import Final

__all__ = ["SCHEMA_FILES"]

SCHEMA_FILES: Final = {"events": "session-events.schema.json", "api": "api.schema.json"}
"""Each shipped schema file by the name ``extensions schema`` takes."""
