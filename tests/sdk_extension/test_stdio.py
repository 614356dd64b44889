"""Tests for sdk_extension._stdio, each in a real child process (claiming stdio rewires fds 0 and 1)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.subprocess


def run_child(script: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    """Run ``script`` in a fresh interpreter with piped stdio; fail the test if it exits non-zero."""
    completed = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        input=stdin,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr.decode(errors="replace")
    return completed


def test_after_claiming_only_protocol_writes_reach_stdout_and_prints_go_to_stderr() -> None:
    """print(), sys.stdout.write and os.write(1) land on stderr; the protocol write fd reaches the real stdout."""
    completed = run_child(
        """
        import os, sys
        from sdk_extension._stdio import claim_protocol_stdio

        read_fd, write_fd = claim_protocol_stdio()
        print("PRINTED-LINE")
        sys.stdout.write("SYS-STDOUT-WRITE\\n")
        os.write(1, b"RAW-FD-ONE\\n")
        os.write(write_fd, b"PROTOCOL-MARKER\\n")
        """
    )
    assert completed.stdout == b"PROTOCOL-MARKER\n"
    for stray in (b"PRINTED-LINE\n", b"SYS-STDOUT-WRITE\n", b"RAW-FD-ONE\n"):
        assert stray in completed.stderr
    assert b"PROTOCOL-MARKER" not in completed.stderr


def test_prints_stay_in_order_with_stderr_writes_after_claiming() -> None:
    """stdout is line-buffered after the claim, so print() and stderr output interleave in call order."""
    completed = run_child(
        """
        import sys
        from sdk_extension._stdio import claim_protocol_stdio

        claim_protocol_stdio()
        print("one")
        sys.stderr.write("two\\n")
        sys.stderr.flush()
        print("three")
        sys.stderr.write("four\\n")
        sys.stderr.flush()
        """
    )
    assert completed.stdout == b""
    assert completed.stderr.splitlines() == [b"one", b"two", b"three", b"four"]


def test_protocol_read_fd_receives_the_real_stdin_and_fd_zero_reads_nothing() -> None:
    """The bytes sent to the child's stdin arrive on the protocol read fd; fd 0 now reads /dev/null."""
    completed = run_child(
        """
        import os
        from sdk_extension._stdio import claim_protocol_stdio

        read_fd, write_fd = claim_protocol_stdio()
        from_fd0 = os.read(0, 100)
        received = b""
        while True:
            chunk = os.read(read_fd, 100)
            if not chunk:
                break
            received += chunk
        os.write(write_fd, b"fd0=" + repr(from_fd0).encode() + b" got=" + received)
        """,
        stdin=b"hello-protocol",
    )
    assert completed.stdout == b"fd0=b'' got=hello-protocol"


def test_output_printed_before_claiming_is_flushed_to_the_real_stdout_first() -> None:
    """Buffered print() output from before the claim goes to stdout, ahead of protocol bytes, not to the log."""
    completed = run_child(
        """
        import os
        from sdk_extension._stdio import claim_protocol_stdio

        print("BEFORE-CLAIM", end="")  # block-buffered: stdout is a pipe
        read_fd, write_fd = claim_protocol_stdio()
        os.write(write_fd, b"|MARKER")
        """
    )
    assert completed.stdout == b"BEFORE-CLAIM|MARKER"
    assert b"BEFORE-CLAIM" not in completed.stderr


def test_claiming_twice_returns_the_same_descriptors() -> None:
    """claim_protocol_stdio is idempotent: a second call does not dup again."""
    completed = run_child(
        """
        import os
        from sdk_extension._stdio import claim_protocol_stdio

        first = claim_protocol_stdio()
        second = claim_protocol_stdio()
        os.write(first[1], repr((first == second, first[0] not in (0, 1, 2), first[1] not in (0, 1, 2))).encode())
        """
    )
    assert completed.stdout == b"(True, True, True)"


def test_child_processes_writing_to_stdout_land_in_the_log() -> None:
    """A subprocess that inherits fd 1 after the claim writes to stderr, not to the protocol stream."""
    completed = run_child(
        """
        import os, subprocess, sys
        from sdk_extension._stdio import claim_protocol_stdio

        read_fd, write_fd = claim_protocol_stdio()
        subprocess.run([sys.executable, "-c", "print('FROM-GRANDCHILD')"], check=True, timeout=20)
        os.write(write_fd, b"DONE")
        """
    )
    assert completed.stdout == b"DONE"
    assert b"FROM-GRANDCHILD" in completed.stderr
