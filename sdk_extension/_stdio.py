"""Keeps stdout for the protocol: stray writes of the extension go to its log instead.

At claim time the real stdin/stdout file descriptors are duplicated for the protocol's private
use; fd 1 is then pointed at fd 2 (the extension's log) and fd 0 at ``/dev/null``. Everything
else that writes to "stdout" afterwards (``print``, ``sys.stdout.write``, C code, child
processes) lands in the log. This module knows file descriptors, not messages.
"""

from __future__ import annotations

import os
import sys

__all__ = ["claim_protocol_stdio", "flush_std_streams"]

_claimed: tuple[int, int] | None = None


def claim_protocol_stdio() -> tuple[int, int]:
    """Return ``(read_fd, write_fd)`` reserved for the protocol; idempotent."""
    global _claimed
    if _claimed is not None:
        return _claimed
    flush_std_streams()
    protocol_in = os.dup(0)
    protocol_out = os.dup(1)
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    if sys.stdout is not None and hasattr(sys.stdout, "reconfigure"):
        # The log is a file now: line buffering keeps print() output in order with stderr.
        sys.stdout.reconfigure(line_buffering=True)
    _claimed = (protocol_in, protocol_out)
    return _claimed


def flush_std_streams() -> None:
    """Flush Python's stdout and stderr, ignoring streams that are gone."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
