"""Read-only snapshots the host hands out: one per extension, one per tool.

Plain frozen dataclasses with a ``to_json()`` each, so the Python API, ``--json`` output and
the CLI tables all describe an extension the same way. Nothing here changes state.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, cast

from .version import __version__

__all__ = [
    "NOT_RUNNING",
    "SDK_STATUS",
    "CanvasInfo",
    "ExtensionInfo",
    "ExtensionStatus",
    "ToolInfo",
    "host_version",
    "sdk_entry",
]

ExtensionStatus = Literal[
    "starting", "running", "failed", "quarantined", "disabled", "shadowed", "untrusted", "detached"
]
"""``quarantined``: it crashed after joining more often than the crash budget allows, so a
long-running host stopped restarting it until its files change or it is reloaded by name.
``detached``: it left the session (``session.detach``, the JS SDK's ``disconnect()``); its
tools, commands and hooks are withdrawn, its process may run on until it ends."""

NOT_RUNNING: Final[frozenset[ExtensionStatus]] = frozenset({"starting", "failed", "quarantined"})
"""The statuses of an extension that should be running and is not (not joined yet, or failed):
its hooks judge nothing. Shadowed, untrusted, disabled and detached ones are not meant to run.
``disabled``: the user switched it off (``extensions disable``); it is discovered, never started."""

SDK_STATUS: Final[dict[str, str]] = {
    "starting": "starting",
    "running": "running",
    "failed": "failed",
    "quarantined": "failed",
    "detached": "running",
}
"""This host's statuses in the Copilot SDK's four (``running``, ``disabled``, ``failed``,
``starting``); any other (shadowed, untrusted, disabled) is ``disabled``: discovered, not run."""

_SDK_SOURCES: Final[dict[str, str]] = {"project": "project", "user": "user", "copilot": "user", "package": "plugin"}
"""Each source as Copilot CLI's protocol names it to extensions (its schema allows ``project``,
``user``, ``plugin`` and ``session``)."""


def host_version() -> str:
    """This package's version: the one its distribution is built with (:mod:`.version`), without
    reading the installed metadata."""
    return __version__


@dataclass(frozen=True, slots=True)
class CanvasInfo:
    """One canvas an extension declared: its id, display name, description and actions
    (name, description)."""

    id: str
    display_name: str
    description: str
    actions: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` form."""
        return {
            "id": self.id,
            "display_name": self.display_name,
            "description": self.description,
            "actions": [{"name": name, "description": description} for name, description in self.actions],
        }


