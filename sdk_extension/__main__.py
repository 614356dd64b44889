"""The launcher: ``python -m sdk_extension PATH`` runs an extension file as ``__main__``.

The host starts every Python extension this way (or forks it from its fork server, which then
calls :func:`run_extension`) so that stdout belongs to the protocol from the first byte (a
``print()`` at import time lands in the log, not on the wire) and so that an extension whose
host died goes, with its whole process group, even if it never joins (see
:mod:`sdk_extension._lifeline`). The file then runs exactly as ``python PATH`` would run it:
same ``sys.argv[0]``, same ``sys.path[0]``. A syntax error or a missing module that stops it is
also said in one line the host reads back (:mod:`extension_protocol.startup_errors`), before
Python's traceback.
"""

from __future__ import annotations

import os
import runpy
import sys

from extension_protocol.lifeline import HOST_PID_ENV

from ._lifeline import watch_host
from ._stdio import claim_protocol_stdio


def run_extension(path: str, parent_pid: int | None) -> None:
    """Run the extension file ``path`` as ``__main__`` with stdout claimed for the protocol.

    The process goes with its group when the host's lifeline (``EXTENSION_HOST_LIFELINE_FD``)
    ends; without one, when ``parent_pid`` is no longer its parent (``None``: never).
    """
    path = os.path.abspath(path)
    claim_protocol_stdio()
    watch_host(parent_pid)
    sys.argv = [path]
    if sys.flags.safe_path:  # -P, as the host starts it: the path holds no working folder
        sys.path.insert(0, os.path.dirname(path))
    else:  # where ``-m`` put the working folder
        sys.path[0] = os.path.dirname(path)
    try:
        runpy.run_path(path, run_name="__main__")
    except (SyntaxError, ImportError) as exc:
        from extension_protocol.startup_errors import startup_error_line

        line = startup_error_line(exc)
        if line is not None:
            print(line, file=sys.stderr, flush=True)
        raise


def main() -> None:
    if len(sys.argv) != 2:
        print("usage: python -m sdk_extension PATH/extension.py", file=sys.stderr)
        raise SystemExit(2)
    parent = os.environ.get(HOST_PID_ENV, "")
    run_extension(sys.argv[1], int(parent) if parent.isdigit() else None)


if __name__ == "__main__":
    main()
