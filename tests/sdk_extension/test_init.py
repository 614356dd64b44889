"""The package's public names: each loads on first use, and importing a module of the package
alone (the wire's framing, as a hook command does) loads none of them."""

from __future__ import annotations

import json
import subprocess
import sys

import sdk_extension


def test_every_public_name_loads_from_the_package_and_none_is_listed_twice_or_missed() -> None:
    exports = sdk_extension._EXPORTS
    assert sorted(exports) == sorted(sdk_extension.__all__)
    for name in sdk_extension.__all__:
        assert getattr(sdk_extension, name) is not None, name


def test_importing_the_wire_framing_loads_no_author_facing_module() -> None:
    code = "import sys, json, extension_protocol.framing; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, check=True, timeout=60)
    modules = set(json.loads(done.stdout))
    assert not {name for name in modules if name.startswith("sdk_extension")}
    assert {name for name in modules if name.startswith("extension_protocol")} == {
        "extension_protocol",
        "extension_protocol.framing",
        "extension_protocol.nesting",
    }
    assert not modules & {"asyncio", "pydantic", "dataclasses"}
