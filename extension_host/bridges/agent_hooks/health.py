"""A host that stopped answering hook calls: waited for once, not again until it answers.

A hook command waits for the host on the project's control socket at most until its deadline
(:mod:`.deadline`: 50 s from its start). A host that takes connections but never
answers (its event loop is stuck, or it is stopped) would cost every later call the same wait.
So the command that waited in vain records it, in an *unhealthy mark* beside the socket in the
private runtime folder (``<socket>.unhealthy``: the listener's pid, when, and the wait), after
having the host replaced where it may (:func:`.host_start.stop_hung_background_host`
stops the background host hook commands start, never an ``extensions dev``, a server or an
application's host).

Every later hook command that finds the mark asks the listener for ``host.status`` first, for
at most :data:`HEALTH_PROBE_TIMEOUT`:

- it answers, or nobody listens any more (the host is gone; a new one takes its place as
  usual): the mark is removed and the call goes on;
- still no answer: :class:`HostHungError` at once, which blocks a guard event and is a
  warning for any other.

A host is healthy again once it answers a status request. This module owns the mark and the
probe, not what the request means, and stays light to import (it is paid on every call).
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Final, NamedTuple

from ...control.methods import METHOD_STATUS
from ...control.private_socket import check_private_folder
from ...project.paths import control_socket_path
from ...project.private_files import open_regular, write_private
from .client import HostTimeoutError, HostUnreachableError, ask_running_host
from .deadline import HookDeadline

__all__ = ["HEALTH_PROBE_TIMEOUT", "HostHungError", "UnhealthyMark", "check_health", "replace_hung_host"]

HEALTH_PROBE_TIMEOUT: Final = 1.0
"""Seconds a hook command gives a host marked unhealthy to answer ``host.status``: a host whose
event loop runs answers in milliseconds."""


class UnhealthyMark(NamedTuple):
    """What the mark holds: the listener that did not answer (``pid``, when known), when
    (``since``, seconds since the epoch), and how long it was waited for."""

    pid: int | None
    since: float
    timeout: float


class HostHungError(HostUnreachableError):
    """The host marked unhealthy (``mark``) still does not answer: the call is not sent to it."""

    def __init__(self, mark: UnhealthyMark) -> None:
        who = f" (pid {mark.pid})" if mark.pid is not None else ""
        when = time.strftime("%H:%M:%S", time.localtime(mark.since))
        super().__init__(
            f"the host{who} did not answer within {mark.timeout:g} s at {when} and still does not answer "
            f"{METHOD_STATUS}, so it is not asked until it answers; restart it (an extensions dev, serve or "
            "application), or end it (extensions hook stop, for the background host)"
        )
        self.mark = mark


def _mark_path(project_root: Path) -> Path:
    return control_socket_path(project_root).with_suffix(".unhealthy")


def check_health(project_root: Path, deadline: HookDeadline | None = None) -> None:
    """Go on if no host of the project is marked unhealthy, or the one marked answers now (or is
    gone): the mark is then removed. The probe waits at most :data:`HEALTH_PROBE_TIMEOUT`, and
    never past ``deadline``.

    Raises:
        HostHungError: the marked host still does not answer.
        HookDeadlineError: ``deadline`` has passed.
        RuntimeFolderError: the runtime folder is not the user's own.
    """
    path = _mark_path(project_root)
    if not check_private_folder(path.parent):
        return
    mark = _read(path)
    if mark is None:
        return
    wait = HEALTH_PROBE_TIMEOUT
    if deadline is not None:
        wait = min(wait, deadline.left_for("asking the host marked unhealthy for its status"))
    try:
        ask_running_host(project_root, METHOD_STATUS, None, timeout=wait)
    except HostTimeoutError:
        raise HostHungError(mark) from None
    except HostUnreachableError:
        pass  # it answers, if not well: the call itself will say what is wrong
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def replace_hung_host(project_root: Path, error: HostTimeoutError) -> str:
    """After ``error`` (the host did not answer in time): stop it if it is the project's
    background host, mark it unhealthy, and say in words what was done and what to do."""
    from .host_start import stop_hung_background_host

    stopped = stop_hung_background_host(project_root, error.pid)
    _write(_mark_path(project_root), UnhealthyMark(error.pid, time.time(), error.timeout))
    if stopped:
        return (
            f"{error}; it was the background host hook commands start, so this call stopped it "
            "and the next starts a new one"
        )
    return (
        f"{error}; it is not the background host hook commands start (an extensions dev, serve or application), "
        "so it was left running: restart it; until it answers, hook calls do not wait for it"
    )


def _read(path: Path) -> UnhealthyMark | None:
    """The mark at ``path``; ``None`` when there is none, or none that can be read (written
    atomically in a private folder, a damaged one is nobody's word)."""
    try:
        with open_regular(path, follow_symlinks=False) as (handle, _info):
            raw = handle.read(4096)
    except OSError:
        return None
    try:
        data = json.loads(raw)
        pid = data.get("pid")
        return UnhealthyMark(pid if isinstance(pid, int) else None, float(data["since"]), float(data["timeout"]))
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def _write(path: Path, mark: UnhealthyMark) -> None:
    with contextlib.suppress(OSError):  # a mark that cannot be written costs the next call a wait, nothing worse
        write_private(path, json.dumps(mark._asdict()).encode())
