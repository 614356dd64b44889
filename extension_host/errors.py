"""Errors of the host, as one small tree.

::

    ExtensionHostError                 anything the host raises on purpose
    ├── ExtensionLoadError             an extension could not be loaded (.extension)
    │   └── ToolCollisionError         its tool name is taken (.tool, .owner)
    ├── UnknownToolError               no tool of that name is offered (.tool)
    ├── UnknownExtensionError          no extension of that name or id (.extension)
    ├── ScaffoldError                  a new extension cannot be created there (.path)
    ├── InstallError                   an extension cannot be installed, updated or removed (.source)
    ├── ProjectRootError               the project root named is not a folder (.path)
    ├── TrustFileError                 the trust record cannot be read or written (.path)
    ├── EnablementFileError            the enable/disable record cannot be read or written (.path)
    ├── ManifestError                  an extension's manifest cannot be used (.path, .problem)
    ├── SettingsError                  a setting cannot be read, stored or given as asked (.path)
    ├── RuntimeFolderError             the control sockets' folder is not the user's alone (.folder, .owner)
    ├── TokenError                     a server's token cannot be used (.source)
    └── SessionError                   a persisted session cannot be used (.session_id)
        ├── UnknownSessionError        no session of that id, or not this project's
        ├── SessionIdError             the id is not a session id (a path, say)
        └── SessionLockedError         another host holds it (.pid)

An extension that fails to load does not raise out of the host: its
:class:`~extension_host.ExtensionInfo` has status ``failed`` and the error's message. The
classes exist so that the message is built in one place and carries data.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "EnablementFileError",
    "ExtensionHostError",
    "ExtensionLoadError",
    "InstallError",
    "ManifestError",
    "ProjectRootError",
    "RuntimeFolderError",
    "ScaffoldError",
    "SessionError",
    "SessionIdError",
    "SessionLockedError",
    "SettingsError",
    "TokenError",
    "ToolCollisionError",
    "TrustFileError",
    "UnknownExtensionError",
    "UnknownSessionError",
    "UnknownToolError",
]


class ExtensionHostError(Exception):
    """Root of every error the host raises on purpose."""


class ExtensionLoadError(ExtensionHostError):
    """Extension ``extension`` (an id such as ``project:lint``) could not be loaded."""

    def __init__(self, extension: str, message: str) -> None:
        super().__init__(message)
        self.extension = extension


class ToolCollisionError(ExtensionLoadError):
    """``extension`` offers ``tool``, which ``owner`` (an extension id or ``builtin``) already has."""

    def __init__(self, extension: str, tool: str, owner: str) -> None:
        owner_text = "a built-in tool of the host" if owner == "builtin" else f"extension {owner}"
        super().__init__(
            extension,
            f"tool {tool!r} is already provided by {owner_text}; rename the tool in {extension} "
            "(tool names are unique across all extensions)",
        )
        self.tool = tool
        self.owner = owner


class UnknownToolError(ExtensionHostError):
    """No tool named ``tool`` is offered; ``available`` lists what is."""

    def __init__(self, tool: str, available: list[str], reason: str | None = None, hint: str | None = None) -> None:
        if reason is None and hint and not available:
            reason = f"no tool named {tool!r}"  # the hint says why there is none
        text = reason or (f"no tool named {tool!r}; available: {', '.join(sorted(available)) or 'none'}")
        super().__init__(f"{text}; {hint}" if hint else text)
        self.tool = tool
        self.available = available


class UnknownExtensionError(ExtensionHostError):
    """No discovered extension has this name or id."""

    def __init__(self, extension: str, known: list[str]) -> None:
        import difflib  # only on a mistake

        names = [*known, *(item.split(":", 1)[-1] for item in known)]
        close = difflib.get_close_matches(extension, names, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        super().__init__(f"no extension named {extension!r}; discovered: {', '.join(known) or 'none'}{hint}")
        self.extension = extension


class ScaffoldError(ExtensionHostError):
    """A new extension cannot be created at ``path`` (bad name, folder exists, unknown template)."""

    def __init__(self, path: Path | str, message: str) -> None:
        super().__init__(message)
        self.path = Path(path)


class InstallError(ExtensionHostError):
    """``extensions install``, ``update``, ``uninstall`` or ``link`` cannot do what was asked with
    ``source`` (a URL, a path, a requirement or an extension's name); nothing was changed."""

    def __init__(self, source: str, message: str) -> None:
        super().__init__(message)
        self.source = source


class TrustFileError(ExtensionHostError):
    """The user's trust record at ``path`` cannot be read, believed or written."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(message)
        self.path = path


class EnablementFileError(ExtensionHostError):
    """The user's record of enabled and disabled extensions at ``path`` cannot be read, believed or written."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(message)
        self.path = path


class ManifestError(ExtensionHostError):
    """An extension's manifest at ``path`` cannot be used; the message names the field and why."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


class SettingsError(ExtensionHostError):
    """A setting cannot be read, stored or given as asked: an unknown key, a value of the wrong
    type, or a settings file (``path``, when that is the fault) that is damaged or not the
    user's alone. The message never holds a secret's value."""

    def __init__(self, message: str, path: Path | None = None) -> None:
        super().__init__(message)
        self.path = path


class RuntimeFolderError(ExtensionHostError):
    """The folder that holds control sockets (``folder``, when known) cannot be used: another
    user (uid ``owner``, when that is the fault) or anyone could put a socket of theirs there,
    or it cannot be made. Nothing that needs the socket uses it; the message says what to do."""

    def __init__(self, message: str, folder: Path | None = None, owner: int | None = None) -> None:
        super().__init__(message)
        self.folder = folder
        self.owner = owner


class TokenError(ExtensionHostError):
    """The token a server was given cannot be used; ``source`` says where it came from (a token
    file's path, ``--token`` or ``$EXTENSION_HOST_TOKEN``). The message never holds the token."""

    def __init__(self, source: str, message: str) -> None:
        super().__init__(message)
        self.source = source


class ProjectRootError(ExtensionHostError):
    """The project root given (``--root``, ``ExtensionHost(project_root)``) does not exist or is
    not a folder; nothing is guessed in its place."""

    def __init__(self, path: Path | str) -> None:
        super().__init__(f"project root {str(path)!r} is not a folder; pass an existing project folder")
        self.path = Path(path)


class SessionError(ExtensionHostError):
    """The persisted session ``session_id`` cannot be used as asked."""

    def __init__(self, session_id: str, message: str) -> None:
        super().__init__(message)
        self.session_id = session_id


class SessionIdError(SessionError):
    """``session_id`` is not a session id (only letters, digits, ``-`` and ``_``)."""

    def __init__(self, session_id: str) -> None:
        super().__init__(
            session_id,
            f"{session_id!r} is not a session id (letters, digits, '-' and '_' only); "
            "see 'extensions sessions list' for the ids",
        )


class UnknownSessionError(SessionError):
    """No persisted session has this id, or it belongs to another project (``reason``)."""

    def __init__(self, session_id: str, reason: str | None = None) -> None:
        super().__init__(
            session_id,
            f"session {session_id}: {reason or 'no such session'}; see 'extensions sessions list' for the ids",
        )


class SessionLockedError(SessionError):
    """Another host process (``pid``, when known) holds the session."""

    def __init__(self, session_id: str, pid: int | None) -> None:
        holder = f"process {pid}" if pid is not None else "another process"
        super().__init__(
            session_id,
            f"session {session_id} is in use by {holder}; stop that host first or start a new session",
        )
        self.pid = pid
