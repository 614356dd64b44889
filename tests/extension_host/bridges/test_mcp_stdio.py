"""The MCP server's stdio claim, across a real process boundary: only the protocol reaches stdout."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess

SERVER = textwrap.dedent(
    """
    import asyncio, os, subprocess, sys
    from extension_host.bridges.mcp_stdio import claimed_stdio

    async def main():
        async with claimed_stdio() as pipes:
            if pipes is None:
                print("not pipes")
                return
            reader, writer = pipes
            print("a stray print")
            os.write(1, b"a stray write\\n")
            subprocess.run([sys.executable, "-c", "print('a child prints'); import sys; print(repr(sys.stdin.read()))"])
            async for line in reader:
                await writer.write("echo " + line)
                await writer.flush()
        print("after: stdout is stdout again")

    asyncio.run(main())
    """
)


def test_while_serving_only_the_protocol_reaches_stdout_and_children_read_nothing(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], input="one\ntwo\n", capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout == "echo one\necho two\nafter: stdout is stdout again\n"
    # A buffered print reaches stderr when it is flushed (at the latest when serving ends), so in any order.
    assert sorted(done.stderr.splitlines()) == sorted(["a stray print", "a stray write", "a child prints", "''"])


def test_a_stdout_that_is_a_file_is_left_to_the_sdks_own_transport(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER, encoding="utf-8")
    out = tmp_path / "out.txt"
    with out.open("w") as handle:
        subprocess.run([sys.executable, str(script)], input="", stdout=handle, timeout=60, check=True)
    assert out.read_text(encoding="utf-8") == "not pipes\n"
