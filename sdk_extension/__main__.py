"""The launcher: ``python -m sdk_extension PATH`` runs an extension file as ``__main__``.

The host starts every Python extension this way (or forks it from its fork server, which then
calls :func:`run_extension`) so that stdout belongs to the protocol from the first byte (a
``print()`` at import time lands in the log, not on the wire) and so that an extension whose
host died exits by itself even if it never joins. The file then runs exactly as ``python PATH``
would run it: same ``sys.argv[0]``, same ``sys.path[0]``.
"""

from __future__ import annotations

import os
import runpy
import sys
import threading

from ._stdio import claim_protocol_stdio, flush_std_streams

_PARENT_POLL_SECONDS = 0.5
"""How often the orphan check looks at the parent pid; bounds how long an orphan lingers."""


def _exit_when_orphaned(parent_pid: int) -> None:
    stop = threading.Event()
    while not stop.wait(_PARENT_POLL_SECONDS):
        if os.getppid() != parent_pid:
            flush_std_streams()
            os._exit(0)


def run_extension(path: str, parent_pid: int | None) -> None:
    """Run the extension file ``path`` as ``__main__`` with stdout claimed for the protocol.

    ``parent_pid`` is the process this one must not outlive (``None``: no lifeline): the host
    that started it, or the fork server it was forked from.
    """
    path = os.path.abspath(path)
    claim_protocol_stdio()
    if parent_pid is not None:
        threading.Thread(
            target=_exit_when_orphaned, args=(parent_pid,), name="sdk-extension-lifeline", daemon=True
        ).start()
    sys.argv = [path]
    sys.path[0] = os.path.dirname(path)
    runpy.run_path(path, run_name="__main__")


def main() -> None:
    if len(sys.argv) != 2:
        print("usage: python -m sdk_extension PATH/extension.py", file=sys.stderr)
        raise SystemExit(2)
    parent = os.environ.get("EXTENSION_HOST_PARENT_PID", "")
    run_extension(sys.argv[1], int(parent) if parent.isdigit() else None)


if __name__ == "__main__":
    main()
