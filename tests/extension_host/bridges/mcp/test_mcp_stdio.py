"""The MCP server's stdio, across a real process boundary: only the protocol reaches stdout, and
a line nested too deeply is answered rather than dropped."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extension_host.bridges.mcp.stdio import too_deep_answer
from extension_protocol.nesting import MAX_DEPTH
from extension_protocol.protocol import PARSE_ERROR
from helpers import Project, run

pytestmark = pytest.mark.subprocess

SERVER = textwrap.dedent(
    """
    import asyncio, os, subprocess, sys
    from extension_host.bridges.mcp.stdio import claimed_stdio

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


@pytest.mark.subprocess
def test_while_serving_only_the_protocol_reaches_stdout_and_children_read_nothing(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], input="one\ntwo\n", capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout == "echo one\necho two\nafter: stdout is stdout again\n"
    # A buffered print reaches stderr when it is flushed (at the latest when serving ends), so in any order.
    assert sorted(done.stderr.splitlines()) == sorted(["a stray print", "a stray write", "a child prints", "''"])


@pytest.mark.subprocess
def test_a_stdout_that_is_a_file_is_left_to_the_sdks_own_transport(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER, encoding="utf-8")
    out = tmp_path / "out.txt"
    with out.open("w") as handle:
        subprocess.run([sys.executable, str(script)], input="", stdout=handle, timeout=60, check=True)
    assert out.read_text(encoding="utf-8") == "not pipes\n"


ECHO = """
    from sdk_extension import join_session, tool

    @tool(name="echo", description="Echo the text back.")
    def echo(text: str) -> str:
        return text

    join_session(tools=[echo])
"""


TOO_DEEP = f"the message is nested deeper than {MAX_DEPTH} levels (arrays and objects); it was not read"


def nested_arguments(depth: int) -> str:
    """Tool arguments ``depth`` levels deep: an object of objects."""
    return '{"a":' * (depth - 1) + "{}" + "}" * (depth - 1)


@pytest.mark.subprocess
def test_a_request_nested_950_deep_is_answered_with_an_error_and_the_bridge_serves_on(project: Project) -> None:
    """The SDK would drop the line without a word and the client would wait forever: the bridge
    answers PARSE_ERROR with the request's id (``null`` when the id comes after the nesting),
    then serves the next request, a tool call through its extension included."""
    project.add_extension("tools", ECHO)
    deep = nested_arguments(950)

    async def scenario() -> None:
        server = await asyncio.create_subprocess_exec(
            *project.command("mcp"),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )
        assert server.stdin is not None and server.stdout is not None
        stdin, stdout = server.stdin, server.stdout

        async def ask(line: str) -> Any:
            stdin.write(line.encode() + b"\n")
            await stdin.drain()
            async with asyncio.timeout(60):
                return json.loads(await stdout.readline())

        try:
            version = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
            hello = await ask(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": version}))
            assert hello["result"]["serverInfo"]["name"] == "extensions"
            stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
            call = '"method":"tools/call","params":{"name":"echo","arguments":' + deep + "}"
            refused = await ask('{"jsonrpc":"2.0","id":7,' + call + "}")
            assert refused == {"jsonrpc": "2.0", "id": 7, "error": {"code": PARSE_ERROR, "message": TOO_DEEP}}
            refused = await ask('{"jsonrpc":"2.0",' + call + ',"id":8}')
            assert refused == {"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": TOO_DEEP}}
            params = {"name": "echo", "arguments": {"text": "still here"}}
            echoed = await ask(json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params}))
            assert echoed["id"] == 9 and echoed["result"]["content"][0]["text"] == "still here"
            stdin.close()
            async with asyncio.timeout(60):
                assert await server.wait() == 0
        finally:
            if server.returncode is None:
                server.kill()
                await server.wait()

    run(scenario(), timeout=120)


_SCALARS = st.none() | st.booleans() | st.integers() | st.text(max_size=6)
_IDS = st.integers(-(2**53), 2**53) | st.text(max_size=8)


@settings(max_examples=300, deadline=None, database=None)
@given(
    arguments_depth=st.integers(1, 3 * MAX_DEPTH) | st.sampled_from([MAX_DEPTH - 2, MAX_DEPTH - 1, 950, 5000]),
    request_id=_IDS,
    order=st.permutations(["jsonrpc", "id", "method", "params", "extra"]),
    extra=_SCALARS,
    spaced=st.booleans(),
)
def test_only_a_line_nested_too_deep_is_answered_and_with_its_id_when_that_comes_before_the_nesting(
    arguments_depth: int, request_id: int | str, order: list[str], extra: Any, spaced: bool
) -> None:
    """Whatever the members' order, spacing and id: a line nesting more than MAX_DEPTH levels
    gets one PARSE_ERROR line, with the id if every member before it is plain, else null; any
    other line is passed on."""
    members = {
        "jsonrpc": '"2.0"',
        "id": json.dumps(request_id),
        "method": '"tools/call"',
        "params": '{"arguments":' + nested_arguments(arguments_depth) + "}",
        "extra": json.dumps(extra),
    }
    comma, colon = (" , ", " : ") if spaced else (",", ":")
    line = "{" + comma.join(f"{json.dumps(key)}{colon}{members[key]}" for key in order) + "}\n"
    answer = too_deep_answer(line.encode())
    if arguments_depth + 2 <= MAX_DEPTH:  # the line, params, then the arguments
        assert answer is None
        return
    assert answer is not None and answer.endswith("\n") and answer.count("\n") == 1
    plain_before_id = "params" not in order[: order.index("id")]
    assert json.loads(answer) == {
        "jsonrpc": "2.0",
        "id": request_id if plain_before_id else None,
        "error": {"code": PARSE_ERROR, "message": TOO_DEEP},
    }
