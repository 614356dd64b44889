"""``extensions dev`` at a terminal, as a person types at it: a real process in a pseudo-terminal
(tests/pty_session.py), its screen read through a terminal emulator."""

from __future__ import annotations

import os
import re
import stat
import textwrap

import pytest

from extension_host.project.paths import history_path
from extension_host.project.trust import TRUST_ENV
from helpers import VERSIONED, Project, wait_for_exit
from pty_session import CTRL_C, CTRL_D, UP, PtySession

pytestmark = pytest.mark.subprocess


def test_up_recalls_a_command_tab_completes_a_tool_and_what_dev_prints_stays_above_the_prompt(
    project: Project,
) -> None:
    """History within a session, completion from the running host, a reload printed while the
    prompt waits, Ctrl-C dropping a typed line and warning on an empty one, Ctrl-D stopping dev."""
    folder = project.add_extension("live", VERSIONED.format(version="release-1"))
    with PtySession(project.command("dev"), os.environ, rows=60) as dev:
        pid = int(dev.expect(r"project:live\s+running\s+(\d+)").group(1))
        dev.expect("dev>")
        dev.type("call version\r")
        dev.expect(r"release-1(?! ready)")
        dev.expect("dev>")  # typed before the prompt, keys would be echoed by the terminal first
        dev.type(UP)
        dev.expect_input(r"^dev> call version$")
        dev.type("\r")
        dev.expect(r"release-1(?! ready)")
        dev.expect("dev>")
        dev.type("call ver\t")  # the host's tool name completes the word
        dev.expect_input(r"^dev> call version$")
        dev.type("\r")
        dev.expect(r"release-1(?! ready)")
        (folder / "extension.py").write_text(textwrap.dedent(VERSIONED.format(version="release-2")))
        dev.expect(r"project:live: reloaded \(tools: version\)")
        dev.expect(r"release-2 ready, pid \d+")
        dev.expect("dev>")
        dev.type("call missing_tool")
        dev.type(CTRL_C)  # drops the line typed
        dev.type("help\r")
        dev.expect("keys at a terminal")
        dev.expect("dev>")
        dev.type(CTRL_C)  # on an empty line: says how to leave
        dev.expect(r"Ctrl-C again within 3 s stops dev; so do Ctrl-D and quit")
        screen = [line for line in dev.screen if line]
        dev.type(CTRL_D)
        dev.expect("stopped")
        assert dev.wait() == 0
    assert wait_for_exit(pid, 15)
    assert screen.count("release-1") == 3
    assert [line for line in screen if line.startswith("dev>")][:3] == ["dev> call version"] * 3
    reloaded = screen.index("project:live: reloaded (tools: version)")
    assert any(re.fullmatch(r"\[project:live\] release-2 ready, pid \d+", line) for line in screen[reloaded:])
    prompts = [line for line in screen if line.startswith("dev>")]
    assert all(line in ("dev>", "dev> call version", "dev> help") for line in prompts), prompts  # nothing after one
    assert not any("missing_tool" in line for line in screen)  # erased from the prompt, never run


def test_history_is_kept_for_the_next_dev_and_ctrl_c_twice_stops_every_extension(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The trust question is answered through the line editor; a later dev recalls the earlier
    one's command with Up; two Ctrl-C stop it, its extension with it."""
    monkeypatch.delenv(TRUST_ENV)
    project.add_extension("live", VERSIONED.format(version="release-1"))
    with PtySession(project.command("dev"), os.environ) as first:
        first.expect(r"Trust this project and run them\? \[y/N\]")
        first.expect("dev>")
        first.type("y\r")
        first.expect(r"trusted .* \(undo: extensions trust --revoke\)")
        first_pid = int(first.expect(r"project:live\s+running\s+(\d+)").group(1))
        first.expect("dev>")
        first.type("call version\r")
        first.expect(r"release-1(?! ready)")
        first.expect("dev>")
        first.type("quit\r")
        assert first.wait() == 0
    assert wait_for_exit(first_pid, 15)
    history = history_path(project.home, "dev")
    assert stat.S_IMODE(history.stat().st_mode) == 0o600

    with PtySession(project.command("dev"), os.environ) as second:
        pid = int(second.expect(r"project:live\s+running\s+(\d+)").group(1))
        second.expect("dev>")
        second.type(UP)  # quit
        second.type(UP)  # call version, from the first dev
        second.expect_input(r"^dev> call version$")
        second.type("\r")
        second.expect(r"release-1(?! ready)")
        second.expect("dev>")
        second.type(CTRL_C)
        second.expect("Ctrl-C again within 3 s stops dev")
        second.type(CTRL_C)
        second.expect("stopping every extension")
        assert second.wait() == 0
    assert wait_for_exit(pid, 15)
    assert "stopped" in second.screen
