"""Read-only snapshots the host hands out: one per extension, one per tool.

Plain frozen dataclasses with a ``to_json()`` each, so the Python API, ``--json`` output and
the CLI tables all describe an extension the same way. Nothing here changes state.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from collections.abc import Mapping
from typing import Any, Literal, cast

__all__ = ["ExtensionInfo", "ExtensionStatus", "ToolInfo"]

ExtensionStatus = Literal["starting", "running", "failed", "disabled", "shadowed"]


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
    error: str | None = None
    log_path: Path | None = None
    shadowed_by: str | None = None
    reload_error: str | None = None
    """Why the last reload failed while this version kept serving (``None``: it did not)."""

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` form (contract §9), plus the log path and shadowing."""
        return {
            "id": self.id,
            "name": self.name,
            "source": self.source,
            "path": str(self.path),
            "status": self.status,
            "pid": self.pid,
            "tools": list(self.tools),
            "hooks": list(self.hooks),
            "error": self.error,
            "log_path": str(self.log_path) if self.log_path else None,
            "shadowed_by": self.shadowed_by,
            "reload_error": self.reload_error,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ExtensionInfo:
        """The inverse of :meth:`to_json` (for answers that came over the control socket)."""
        return cls(
            id=data["id"],
            name=data["name"],
            source=data["source"],
            path=Path(data["path"]),
            status=cast(ExtensionStatus, data["status"]),
            pid=data.get("pid"),
            tools=tuple(data.get("tools") or ()),
            hooks=tuple(data.get("hooks") or ()),
            error=data.get("error"),
            log_path=Path(data["log_path"]) if data.get("log_path") else None,
            shadowed_by=data.get("shadowed_by"),
            reload_error=data.get("reload_error"),
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
