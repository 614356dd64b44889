"""The lifeline: one pipe per host process whose end of file tells extensions the host is gone.

The host keeps the write end, close-on-exec and never written to; every extension process
(spawned or forked, Python or Node) inherits the read end at the same descriptor number, named
by :data:`LIFELINE_ENV`. The kernel closes the write end when the host process ends, however
it ends (SIGKILL included), and every reader then sees end of file at once: the SDK's launcher
and the Node loader answer it by killing their own process group. The host never closes it
while it lives: stopping one extension is the stop ladder's job, not this pipe's.

A child made by ``os.fork()`` without ``exec`` (``multiprocessing``, say) would otherwise hold
the write end and keep every extension alive after the host died: such a child drops both ends
and makes its own pipe if it starts extensions. This module knows descriptors, nothing else.
"""

from __future__ import annotations

import fcntl
import os
import threading
from typing import Final

# The environment variable that names the read end in an extension: one name for both ends.
from extension_protocol.lifeline import LIFELINE_ENV

__all__ = ["LIFELINE_ENV", "lifeline_fd"]

_LOWEST_FD: Final = 3
"""Kept above stdin, stdout and stderr, which every extension process replaces."""

_lock = threading.Lock()
_ends: tuple[int, int] | None = None


def lifeline_fd() -> int:
    """The read end of this process's lifeline (made on first use; close-on-exec: pass it on
    with ``pass_fds``)."""
    global _ends
    with _lock:
        if _ends is None:
            read_end, write_end = os.pipe()
            # A host started with stdin closed could get descriptor 0 here; a child's stdin
            # would then replace its lifeline.
            _ends = (_above_stdio(read_end), _above_stdio(write_end))
        return _ends[0]


def _above_stdio(fd: int) -> int:
    if fd >= _LOWEST_FD:
        return fd
    try:
        return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, _LOWEST_FD)
    finally:
        os.close(fd)


def _forget_in_child() -> None:
    global _ends, _lock
    if _ends is not None:
        for fd in _ends:
            try:
                os.close(fd)
            except OSError:
                pass
    _ends = None
    _lock = threading.Lock()  # another thread may have held it at the fork


os.register_at_fork(after_in_child=_forget_in_child)
