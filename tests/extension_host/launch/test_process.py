"""What :mod:`extension_host.launch.process` reads of a running process: whether it is busy."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from extension_host.launch.interpreter import python_command
from extension_host.launch.process import process_busy

pytestmark = [
    pytest.mark.subprocess,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="task states are read from /proc"),
]


@contextmanager
def child(code: str) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(python_command("-c", code), stdin=subprocess.PIPE)
    try:
        yield process
    finally:
        process.kill()
        process.wait(timeout=10)
        assert process.stdin is not None
        process.stdin.close()


def settles(pid: int, busy: bool, timeout: float = 10) -> bool:
    """Whether ``process_busy(pid)`` reads ``busy``, polled for at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process_busy(pid) is busy:
            return True
        time.sleep(0.01)
    return False


def test_a_process_that_computes_is_busy_and_one_blocked_reading_its_input_is_not() -> None:
    with child("while True: pass") as spinning, child("import sys; sys.stdin.read()") as reading:
        assert settles(spinning.pid, busy=True)
        assert settles(reading.pid, busy=False)


def test_a_process_that_is_gone_is_not_busy() -> None:
    with child("pass") as ended:
        ended.wait(timeout=10)
    assert process_busy(ended.pid) is False
