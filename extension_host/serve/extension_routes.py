"""The commands about a session's extensions: ``listExtensions`` and ``reloadExtensions``.

- ``listExtensions {session}`` → ``{items}``: each extension the session's host discovered, as
  a client shows it: ``{id, name, source, status, tools, hooks, commands, canvases, error}``
  (``canvases``: the ids of those it declares; ``error``:
  why it is not running, or why its last reload failed while the old version kept serving).
  Paths, log files and environment variable names stay on the server.
- ``reloadExtensions {session, extension?}`` → ``{outcomes, items}``: reload one extension (by
  name or id) or all of them, as ``extensions reload`` does (:meth:`ExtensionHost.reload`);
  ``outcomes`` says what happened to each (``ReloadOutcome`` as JSON). Refused with
  ``TurnInProgress`` while a turn runs: its tools would change under it.

This module knows the two commands; the server's table wires them (:meth:`commands`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from extension_protocol.protocol import INVALID_PARAMS

from ..errors import ExtensionHostError
from ..info import ExtensionInfo
from ..validation import validate
from . import params as shapes
from .errors import TURN_IN_PROGRESS, ServeError

if TYPE_CHECKING:
    from .clients import Client, CommandHandler
    from .served_session import ServedSession

__all__ = ["ExtensionCommands", "extension_entry"]


def extension_entry(info: ExtensionInfo) -> dict[str, Any]:
    """One extension as ``listExtensions`` gives it."""
    return {
        "id": info.id,
        "name": info.name,
        "source": info.source,
        "status": info.status,
        "tools": list(info.tools),
        "hooks": list(info.hooks),
        "commands": list(info.commands),
        "canvases": [canvas.id for canvas in info.canvases],
        "error": info.error or info.reload_error,
    }


class ExtensionCommands:
    """``listExtensions`` and ``reloadExtensions`` for the sessions ``session(uri)`` finds."""

    def __init__(self, session: Callable[[str], ServedSession]) -> None:
        self._session = session

    def commands(self) -> dict[str, CommandHandler]:
        """The handlers to add to the server's table."""
        return {"listExtensions": self._list, "reloadExtensions": self._reload}

    async def _list(self, client: Client, params: Any) -> dict[str, Any]:
        session = self._session(validate("listExtensions", shapes.SessionParams, params)["session"])
        return {"items": [extension_entry(info) for info in session.host.extensions]}

    async def _reload(self, client: Client, params: Any) -> dict[str, Any]:
        checked = validate("reloadExtensions", shapes.ReloadExtensionsParams, params)
        session = self._session(checked["session"])
        if session.state.get("activeTurn") is not None:
            raise ServeError(
                TURN_IN_PROGRESS, f"reloadExtensions: session {session.uri} is running a turn; reload when it ends"
            )
        try:
            outcomes = await session.host.reload(checked.get("extension"))
        except ExtensionHostError as exc:
            raise ServeError(INVALID_PARAMS, f"reloadExtensions: {exc}") from None
        return {
            "outcomes": [outcome.to_json() for outcome in outcomes],
            "items": [extension_entry(info) for info in session.host.extensions],
        }
