"""How this project starts Python: never importing from the working folder or the project.

The rule: every Python process the project starts runs with :data:`PYTHON_FLAGS` before its
arguments, through :func:`python_command` (this interpreter) or :func:`python_args` (where
another program picks the interpreter: the Copilot CLI launcher, an MCP client's config). That
is the background host a hook command starts, the fork server, every Python extension
(``python -P -m sdk_extension extension.py``), the command the Copilot CLI launcher runs, the
MCP server ``extensions mcp --print-config`` registers, and the children of ``bench``.

Why: ``python -m MODULE`` and ``python -c CODE`` put the working folder first on ``sys.path``
(``python FILE`` puts the file's folder there), and these processes run in a repository's
folder, or in whatever folder a client starts them. A cloned repository with an
``extension_host/``, ``sdk_extension/`` or ``pydantic/`` folder at its root would then be
imported in place of the installed package, as you, before anyone trusted it. ``-P`` keeps
that folder off ``sys.path``; an extension's own folder is put back first by the SDK's launcher,
as ``python extension.py`` would have it.

Why ``-P`` and not ``-I``: ``-I`` would also drop every ``PYTHON*`` variable and your user site
folder, which is where ``pip install --user extension-host`` puts the package and where
``PYTHONPATH`` may point an extension's own libraries. Those are yours to set, not a
repository's, so every entry point keeps them. The ``extensions`` console script needs no flag:
its ``sys.path`` starts with its own folder, never the working one.

This module builds command lines; it starts nothing, and imports nothing but ``sys`` (a hook
command pays for every import).
"""

from __future__ import annotations

import sys
from typing import Final

__all__ = ["PYTHON_FLAGS", "python_args", "python_command"]

PYTHON_FLAGS: Final = ("-P",)
"""The interpreter options every Python process this project starts gets: ``-P``, so that
neither the working folder nor a script's folder comes first on ``sys.path``."""


def python_args(*args: str) -> tuple[str, ...]:
    """:data:`PYTHON_FLAGS`, then ``args`` (``"-m", MODULE, ...``): the arguments of a Python
    process whose interpreter something else chooses."""
    return (*PYTHON_FLAGS, *args)


def python_command(*args: str) -> tuple[str, ...]:
    """The command line that runs this interpreter (``sys.executable``) with ``args``, isolated
    from the working folder: ``python_command("-m", "extension_host", "list")``."""
    return (sys.executable, *python_args(*args))