@dataclass(frozen=True, slots=True)
class ExtensionInfo:
    """What is known about one discovered extension at one moment."""

    id: str
    name: str
    source: str
    path: Path
    status: ExtensionStatus
    pid: int | None = None
    tools: tuple[str, ...] = ()
    hooks: tuple[str, ...] = ()
    hook_matchers: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(hook, tool patterns) for the tool hooks it limited to some tools; the others run for every tool."""
    error: str | None = None
    log_path: Path | None = None
    shadowed_by: str | None = None
    reload_error: str | None = None
    """Why the last reload failed while this version kept serving (``None``: it did not)."""
    link_target: Path | None = None
    """Where the folder really is, when it is a symbolic link."""
    environment_requested: tuple[str, ...] = ()
    """The environment variables it asked for when it joined (names only)."""
    environment_granted: tuple[str, ...] = ()
    """Those of them it was given."""
    environment_missing: tuple[str, ...] = ()
    """Those the user has not granted, so it was not loaded."""
    overrides_builtin: tuple[str, ...] = ()
    """Built-in tools of the host it replaces (``overridesBuiltInTool``)."""
    commands: tuple[str, ...] = ()
    """The slash commands it offers (names without the ``/``)."""
    settings: tuple[str, ...] = ()
    """The names of the settings its manifest declares (never their values)."""
    settings_unset: tuple[str, ...] = ()
    """Those without a value when it started (not set, no default): not in its environment."""
    activity: str | None = None
    """What it is doing while ``starting``, when that takes a while (``installing 2 requirements``,
    ``installing npm dependencies…``)."""
    note: str | None = None
    """A remark on how it was started (its npm dependencies' scripts were not run)."""
    canvases: tuple[CanvasInfo, ...] = ()
    """The canvases it provides."""

    def to_sdk(self) -> dict[str, Any]:
        """As Copilot CLI lists an extension to extensions (:func:`sdk_entry`)."""
        return sdk_entry(self.id, self.name, self.source, self.status)

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` form, plus the log path, shadowing, the folder a link
        points to, the environment it asked for and got (names only), built-in overrides, and
        its settings (names only: which it declares, which have no value)."""
        return {
            "id": self.id,
            "name": self.name,
            "source": self.source,
            "path": str(self.path),
            "status": self.status,
            "pid": self.pid,
            "tools": list(self.tools),
            "hooks": list(self.hooks),
            "hook_matchers": {hook: list(patterns) for hook, patterns in self.hook_matchers},
            "error": self.error,
            "log_path": str(self.log_path) if self.log_path else None,
            "shadowed_by": self.shadowed_by,
            "reload_error": self.reload_error,
            "link_target": str(self.link_target) if self.link_target else None,
            "environment": {
                "requested": list(self.environment_requested),
                "granted": list(self.environment_granted),
                "missing": list(self.environment_missing),
            },
            "overrides_builtin": list(self.overrides_builtin),
            "commands": list(self.commands),
            "settings": {"declared": list(self.settings), "unset": list(self.settings_unset)},
            "activity": self.activity,
            "note": self.note,
            "canvases": [canvas.to_json() for canvas in self.canvases],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ExtensionInfo:
        """The inverse of :meth:`to_json` (for answers that came over the control socket)."""
        environment = data.get("environment") or {}
        settings = data.get("settings") or {}
        return cls(
            id=data["id"],
            name=data["name"],
            source=data["source"],
            path=Path(data["path"]),
            status=cast(ExtensionStatus, data["status"]),
            pid=data.get("pid"),
            tools=tuple(data.get("tools") or ()),
            hooks=tuple(data.get("hooks") or ()),
            hook_matchers=tuple(
                (hook, tuple(patterns)) for hook, patterns in (data.get("hook_matchers") or {}).items()
            ),
            error=data.get("error"),
            log_path=Path(data["log_path"]) if data.get("log_path") else None,
            shadowed_by=data.get("shadowed_by"),
            reload_error=data.get("reload_error"),
            link_target=Path(data["link_target"]) if data.get("link_target") else None,
            environment_requested=tuple(environment.get("requested") or ()),
            environment_granted=tuple(environment.get("granted") or ()),
            environment_missing=tuple(environment.get("missing") or ()),
            overrides_builtin=tuple(data.get("overrides_builtin") or ()),
            commands=tuple(data.get("commands") or ()),
            settings=tuple(settings.get("declared") or ()),
            settings_unset=tuple(settings.get("unset") or ()),
            activity=data.get("activity"),
            note=data.get("note"),
        )


@dataclass(frozen=True, slots=True)
class ToolInfo:
    """One offered tool and who provides it (an extension id, or ``builtin``)."""

    name: str
    description: str
    parameters: dict[str, Any] | None
    owner: str

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "owner": self.owner,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ToolInfo:
        """The inverse of :meth:`to_json`."""
        return cls(data["name"], data["description"], data.get("parameters"), data["owner"])


def sdk_entry(extension_id: str, name: str, source: str, status: str) -> dict[str, Any]:
    """An extension as Copilot CLI lists it to extensions: ``{id, name, source, status}``, the
    status in the SDK's four (:data:`SDK_STATUS`). Copilot CLI's own folder is a ``user`` source
    there, and the package scope what it calls a ``plugin`` source."""
    sdk_source = _SDK_SOURCES.get(source, "user")
    return {"id": extension_id, "name": name, "source": sdk_source, "status": SDK_STATUS.get(status, "disabled")}
