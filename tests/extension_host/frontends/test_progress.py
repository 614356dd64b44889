"""The status line while extensions start: on a terminal redrawn in place and erased at the
end, naming the extension still starting; to a pipe one plain line. Driven through a
pseudo-terminal with a real extension that sleeps before it joins."""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import termios
import time

import pytest

from extension_host.frontends.progress import status_text
from helpers import CALC, Project, run, running_dev

pytestmark = pytest.mark.subprocess

SLOW = (
    """
    import time

    time.sleep(3)  # well past the half second after which the line shows
"""
    + CALC
)
"""An extension with the tool ``add`` that joins three seconds after it starts."""


def _stderr_on_a_terminal(project: Project, *args: str) -> tuple[int, str, str]:
    """``extensions ARGS`` with stderr on a pseudo-terminal (80 columns) and stdout a pipe: its
    exit code, what it wrote to the terminal, and its stdout."""
    main, terminal = os.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    process = subprocess.Popen(
        project.command(*args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=terminal
    )
    os.close(terminal)
    said = b""
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 1)
            if not ready:
                continue
            try:
                chunk = os.read(main, 4096)
            except OSError:  # EIO: the command has ended
                break
            if not chunk:
                break
            said += chunk
        assert process.stdout is not None
        out = process.stdout.read().decode()
        code = process.wait(timeout=30)
    finally:
        if process.returncode is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
        os.close(main)
    return code, said.decode(), out


def test_on_a_terminal_the_line_names_the_extension_still_starting_and_is_redrawn_then_erased(
    project: Project,
) -> None:
    """Each drawing goes back to the start of the line and clears it; the last thing written is
    the erase, so the command's own output starts on a clean line."""
    project.add_extension("slow", SLOW)
    project.add_extension("calc", CALC.replace("add", "plus"))
    code, said, out = _stderr_on_a_terminal(project, "call", "add", '{"a": 1, "b": 2}')
    assert code == 0 and out.strip() == "3"
    drawings = re.findall(r"\r\x1b\[2Kstarting ([^\r]*?) \.\.\. (\d+\.\d) s", said)
    assert len(drawings) >= 2, said
    assert drawings[-1][0] == "project:slow"
    seconds = [float(elapsed) for _, elapsed in drawings]
    assert seconds == sorted(seconds) and seconds[0] >= 0.5
    assert said.endswith("\r\x1b[2K")


def test_to_a_pipe_the_line_is_written_once_in_plain_text(project: Project) -> None:
    """No escape, no redrawing: one line naming what is starting."""
    project.add_extension("slow", SLOW)
    done = project.run_command("call", "add", '{"a": 1, "b": 2}', status_line=True)
    assert done.returncode == 0 and done.stdout.strip() == "3"
    lines = [line for line in done.stderr.splitlines() if line.startswith("starting ")]
    assert len(lines) == 1 and re.fullmatch(r"starting project:slow \.\.\. \d+\.\d s", lines[0]), done.stderr
    assert "\x1b" not in done.stderr and "\r" not in done.stderr


def test_a_quick_start_shows_no_line(project: Project) -> None:
    """Under half a second nothing is said: the usual start stays silent."""
    code, said, out = _stderr_on_a_terminal(project, "list")
    assert code == 0 and said == "" and out.strip() == "no extensions found"


def test_the_line_shows_an_extensions_control_characters_as_escapes() -> None:
    """A folder name cannot move the cursor or clear the screen from the status line."""
    assert status_text("x", ["project:\x1b[2Jevil"], 1.25) == "starting project:\\x1b[2Jevil ... 1.2 s"
    assert status_text("the extensions of /p", [], 0.5) == "starting the extensions of /p ... 0.5 s"


def test_dev_shows_the_line_while_it_starts_and_then_where_the_logs_are(project: Project) -> None:
    """dev names the folder of the extension logs once they have started."""
    project.add_extension("calc", CALC)

    async def scenario() -> str:
        async with running_dev(project, ready=r"^extension logs: ") as dev:
            return dev.seen[-1]

    line = run(scenario(), timeout=90)
    logs = line.removeprefix("extension logs: ").split(" (")[0]
    assert os.path.isdir(logs) and os.path.isfile(os.path.join(logs, "project-calc.log"))
