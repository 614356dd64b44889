"""The host's lifeline, seen from an extension process: go, with the whole group, once the host is gone.

The host passes the read end of a pipe whose write end only it holds (descriptor number in
``EXTENSION_HOST_LIFELINE_FD``, see ``extension_host.launch.lifeline``); the pipe reaches end of file the
moment the host process ends, a SIGKILL included, whoever the extension's parent is. A daemon
thread waits for that and then kills the extension's process group, so that what the extension
started goes with it. Without a lifeline (a launcher run by hand), the thread polls the parent
pid instead. :func:`end_if_host_gone` lets the SDK's own exit on end of stream (which the host's
death also causes) take the group down too, whichever of the two notices first: as the dying
host's descriptors close one by one, the end of stdin can come a moment before the lifeline's,
so that check also asks Linux whether the host is exiting (``PF_EXITING`` in its
``/proc/PID/stat``, set before any of its descriptors closes).

It only ever kills a group the process leads (the host starts each extension as one), never the
group of a shell that ran it. This module knows descriptors and signals, not the protocol.
"""

from __future__ import annotations

import os
import select
import signal
import stat
import threading
from typing import Final

from extension_protocol.lifeline import HOST_PID_ENV, LIFELINE_ENV

from ._stdio import flush_std_streams

__all__ = ["end_if_host_gone", "watch_host"]

_PF_EXITING: Final = 0x4
"""Linux's task flag for a process that has begun to exit (``include/linux/sched.h``)."""

_PARENT_POLL_SECONDS: Final = 0.5
"""How often the fallback check looks at the parent pid; bounds how long an orphan lingers."""

_lifeline: int | None = None
_parent: int | None = None


def _go_down() -> None:
    """The host is gone: end this process and everything in its process group."""
    flush_std_streams()
    if os.getpgid(0) == os.getpid():
        os.killpg(0, signal.SIGKILL)
    os._exit(0)


def _host_exiting() -> bool:
    """Whether the host process has begun to exit (Linux; ``False`` where that cannot be read)."""
    host = os.environ.get(HOST_PID_ENV, "")
    if not host.isdigit():
        return False
    try:
        with open(f"/proc/{host}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
        return bool(int(fields[6]) & _PF_EXITING)
    except (OSError, ValueError, IndexError):
        return False


def _host_gone() -> bool:
    if _lifeline is not None:
        poller = select.poll()
        poller.register(_lifeline, select.POLLIN)
        # No writer left: the pipe reports a hang-up (and end of file) without anything to read.
        if any(events & select.POLLHUP for _fd, events in poller.poll(0)):
            return True
    elif _parent is not None and os.getppid() != _parent:
        return True
    return _host_exiting()


def end_if_host_gone() -> None:
    """If the host is gone, end this process and its group now (else return)."""
    if _host_gone():
        _go_down()


def _watch_lifeline(fd: int) -> None:
    # poll() rather than a blocking read: the pipe end is shared with the host's other
    # extensions, and a Node one makes it non-blocking for everyone.
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while True:
        poller.poll()
        try:
            if not os.read(fd, 512):
                _go_down()
        except BlockingIOError:
            continue
        except OSError:
            return  # the extension closed the descriptor itself: it gave up its lifeline


def _watch_parent() -> None:
    stop = threading.Event()
    while not stop.wait(_PARENT_POLL_SECONDS):
        end_if_host_gone()


def watch_host(parent_pid: int | None) -> None:
    """Start the thread that ends this process's group once the host is gone.

    It watches the lifeline named by ``EXTENSION_HOST_LIFELINE_FD``; without one, whether
    ``parent_pid`` is still this process's parent (``None``: nothing is watched).
    """
    global _lifeline, _parent
    # Taken, not left for what the extension starts: that has no lifeline of ours.
    value = os.environ.pop(LIFELINE_ENV, "")
    if value.isdigit():
        try:
            if stat.S_ISFIFO(os.fstat(int(value)).st_mode):
                os.set_inheritable(int(value), False)
                _lifeline = int(value)
        except OSError:
            pass  # not open here: the variable was inherited without the descriptor
    if _lifeline is not None:
        watch = threading.Thread(target=_watch_lifeline, args=(_lifeline,), name="sdk-extension-lifeline", daemon=True)
    elif parent_pid is not None:
        _parent = parent_pid
        watch = threading.Thread(target=_watch_parent, name="sdk-extension-lifeline", daemon=True)
    else:
        return
    watch.start()
