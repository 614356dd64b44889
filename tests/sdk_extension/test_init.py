"""Importing the wire's framing alone, as a hook command does, loads no module of the SDK."""

from __future__ import annotations

import json
import subprocess
import sys


def test_importing_the_wire_framing_loads_no_author_facing_module() -> None:
    code = "import sys, json, extension_protocol.framing; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, check=True, timeout=60)
    modules = set(json.loads(done.stdout))
    assert not {name for name in modules if name.startswith("sdk_extension")}
    assert {name for name in modules if name.startswith("extension_protocol")} == {
        "extension_protocol",
        "extension_protocol.framing",
        "extension_protocol.json_codec",
        "extension_protocol.nesting",
    }
    assert not modules & {"asyncio", "pydantic", "dataclasses", "orjson"}  # orjson: on request
