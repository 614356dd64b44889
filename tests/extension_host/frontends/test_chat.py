"""``extensions chat`` as a person uses it: a real process, a conversation on stdin, a model
endpoint on loopback (tests/chat_server.py), signals."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import threading

import pytest

from chat_server import Answer, ChatServer, Hold, Reply, Status
from helpers import Project, chat, chat_env, run

pytestmark = pytest.mark.subprocess

WORDS = """
from sdk_extension import command, join_session, tool

@tool(name="count_words", description="Count the words of a text.")
def count_words(text: str) -> str:
    return f"{len(text.split())} words"

@command
def shout(context):
    \"\"\"Say something in the session's log.\"\"\"
    session.log(context.args.upper())

def pre(input, invocation):
    if "secret" in str(input.tool_args):
        return {"permission_decision": "ask", "permission_decision_reason": "it mentions a secret"}

session = join_session(tools=[count_words], commands=[shout], hooks={"on_pre_tool_use": pre})
"""


def test_a_scripted_conversation_streams_runs_tools_asks_and_takes_commands(project: Project) -> None:
    project.add_extension("words", WORDS)
    script = [
        Answer("Let me count.", [("count_words", {"text": "a b c"})]),
        Answer("Three words.", pieces=["Three ", "words."]),
        Answer("", [("count_words", {"text": "my secret"})]),
        Answer("Understood, I will not."),
    ]
    conversation = "how many words in 'a b c'?\ncount 'my secret'\nn\nit is private\n/help\n/shout hello\n/new\n"
    with ChatServer(script) as server:
        done = chat(project, conversation, "--base-url", server.base_url, "--model", "test-model")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"new session [\w-]+", lines[0])
    assert lines[1] == f"model test-model at {server.base_url}"
    assert lines[2].startswith("1 extension running, 3 tools on offer")  # and the agent's extensions_*
    assert lines[3:8] == [
        "Let me count.",
        '  → count_words {"text": "a b c"}',
        "  ← count_words: 3 words",
        "Three words.",
        "  (2 model calls, 22 tokens in, 14 out)",
    ]
    assert 'allow count_words {"text": "my secret"}? (it mentions a secret) [y/N]' in lines
    assert "why not? (a note for the model; Enter for none)" in lines
    denied = "Denied by preToolUse hook: the user declined (it mentions a secret): it is private"
    assert f"  ← count_words: [denied] {denied}" in lines
    assert "Understood, I will not." in lines
    assert any(line.startswith("  /shout") and "project:words" in line for line in lines)
    assert "/shout: done in project:words" in lines
    assert "[project:words] HELLO" in lines
    assert any(re.fullmatch(r"new session [\w-]+", line) for line in lines[8:])
    assert re.fullmatch(r"session [\w-]+ kept; resume it with: extensions chat --resume [\w-]+", lines[-1])
    assert server.requests[3]["messages"][-1] == {
        "role": "tool",
        "tool_call_id": server.requests[3]["messages"][-2]["tool_calls"][0]["id"],
        "content": denied,
    }
    assert done.stderr == ""


def test_a_resumed_chat_goes_on_with_the_earlier_conversation(project: Project) -> None:
    with ChatServer([Answer("Hello, Ada."), Answer("Your name is Ada.")]) as server:
        first = chat(project, "my name is Ada\n", "--base-url", server.base_url, "--model", "test-model")
        session_id = re.search(r"--resume ([\w-]+)", first.stdout)
        assert session_id is not None, first.stdout
        second = chat(project, "what is my name?\n", "--base-url", server.base_url, "--resume", session_id[1])
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines()[0] == f"resumed session {session_id[1]}"
    assert "Your name is Ada." in second.stdout
    assert [m["content"] for m in server.requests[1]["messages"]] == [
        "my name is Ada",
        "Hello, Ada.",
        "what is my name?",
    ]


def test_a_wrong_url_is_one_line_and_exit_1(project: Project) -> None:
    with ChatServer([]) as server:
        url = server.base_url
    done = chat(project, "hello\n", "--base-url", url, "--model", "m")
    assert done.returncode == 1
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"error: cannot reach the model endpoint {url} (")


def test_resuming_an_unknown_session_is_one_line_and_exit_1(project: Project) -> None:
    with ChatServer([]) as server:
        done = chat(project, "hello\n", "--base-url", server.base_url, "--model", "m", "--resume", "no-such-session")
    assert done.returncode == 1
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: ") and "no-such-session" in line


def test_openai_without_a_key_says_which_variable_to_set(project: Project) -> None:
    done = chat(project, "hello\n", "--model", "gpt-4o-mini")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "error: no API key for https://api.openai.com/v1: set OPENAI_API_KEY (the key is read from the environment, "
        "never from the command line), or point --base-url at a local server such as Ollama"
    ]


def test_an_endpoint_error_during_a_turn_is_one_line_and_the_chat_goes_on(project: Project) -> None:
    script: list[Reply] = [
        Status(429, headers=(("retry-after", "0"),)),
        Status(400, {"error": {"message": "context too long"}}),
        Answer("short answer"),
    ]
    with ChatServer(script) as server:
        done = chat(project, "a long question\nshorter\n", "--base-url", server.base_url, "--model", "m")
    assert done.returncode == 0
    failed = f"the agent failed: the model endpoint {server.base_url} refused the request (400: context too long)"
    assert "  (the model endpoint answered 429; trying again in 0 s (retry 1 of 4))" in done.stdout.splitlines()
    assert f"[host] error: {failed}" in done.stdout.splitlines()
    assert "short answer" in done.stdout


def test_ctrl_c_cancels_the_running_turn_and_the_chat_goes_on(project: Project) -> None:
    released = threading.Event()
    hold = Hold(released)

    async def scenario(server: ChatServer) -> tuple[int, str]:
        process = await asyncio.create_subprocess_exec(
            *project.command("chat", "--base-url", server.base_url, "--model", "m"),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=chat_env(),
        )
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(b"take your time\n")
            await process.stdin.drain()
            assert await asyncio.to_thread(hold.arrived.wait, 30)
            process.send_signal(signal.SIGINT)
            process.stdin.write(b"and now?\n")
            process.stdin.close()
            async with asyncio.timeout(60):
                rest = await process.stdout.read()
                return await process.wait(), rest.decode()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()

    with ChatServer([hold, Answer("second answer")]) as server:
        code, out = run(scenario(server))
        released.set()
    assert code == 0
    lines = out.splitlines()
    assert "cancelling the turn ... (Ctrl-C again within 3 s leaves the chat)" in lines
    assert lines.index("second answer") > lines.index(
        "cancelling the turn ... (Ctrl-C again within 3 s leaves the chat)"
    )
    assert server.requests[1]["messages"][-1] == {"role": "user", "content": "and now?"}


def test_on_a_terminal_the_chat_marks_the_prompt_and_a_yes_lets_the_asked_call_run(project: Project) -> None:
    project.add_extension("words", WORDS)
    script = [Answer("", [("count_words", {"text": "my secret"})]), Answer("Two words.")]

    async def scenario(server: ChatServer) -> tuple[int, str]:
        main, terminal = os.openpty()
        try:
            process = await asyncio.create_subprocess_exec(
                *project.command("chat", "--base-url", server.base_url, "--model", "m"),
                stdin=terminal,
                stdout=asyncio.subprocess.PIPE,
                env=chat_env(),
            )
            os.close(terminal)
            assert process.stdout is not None
            try:
                os.write(main, b"count 'my secret'\n")
                seen: list[str] = []
                while not (line := (await process.stdout.readline()).decode()).startswith("allow count_words"):
                    assert line, f"chat ended first: {seen}"
                    seen.append(line)
                os.write(main, b"y\n")
                while "Two words." not in line:
                    line = (await process.stdout.readline()).decode()
                    assert line, f"chat ended first: {seen}"
                    seen.append(line)
                os.write(main, b"\x04")  # Ctrl-D at the start of a line: the end of input
                async with asyncio.timeout(60):
                    rest = await process.stdout.read()
                    return await process.wait(), "".join(seen) + rest.decode()
            finally:
                if process.returncode is None:
                    process.kill()
                    await process.wait()
        finally:
            os.close(main)

    with ChatServer(script) as server:
        code, out = run(scenario(server))
    assert code == 0
    assert "> " in out
    assert "  ← count_words: 2 words" in out.splitlines()
    assert "resume it with: extensions chat --resume" in out


def test_ctrl_c_at_a_permission_question_cancels_the_turn_and_withdraws_the_question(project: Project) -> None:
    project.add_extension("words", WORDS)
    script = [Answer("", [("count_words", {"text": "my secret"})]), Answer("Nothing counted.")]

    async def scenario(server: ChatServer) -> tuple[int, str]:
        process = await asyncio.create_subprocess_exec(
            *project.command("chat", "--base-url", server.base_url, "--model", "m"),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=chat_env(),
        )
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(b"count 'my secret'\n")
            await process.stdin.drain()
            seen: list[str] = []
            while not (line := (await process.stdout.readline()).decode()).startswith("allow count_words"):
                assert line, f"chat ended first: {seen}"
                seen.append(line)
            process.send_signal(signal.SIGINT)
            while not (line := (await process.stdout.readline()).decode()).startswith("(the question no longer"):
                assert line, f"chat ended first: {seen}"
                seen.append(line)
            process.stdin.write(b"and now?\n")
            process.stdin.close()
            async with asyncio.timeout(60):
                rest = await process.stdout.read()
                return await process.wait(), "".join(seen) + rest.decode()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()

    with ChatServer(script) as server:
        code, out = run(scenario(server))
    assert code == 0
    assert "Nothing counted." in out.splitlines()
    assert server.requests[1]["messages"][-1] == {"role": "user", "content": "and now?"}
