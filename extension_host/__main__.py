"""``python -m extension_host`` is the ``extensions`` command."""

from __future__ import annotations

from .frontends.launcher import main

if __name__ == "__main__":
    raise SystemExit(main())
