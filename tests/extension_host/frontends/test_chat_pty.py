"""``extensions chat`` at a terminal, as a person types at it: a real process in a
pseudo-terminal (tests/pty_session.py), a model endpoint on loopback (tests/chat_server.py)."""

from __future__ import annotations

import re
import stat
import threading

import pytest

from chat_server import Answer, ChatServer, Hold, Reply
from extension_host.project.paths import history_path
from helpers import Project, chat_env, wait_for_exit
from pty_session import CTRL_C, CTRL_D, UP, PtySession

pytestmark = pytest.mark.subprocess

SHOUT = """
import os
from sdk_extension import command, join_session

@command
def shout(context):
    \"\"\"Say something in the session's log.\"\"\"
    session.log(f"{context.args.upper()} from pid {os.getpid()}")

session = join_session(commands=[shout])
"""


def user_messages(server: ChatServer) -> list[str]:
    """The last user message of each request the model endpoint received."""
    return [
        next(m["content"] for m in reversed(request["messages"]) if m["role"] == "user") for request in server.requests
    ]


def test_up_recalls_a_prompt_tab_completes_a_command_and_ctrl_c_cancels_a_turn_then_leaves(project: Project) -> None:
    """History within a chat, a slash command completed, Ctrl-C during a turn (SIGINT from the
    terminal) cancelling it, and a second one leaving with 130, the extension gone."""
    project.add_extension("words", SHOUT)
    released = threading.Event()
    hold = Hold(released)
    script: list[Reply] = [Answer("first answer"), Answer("answer again"), hold]
    with ChatServer(script) as server:
        command = project.command("chat", "--base-url", server.base_url, "--model", "m")
        try:
            with PtySession(command, chat_env(), rows=60) as chat:
                chat.expect("Ctrl-D to leave")
                chat.expect(">")
                chat.type("hello there\r")
                chat.expect("first answer")
                chat.expect(r"\(1 model call.*\)\s*>")
                chat.type(UP)
                chat.expect_input(r"^> hello there$")
                chat.type("\r")
                chat.expect("answer again")
                chat.expect(r"\(1 model call.*\)\s*>")
                chat.type("/sh\t")
                chat.expect_input(r"^> /shout$")
                chat.type(" hi\r")
                pid = int(chat.expect(r"\[project:words\] HI from pid (\d+)").group(1))
                chat.expect(">")
                chat.type("take your time\r")
                assert hold.arrived.wait(30)
                chat.type(CTRL_C)  # the line is not being read: the terminal sends SIGINT
                chat.expect(r"cancelling the turn \.\.\. \(Ctrl-C again within 3 s leaves the chat\)")
                chat.type(CTRL_C)  # at once, as a person does: a signal or the prompt's key, whichever is first
                chat.expect("resume it with: extensions chat --resume")
                assert chat.wait() == 130
        finally:
            released.set()
    assert wait_for_exit(pid, 15)
    assert user_messages(server) == ["hello there", "hello there", "take your time"]
    assert "> hello there" in chat.screen and "[project:words] HI from pid " + str(pid) in chat.screen


def test_ctrl_d_leaves_and_the_next_chat_recalls_the_earlier_prompt(project: Project) -> None:
    """Ctrl-C at an empty prompt only says how to leave; Ctrl-D leaves with 0; the history file
    is private and a later chat recalls its line with Up."""
    with ChatServer([Answer("noted"), Answer("noted again")]) as server:
        command = project.command("chat", "--base-url", server.base_url, "--model", "m")
        with PtySession(command, chat_env()) as first:
            first.expect("Ctrl-D to leave")
            first.expect(">")
            first.type("remember the number 7\r")
            first.expect("noted")
            first.expect(r"\(1 model call.*\)\s*>")
            first.type(CTRL_C)
            first.expect(r"\(Ctrl-C again within 3 s leaves the chat; so do Ctrl-D and /exit\)")
            first.expect(">")
            first.type(CTRL_D)
            first.expect("resume it with: extensions chat --resume")
            assert first.wait() == 0
        history = history_path(project.home, "chat")
        assert stat.S_IMODE(history.stat().st_mode) == 0o600
        with PtySession(command, chat_env()) as second:
            second.expect("Ctrl-D to leave")
            second.expect(">")
            second.type(UP)
            second.expect_input(r"^> remember the number 7$")
            second.type("\r")
            second.expect("noted again")
            second.expect(r"\(1 model call.*\)\s*>")
            second.type(CTRL_D)
            assert second.wait() == 0
    assert user_messages(server) == ["remember the number 7", "remember the number 7"]
    assert any(
        re.fullmatch(r"session [\w-]+ kept; resume it with: extensions chat --resume [\w-]+", line)
        for line in second.screen
    )
