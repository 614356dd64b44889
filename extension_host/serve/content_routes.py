"""The content commands wired to the sessions of a server: ``completions`` and ``resource*``.

:class:`ContentCommands` adds them to :attr:`ProtocolServer.commands
<extension_host.serve.server.ProtocolServer.commands>`; the work is done by
:func:`~extension_host.serve.completions.complete` and
:class:`~extension_host.serve.resources.Resources` (one per session, over the server's one
:class:`~extension_host.serve.contents.ContentStore`). Which session a command is for:

- ``completions``: its ``session``; the session's slash commands and working directory, and
  whether its project is trusted (git lists the files of a trusted one only).
- a content URI (``<session URI>/content/...``): the session it is under.
- a ``file:`` URI (``uri``, or ``source`` for a copy or a move): the session whose working
  directory holds it (the deepest one), else the server's default directory; the session's
  :class:`Resources` then refuse anything outside its working directory (``PermissionDenied``).

This module routes; it knows no file or completion rule of its own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import unquote, urlsplit

from extension_protocol.protocol import INVALID_PARAMS

from .completions import complete
from .contents import CONTENT_SEGMENT, ContentStore, is_content_uri
from .errors import PERMISSION_DENIED, ServeError
from .resources import Resources

if TYPE_CHECKING:
    from .clients import Client, CommandHandler
    from .served_session import ServedSession

__all__ = ["RESOURCE_COMMANDS", "ContentCommands"]

RESOURCE_COMMANDS: Final = {
    "resourceRead": "read",
    "resourceWrite": "write",
    "resourceList": "list",
    "resourceCopy": "copy",
    "resourceMove": "move",
    "resourceDelete": "delete",
    "resourceRequest": "request",
}
"""Each ``resource*`` command and the :class:`Resources` method that answers it."""


class ContentCommands:
    """The content commands of one server, and the content it keeps by reference."""

    def __init__(self, session: Callable[[str], ServedSession], default_directory: Path | None) -> None:
        self._session = session
        self._default_directory = default_directory
        self.contents: Final = ContentStore()
        self._resources: dict[str, Resources] = {}

    def commands(self) -> dict[str, CommandHandler]:
        """The handlers to add to the server's table."""
        table: dict[str, CommandHandler] = {"completions": self._completions}
        for command, method in RESOURCE_COMMANDS.items():
            table[command] = self._resource_command(command, method)
        return table

    def session_added(self, uri: str, working_directory: Path) -> None:
        """Serve the files of a new session."""
        self._resources[uri] = self._resources_in(working_directory)

    def session_removed(self, uri: str) -> None:
        """Forget a disposed session's files and content."""
        self._resources.pop(uri, None)
        self.contents.forget(uri)

    async def _completions(self, client: Client, params: Any) -> dict[str, Any]:
        uri = params.get("session") if isinstance(params, Mapping) else None
        if not isinstance(uri, str):
            raise ServeError(INVALID_PARAMS, "completions: session: give the URI of the session being typed in")
        session = self._session(uri)
        trusted = session.host.trust.trusted  # an untrusted project's files are walked, never asked of git
        return await complete(params, commands=session.host.commands, root=session.working_directory, trusted=trusted)

    def _resource_command(self, command: str, method: str) -> Callable[[Client, Any], Any]:
        async def run(client: Client, params: Any) -> Any:
            if not isinstance(params, Mapping):
                raise ServeError(INVALID_PARAMS, f"{command}: params must be an object")
            target = params.get("uri", params.get("source"))
            if not isinstance(target, str):
                raise ServeError(INVALID_PARAMS, f"{command}: give the uri it is about")
            resources = self._for(target, command)
            return await getattr(resources, method)(params)

        return run

    def _resources_in(self, root: Path) -> Resources:
        """The resource commands in ``root``, which leave every session's working directory be."""
        return Resources(root, self.contents, self._working_directories)

    def _working_directories(self) -> list[Path]:
        default = self._default_directory
        return [r.root for r in self._resources.values()] + ([Path(os.path.realpath(default))] if default else [])

    def _for(self, uri: str, command: str) -> Resources:
        if is_content_uri(uri):
            session_uri = uri.rpartition(CONTENT_SEGMENT)[0]
            return self._resources.get(session_uri) or self._resources_in(Path(os.sep))
        parts = urlsplit(uri)
        if parts.scheme == "file":
            real = Path(os.path.realpath(unquote(parts.path) or os.sep))
            holders = [r for r in self._resources.values() if real == r.root or r.root in real.parents]
            if holders:
                return max(holders, key=lambda r: len(r.root.parts))
        default = self._default_directory
        if default is not None:
            return self._resources_in(default)
        raise ServeError(
            PERMISSION_DENIED,
            f"{command} {uri}: permission denied: no session of this server has it in its working directory",
            {"request": {"uri": uri, "read": True}},
        )
