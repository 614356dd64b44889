"""The lifeline's names in the environment: the host sets it, the extension reads it.

The pipe itself, and what an extension does when the host is gone, belong to each side
(``extension_host.launch.lifeline`` and the SDK's launcher).
"""

from __future__ import annotations

from typing import Final

__all__ = ["HOST_PID_ENV", "LIFELINE_ENV"]

LIFELINE_ENV: Final = "EXTENSION_HOST_LIFELINE_FD"
"""Set by the host: the descriptor of the read end of its lifeline pipe."""

HOST_PID_ENV: Final = "EXTENSION_HOST_PARENT_PID"
"""Set by the host: its own pid (a forked extension's parent is the fork server)."""
